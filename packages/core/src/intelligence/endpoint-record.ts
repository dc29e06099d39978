import { addCounters } from '../internal/counters';
import { LatencyRing } from '../internal/latency-ring';
import type { IntelligenceRecommendation } from '../request/resolve';
import type { EndpointStats } from '../types/controllers';
import type { ResolvedIntelligenceOptions } from './options';
import { recommendFrom } from './recommend';

/** Samples kept per endpoint: p95 reads the 7th highest of 128, and a read sorts 1 KiB at most. */
export const LATENCY_WINDOW = 128;

/**
 * The raw counters of one endpoint (`METHOD pathname`). Each lifecycle event increments exactly
 * one or two fields here; every derived figure (requests, cache misses, the summary, rates) is
 * computed when a snapshot is read, so the request path does no extra arithmetic.
 */
export class EndpointRecord {
  /** Flights started (`request` events). */
  started = 0;
  successes = 0;
  failures = 0;
  cacheHits = 0;
  dedupPrevented = 0;
  retriesPerformed = 0;
  retriesRecovered = 0;
  rateLimited = 0;
  timeouts = 0;
  cancels = 0;
  circuitRejected = 0;
  /**
   * Of `circuitRejected`, the jobs the scheduler's pre-start gate refused: they had started
   * (`request`) too, so `requests` counts them once.
   */
  refusedAfterStart = 0;
  /** Set on every event; the eviction clock clears it (a second chance for busy endpoints). */
  touched = true;
  readonly latency = new LatencyRing(LATENCY_WINDOW);
  #recommendation: IntelligenceRecommendation | undefined;
  #recommendedAt = -1;

  constructor(
    readonly endpoint: string,
    readonly method: string,
    readonly path: string,
  ) {}

  /** Every request for the endpoint: cache hits, flights started, dedup joins, circuit rejections. */
  get requests(): number {
    return this.cacheHits + this.cacheMisses;
  }

  /** Requests not answered from the cache: flights started, dedup joins, circuit rejections. */
  get cacheMisses(): number {
    return this.started + this.dedupPrevented + this.circuitRejected - this.refusedAfterStart;
  }

  /** Cached until the latency window changes. */
  recommend(options: ResolvedIntelligenceOptions): IntelligenceRecommendation | undefined {
    const { latency } = this;
    if (latency.version !== this.#recommendedAt) {
      this.#recommendation = recommendFrom(latency.stats(), options);
      this.#recommendedAt = latency.version;
    }
    return this.#recommendation;
  }
}

/** EndpointStats' counts, in its order: counters of the record, and its two derived figures. */
export const STAT_COUNTS = [
  'requests',
  'successes',
  'failures',
  'cacheHits',
  'cacheMisses',
  'dedupPrevented',
  'retriesPerformed',
  'retriesRecovered',
  'rateLimited',
  'timeouts',
  'cancels',
] as const satisfies readonly (keyof EndpointRecord & keyof EndpointStats)[];

/** The counters of a record, summed when a record is folded into an aggregate. */
export const ENDPOINT_COUNTERS = /* @__PURE__ */ recordCounters();

function recordCounters() {
  return [
    'started',
    ...STAT_COUNTS.filter(
      (key): key is Exclude<typeof key, 'requests' | 'cacheMisses'> =>
        key !== 'requests' && key !== 'cacheMisses',
    ),
    'circuitRejected',
    'refusedAfterStart',
  ] as const satisfies readonly (keyof EndpointRecord)[];
}

/** Adds a record's counters into an aggregate (latency is not carried over). */
export function foldCounters(into: EndpointRecord, from: EndpointRecord): void {
  addCounters(into, from, ENDPOINT_COUNTERS);
}
