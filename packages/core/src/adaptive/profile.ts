import { zeroAdaptiveMetrics } from '../internal/counters';
import { LatencyRing } from '../internal/latency-ring';
import { Pace } from '../internal/pace';
import type { EndpointAdaptiveState } from '../types/controllers';
import type { AdaptiveDecision } from './decision';
import type { ResolvedAdaptiveOptions } from './options';
import { type Outcome, OutcomeRing } from './outcome-ring';
import { judgeWindow, type WindowVerdict } from './window';

export const SWR = 'stale-while-revalidate';

/** What a profile needs from the engine that owns it. */
export interface ProfileEnv {
  readonly options: ResolvedAdaptiveOptions;
  /** The scheduler's configured concurrency; Infinity when there is no scheduler. */
  readonly configured: number;
  /** The concurrency switch is on and a scheduler exists to apply the ceiling. */
  readonly ceilings: boolean;
  /** Passes a decision on to the engine's listener (counters are already updated). */
  emit(decision: AdaptiveDecision): void;
}

/**
 * Everything the engine has learned about one endpoint key, and the three decisions it drives:
 *
 * - ceiling (concurrency rules 1-4): `degradeSamples` consecutive pressured windows → −1,
 *   `recoverySamples` consecutive healthy windows → +1, each only when at least
 *   `changeCooldown` windows have closed since the last ceiling change; clamped to
 *   [minConcurrency, configured]. A streak is not reset by a change: under sustained pressure
 *   the cooldown alone paces the next step, so a change is always exactly one step.
 * - retry throttle (the throttle table): one window with 429 pressure → throttled;
 *   `recoverySamples` consecutive windows without 429 pressure → nominal. No cooldown: the
 *   server's "slow down" is honoured at once.
 * - strategy (rule 6): the degraded flag is "ceiling below configured" or "p95 >= swrLatencyMs"
 *   (the latter latched until `recoverySamples` windows below it); with the
 *   staleWhileRevalidate switch, a degraded endpoint reads with stale-while-revalidate.
 *
 * A window closes after every `outcomeWindow` recorded samples (see README "Adaptive engine"),
 * so the state changes only inside `record`, and only as a function of the recorded history
 * (each sample with its time: samples age after a quiet spell, see record).
 */
export class EndpointProfile {
  /** Replaced, not cleared, when samples age (see record). */
  latency: LatencyRing;
  outcomes: OutcomeRing;
  readonly counters = zeroAdaptiveMetrics();
  /** Requests measured as started and not yet ended. */
  active = 0;
  /** The engine's count of created profiles when this one was last used (see its #evict). */
  seen = 0;
  /** Windows closed so far. */
  windows = 0;
  effective: number;
  retryMultiplier = 1;
  throttled = false;
  strategy: typeof SWR | undefined = undefined;
  degradedSince: number | undefined = undefined;

  /** Counts the samples into windows, and tells a quiet spell (see record). */
  readonly #pace = new Pace();
  #pressuredStreak = 0;
  #healthyStreak = 0;
  #lastChange: 'down' | 'up' | undefined = undefined;
  #lastChangeWindow = -Infinity;
  #cleanStreak = 0;
  #slow = false;
  #fastStreak = 0;
  /** The last window was healthy and (with the SWR switch) below swrLatencyMs. */
  #lastRecovering = false;
  #reason: string;
  #retryReason: string;
  #strategyReason: string;

  constructor(
    readonly endpoint: string,
    private readonly env: ProfileEnv,
  ) {
    const o = env.options;
    this.latency = new LatencyRing(o.latencyWindow);
    this.outcomes = new OutcomeRing(o.outcomeWindow);
    this.effective = env.configured;
    this.#reason = env.ceilings
      ? `no window closed yet: ceiling ${env.configured}`
      : ceilingsOffReason(env);
    this.#retryReason = o.rateLimit
      ? 'no 429 pressure seen: nominal backoff'
      : 'rateLimit switch off: backoff not adapted';
    this.#strategyReason = o.staleWhileRevalidate
      ? 'not degraded: reads use their configured strategy'
      : 'staleWhileRevalidate switch off: strategy not adapted';
  }

