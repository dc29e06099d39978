import type { Clock } from '../internal/clock';
import { addCounters } from '../internal/counters';
import { LatencyRing } from '../internal/latency-ring';
import { Pace } from '../internal/pace';
import type { IntelligenceRecommendation } from '../request/resolve';
import type { EndpointStats, LatencyStats } from '../types/controllers';
import type { ResolvedIntelligenceOptions } from './options';
import { recommendFrom } from './recommend';

/** Samples kept per endpoint: p95 reads the 7th highest of 128, and a read sorts 1 KiB at most. */
export const LATENCY_WINDOW = 128;
/**
 * Samples per window of the aging rule (see Pace): a quarter of the ring, the adaptive engine's
 * default `outcomeWindow`. Shorter, a burst's pace would age the samples at the next pause;
 * longer, an endpoint would need more samples before any of them can age.
 */
export const AGE_WINDOW = 32;

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
  /** Replaced, not cleared, when samples age (see sample). */
  latency = new LatencyRing(LATENCY_WINDOW);
  readonly pace = new Pace();
  /** Attempts in a row that ended without an answer (see sample). */
  #missed = 0;
  #recommendation: IntelligenceRecommendation | undefined;
  /** The latency stats #recommendation was made from (the ring caches them until a sample). */
  #basis: LatencyStats | undefined;

  /** No endpoint (all '') for an aggregate: the snapshot's totals, the retired records. */
  constructor(
    readonly endpoint = '',
    readonly method = '',
    readonly path = '',
  ) {}

  /** Every request for the endpoint: cache hits, flights started, dedup joins, circuit rejections. */
  get requests(): number {
    return this.cacheHits + this.cacheMisses;
  }

  /** Requests not answered from the cache: flights started, dedup joins, circuit rejections. */
  get cacheMisses(): number {
    return this.started + this.dedupPrevented + this.circuitRejected - this.refusedAfterStart;
  }

  /**
   * An attempt ended, taking `ms` (undefined: no latency, see LatencyRing.record), at `now` (the
   * clock's time its event was told at): one after a quiet spell finds the ring holding another
   * moment's samples, so they go (see Pace).
   */
  sample(ms: number | undefined, now: number): void {
    // AGE_WINDOW attempts in a row without an answer (timed out, or failed before a response)
    // drop the samples too: they no longer say how the endpoint answers, and a 3 x p95 timeout
    // that every attempt now outlasts would cut each one short, never corrected by an answer.
    const missed = ms === undefined ? ++this.#missed : (this.#missed = 0);
    if (this.pace.sample(now, AGE_WINDOW) || missed === AGE_WINDOW) {
      this.latency = new LatencyRing(LATENCY_WINDOW);
    }
    this.latency.record(ms);
  }

  /**
   * Cached until the latency window changes; none while the samples held are from before a quiet
   * spell (the next sample drops them).
   */
  recommend(
    options: ResolvedIntelligenceOptions,
    clock: Pick<Clock, 'now'>,
  ): IntelligenceRecommendation | undefined {
    if (this.pace.stale(clock.now())) return undefined;
    // The ring's stats are one object until its next sample: a new one is a changed window.
    const stats = this.latency.stats();
    if (stats !== this.#basis) {
      this.#basis = stats;
      this.#recommendation = recommendFrom(stats, options);
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
export const ENDPOINT_COUNTERS = [
  'started',
  'successes',
  'failures',
  'cacheHits',
  'dedupPrevented',
  'retriesPerformed',
  'retriesRecovered',
  'rateLimited',
  'timeouts',
  'cancels',
  'circuitRejected',
  'refusedAfterStart',
] as const satisfies readonly (keyof EndpointRecord)[];

/** Adds a record's counters into an aggregate (latency is not carried over). */
export function foldCounters(into: EndpointRecord, from: EndpointRecord): void {
  addCounters(into, from, ENDPOINT_COUNTERS);
}
