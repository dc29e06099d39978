import { zeroAdaptiveMetrics } from '../internal/counters';
import { LatencyRing } from '../internal/latency-ring';
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
 * so the state changes only inside `record`, and only as a function of the recorded history.
 */
export class EndpointProfile {
  readonly latency: LatencyRing;
  readonly outcomes: OutcomeRing;
  readonly counters = zeroAdaptiveMetrics();
  /** Requests measured as started and not yet ended. */
  active = 0;
  /** Windows closed so far. */
  windows = 0;
  effective: number;
  retryMultiplier = 1;
  throttled = false;
  strategy: typeof SWR | undefined = undefined;
  degradedSince: number | undefined = undefined;

  #pending = 0;
  #pressuredStreak = 0;
  #healthyStreak = 0;
  #lastChange: 'down' | 'up' | undefined = undefined;
  #lastChangeWindow = Number.NEGATIVE_INFINITY;
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

  /** Adds one measured request; closes a window every `outcomeWindow` samples. */
  record(latencyMs: number, outcome: Outcome, now: number): void {
    this.latency.record(latencyMs);
    this.outcomes.record(outcome);
    if (++this.#pending < this.env.options.outcomeWindow) return;
    this.#pending = 0;
    this.#close(now);
  }

  #close(now: number): void {
    this.windows++;
    const verdict = judgeWindow(
      {
        p95: this.latency.stats().p95,
        errors: this.outcomes.errors,
        rateLimited: this.outcomes.rateLimited,
        outcomes: this.outcomes.count,
      },
      this.env.options,
    );
    this.#lastRecovering =
      verdict.kind === 'healthy' && !(this.env.options.staleWhileRevalidate && verdict.slow);
    this.#ceiling(verdict, now);
    this.#throttle(verdict, now);
    this.#staleness(verdict, now);
  }

  // ── ceiling ─────────────────────────────────────────────────────────────────────────────────

