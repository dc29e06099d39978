/**
 * The in-flight map: one value (a flight) per key. `delete(key, value)` removes the key only if it
 * still maps to that value, so a flight detached by invalidation cannot evict its successor.
 */
export class Deduper<V> {
  readonly #inflight = new Map<string, V>();

  get size(): number {
    return this.#inflight.size;
  }

  get(key: string): V | undefined {
    return this.#inflight.get(key);
  }

  has(key: string): boolean {
    return this.#inflight.has(key);
  }

  set(key: string, value: V): void {
    this.#inflight.set(key, value);
  }

  delete(key: string, value?: V): boolean {
    if (value !== undefined && this.#inflight.get(key) !== value) return false;
    return this.#inflight.delete(key);
  }

  /**
   * Standalone coalescing: the value in flight for `key`, or a new one from `start`. A promise is
   * forgotten once it settles, so the next call after that starts afresh.
   *
   * @example
   * const d = new Deduper<Promise<User>>();
   * const [a, b] = [d.run('u7', load), d.run('u7', load)]; // one load() call, a === b
   */
  run(key: string, start: () => V): V {
    const current = this.#inflight.get(key);
    if (current !== undefined) return current;
    const value = start();
    this.#inflight.set(key, value);
    const forget = () => {
      this.delete(key, value);
    };
    try {
      if (isThenable(value)) value.then(forget, forget);
    } catch (error) {
      // A `then` that throws: never settles here, so it must not stay in the map for good.
      forget();
      throw error;
    }
    return value;
  }

  values(): IterableIterator<V> {
    return this.#inflight.values();
  }

  clear(): void {
    this.#inflight.clear();
  }
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (
    (typeof value === 'object' || typeof value === 'function') &&
    value !== null &&
    typeof (value as { then?: unknown }).then === 'function'
  );
}
