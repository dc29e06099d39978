/**
 * Read tracking for hook results: a result is a Proxy over an immutable view that records each
 * field the component reads while rendering, so a change to a field it never read does not
 * re-render it (if it has read none, every field counts). One Proxy per view (defining tracked
 * getters per object costs far more), and spreading a result still reads every field, so
 * `{ ...result }` tracks everything as it should.
 */
export class TrackedView<V extends object> {
  readonly #keys: readonly string[];
  readonly #keySet: ReadonlySet<string>;
  readonly #read = new Set<string>();
  readonly #trap: ProxyHandler<V>;
  #view: V | undefined;
  #proxy: V | undefined;

  /** `keys`: a module-level list (its Set is built once and shared by every view of that shape). */
  constructor(keys: readonly string[]) {
    this.#keys = keys;
    this.#keySet = keySetOf(keys);
    this.#trap = {
      get: (view, key) => {
        if (typeof key === 'string' && this.#keySet.has(key)) this.#read.add(key);
        return (view as Record<PropertyKey, unknown>)[key];
      },
    };
  }

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
    const keys: Iterable<string> = this.#read.size > 0 ? this.#read : this.#keys;
    for (const key of keys) if (!Object.is(field(rendered, key), field(next, key))) return true;
    return false;
  }

  /** Whether two views hold the same value in every field. */
  same(a: V, b: V): boolean {
    for (const key of this.#keys) if (!Object.is(field(a, key), field(b, key))) return false;
    return true;
  }
}

const keySets = new WeakMap<readonly string[], ReadonlySet<string>>();

function keySetOf(keys: readonly string[]): ReadonlySet<string> {
  let set = keySets.get(keys);
  if (set === undefined) keySets.set(keys, (set = new Set(keys)));
  return set;
}

function field(view: object, key: string): unknown {
  return (view as Record<string, unknown>)[key];
}
