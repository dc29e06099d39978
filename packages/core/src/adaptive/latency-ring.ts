/** avg / p50 / p95 over the samples a ring holds now. */
export interface LatencySummary {
  avg: number;
  p50: number;
  p95: number;
  /** Samples in the ring (at most its size). */
  samples: number;
}

const EMPTY: LatencySummary = Object.freeze({ avg: 0, p50: 0, p95: 0, samples: 0 });

/**
 * The last `size` latencies of one endpoint, in ms. `record` is O(1) and allocation-free (one
 * slot write in a Float64Array); percentiles are computed on read from a sorted copy and cached
 * until the next sample, so the request path never sorts.
 *
 * Percentiles use the nearest-rank definition: pq = sorted[ceil(q * n) - 1]. It always returns
 * a latency that was actually observed, which keeps decision reasons concrete.
 */
export class LatencyRing {
  readonly #values: Float64Array;
  #next = 0;
  #count = 0;
  #summary: LatencySummary | undefined = EMPTY;
  #sorted: Float64Array | undefined;

  constructor(readonly size: number) {
    this.#values = new Float64Array(size);
  }

  get count(): number {
    return this.#count;
  }

  record(ms: number): void {
    this.#values[this.#next] = ms;
    this.#next = this.#next + 1 === this.size ? 0 : this.#next + 1;
    if (this.#count < this.size) this.#count++;
    this.#summary = undefined;
  }

  summary(): LatencySummary {
    if (this.#summary !== undefined) return this.#summary;
    const n = this.#count;
    // The scratch copy is reused across reads: its length only changes while the ring fills.
    if (this.#sorted === undefined || this.#sorted.length !== n) {
      this.#sorted = new Float64Array(n);
    }
    const sorted = this.#sorted;
    sorted.set(n === this.size ? this.#values : this.#values.subarray(0, n));
    sorted.sort();
    let sum = 0;
    for (let i = 0; i < n; i++) sum += sorted[i]!;
    this.#summary = Object.freeze({
      avg: sum / n,
      p50: rank(sorted, 0.5),
      p95: rank(sorted, 0.95),
      samples: n,
    });
    return this.#summary;
  }

  clear(): void {
    this.#next = 0;
    this.#count = 0;
    this.#summary = EMPTY;
  }
}

function rank(sorted: Float64Array, q: number): number {
  return sorted[Math.max(0, Math.ceil(q * sorted.length) - 1)]!;
}