  /**
   * Nothing running and nothing decided away from the defaults: the ceiling is the configured
   * one, backoff is not scaled, the strategy is not overridden. Such a profile decides what a
   * fresh one would, so the engine may drop it (only its partial window is lost).
   */
  get nominal(): boolean {
    return (
      this.active === 0 &&
      this.effective === this.env.configured &&
      this.retryMultiplier === 1 &&
      !this.throttled &&
      this.strategy === undefined &&
      this.degradedSince === undefined
    );
  }

  /**
   * Adds one measured request; closes a window every `outcomeWindow` samples. Samples age (Pace,
   * the rule intelligence follows too): one that comes after a quiet spell (a gap longer than
   * the last window took, and than a minute)
   * finds the rings holding another moment's latencies and outcomes, so they go, with the window
   * left unfinished, and the next window is judged on its own samples. Decisions and streaks
   * stand. No pace is known until a window closes afresh, so a pace that slows for good drops the
   * samples once, not at every sample. A gap the clock cannot tell (NaN, Infinity, negative) ages
   * nothing.
   */
  record(latencyMs: number, outcome: Outcome, now: number): void {
    const o = this.env.options;
    if (this.#pace.sample(now, o.outcomeWindow)) {
      this.latency = new LatencyRing(o.latencyWindow);
      this.outcomes = new OutcomeRing(o.outcomeWindow);
    }
    this.latency.record(latencyMs);
    this.outcomes.record(outcome);
    if (this.#pace.n > 0) return;
    this.windows++;
    const v = judgeWindow(
      {
        // No latency sample yet (a clock that cannot tell time): p95 unknown, not 0 ms, so the
        // window is never healthy (nor slow) on latency it never saw.
        p95: this.latency.size > 0 ? this.latency.stats().p95 : Number.NaN,
        errors: this.outcomes.errors,
        rateLimited: this.outcomes.rateLimited,
        outcomes: this.outcomes.count,
      },
      o,
    );
    this.#lastRecovering = v.kind === 'healthy' && !(o.staleWhileRevalidate && v.slow);
    this.#ceiling(v, o, now);
    if (o.rateLimit) this.#throttle(v, o, now);
    this.#staleness(v, o, now);
  }

  /** Tells the engine's listener about a decision taken as the current window closed. */
  #decide(
    type: AdaptiveDecision['type'],
    now: number,
    reason: string,
    fields: Record<string, unknown>,
  ): void {
    this.env.emit({
      type,
      endpoint: this.endpoint,
      window: this.windows,
      at: now,
      ...fields,
      reason,
    } as AdaptiveDecision);
  }

  // ── ceiling ─────────────────────────────────────────────────────────────────────────────────

