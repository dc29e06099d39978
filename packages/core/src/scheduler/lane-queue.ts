import type { Entry } from './entry';
import type { JobClass } from './job-class';

/**
 * One job class's FIFO in one lane: an intrusive doubly-linked list of entries, so push, shift
 * and removal from the middle (cancel, prioritize) are all O(1) with no array copying.
 * Invariant: entries are in ascending `seq`.
 */
export class LaneQueue {
  head: Entry | undefined = undefined;
  tail: Entry | undefined = undefined;
  size = 0;
  /** Position in its lane's heap; -1 when not in it. A queue in a heap is never empty. */
  heapIndex = -1;
  /**
   * The last entry `insert` placed and its 1-based index, until a removal makes the index stale:
   * jobs back from one rate wait come in ascending `seq`, each right after the one before, so
   * each insert walks from here, O(1), not from the head (O(k^2) for k jobs).
   */
  #hint: Entry | undefined = undefined;
  #hintIndex = 0;

  constructor(
    readonly cls: JobClass,
    readonly lane: number,
  ) {}

  push(entry: Entry): void {
    entry.queue = this;
    entry.next = undefined;
    entry.prev = this.tail;
    if (this.tail === undefined) this.head = entry;
    else this.tail.next = entry;
    this.tail = entry;
    this.size++;
  }

  /**
   * Puts an entry back at its place by `seq` (a job back from a rate wait: it and the others
   * parked with it were the earliest of their queue); returns its 1-based index in the queue.
   */
  insert(entry: Entry): number {
    // From the hint when it is still in this queue (no removal since) and before the entry.
    const hint = this.#hint;
    let prev = hint?.queue === this && hint.seq < entry.seq ? hint : undefined;
    let index = prev ? this.#hintIndex + 1 : 1;
    for (let e = prev ? prev.next : this.head; e && e.seq < entry.seq; e = e.next) {
      prev = e;
      index++;
    }
    this.#hint = entry;
    this.#hintIndex = index;
    const next = prev === undefined ? this.head : prev.next;
    entry.queue = this;
    entry.prev = prev;
    entry.next = next;
    if (prev === undefined) this.head = entry;
    else prev.next = entry;
    if (next === undefined) this.tail = entry;
    else next.prev = entry;
    this.size++;
    return index;
  }

  remove(entry: Entry): void {
    this.#hint = undefined;
    const { prev, next } = entry;
    if (prev === undefined) this.head = next;
    else prev.next = next;
    if (next === undefined) this.tail = prev;
    else next.prev = prev;
    entry.queue = entry.prev = entry.next = undefined;
    this.size--;
  }
}

/**
 * A binary min-heap of a lane's class queues, ordered by their head's `seq`: its top holds the
 * lane's earliest job. Its size is the number of classes with queued jobs (usually 1), never
 * the number of jobs.
 */
export class QueueHeap {
  readonly #items: LaneQueue[] = [];

  peek(): LaneQueue | undefined {
    return this.#items[0];
  }

  push(q: LaneQueue): void {
    q.heapIndex = this.#items.length;
    this.#items.push(q);
    this.siftUp(q.heapIndex);
  }

  /** Removes the queue at `index` (the top is index 0). */
  removeAt(index: number): void {
    const items = this.#items;
    const removed = items[index]!;
    const last = items.pop()!;
    removed.heapIndex = -1;
    if (last === removed) return;
    items[index] = last;
    last.heapIndex = index;
    this.siftDown(index);
    this.siftUp(last.heapIndex);
  }

  siftUp(index: number): void {
    const items = this.#items;
    const q = items[index]!;
    const seq = q.head!.seq;
    while (index > 0) {
      const parent = (index - 1) >> 1;
      const p = items[parent]!;
      if (p.head!.seq <= seq) break;
      items[index] = p;
      p.heapIndex = index;
      index = parent;
    }
    items[index] = q;
    q.heapIndex = index;
  }

  siftDown(index: number): void {
    const items = this.#items;
    const n = items.length;
    const q = items[index]!;
    const seq = q.head!.seq;
    for (;;) {
      let child = 2 * index + 1;
      if (child >= n) break;
      const right = child + 1;
      if (right < n && items[right]!.head!.seq < items[child]!.head!.seq) child = right;
      const c = items[child]!;
      if (c.head!.seq >= seq) break;
      items[index] = c;
      c.heapIndex = index;
      index = child;
    }
    items[index] = q;
    q.heapIndex = index;
  }
}
