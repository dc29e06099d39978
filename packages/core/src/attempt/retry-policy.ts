import { hasErrorName } from '../errors/keel-error';
import type { ResolvedRetryOptions, RetryDecision, RetryOptions } from '../types';
import { computeDelay } from './backoff';
import { parseRetryAfter } from './retry-after';
import { isRetriableStatus } from './status';

export const RETRY_DEFAULTS: Readonly<ResolvedRetryOptions> = Object.freeze({
  attempts: 3,
  baseDelay: 1000,
  maxDelay: 30000,
  backoff: 'exponential',
  jitter: true,
  retryOn: undefined,
  respectRetryAfter: true,
});

const NO_RETRY_OVERRIDE = { attempts: 1 } as const;

/**
 * Fills in defaults and validates. `true`/`undefined` mean the base (client) options, `false`
 * means a single attempt. Bad values throw a RangeError / TypeError naming the field.
 */
export function resolveRetryOptions(
  options?: RetryOptions | boolean,
  base: ResolvedRetryOptions = RETRY_DEFAULTS,
): ResolvedRetryOptions {
  if (options === undefined || options === true) return base;
  if (options === false) return { ...base, ...NO_RETRY_OVERRIDE };
  if (typeof options !== 'object' || options === null) {
    throw new TypeError(`keel: retry must be a boolean or an object, got ${typeof options}`);
  }
  const r: ResolvedRetryOptions = {
    attempts: options.attempts ?? base.attempts,
    baseDelay: options.baseDelay ?? base.baseDelay,
    maxDelay: options.maxDelay ?? base.maxDelay,
    backoff: options.backoff ?? base.backoff,
    jitter: options.jitter ?? base.jitter,
    retryOn: options.retryOn ?? base.retryOn,
    respectRetryAfter: options.respectRetryAfter ?? base.respectRetryAfter,
  };
  if (typeof r.attempts !== 'number') {
    throw new TypeError(`keel: retry.attempts must be a number, got ${typeof r.attempts}`);
  }
  if (!Number.isInteger(r.attempts) || r.attempts < 1) {
    throw new RangeError(`keel: retry.attempts must be an integer >= 1, got ${String(r.attempts)}`);
  }
  checkMs('retry.baseDelay', r.baseDelay);
  checkMs('retry.maxDelay', r.maxDelay);
  if (r.backoff !== 'exponential' && r.backoff !== 'fixed') {
    throw new RangeError(
      `keel: retry.backoff must be 'exponential' or 'fixed', got ${String(r.backoff)}`,
    );
  }
  if (r.retryOn !== undefined && typeof r.retryOn !== 'function') {
    throw new TypeError(`keel: retry.retryOn must be a function, got ${typeof r.retryOn}`);
  }
  return r;
}

/** A duration option: a non-number is a TypeError, a negative / NaN / infinite one a RangeError. */
export function checkMs(name: string, value: unknown): void {
  if (typeof value !== 'number') {
    throw new TypeError(
      `keel: ${name} must be a number of ms, got ${typeof value} ${String(value)}`,
    );
  }
  if (!Number.isFinite(value) || value < 0) {
    throw new RangeError(`keel: ${name} must be a finite number >= 0, got ${String(value)}`);
  }
}

export interface RetryInput {
  error: unknown;
  options: ResolvedRetryOptions;
  /** Attempts made so far, including the one that just failed. */
  attempts: number;
  /** Multiplier on baseDelay (the adaptive engine's throttle); default 1. */
  baseDelayFactor?: number;
  /** Cap for the scaled base delay; default none. */
  maxBaseDelay?: number;
  now?: number;
  random?: () => number;
}

/**
 * Whether and when to retry after a failed attempt.
 * Not retried: cancellation, a response parse error, attempts used up, or a status that
 * `retryOn` (default: 408/429/500/502/503/504) refuses. Network errors and timeouts are retried
 * (`retryOn(undefined)` decides when given). A Retry-After header wins over backoff when
 * `respectRetryAfter` is on.
 */
export function decideRetry({
  error,
  options,
  attempts,
  baseDelayFactor = 1,
  maxBaseDelay,
  now,
  random,
}: RetryInput): RetryDecision {
  if (hasErrorName(error, 'CancelledError') || hasErrorName(error, 'AbortError')) {
    return { retry: false, delay: 0, reason: 'cancelled' };
  }
  if (hasErrorName(error, 'ParseError') || hasErrorName(error, 'CircuitOpenError')) {
    return { retry: false, delay: 0, reason: 'not-retriable' };
  }
  const status = hasErrorName(error, 'HttpError')
    ? (error as { status?: number }).status
    : undefined;
  const eligible = options.retryOn
    ? options.retryOn(status)
    : status === undefined || isRetriableStatus(status);
  if (!eligible) return { retry: false, delay: 0, reason: 'not-retriable' };
  if (attempts >= options.attempts) return { retry: false, delay: 0, reason: 'attempts-exhausted' };

  if (options.respectRetryAfter && status !== undefined) {
    const headers = (error as { headers?: Headers }).headers;
    const after = parseRetryAfter(headers?.get('retry-after'), now);
    if (after >= 0) return { retry: true, delay: after, reason: 'retry-after' };
  }
  let baseDelay = options.baseDelay * baseDelayFactor;
  if (maxBaseDelay !== undefined) baseDelay = Math.min(baseDelay, maxBaseDelay);
  const delay = computeDelay({
    attempts,
    baseDelay,
    // Only an adaptive scale-up may lift the cap; a caller's own maxDelay always caps its baseDelay.
    maxDelay: baseDelayFactor > 1 ? Math.max(options.maxDelay, baseDelay) : options.maxDelay,
    backoff: options.backoff,
    jitter: options.jitter,
    random,
  });
  return { retry: true, delay, reason: 'backoff' };
}
