import { ADAPTIVE_COUNTERS, addCounters, zeroAdaptiveMetrics } from '../internal/counters';
import { endpointKey } from '../internal/endpoint';
import { evictOldest } from '../internal/evict';
import { noop } from '../internal/noop';
import type {
  AdaptiveController,
  AdaptiveMetrics,
  EndpointAdaptiveState,
} from '../types/controllers';
import type { DecisionListener } from './decision';
import type { ResolvedAdaptiveOptions } from './options';
import type { Outcome } from './outcome-ring';
import { EndpointProfile, type ProfileEnv, type SWR } from './profile';

export interface AdaptiveEngineInit {
  options: ResolvedAdaptiveOptions;
  /** The scheduler's configured concurrency; omit when there is no scheduler. */
  schedulerConcurrency?: number | undefined;
  /** Told about every decision, in order (the client applies ceilings through it). */
  onDecision?: DecisionListener | undefined;
}

/** A retry-loop adjustment for `decideRetry` (`baseDelayFactor` / `maxBaseDelay`). */
export interface RetryScale {
  baseDelayFactor: number;
  maxBaseDelay: number;
}

/**
 * The adaptive engine: per endpoint key, signals in, deterministic decisions out
 * (signals → windows → ceiling / retry throttle / strategy). It is pure bookkeeping: no timers,
 * no randomness, no clock (the time comes with each call, read by the observer from the client's
 * injected clock: it feeds the engine from event listeners), and it touches neither the scheduler nor the
 * retry loop; the client applies what it decides (`onDecision`, `ceiling`, `retryScale`,
 * `strategy`).
 *
 * Fed by the AdaptiveObserver (observer.ts), which turns lifecycle events into `started` /
 * `ended` calls.
 */
export class AdaptiveEngine {
  readonly options: ResolvedAdaptiveOptions;
  readonly #env: ProfileEnv;
  readonly #profiles = new Map<string, EndpointProfile>();
  /** Decision counters of profiles dropped past MAX_PROFILES, so `metrics()` stays exact. */
  #retired = zeroAdaptiveMetrics();
  /** Profiles created so far: a profile's age is how many were created since it was used. */
  #created = 0;

