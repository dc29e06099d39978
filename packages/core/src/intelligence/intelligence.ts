import { isHttpError } from '../errors/http-error';
import { isCircuitOpenError } from '../errors/is-circuit-open-error';
import { isTimeoutError } from '../errors/timeout-error';
import { type Emitter, onEach } from '../events/emitter';
import type { Clock } from '../internal/clock';
import { zeroAdaptiveMetrics } from '../internal/counters';
import { endpointKey, splitEndpoint } from '../internal/endpoint';
import { evictOldest } from '../internal/evict';
import { ringSamples } from '../internal/latency-ring';
import { noop } from '../internal/noop';
import type { IntelligenceRecommendation } from '../request/resolve';
import type {
  AdaptiveMetrics,
  CircuitState,
  EndpointStats,
  IntelligenceController,
  IntelligenceSnapshot,
  IntelligenceSummary,
} from '../types/controllers';
import type { ClientEvents } from '../types/events';
import { EndpointRecord, foldCounters, STAT_COUNTS } from './endpoint-record';
import { HitTally } from './hit-tally';
import type { ResolvedIntelligenceOptions } from './options';
import { emptySummary } from './summary';

/** What the snapshot reads from the circuit breaker (read at snapshot time, never fed by it). */
export interface CircuitView {
  stateOf(endpoint: string): CircuitState;
  failuresOf(endpoint: string): number;
  counts(): { open: number; halfOpen: number; closed: number };
}

export interface IntelligenceSources {
  /** Circuit states for the snapshot; none (no breaker): every circuit closed. */
  circuits?: CircuitView;
  /** The adaptive engine's counters; default zeros (no adaptive engine). */
  adaptive?: () => AdaptiveMetrics;
  /** When samples come, so they age (see EndpointRecord.sample): the client's clock. */
  clock: Pick<Clock, 'now'>;
}

/**
 * Request observation. It learns only from lifecycle events (`observe`), never by wrapping
 * fetch, and keeps raw per-endpoint counters plus a latency ring per endpoint; summary figures
 * and rates are derived on read. See the README's "Intelligence" section for the exact meaning
 * of every counter.
 *
 * Cost per event: one Map lookup by the payload's `endpoint` and one or two increments; no
 * allocation except the first time an endpoint is seen.
 */
/** Per-endpoint records kept at most (see #evictOne). */
export const MAX_ENDPOINTS = 2000;

export class Intelligence implements IntelligenceController {
  readonly #options: ResolvedIntelligenceOptions;
  /** Per endpoint key (read by latenciesOf). */
  readonly records = new Map<string, EndpointRecord>();
  /** Counters of records evicted past MAX_ENDPOINTS, so the summary stays exact. */
  #retired = new EndpointRecord();
  readonly #circuits: CircuitView | undefined;
  readonly #adaptive: () => AdaptiveMetrics;
  readonly #clock: Pick<Clock, 'now'>;
  /** Flights started and not yet ended. Live state, not history: `reset()` keeps it. */
  #active = 0;
  /** The record used last (see #record); cleared with the records. */
  #last: EndpointRecord | undefined;

  constructor(options: ResolvedIntelligenceOptions, sources: IntelligenceSources) {
    this.#options = options;
    this.#circuits = sources.circuits;
    this.#adaptive = sources.adaptive ?? zeroAdaptiveMetrics;
    this.#clock = sources.clock;
    this.recommends =
      options.enabled && (options.adaptiveTimeout || options.adaptiveStaleWhileRevalidate);
  }

  get enabled(): boolean {
    return this.#options.enabled;
  }

  /** True when a recommendation can ever be made (enabled with an adaptive switch on). */
  readonly recommends: boolean;