  /**
   * Pressured and healthy windows mirror each other: a streak of `degradeSamples` (or
   * `recoverySamples`) moves the ceiling one step down (up) unless it sits at its floor (the
   * configured ceiling) or the cooldown holds it. A deadband window breaks both streaks.
   */
  #ceiling(v: WindowVerdict, o: ResolvedAdaptiveOptions, now: number): void {
    const pressured = v.kind === 'pressured';
    const healthy = v.kind === 'healthy';
    this.#pressuredStreak = pressured ? this.#pressuredStreak + 1 : 0;
    this.#healthyStreak = healthy ? this.#healthyStreak + 1 : 0;
    const env = this.env;
    const eff = this.effective;
    const window = describeWindow(v, o);
    if (!env.ceilings) {
      this.#reason = `${window}; ${ceilingsOffReason(env)}`;
      return;
    }
    if (!pressured && !healthy) {
      this.#reason = `${window}: holding ceiling ${eff}`;
      return;
    }
    const streak = pressured ? this.#pressuredStreak : this.#healthyStreak;
    const what = `${window} for ${plural(streak, 'window')}`;
    const [samplesName, samples] = pressured
      ? ['degradeSamples', o.degradeSamples]
      : ['recoverySamples', o.recoverySamples];
    const atLimit = pressured ? eff <= o.minConcurrency : eff >= env.configured;
    const since = this.windows - this.#lastChangeWindow;
    let reason: string;
    if (streak < samples && !(healthy && atLimit)) {
      reason = `${what} (${samplesName} ${samples}): holding ceiling ${eff}`;
    } else if (atLimit) {
      reason = pressured
        ? // A floor above the configured concurrency: the configured one is the ceiling held.
          `${what}, but the ceiling is at ${eff < o.minConcurrency ? `the configured ${eff} < ` : ''}minConcurrency ${o.minConcurrency}; the backend is saturated even at the floor`
        : `${what}: ceiling at the configured ${env.configured}`;
    } else if (since < o.changeCooldown) {
      reason = `${what}; cooling down (${since} of changeCooldown ${o.changeCooldown} windows since the last change): holding ceiling ${eff}`;
    } else {
      const to = pressured ? eff - 1 : eff + 1;
      reason = `${what}: ceiling ${eff} → ${to}`;
      this.#reason = reason;
      this.effective = to;
      this.#lastChange = pressured ? 'down' : 'up';
      this.#lastChangeWindow = this.windows;
      this.counters[pressured ? 'concurrencyReductions' : 'concurrencyRecoveries']++;
      this.counters.decisions++;
      this.#decide('ceiling', now, reason, { from: eff, to });
    }
    this.#reason = reason;
  }

  // ── retry throttle ──────────────────────────────────────────────────────────────────────────

  #throttle(v: WindowVerdict, o: ResolvedAdaptiveOptions, now: number): void {
    const share = `429 share ${fmtRatio(v.signals.rateLimited, v.signals.outcomes)}`;
    const ratio = `rateLimitRatio ${o.rateLimitRatio}`;
    let mode: 'nominal' | 'throttled';
    let multiplier = 1;
    let reason: string;
    if (v.rateLimited) {
      this.#cleanStreak = 0;
      if (this.throttled) {
        this.#retryReason = `${share} >= ${ratio}: still throttled`;
        return;
      }
      this.throttled = true;
      this.counters.throttles++;
      this.counters.decisions++;
      mode = 'throttled';
      if (o.retry) multiplier = o.backoffFactor;
      reason = `${share} >= ${ratio}: throttled, ${
        o.retry
          ? `retry base delay x${o.backoffFactor} (at most maxBackoffMs ${o.maxBackoffMs})`
          : 'retry switch off, so backoff is unchanged'
      }`;
    } else {
      if (!this.throttled) return;
      const what = `${share} < ${ratio} for ${plural(++this.#cleanStreak, 'window')}`;
      if (this.#cleanStreak < o.recoverySamples) {
        this.#retryReason = `${what} (recoverySamples ${o.recoverySamples}): still throttled`;
        return;
      }
      this.throttled = false;
      mode = 'nominal';
      reason = `${what}: back to nominal backoff`;
    }
    this.#retryReason = reason;
    if (multiplier !== this.retryMultiplier) this.counters.retryChanges++;
    this.retryMultiplier = multiplier;
    this.#decide('retry', now, reason, { mode, multiplier });
  }

  // ── strategy (shared degraded flag) ─────────────────────────────────────────────────────────

  #staleness(v: WindowVerdict, o: ResolvedAdaptiveOptions, now: number): void {
    const swr = o.staleWhileRevalidate;
    if (swr) {
      if (v.slow) {
        this.#slow = true;
        this.#fastStreak = 0;
      } else if (this.#slow && ++this.#fastStreak >= o.recoverySamples) {
        this.#slow = false;
      }
    }
    const configured = this.env.configured;
    const reduced = this.effective < configured;
    const degraded = reduced || this.#slow;
    if (!degraded) this.degradedSince = undefined;
    else this.degradedSince ??= now;
    if (!swr) return;

    const p95 = fmtP95(v.signals.p95);
    const swrText = `swrLatencyMs ${o.swrLatencyMs}`;
    const reason = this.#slow
      ? v.slow
        ? `${p95} >= ${swrText}: reads use ${SWR}`
        : `${p95} < ${swrText} for ${plural(this.#fastStreak, 'window')} (recoverySamples ${o.recoverySamples}): reads still use ${SWR}`
      : reduced
        ? `ceiling reduced to ${this.effective} of ${configured}: reads use ${SWR}`
        : `${v.signals.p95 >= 0 ? `${p95} < ${swrText}` : p95} and ceiling at the configured ${configured}: reads use their configured strategy`;
    this.#strategyReason = reason;
    const strategy = degraded ? SWR : undefined;
    if (strategy === this.strategy) return;
    this.strategy = strategy;
    this.#decide('strategy', now, reason, { strategy });
  }

  // ── readout ─────────────────────────────────────────────────────────────────────────────────

  get mode(): EndpointAdaptiveState['mode'] {
    if (this.effective >= this.env.configured) return 'nominal';
    return this.#lastChange === 'up' ? 'recovering' : 'reducing';
  }

  get health(): EndpointAdaptiveState['health'] {
    if (this.throttled) return 'throttled';
    if (this.degradedSince === undefined) return 'good';
    return this.#lastRecovering ? 'recovering' : 'degraded';
  }

  state(): EndpointAdaptiveState {
    const l = this.latency.stats();
    const state: EndpointAdaptiveState = {
      endpoint: this.endpoint,
      configured: this.env.configured,
      effective: this.effective,
      mode: this.mode,
      health: this.health,
      reason: this.#reason,
      retryMultiplier: this.retryMultiplier,
      retryMode: this.throttled ? 'throttled' : 'nominal',
      retryReason: this.#retryReason,
      strategyReason: this.#strategyReason,
      signals: {
        ...l,
        errorRatio: this.outcomes.errorRatio,
        rateLimitRatio: this.outcomes.rateLimitRatio,
        active: this.active,
      },
      counters: { ...this.counters },
    };
    if (this.strategy !== undefined) state.strategy = this.strategy;
    if (this.degradedSince !== undefined) state.degradedSince = this.degradedSince;
    return state;
  }
}

