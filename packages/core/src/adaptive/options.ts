import { MAX_TIMER_MS } from '../internal/clock';
import type { AdaptiveOptions } from '../types/options';

/** AdaptiveOptions after defaults and validation. Read by the engine, never mutated. */
export interface ResolvedAdaptiveOptions {
  readonly concurrency: boolean;
  readonly retry: boolean;
  readonly rateLimit: boolean;
  readonly staleWhileRevalidate: boolean;
  readonly highLatencyMs: number;
  readonly lowLatencyMs: number;
  readonly degradeSamples: number;
  readonly recoverySamples: number;
  readonly changeCooldown: number;
  readonly minConcurrency: number;
  readonly rateLimitRatio: number;
  readonly errorRatio: number;
  readonly backoffFactor: number;
  readonly maxBackoffMs: number;
  readonly swrLatencyMs: number;
  readonly latencyWindow: number;
  readonly outcomeWindow: number;
}

/**
 * The documented defaults (README "Adaptive engine"): every switch off, so `enabled: true` alone
 * measures but changes nothing.
 */
export const ADAPTIVE_DEFAULTS: Readonly<ResolvedAdaptiveOptions> = Object.freeze({
  concurrency: false,
  retry: false,
  rateLimit: false,
  staleWhileRevalidate: false,
  highLatencyMs: 2000,
  lowLatencyMs: 1000,
  degradeSamples: 3,
  recoverySamples: 3,
  changeCooldown: 2,
  minConcurrency: 1,
  rateLimitRatio: 0.2,
  errorRatio: 0.1,
  backoffFactor: 2,
  maxBackoffMs: 10000,
  swrLatencyMs: 1500,
  latencyWindow: 64,
  outcomeWindow: 32,
});

/** Smallest rings allowed (README "Adaptive engine"): p95 needs a few samples; a share needs two. */
export const MIN_LATENCY_WINDOW = 4;
export const MIN_OUTCOME_WINDOW = 2;

const SWITCHES = ['enabled', 'concurrency', 'retry', 'rateLimit', 'staleWhileRevalidate'] as const;

/**
 * Validates the `adaptive` block and fills in defaults. Returns undefined when the block is
 * absent or `enabled` is not true: the client then builds no engine at all, so nothing is
 * measured (Versioning rule 2).
 *
 * The block is validated even when disabled, so flipping `enabled` on never reveals a latent
 * mistake. A number out of range (or not a number at all) is a RangeError naming the field and
 * showing the value; a switch that is not a boolean, or a block that is not an object, is a
 * TypeError.
 */
export function resolveAdaptiveOptions(
  options: AdaptiveOptions | undefined,
): ResolvedAdaptiveOptions | undefined {
  if (options === undefined) return undefined;
  if (typeof options !== 'object' || options === null) {
    throw new TypeError(`keel: adaptive must be an object, got ${describe(options)}`);
  }
  for (const name of SWITCHES) {
    const value = options[name];
    if (value !== undefined && typeof value !== 'boolean') {
      throw new TypeError(`keel: adaptive.${name} must be a boolean, got ${describe(value)}`);
    }
  }
  const d = ADAPTIVE_DEFAULTS;
  const r: ResolvedAdaptiveOptions = {
    concurrency: options.concurrency ?? d.concurrency,
    retry: options.retry ?? d.retry,
    rateLimit: options.rateLimit ?? d.rateLimit,
    staleWhileRevalidate: options.staleWhileRevalidate ?? d.staleWhileRevalidate,
    highLatencyMs: ms('highLatencyMs', options.highLatencyMs ?? d.highLatencyMs),
    lowLatencyMs: ms('lowLatencyMs', options.lowLatencyMs ?? d.lowLatencyMs),
    degradeSamples: int('degradeSamples', options.degradeSamples ?? d.degradeSamples, 1),
    recoverySamples: int('recoverySamples', options.recoverySamples ?? d.recoverySamples, 1),
    changeCooldown: int('changeCooldown', options.changeCooldown ?? d.changeCooldown, 0),
    minConcurrency: int('minConcurrency', options.minConcurrency ?? d.minConcurrency, 1),
    rateLimitRatio: ratio('rateLimitRatio', options.rateLimitRatio ?? d.rateLimitRatio),
    errorRatio: ratio('errorRatio', options.errorRatio ?? d.errorRatio),
    backoffFactor: factor('backoffFactor', options.backoffFactor ?? d.backoffFactor),
    // A retry wait: a timer, so it must fit one.
    maxBackoffMs: ms('maxBackoffMs', options.maxBackoffMs ?? d.maxBackoffMs, MAX_TIMER_MS),
    swrLatencyMs: ms('swrLatencyMs', options.swrLatencyMs ?? d.swrLatencyMs),
    latencyWindow: int(
      'latencyWindow',
      options.latencyWindow ?? d.latencyWindow,
      MIN_LATENCY_WINDOW,
    ),
    outcomeWindow: int(
      'outcomeWindow',
      options.outcomeWindow ?? d.outcomeWindow,
      MIN_OUTCOME_WINDOW,
    ),
  };
  if (r.lowLatencyMs > r.highLatencyMs) {
    throw new RangeError(
      `keel: adaptive.lowLatencyMs (${r.lowLatencyMs}) must not exceed adaptive.highLatencyMs (${r.highLatencyMs})`,
    );
  }
  if (options.enabled !== true) return undefined;
  return Object.freeze(r);
}

function isNumber(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value);
}

function ms(name: string, value: unknown, max = Number.MAX_VALUE): number {
  if (!isNumber(value) || value < 0 || value > max) {
    const range = max === Number.MAX_VALUE ? '' : ` and at most ${max}`;
    throw new RangeError(
      `keel: adaptive.${name} must be a finite number of ms >= 0${range}, got ${describe(value)}`,
    );
  }
  return value;
}

function int(name: string, value: unknown, min: number): number {
  if (!isNumber(value) || !Number.isInteger(value) || value < min) {
    throw new RangeError(
      `keel: adaptive.${name} must be an integer >= ${min}, got ${describe(value)}`,
    );
  }
  return value;
}

function ratio(name: string, value: unknown): number {
  if (!isNumber(value) || value < 0 || value > 1) {
    throw new RangeError(
      `keel: adaptive.${name} must be a ratio between 0 and 1, got ${describe(value)}`,
    );
  }
  return value;
}

// A factor below 1 would shorten retry waits exactly when the server asks for less traffic.
function factor(name: string, value: unknown): number {
  if (!isNumber(value) || value < 1) {
    throw new RangeError(
      `keel: adaptive.${name} must be a finite number >= 1, got ${describe(value)}`,
    );
  }
  return value;
}

function describe(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (value === null) return 'null';
  if (typeof value !== 'object') return `${String(value)} (${typeof value})`;
  return typeof value;
}
