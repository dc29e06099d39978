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

  values(): IterableIterator<V> {
    return this.#inflight.values();
  }

  clear(): void {
    this.#inflight.clear();
  }
}
