import type { LatencyStats } from '../types';

/** Samples kept per endpoint: p95 reads the 7th highest of 128, and a read sorts 1 KiB at most. */
export const LATENCY_WINDOW = 128;

export const NO_LATENCY: LatencyStats = Object.freeze({ avg: 0, p50: 0, p95: 0, samples: 0 });

/**
 * The last `capacity` latency samples of one endpoint, in a fixed-size ring.
 *
 * Invariants: `record` is O(1) and never sorts or allocates (the typed array is allocated with the
 * first sample); `values[0 .. size)` are the window's samples (the ring fills from index 0);
 * `stats()` copies and sorts at most `capacity` numbers, and its result is cached until the next
 * sample, so reading it on every request costs nothing between samples.
 */
export class LatencyRing {
  readonly capacity: number;
  #values: Float64Array | undefined;
  #next = 0;
  #size = 0;
  /** Bumped on every sample: lets readers cache what they derive from the window. */
  version = 0;
  #stats: LatencyStats | undefined;

  constructor(capacity = LATENCY_WINDOW) {
    if (!Number.isInteger(capacity) || capacity < 1) {
      throw new RangeError(`keel: latency window must be an integer >= 1, got ${String(capacity)}`);
    }
    this.capacity = capacity;
  }

  /** Samples in the window (at most `capacity`). */
  get size(): number {
    return this.#size;
  }

  record(ms: number): void {
    if (!(ms >= 0)) return; // NaN or a clock that went backwards: not a latency
    const values = (this.#values ??= new Float64Array(this.capacity));
    values[this.#next] = ms;
    this.#next = this.#next + 1 === this.capacity ? 0 : this.#next + 1;
    if (this.#size < this.capacity) this.#size++;
    this.version++;
    this.#stats = undefined;
  }

  /** avg, p50 and p95 (nearest rank) over the window; frozen, cached until the next sample. */
  stats(): LatencyStats {
    if (this.#stats !== undefined) return this.#stats;
    const n = this.#size;
    if (n === 0 || this.#values === undefined) return NO_LATENCY;
    const sorted = this.#values.slice(0, n).sort();
    let sum = 0;
    for (let i = 0; i < n; i++) sum += sorted[i]!;
    this.#stats = Object.freeze({
      avg: sum / n,
      p50: sorted[rank(0.5, n)]!,
      p95: sorted[rank(0.95, n)]!,
      samples: n,
    });
    return this.#stats;
  }

  /** The window's samples, oldest first (a copy; for inspection). */
  samples(): number[] {
    const values = this.#values;
    if (values === undefined) return [];
    const n = this.#size;
    // Until the ring is full it fills from index 0; after, the oldest sits at #next.
    const start = n < this.capacity ? 0 : this.#next;
    const out: number[] = [];
    for (let i = 0; i < n; i++) out.push(values[(start + i) % this.capacity]!);
    return out;
  }

  clear(): void {
    this.#values = undefined;
    this.#next = 0;
    this.#size = 0;
    this.version++;
    this.#stats = undefined;
  }
}

/** Nearest-rank percentile index: the smallest sample with at least p of the window at or below it. */
function rank(p: number, n: number): number {
  return Math.max(0, Math.ceil(p * n) - 1);
}
