import type { LatencyStats } from '../types/controllers';
import { MAX_TIMER_MS } from './clock';
import { freeze } from './freeze';

export const NO_LATENCY: LatencyStats = /* @__PURE__ */ freeze({
  avg: 0,
  p50: 0,
  p95: 0,
  samples: 0,
});

/**
 * The last `capacity` latency samples of one endpoint, in ms, in a fixed-size ring: the one ring
 * intelligence (per-endpoint stats, recommendations) and the adaptive engine (its windows' p95)
 * both keep.
 *
 * Invariants: `record` is O(1) and never sorts or allocates (the typed array is allocated with the
 * first sample, so an endpoint seen once costs no buffer until it has a latency);
 * `values[0 .. size)` are the window's samples (the ring fills from index 0); `stats()` copies
 * and sorts at most `capacity` numbers into a scratch array reused across reads, and its result
 * is cached until the next sample, so reading it on every request costs nothing between samples.
 *
 * Percentiles use the nearest-rank definition, pq = sorted[ceil(q * n) - 1]: always a latency
 * that was actually observed, which keeps decision reasons concrete.
 */
export class LatencyRing {
  /** The samples, `values[0 .. size)` (allocated with the first sample). */
  values: Float64Array | undefined;
  #sorted: Float64Array | undefined;
  /**
   * Samples recorded so far, so bumped on every sample (readers cache what they derive from the
   * window by it): the one count the ring keeps. The next sample goes at `version % capacity`,
   * the oldest one once the ring is full.
   */
  version = 0;
  #stats: LatencyStats | undefined;

  /** `capacity`: an integer >= 1, checked by the options that set it (or a constant). */
  constructor(readonly capacity: number) {}

  /** Samples in the window (at most `capacity`). */
  get size(): number {
    return Math.min(this.version, this.capacity);
  }

  /**
   * Adds a sample; no-op for what is not a latency (none measured, NaN, a clock gone back, or
   * one that jumped: past the longest timer, 2^31-1 ms, which caps every timeout and deadline;
   * a jump to a real epoch, ~1e12 ms, would pin p95 and the average for a whole window).
   */
  record(ms: number | undefined): void {
    if (ms === undefined || !(ms >= 0 && ms <= MAX_TIMER_MS)) return;
    (this.values ??= new Float64Array(this.capacity))[this.version++ % this.capacity] = ms;
    this.#stats = undefined;
  }

  /** avg, p50 and p95 (nearest rank) over the window; frozen, cached until the next sample. */
  stats(): LatencyStats {
    if (this.#stats !== undefined) return this.#stats;
    const n = this.size;
    const values = this.values;
    if (values === undefined) return NO_LATENCY; // allocated with the first sample
    // The scratch array's length changes only while the ring fills.
    if (this.#sorted?.length !== n) this.#sorted = new Float64Array(n);
    const sorted = this.#sorted;
    sorted.set(n === this.capacity ? values : values.subarray(0, n));
    sorted.sort();
    let sum = 0;
    for (let i = 0; i < n; i++) sum += sorted[i]!;
    this.#stats = freeze({
      avg: sum / n,
      p50: sorted[rank(0.5, n)]!,
      p95: sorted[rank(0.95, n)]!,
      samples: n,
    });
    return this.#stats;
  }
}

/**
 * Nearest-rank percentile index: the smallest sample with at least p of the window at or below
 * it. `n` >= 1 (stats() reads no empty ring), so the index is never negative.
 */
function rank(p: number, n: number): number {
  return Math.ceil(p * n) - 1;
}

/**
 * The ring's samples, oldest first (a copy), for `inspect(client).latencies()`: a function beside
 * the class, so an app that never inspects does not carry it.
 */
export function ringSamples(ring: LatencyRing): number[] {
  const { values, size, capacity } = ring;
  if (values === undefined) return [];
  // Until the ring is full it fills from index 0; after, the oldest sits at `next`.
  const start = size < capacity ? 0 : ring.version % capacity;
  const out: number[] = [];
  for (let i = 0; i < size; i++) out.push(values[(start + i) % capacity]!);
  return out;
}
