/**
 * Read tracking for hook results: a result is a Proxy over an immutable view that records each
 * field the component reads while rendering, so a change to a field it never read does not
 * re-render it (if it has read none, every field counts). One Proxy per view (defining tracked
 * getters per object costs far more), and spreading a result still reads every field, so
 * `{ ...result }` tracks everything as it should. A view is a plain object holding every field
 * of its shape (none left out when undefined), so its own keys are the fields.
 */
export class TrackedView<V extends object> {
  readonly #read = new Set<string>();
  readonly #trap: ProxyHandler<V> = {
    get: (view, key) => {
      if (Object.hasOwn(view, key)) this.#read.add(key as string);
      return (view as Record<PropertyKey, unknown>)[key];
    },
  };
  #view: V | undefined;
  #proxy: V | undefined;

  /** `view` as a Proxy that records the fields read; the same Proxy while `view` is the same. */
  wrap(view: V): V {
    if (this.#view !== view) {
      this.#proxy = new Proxy(view, this.#trap);
      this.#view = view;
    }
    return this.#proxy!;
  }

  /** Whether `next` differs from `rendered` in a field that was read (every field if none was). */
  changed(rendered: V, next: V): boolean {
    return !sameFields(rendered, next, this.#read.size > 0 ? this.#read : undefined);
  }
}

/** Whether `a` and `b` hold the same value (Object.is) in each of `keys` (default: `a`'s own). */
export function sameFields(a: object, b: object, keys?: Iterable<string>): boolean {
  for (const key of keys ?? Object.keys(a)) {
    if (!Object.is((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key])) {
      return false;
    }
  }
  return true;
}