  constructor(init: AdaptiveEngineInit) {
    this.options = init.options;
    const onDecision = init.onDecision;
    const configured = init.schedulerConcurrency ?? Infinity;
    this.#env = {
      options: init.options,
      configured,
      ceilings: init.options.concurrency && init.schedulerConcurrency !== undefined,
      emit: onDecision ?? noop,
    };
  }

  /** True when concurrency decisions reach a scheduler. */
  get adaptsCeilings(): boolean {
    return this.#env.ceilings;
  }

  // ── feeding ─────────────────────────────────────────────────────────────────────────────────

  /**
   * A measured attempt started at `now` (as the observer read it: no clock read here, in an event
   * listener): it counts in `signals.active` until `ended`.
   */
  started(endpoint: string, now: number): void {
    this.#profile(endpoint, now).active++;
  }

  /**
   * A measured attempt ended: with an outcome it is a sample of `latencyMs`; without one
   * (cancelled) it only leaves `active`. A latency that is none (negative: the clock went back;
   * NaN or Infinity from the injected clock) keeps its outcome and is left out of the latency
   * ring, as intelligence leaves it out: a made-up 0 ms would pull p95 down. `now`: when it
   * ended, as the observer read it (no clock read here, in an event listener).
   */
  ended(endpoint: string, latencyMs: number, outcome: Outcome | undefined, now: number): void {
    const profile = this.#profile(endpoint, now);
    if (profile.active > 0) profile.active--;
    if (outcome !== undefined) profile.record(latencyMs, outcome, now);
  }

  // ── what the client applies ─────────────────────────────────────────────────────────────────

  /** The effective ceiling of an endpoint, or undefined when it is not adapted (yet). */
  ceiling(endpoint: string): number | undefined {
    if (!this.#env.ceilings) return undefined;
    return this.#profiles.get(endpoint)?.effective;
  }

  /**
   * The retry adjustment while throttled (undefined when nominal): the base delay is multiplied
   * by backoffFactor and capped at maxBackoffMs, but never pushed below the request's own base
   * delay. A server Retry-After still wins: decideRetry checks it before any backoff.
   */
  retryScale(endpoint: string, baseDelay: number): RetryScale | undefined {
    const profile = this.#profiles.get(endpoint);
    if (profile === undefined || profile.retryMultiplier === 1) return undefined;
    return {
      baseDelayFactor: profile.retryMultiplier,
      maxBaseDelay: Math.max(this.options.maxBackoffMs, baseDelay),
    };
  }

  /** `stale-while-revalidate` while the endpoint is degraded and the SWR switch is on. */
  strategy(endpoint: string): typeof SWR | undefined {
    return this.#profiles.get(endpoint)?.strategy;
  }

  // ── readout ─────────────────────────────────────────────────────────────────────────────────

  state(endpoint: string): EndpointAdaptiveState | undefined {
    return this.#profiles.get(endpoint)?.state();
  }

  snapshot(): { enabled: boolean; endpoints: Record<string, EndpointAdaptiveState> } {
    const endpoints: Record<string, EndpointAdaptiveState> = {};
    for (const [key, profile] of this.#profiles) endpoints[key] = profile.state();
    return { enabled: true, endpoints };
  }

  /** Engine-wide counters: the sum over endpoints, dropped profiles included. */
  metrics(): AdaptiveMetrics {
    const total = zeroAdaptiveMetrics();
    addCounters(total, this.#retired, ADAPTIVE_COUNTERS);
    for (const { counters } of this.#profiles.values()) {
      addCounters(total, counters, ADAPTIVE_COUNTERS);
    }
    return total;
  }

  /** Endpoints whose ceiling is below the configured one now (the client restores them on reset). */
  reducedEndpoints(): string[] {
    const out: string[] = [];
    for (const [key, p] of this.#profiles) if (p.effective < this.#env.configured) out.push(key);
    return out;
  }

  /** Forgets every learned profile (rule 8). */
  reset(): void {
    this.#profiles.clear();
    this.#retired = zeroAdaptiveMetrics();
  }

  /** The public AdaptiveController view of this engine. */
  facade(onReset?: () => void): AdaptiveController {
    return {
      snapshot: () => this.snapshot(),
      endpoint: (method, path) => this.state(endpointKey(method, path)),
      metrics: () => this.metrics(),
      reset: () => {
        onReset?.();
        this.reset();
      },
    };
  }

  /** `now`: when it is used, for a decision that dropping another profile makes. */
  #profile(endpoint: string, now: number): EndpointProfile {
    let profile = this.#profiles.get(endpoint);
    if (profile === undefined) {
      profile = new EndpointProfile(endpoint, this.#env);
      this.#created++;
      this.#profiles.set(endpoint, profile);
      // Two at most: a map that went over the cap (a burst of running attempts) shrinks back.
      for (let i = 0; i < 2 && this.#profiles.size > MAX_PROFILES; i++) {
        if (!this.#evict(profile, now)) break;
      }
    }
    profile.seen = this.#created;
    return profile;
  }

  /**
   * Bounds memory when paths carry ids (`/items/123`): past MAX_PROFILES, the oldest nominal
   * profile (idle, nothing decided away from the defaults, see EndpointProfile.nominal) is
   * dropped: it decides what a fresh one would. When none of the oldest is nominal but some are
   * idle (ids answered 429 each leave a throttle behind), an idle one not used while
   * MAX_PROFILES others were created goes instead, and its ceiling is lifted: state of an
   * endpoint nobody calls must not pile up forever. Decision counters stay in the totals. Both
   * scans are bounded (a burst of attempts on new endpoints must not cost O(n) each), so the map
   * may exceed the cap for a while (by the profiles with an attempt running, or too young).
   */
  #evict(keep: EndpointProfile, now: number): boolean {
    const profiles = this.#profiles;
    let idle = false;
    let dropped = evictOldest(
      profiles,
      (p) => {
        if (p !== keep && p.active === 0) idle = true;
        return p !== keep && p.nominal;
      },
      EVICTION_SCAN,
    );
    if (dropped === undefined && idle) {
      const before = this.#created - MAX_PROFILES;
      dropped = evictOldest(
        profiles,
        (p) => p !== keep && p.active === 0 && p.seen < before,
        EVICTION_SCAN,
      );
      const configured = this.#env.configured;
      if (dropped !== undefined && dropped.effective < configured) {
        this.#env.emit({
          type: 'ceiling',
          endpoint: dropped.endpoint,
          window: dropped.windows,
          at: now,
          from: dropped.effective,
          to: configured,
          reason: `unused while ${MAX_PROFILES} other endpoints came: profile dropped, ceiling back to ${configured}`,
        });
      }
    }
    if (dropped === undefined) return false;
    addCounters(this.#retired, dropped.counters, ADAPTIVE_COUNTERS);
    return true;
  }
}

/** Profiles kept at most while some can go (see #evict). */
export const MAX_PROFILES = 2000;
const EVICTION_SCAN = 64;
