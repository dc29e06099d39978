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

/**
 * Held ids per index span: a Map holds at most 2^24 keys, and a buffer may hold more events.
 */
const INDEX_SPAN = 2 ** 23;

/** Ids of consecutive pushes, by their push count; let go once none of them is held. */
interface Span {
  readonly at: Map<string, number>;
  /** The push count of its newest id. */
  last: number;
}

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
  /** Events pushed since the ring was made (the push count of the next one). */
  #pushed = 0;
  /**
   * Where each held id is (its push count), so a client's `Last-Event-ID` is one lookup per
   * span, not a scan of the buffer: one reconnecting with junk ids cost `capacity` comparisons
   * each time. Spans of ids no longer held are let go as the ring moves on.
   */
  #spans: Span[] = [];
  readonly #spanKeys: number;

  /** `spanKeys`: ids per index span (tests make it small to see spans let go). */
  constructor(capacity: number, base: string, spanKeys = INDEX_SPAN) {
    this.capacity = capacity;
    // Spans no longer than the ring: ids of evicted events stay indexed until their span goes,
    // so at most as many again as it holds (a 100-event ring indexes at most 200 ids).
    this.#spanKeys = Math.max(1, Math.min(spanKeys, capacity));
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
    const at = this.#pushed++;
    const spans = this.#spans;
    let span = spans[spans.length - 1];
    if (span === undefined || span.at.size >= this.#spanKeys) {
      span = { at: new Map(), last: at };
      spans.push(span);
    }
    span.at.set(event.id, at);
    span.last = at;
    // The oldest span, once all of its events were evicted.
    const oldest = this.#pushed - this.#count;
    while (spans[0]!.last < oldest) spans.shift();
  }

  /** Position of held id `id` (0 = oldest; its newest push if repeated), or -1. */
  #indexOf(id: string): number {
    const oldest = this.#pushed - this.#count;
    const spans = this.#spans;
    for (let i = spans.length - 1; i >= 0; i--) {
      const at = spans[i]!.at.get(id);
      if (at !== undefined) return at >= oldest ? at - oldest : -1;
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
    this.#spans = [];
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