  #ceiling(v: WindowVerdict, now: number): void {
    const o = this.env.options;
    if (v.kind === 'pressured') {
      this.#pressuredStreak++;
      this.#healthyStreak = 0;
    } else if (v.kind === 'healthy') {
      this.#healthyStreak++;
      this.#pressuredStreak = 0;
    } else {
      this.#pressuredStreak = 0;
      this.#healthyStreak = 0;
    }
    const eff = this.effective;
    if (!this.env.ceilings) {
      this.#reason = `${describeWindow(v, o)}; ${ceilingsOffReason(this.env)}`;
      return;
    }
    const since = this.windows - this.#lastChangeWindow;
    const cooling = since < o.changeCooldown;
    const cooldownText = `cooling down (${since} of changeCooldown ${o.changeCooldown} windows since the last change)`;
    if (v.kind === 'pressured') {
      const what = `${pressureText(v, o)} for ${plural(this.#pressuredStreak, 'window')}`;
      if (this.#pressuredStreak < o.degradeSamples) {
        this.#reason = `${what} (degradeSamples ${o.degradeSamples}): holding ceiling ${eff}`;
      } else if (eff <= o.minConcurrency) {
        this.#reason = `${what}, but the ceiling is at minConcurrency ${o.minConcurrency}; the backend is saturated even at the floor`;
      } else if (cooling) {
        this.#reason = `${what}; ${cooldownText}: holding ceiling ${eff}`;
      } else {
        this.#change(eff - 1, `${what}: ceiling ${eff} → ${eff - 1}`, now);
      }
      return;
    }
    if (v.kind === 'healthy') {
      const what = `p95 ${fmtMs(v.signals.p95)} < lowLatencyMs ${o.lowLatencyMs} for ${plural(this.#healthyStreak, 'window')}`;
      if (eff >= this.env.configured) {
        this.#reason = `${what}: ceiling at the configured ${this.env.configured}`;
      } else if (this.#healthyStreak < o.recoverySamples) {
        this.#reason = `${what} (recoverySamples ${o.recoverySamples}): holding ceiling ${eff}`;
      } else if (cooling) {
        this.#reason = `${what}; ${cooldownText}: holding ceiling ${eff}`;
      } else {
        this.#change(eff + 1, `${what}: ceiling ${eff} → ${eff + 1}`, now);
      }
      return;
    }
    this.#reason = `${describeWindow(v, o)}: holding ceiling ${eff}`;
  }

  #change(to: number, reason: string, now: number): void {
    const from = this.effective;
    const down = to < from;
    this.effective = to;
    this.#lastChange = down ? 'down' : 'up';
    this.#lastChangeWindow = this.windows;
    this.#reason = reason;
    const counter = down ? 'concurrencyReductions' : 'concurrencyRecoveries';
    this.counters[counter]++;
    this.counters.decisions++;
    this.env.emit({
      type: 'ceiling',
      endpoint: this.endpoint,
      window: this.windows,
      at: now,
      from,
      to,
      reason,
    });
  }

  // ── retry throttle ──────────────────────────────────────────────────────────────────────────

  #throttle(v: WindowVerdict, now: number): void {
    const o = this.env.options;
    if (!o.rateLimit) return;
    const share = `429 share ${fmtRatio(v.signals.rateLimited, v.signals.outcomes)}`;
    if (!this.throttled) {
      if (!v.rateLimited) return;
      this.throttled = true;
      this.#cleanStreak = 0;
      this.counters.throttles++;
      this.counters.decisions++;
      const multiplier = o.retry ? o.backoffFactor : 1;
      const effect = o.retry
        ? `retry base delay x${o.backoffFactor} (at most maxBackoffMs ${o.maxBackoffMs})`
        : 'retry switch off, so backoff is unchanged';
      this.#retry(
        'throttled',
        multiplier,
        `${share} >= rateLimitRatio ${o.rateLimitRatio}: throttled, ${effect}`,
        now,
      );
      return;
    }
    if (v.rateLimited) {
      this.#cleanStreak = 0;
      this.#retryReason = `${share} >= rateLimitRatio ${o.rateLimitRatio}: still throttled`;
      return;
    }
    this.#cleanStreak++;
    const what = `${share} < rateLimitRatio ${o.rateLimitRatio} for ${plural(this.#cleanStreak, 'window')}`;
    if (this.#cleanStreak < o.recoverySamples) {
      this.#retryReason = `${what} (recoverySamples ${o.recoverySamples}): still throttled`;
      return;
    }
    this.throttled = false;
    this.#retry('nominal', 1, `${what}: back to nominal backoff`, now);
  }

  #retry(mode: 'nominal' | 'throttled', multiplier: number, reason: string, now: number): void {
    this.#retryReason = reason;
    if (multiplier !== this.retryMultiplier) this.counters.retryChanges++;
    this.retryMultiplier = multiplier;
    this.env.emit({
      type: 'retry',
      endpoint: this.endpoint,
      window: this.windows,
      at: now,
      mode,
      multiplier,
      reason,
    });
  }

  // ── strategy (shared degraded flag) ─────────────────────────────────────────────────────────

  #staleness(v: WindowVerdict, now: number): void {
    const o = this.env.options;
    if (o.staleWhileRevalidate) {
      if (v.slow) {
        this.#slow = true;
        this.#fastStreak = 0;
      } else if (this.#slow && ++this.#fastStreak >= o.recoverySamples) {
        this.#slow = false;
      }
    }
    const reduced = this.effective < this.env.configured;
    const degraded = reduced || this.#slow;
    if (degraded && this.degradedSince === undefined) this.degradedSince = now;
    if (!degraded) this.degradedSince = undefined;
    if (!o.staleWhileRevalidate) return;

    const p95 = fmtMs(v.signals.p95);
    let reason: string;
    if (this.#slow) {
      reason = v.slow
        ? `p95 ${p95} >= swrLatencyMs ${o.swrLatencyMs}: reads use stale-while-revalidate`
        : `p95 ${p95} < swrLatencyMs ${o.swrLatencyMs} for ${plural(this.#fastStreak, 'window')} (recoverySamples ${o.recoverySamples}): reads still use stale-while-revalidate`;
    } else if (reduced) {
      reason = `ceiling reduced to ${this.effective} of ${this.env.configured}: reads use stale-while-revalidate`;
    } else {
      reason = `p95 ${p95} < swrLatencyMs ${o.swrLatencyMs} and ceiling at the configured ${this.env.configured}: reads use their configured strategy`;
    }
    this.#strategyReason = reason;
    const strategy = degraded ? SWR : undefined;
    if (strategy === this.strategy) return;
    this.strategy = strategy;
    this.env.emit({
      type: 'strategy',
      endpoint: this.endpoint,
      window: this.windows,
      at: now,
      strategy,
      reason,
    });
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
        avg: l.avg,
        p50: l.p50,
        p95: l.p95,
        samples: l.samples,
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

/** "p95 2400 ms >= highLatencyMs 2000 and 429 share 0.25 >= rateLimitRatio 0.2" */
function pressureText(v: WindowVerdict, o: ResolvedAdaptiveOptions): string {
  const s = v.signals;
  const parts: string[] = [];
  for (const cause of v.causes) {
    if (cause === 'latency') parts.push(`p95 ${fmtMs(s.p95)} >= highLatencyMs ${o.highLatencyMs}`);
    else if (cause === 'rateLimit') {
      parts.push(
        `429 share ${fmtRatio(s.rateLimited, s.outcomes)} >= rateLimitRatio ${o.rateLimitRatio}`,
      );
    } else
      parts.push(`error share ${fmtRatio(s.errors, s.outcomes)} >= errorRatio ${o.errorRatio}`);
  }
  return parts.join(' and ');
}

function describeWindow(v: WindowVerdict, o: ResolvedAdaptiveOptions): string {
  if (v.kind === 'pressured') return pressureText(v, o);
  const p95 = fmtMs(v.signals.p95);
  if (v.kind === 'healthy') return `p95 ${p95} < lowLatencyMs ${o.lowLatencyMs}`;
  return `p95 ${p95} is in the deadband [lowLatencyMs ${o.lowLatencyMs}, highLatencyMs ${o.highLatencyMs})`;
}

function fmtMs(ms: number): string {
  return `${Math.round(ms)} ms`;
}

function fmtRatio(part: number, whole: number): string {
  return whole === 0 ? '0' : String(Math.round((part / whole) * 100) / 100);
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}
