/**
 * A bounded free list. `acquire` reuses a released item or creates one; `release` keeps at most
 * `max` items, so a burst of concurrency does not pin its peak memory forever.
 */
export class Pool<T> {
  readonly #free: T[] = [];
  readonly #max: number;
  readonly #create: () => T;

  constructor(max: number, create: () => T) {
    this.#max = max;
    this.#create = create;
  }

  acquire(): T {
    return this.#free.pop() ?? this.#create();
  }

  release(item: T): void {
    if (this.#free.length < this.#max) this.#free.push(item);
  }

  /** Items waiting for reuse. */
  get available(): number {
    return this.#free.length;
  }
}