function ceilingsOffReason(env: ProfileEnv): string {
  return env.options.concurrency
    ? 'no scheduler, so the concurrency switch has nothing to adapt'
    : 'concurrency switch off: ceiling not adapted';
}

/**
 * The window as reasons quote it, e.g. "p95 2400 ms >= highLatencyMs 2000 and 429 share 0.25 >=
 * rateLimitRatio 0.2" (pressured: every cause), "p95 300 ms < lowLatencyMs 1000" (healthy).
 */
function describeWindow(v: WindowVerdict, o: ResolvedAdaptiveOptions): string {
  const s = v.signals;
  const p95 = fmtP95(s.p95);
  if (v.kind === 'healthy') return `${p95} < lowLatencyMs ${o.lowLatencyMs}`;
  if (v.kind === 'deadband') {
    return s.p95 >= 0
      ? `${p95} is in the deadband [lowLatencyMs ${o.lowLatencyMs}, highLatencyMs ${o.highLatencyMs})`
      : p95;
  }
  return v.causes
    .map((cause) =>
      cause === 'latency'
        ? `${p95} >= highLatencyMs ${o.highLatencyMs}`
        : cause === 'rateLimit'
          ? `429 share ${fmtRatio(s.rateLimited, s.outcomes)} >= rateLimitRatio ${o.rateLimitRatio}`
          : `error share ${fmtRatio(s.errors, s.outcomes)} >= errorRatio ${o.errorRatio}`,
    )
    .join(' and ');
}

/** NaN: the window had no latency sample to take a p95 of. */
function fmtP95(ms: number): string {
  return ms >= 0 ? `p95 ${Math.round(ms)} ms` : 'no latency samples';
}

function fmtRatio(part: number, whole: number): string {
  return whole === 0 ? '0' : String(Math.round((part / whole) * 100) / 100);
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}
