import { integer } from './checks';
import type { ReplayRequest, ReplayResult, StoredEvent } from './hub-store';

/** A store's answer when the replay cannot be told exactly (frozen: shared by every replay). */
export const REPLAY_RESET: ReplayResult = Object.freeze({ kind: 'reset' });

/**
 * At most the bytes of the event's SSE frame as the hub writes it (`id: <id>\nevent:
 * <event>\ndata: <data>\n\n`): a UTF-16 length is never more than the UTF-8 bytes, and a line
 * break in the data becomes a longer `\ndata: `. So a store that stops a replay once these add
 * up to more than `maxBytes` stops only one the hub would have reset (it counts the frames).
 */
export function frameFloor(event: StoredEvent): number {
  return event.id.length + event.event.length + event.data.length + 21;
}

/** The largest `bufferSize`: the longest array JavaScript can make. */
export const MAX_BUFFER_SIZE = 2 ** 32 - 1;

/** The `bufferBytes` option of the stores (see `EventRing`'s `maxBytes`): 16 MiB by default. */
export const bufferBytesOption = (value: unknown): number =>
  integer('bufferBytes', value, 16 * 1024 * 1024, 0, undefined, 'bytes');

/**
 * How a store's ids are ordered: `id` (as a client sent it, untrusted) against `held` (an id the
 * store gave). Below 0, 0 or above as `id` is older, the same position or newer; NaN when `id` is
 * no id of the store (malformed, another epoch or stream). For ids that count pushes (the memory
 * store's `<epoch>-<n>`) the difference is the number of pushes between them, so the ring finds a
 * held id at once; for others (Redis stream ids) it bisects.
 */
export type IdOrder = (id: string, held: string) => number;

/**
 * The most recent events, oldest first, for replay. `base` is the id just before the oldest held
 * event: a client whose `Last-Event-ID` is `base` or a held id can be answered exactly; any other
 * id cannot (it is older, foreign, or never existed). Held ids must be pushed in `order` (each
 * newer than the last; `clear` starts again), so a lookup needs no index: no memory per event,
 * no limit on how many (a Map holds at most 2^24 keys), and a junk id costs a few reads, not a
 * scan of the buffer.
 */
export class EventRing {
  readonly capacity: number;
  /** The most bytes held (by {@link frameFloor}): past it the oldest go, whatever `capacity`. */
  readonly maxBytes: number;
  readonly #items: (StoredEvent | undefined)[];
  readonly #order: IdOrder;
  /** Index of the oldest held event. */
  #start = 0;
  #count = 0;
  #bytes = 0;
  #base: string;

  constructor(capacity: number, base: string, order: IdOrder, maxBytes = Number.POSITIVE_INFINITY) {
    this.capacity = capacity;
    this.maxBytes = maxBytes;
    this.#items = new Array(capacity);
    this.#base = base;
    this.#order = order;
  }

  /** The id before the oldest held event (the newest id when nothing is held). */
  get base(): string {
    return this.#base;
  }

  /** Appends, evicting the oldest when full or past `maxBytes` (the event itself, if need be). */
  push(event: StoredEvent): void {
    const capacity = this.capacity;
    if (capacity === 0) {
      this.#base = event.id;
      return;
    }
    if (this.#count === capacity) this.#evict();
    this.#items[(this.#start + this.#count) % capacity] = event;
    this.#count++;
    this.#bytes += frameFloor(event);
    while (this.#bytes > this.maxBytes) this.#evict();
  }

  /** Lets the oldest held event go: `base` becomes its id. */
  #evict(): void {
    const oldest = this.#items[this.#start]!;
    this.#items[this.#start] = undefined;
    this.#base = oldest.id;
    this.#bytes -= frameFloor(oldest);
    this.#start = (this.#start + 1) % this.capacity;
    this.#count--;
  }

  /** The id of the held event at position `i` (0 = oldest). */
  #idAt(i: number): string {
    return this.#items[(this.#start + i) % this.capacity]!.id;
  }

  /** Position of held id `id` (0 = oldest), or -1. */
  #indexOf(id: string): number {
    const count = this.#count;
    if (count === 0) return -1;
    const order = this.#order;
    // Older than the oldest, newer than the newest (a future id) or foreign: not held. `!(x >= 0)`
    // is true for NaN too.
    const fromOldest = order(id, this.#idAt(0));
    if (!(fromOldest >= 0) || !(order(id, this.#idAt(count - 1)) <= 0)) return -1;
    // Ids that count pushes are where their distance from the oldest says.
    if (Number.isInteger(fromOldest) && fromOldest < count && this.#idAt(fromOldest) === id) {
      return fromOldest;
    }
    let low = 0;
    let high = count - 1;
    while (low <= high) {
      const mid = Math.floor((low + high) / 2);
      const held = this.#idAt(mid);
      const side = order(id, held);
      if (side < 0) high = mid - 1;
      else if (side > 0) low = mid + 1;
      // The same position but not the same string (`1-01` for `1-1`): no id of this store.
      else return held === id ? mid : -1;
    }
    return -1;
  }

  /** Forgets every held event; `base` becomes `head`. */
  clear(head: string): void {
    // Only the held slots: a huge capacity is allocated lazily, and filling it all would block.
    for (let i = 0; i < this.#count; i++)
      this.#items[(this.#start + i) % this.capacity] = undefined;
    this.#start = 0;
    this.#count = 0;
    this.#bytes = 0;
    this.#base = head;
  }

  /**
   * The held events after `after` up to and including `upTo` that `include` accepts; a reset
   * once they cannot fit in `maxBytes` (see {@link frameFloor}: read no further, so an old id
   * costs no list of the whole buffer); `null` when `after` is neither `base` nor a held id.
   */
  between(
    after: string,
    upTo: string,
    { include, maxBytes }: Pick<ReplayRequest, 'include' | 'maxBytes'>,
  ): ReplayResult | null {
    const capacity = this.capacity;
    let from: number;
    if (after === this.#base) from = 0;
    else {
      const at = this.#indexOf(after);
      if (at === -1) return null;
      from = at + 1;
    }
    const events: StoredEvent[] = [];
    if (after === upTo) return { kind: 'events', events };
    let bytes = 0;
    for (let i = from; i < this.#count; i++) {
      const event = this.#items[(this.#start + i) % capacity]!;
      if (include(event.topic)) {
        bytes += frameFloor(event);
        if (bytes > maxBytes) return REPLAY_RESET;
        events.push(event);
      }
      if (event.id === upTo) break;
    }
    return { kind: 'events', events };
  }
}
