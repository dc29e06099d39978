import type { StoredEvent } from './hub-store';

/** The largest `bufferSize`: the longest array JavaScript can make. */
export const MAX_BUFFER_SIZE = 2 ** 32 - 1;

/**
 * The most recent events, oldest first, for replay. `base` is the id just before the oldest held
 * event: a client whose `Last-Event-ID` is `base` or a held id can be answered exactly; any other
 * id cannot (it is older, foreign, or never existed).
 */
export class EventRing {
  readonly capacity: number;
  readonly #items: (StoredEvent | undefined)[];
  /** Index of the oldest held event. */
  #start = 0;
  #count = 0;
  #base: string;

  constructor(capacity: number, base: string) {
    this.capacity = capacity;
    this.#items = new Array(capacity);
    this.#base = base;
  }

  /** The id before the oldest held event (the newest id when nothing is held). */
  get base(): string {
    return this.#base;
  }

  /** Appends, evicting the oldest when full. */
  push(event: StoredEvent): void {
    const capacity = this.capacity;
    if (capacity === 0) {
      this.#base = event.id;
      return;
    }
    if (this.#count === capacity) {
      this.#base = this.#items[this.#start]!.id;
      this.#items[this.#start] = event;
      this.#start = (this.#start + 1) % capacity;
    } else {
      this.#items[(this.#start + this.#count) % capacity] = event;
      this.#count++;
    }
  }

  /** Forgets every held event; `base` becomes `head`. */
  clear(head: string): void {
    // Only the held slots: a huge capacity is allocated lazily, and filling it all would block.
    for (let i = 0; i < this.#count; i++)
      this.#items[(this.#start + i) % this.capacity] = undefined;
    this.#start = 0;
    this.#count = 0;
    this.#base = head;
  }

  /**
   * The held events after `after` up to and including `upTo`, or `null` when `after` is neither
   * `base` nor a held id.
   */
  between(after: string, upTo: string): StoredEvent[] | null {
    const capacity = this.capacity;
    let from: number;
    if (after === this.#base) from = 0;
    else {
      // Newest first: a reconnecting client is usually only a few events behind.
      from = -1;
      for (let i = this.#count - 1; i >= 0; i--) {
        if (this.#items[(this.#start + i) % capacity]!.id === after) {
          from = i + 1;
          break;
        }
      }
      if (from === -1) return null;
    }
    const out: StoredEvent[] = [];
    if (after === upTo) return out;
    for (let i = from; i < this.#count; i++) {
      const event = this.#items[(this.#start + i) % capacity]!;
      out.push(event);
      if (event.id === upTo) break;
    }
    return out;
  }
}
