import {
  checkBoolean,
  checkInteger,
  checkMs,
  checkNumber,
  checkObject,
  keysOf,
  rangeError,
  withDefaults,
} from '../internal/checks';
import { MAX_TIMER_MS } from '../internal/clock';
import { freeze } from '../internal/freeze';
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
export const ADAPTIVE_DEFAULTS: Readonly<ResolvedAdaptiveOptions> = /* @__PURE__ */ freeze({
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
/** Largest ring: a window is a typed array per endpoint, sorted on each read (so not 2^40). */
export const MAX_WINDOW = 65536;

/**
 * How each numeric field is checked, in the order the fields are documented (the first bad one
 * is the one reported): a number is an integer's minimum; `ms` a finite duration, `timer` one a
 * timer must fit (a retry wait), `ratio` 0..1, `factor` >= 1 (below 1 would shorten retry waits
 * exactly when the server asks for less traffic).
 */
const NUMERIC: Record<string, number | 'ms' | 'timer' | 'ratio' | 'factor'> = {
  highLatencyMs: 'ms',
  lowLatencyMs: 'ms',
  degradeSamples: 1,
  recoverySamples: 1,
  changeCooldown: 0,
  minConcurrency: 1,
  rateLimitRatio: 'ratio',
  errorRatio: 'ratio',
  backoffFactor: 'factor',
  maxBackoffMs: 'timer',
  swrLatencyMs: 'ms',
  latencyWindow: MIN_LATENCY_WINDOW,
  outcomeWindow: MIN_OUTCOME_WINDOW,
};

const ADAPTIVE_KEYS = /* @__PURE__ */ keysOf('enabled', ADAPTIVE_DEFAULTS);

/**
 * Validates the `adaptive` block and fills in defaults. Returns undefined when the block is
 * absent or `enabled` is not true: the client then builds no engine at all, so nothing is
 * measured (README "Adaptive engine": a client without it behaves as if it did not exist).
 *
 * The block is validated even when disabled, so flipping `enabled` on never reveals a latent
 * mistake. A value of the wrong type is a TypeError, a number out of range a RangeError; both
 * name the field and show the value.
 */
export function resolveAdaptiveOptions(
  options: AdaptiveOptions | undefined,
  /** What `enabled` means when absent: false for the `adaptive` option, true for withAdaptive. */
  enabledByDefault = false,
): ResolvedAdaptiveOptions | undefined {
  if (options === undefined) return undefined;
  checkObject('adaptive', options, undefined, ADAPTIVE_KEYS);
  if (options.enabled !== undefined) checkBoolean('adaptive.enabled', options.enabled);
  const r = withDefaults(options, ADAPTIVE_DEFAULTS);
  // The switches come first in ADAPTIVE_DEFAULTS, then the numbers in NUMERIC's order.
  for (const key in r) {
    const name = `adaptive.${key}`;
    const value = r[key as keyof ResolvedAdaptiveOptions];
    const rule = NUMERIC[key];
    if (rule === undefined) checkBoolean(name, value);
    else if (typeof rule === 'number') {
      checkInteger(name, value, rule);
      if (key.endsWith('Window') && (value as number) > MAX_WINDOW) {
        throw rangeError(name, `an integer from ${rule} to ${MAX_WINDOW}`, value);
      }
    } else if (rule === 'ms' || rule === 'timer') {
      checkMs(name, value, rule === 'ms' ? Number.MAX_VALUE : MAX_TIMER_MS);
    } else if (rule === 'ratio') {
      checkNumber(name, value, 'a ratio from 0 to 1', (n) => n >= 0 && n <= 1);
    } else checkNumber(name, value, 'a finite number >= 1', (n) => n >= 1 && n < Infinity);
  }
  if (r.lowLatencyMs > r.highLatencyMs) {
    throw rangeError(
      'adaptive.lowLatencyMs',
      `at most adaptive.highLatencyMs (${r.highLatencyMs})`,
      r.lowLatencyMs,
    );
  }
  if ((options.enabled ?? enabledByDefault) !== true) return undefined;
  return freeze(r);
}