  /**
   * Subscribes to the lifecycle events; returns the unsubscribe. A disabled intelligence
   * subscribes to nothing, so it records nothing and costs nothing. `cache-hit` is the one
   * event not taken from the emitter: the client counts it in `hits` where it emits it.
   * Each handler is one Map lookup (see #record) and an increment or two.
   */
  observe(events: Emitter<ClientEvents>): () => void {
    if (!this.#options.enabled) return noop;
    return onEach(events, {
      request: (e) => {
        this.#active++;
        this.#record(e.endpoint).started++;
      },
      success: (e) => {
        this.#active--;
        const r = this.#record(e.endpoint);
        r.successes++;
        if (e.tracker.attempts > 1) r.retriesRecovered++;
        r.sample(e.attemptMs, e.tracker.endedAt);
      },
      error: (e) => {
        this.#active--;
        const r = this.#record(e.endpoint);
        // A job the scheduler's pre-start gate refused (its circuit opened while it waited) is a
        // circuit rejection (counted by its `circuit-rejected` event), not a failure of the
        // endpoint, and it never reached the network.
        if (isCircuitOpenError(e.error)) {
          r.refusedAfterStart++;
          return;
        }
        r.failures++;
        // No attempt made (its deadline ran out in the scheduler's queue): no attempt timed out.
        // One that ran out between two attempts is no timeout either (see countAttemptError).
        if (e.tracker.attempts) countAttemptError(r, e.error);
        // When the flight ended, as the client read it (NaN: its clock could not tell): read
        // again here, a throwing clock threw in this listener, reported as an app's listener.
        r.sample(e.attemptMs, e.tracker.endedAt);
      },
      retry: (e) => {
        const r = this.#record(e.endpoint);
        r.retriesPerformed++;
        countAttemptError(r, e.error);
        // When the client scheduled the retry, as its tracker has it: no clock read here.
        r.sample(e.attemptMs, e.tracker.retriedAt);
      },
      cancel: (e) => {
        if (e.final) this.#active--;
        this.#record(e.endpoint).cancels++;
      },
      dedup: (e) => {
        this.#record(e.endpoint).dedupPrevented++;
      },
      'circuit-rejected': (e) => {
        this.#record(e.endpoint).circuitRejected++;
      },
    });
  }

  /** The adaptive timeout / strategy for an endpoint, or undefined (see recommend.ts). */
  recommend(endpoint: string): IntelligenceRecommendation | undefined {
    if (!this.recommends) return undefined;
    return this.records.get(endpoint)?.recommend(this.#options, this.#clock);
  }

  // ── IntelligenceController ────────────────────────────────────────────────────────────────

  snapshot(): IntelligenceSnapshot {
    this.hits.flush();
    const endpoints: EndpointStats[] = [];
    const s = emptySummary(this.#adaptive());
    // Disabled, nothing was recorded (observe subscribed to nothing): every count stays 0.
    // The totals are the counters of every record, retired ones included, summed by one fold;
    // the derived figures (requests, cache misses) are linear in them.
    const total = new EndpointRecord();
    foldCounters(total, this.#retired);
    for (const r of this.records.values()) {
      endpoints.push(this.#statsOf(r));
      foldCounters(total, r);
    }
    // Each summary count totals the record counter of its name (SUMMARY_FROM renames two).
    for (const key in s) {
      const from = SUMMARY_FROM[key] ?? key;
      if (from in total) (s as unknown as Counts)[key] = (total as unknown as Counts)[from]!;
    }
    s.activeRequests = this.#active;
    // 0 before any request (0 / 0 is no rate).
    for (const [rate, count] of RATES) s[rate] = s.totalRequests && s[count] / s.totalRequests;
    // No breaker (or intelligence disabled): the summary's own, every count 0.
    if (this.#circuits && this.enabled) s.circuits = this.#circuits.counts();
    return { summary: s, endpoints };
  }

  endpoint(method: string, pathname: string): EndpointStats | undefined {
    this.hits.flush();
    const r = this.records.get(endpointKey(method, pathname));
    return r === undefined ? undefined : this.#statsOf(r);
  }

  /**
   * Forgets every counter and latency sample. `activeRequests` is live state, so it survives;
   * a flight in progress during reset is counted at its end under a fresh record.
   */
  reset(): void {
    this.records.clear();
    this.#retired = new EndpointRecord();
    this.#last = undefined;
    this.hits.clear();
  }

  /**
   * The `cache-hit` event. The client takes it through this tally inline, at the moment it
   * emits the event, instead of through a listener: a payload and a dispatch per hit would cost
   * more than the hit itself (bench/circuit.bench.mjs). See HitTally.
   */
  readonly hits = new HitTally((endpoint, n) => {
    this.#record(endpoint).cacheHits += n;
  });

  /** The endpoint's record, created on first sight. A one-entry cache in front of the Map makes
   * repeated events for one endpoint (a hot cached read) skip the hash lookup. */
  #record(endpoint: string): EndpointRecord {
    const last = this.#last;
    if (last !== undefined && last.endpoint === endpoint) {
      last.touched = true;
      return last;
    }
    let r = this.records.get(endpoint);
    if (r === undefined) {
      const { method, path } = splitEndpoint(endpoint);
      r = new EndpointRecord(endpoint, method, path);
      this.records.set(endpoint, r);
      if (this.records.size > MAX_ENDPOINTS) this.#evictOne(r);
    } else r.touched = true;
    this.#last = r;
    return r;
  }

  /**
   * Bounds memory when paths carry ids (`/items/123`): past MAX_ENDPOINTS records, the oldest
   * record not touched since the clock last passed it is folded into #retired and dropped
   * ("second chance", amortized O(1)). Summary totals stay exact; the dropped endpoint's own
   * stats and latency are forgotten.
   */
  #evictOne(keep: EndpointRecord): void {
    // Every record passed over loses its second chance, so one full turn always finds one.
    // (#record sets the one-entry cache right after, so it never names the dropped record.)
    const dropped = evictOldest(
      this.records,
      (r) => (r !== keep && !r.touched) || (r.touched = false),
      this.records.size + 1,
    );
    if (dropped) foldCounters(this.#retired, dropped);
  }

  #statsOf(r: EndpointRecord): EndpointStats {
    const stats: Record<string, unknown> = { method: r.method, path: r.path };
    for (const key of STAT_COUNTS) stats[key] = r[key];
    stats.latency = { ...r.latency.stats() };
    stats.circuit = this.#circuits?.stateOf(r.endpoint) ?? 'closed';
    stats.circuitFailures = this.#circuits?.failuresOf(r.endpoint) ?? 0;
    stats.circuitRejected = r.circuitRejected;
    return stats as unknown as EndpointStats;
  }
}

type Counts = Record<string, number>;

/** Summary counts named other than the record counter they total (the rest share its name). */
const SUMMARY_FROM: Record<string, string> = {
  totalRequests: 'requests',
  deduplicated: 'dedupPrevented',
};

/** Each summary rate and the count it divides by totalRequests. */
const RATES = [
  ['cacheHitRate', 'cacheHits'],
  ['dedupRate', 'deduplicated'],
  ['retryRate', 'retriesPerformed'],
  ['failureRate', 'failures'],
  ['rateLimitRate', 'rateLimited'],
] as const satisfies readonly (readonly [keyof IntelligenceSummary, keyof IntelligenceSummary])[];

/**
 * The latency samples intelligence holds for an endpoint, oldest first; empty when none (for
 * `inspect(client).latencies()`, beside the class so apps that never inspect do not carry it).
 */
export function latenciesOf(intelligence: Intelligence, endpoint: string): number[] {
  const record = intelligence.records.get(endpoint);
  return record === undefined ? [] : ringSamples(record.latency);
}

/**
 * A failed attempt (from `retry`, or the last one from `error`): 429 and timeout counters. A
 * deadline with a `cause` ran out between two attempts, none running: its cause, the error the
 * flight waited to retry after, was counted by that `retry`.
 */
function countAttemptError(r: EndpointRecord, error: unknown): void {
  if (isTimeoutError(error)) r.timeouts += error.kind === 'deadline' && error.cause ? 0 : 1;
  else if (isHttpError(error) && error.status === 429) r.rateLimited++;
}
