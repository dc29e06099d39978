import { PRIORITIES } from '../internal/priorities';
import type { Priority } from '../types/options';
import type { Entry } from './entry';
import type { JobClass } from './job-class';
import { type LaneQueue, QueueHeap } from './lane-queue';

/** Weighted round-robin: each round serves up to 4 high, then 2 normal, then 1 low. */
const WEIGHTS: readonly number[] = [4, 2, 1];
const SINGLE: readonly number[] = [1];

/**
 * The queued jobs: one lane (FIFO) or three lanes (high / normal / low) served by a weighted
 * round-robin cursor. Each lane is a heap of class queues keyed by their head's arrival `seq`,
 * so the lane yields its earliest job whose class is not blocked; a blocked class found at the
 * top is dropped from the heap (lazily) and `readmit` puts it back when it unblocks.
 *
 * Cursor rule: the lane under the cursor serves while it has credit (its weight) and a runnable
 * job; an exhausted or empty lane passes the cursor on, and the next lane starts with full
 * credit. When only one lane has runnable jobs nothing competes: its job is taken and a fresh
 * round starts at high (a high job taken so uses the round's first turn), so a normal job that
 * started alone does not spend the turns high jobs arriving next are owed. The cursor moves
 * only when a job is taken, so a scan that finds nothing changes nothing.
 */
export class Lanes {
  /** Queued jobs per lane (blocked ones included). */
  readonly sizes: number[];
  total = 0;
  readonly #weighted: boolean;
  readonly #weights: readonly number[];
  readonly #heaps: QueueHeap[];
  #cursor = 0;
  #credit: number;
  #seq = 0;

  constructor(weighted: boolean) {
    this.#weighted = weighted;
    this.#weights = weighted ? WEIGHTS : SINGLE;
    this.sizes = this.#weights.map(() => 0);
    this.#heaps = this.#weights.map(() => new QueueHeap());
    this.#credit = this.#weights[0]!;
  }

  /** Number of lanes: 3 with priorities, else 1. */
  get count(): number {
    return this.#weights.length;
  }

  laneOf(priority: Priority): number {
    if (!this.#weighted) return 0;
    return priority === 'high' ? 0 : priority === 'low' ? 2 : 1;
  }

  /** A single FIFO reports its jobs as `normal`. */
  nameOf(lane: number): Priority {
    return this.#weighted ? PRIORITIES[lane]! : 'normal';
  }

  /**
   * Appends at the back of the entry's lane; returns its 1-based position in the lane. `front`
   * puts an entry back where it left (it keeps its `seq`): a job that was next but had to wait
   * for rate budget (its position is then its place in its class queue).
   */
  push(entry: Entry, front = false): number {
    const q = entry.cls.queues[entry.lane]!;
    const heap = this.#heaps[entry.lane]!;
    let position = 0;
    if (front) position = q.insert(entry);
    else {
      entry.seq = ++this.#seq;
      q.push(entry);
    }
    // Appending leaves the head (the heap key) unchanged; a blocked class waits for readmit.
    if (q.heapIndex < 0) {
      if (!q.cls.blocked) heap.push(q);
    } else if (front) heap.siftUp(q.heapIndex);
    this.total++;
    const size = ++this.sizes[entry.lane]!;
    return front ? position : size;
  }

  /** Takes a queued entry out of its lane (cancel, prioritize). */
  remove(entry: Entry): void {
    const q = entry.queue!;
    const wasHead = q.head === entry;
    q.remove(entry);
    if (q.heapIndex >= 0) {
      const heap = this.#heaps[q.lane]!;
      if (q.size === 0) heap.removeAt(q.heapIndex);
      else if (wasHead) heap.siftDown(q.heapIndex);
    }
    this.total--;
    this.sizes[q.lane]!--;
  }

  /** Moves a queued entry to the back of another lane. */
  move(entry: Entry, lane: number): void {
    this.remove(entry);
    entry.lane = lane;
    this.push(entry);
  }

  /** A class stopped being blocked: its non-empty queues compete in their lanes again. */
  readmit(cls: JobClass): void {
    if (cls.blocked) return;
    for (let i = 0; i < cls.queues.length; i++) {
      const q = cls.queues[i]!;
      if (q.size > 0 && q.heapIndex < 0) this.#heaps[i]!.push(q);
    }
  }

  /** The next job by the weighted round-robin, taken out of its lane; undefined if none can run. */
  next(): Entry | undefined {
    const n = this.#weights.length;
    const cursor = this.#cursor;
    let q = this.#top(cursor);
    if (q === undefined) {
      // The cursor's lane has nothing to run: the next lane that has takes this turn, the cursor
      // passing to it, when the lane after it competes too.
      let lane = cursor;
      for (let k = 1; k < n && q === undefined; k++) q = this.#top((lane = (cursor + k) % n));
      if (q === undefined) return undefined;
      if (lane === (cursor + 1) % n && this.#top((cursor + 2) % n) !== undefined) {
        this.#cursor = lane;
        this.#credit = this.#weights[lane]!;
      } else {
        // Alone: nothing competes, so a fresh round starts (a high job takes its first turn).
        this.#cursor = 0;
        this.#credit = this.#weights[0]!;
        if (lane !== 0) return this.#take(q);
      }
    }
    const entry = this.#take(q);
    if (--this.#credit === 0) this.#advance();
    return entry;
  }

  /** The cursor state, to undo a `next()` whose job could not start (rate budget). */
  mark(): number {
    return this.#cursor * 8 + this.#credit;
  }

  restore(mark: number): void {
    this.#cursor = mark >> 3;
    this.#credit = mark & 7;
  }

  #advance(): void {
    this.#cursor = this.#cursor + 1 === this.#weights.length ? 0 : this.#cursor + 1;
    this.#credit = this.#weights[this.#cursor]!;
  }

  /** The lane's runnable class queue with the earliest job (blocked ones leave the heap). */
  #top(lane: number): LaneQueue | undefined {
    const heap = this.#heaps[lane]!;
    for (;;) {
      const q = heap.peek();
      if (q === undefined || !q.cls.blocked) return q;
      heap.removeAt(0);
    }
  }

  /** Takes the earliest job of a runnable class queue (#top found it). */
  #take(q: LaneQueue): Entry {
    const entry = q.head!;
    this.remove(entry);
    return entry;
  }
}
