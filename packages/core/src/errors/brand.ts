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
  pkg?: string,
): (value: unknown) => value is T {
  return brandGuard(name, cls, pkg);
}

/**
 * The guard of the brand `keel.<pkg>.<name>`; with `cls`, it brands `cls.prototype` first (fixed:
 * neither writable nor deletable). Made without the class, it lets a module ask whether an error
 * is one without bringing the class into a bundle that never makes one (the client asks whether
 * a refusal came from a circuit). It reads the brand alone: every instance of the branded class,
 * or of a subclass, inherits it from the prototype.
 */
export function brandGuard<T extends object>(
  name: string,
  cls?: abstract new (...args: never[]) => T,
  pkg = 'core',
): (value: unknown) => value is T {
  const key = Symbol.for(`keel.${pkg}.${name}`);
  if (cls) Object.defineProperty(cls.prototype, key, { value: true });
  return (value: unknown): value is T => {
    // A revoked Proxy (or one whose traps throw) is no keel error: a guard answers, never throws.
    try {
      return (value as Record<symbol, unknown> | null)?.[key] === true;
    } catch {
      return false;
    }
  };
}
