/*
 * Brands: how a guard recognises an instance of a keel error class also when it comes from
 * another copy of the package (two bundles, a second realm), where `instanceof` fails, without
 * ever accepting a look-alike object (`{ name: 'HttpError' }`). Each class marks its prototype
 * with a registered symbol (`Symbol.for`, the same in every copy and realm); instances and
 * subclasses inherit it.
 */

/**
 * Brands `cls` as `keel.<pkg>.<name>` and returns its guard: true for an instance of `cls`, also
 * one built by another copy of the package. `name` is written out because a minifier renames
 * classes. `pkg` is last and defaults to the core, which has most of the classes.
 */
export function guardFor<T extends object>(
  cls: abstract new (...args: never[]) => T,
  name: string,
  pkg = 'core',
): (value: unknown) => value is T {
  const key = Symbol.for(`keel.${pkg}.${name}`);
  Object.defineProperty(cls.prototype, key, { value: true });
  return (value: unknown): value is T => {
    // The brand alone: every instance of `cls` (or of a subclass) inherits it, and the
    // prototype's property can be neither changed nor removed. A revoked Proxy (or one whose
    // traps throw) is no keel error: a guard answers, never throws.
    try {
      return (value as Record<symbol, unknown> | null)?.[key] === true;
    } catch {
      return false;
    }
  };
}
