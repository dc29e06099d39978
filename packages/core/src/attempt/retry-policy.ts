import { errorCodeOf, isNotSentCode, isPermanentCode } from '../errors/error-code';
import { hasErrorName } from '../errors/keel-error';
import { MAX_TIMER_MS } from '../internal/clock';
import { HTTP_METHODS } from '../internal/methods';
import type { HttpMethod, ResolvedRetryOptions, RetryDecision, RetryOptions } from '../types';
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
  maxRetryAfter: 60_000,
  methods: Object.freeze(['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE'] as const),
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
    maxRetryAfter: options.maxRetryAfter ?? base.maxRetryAfter,
    methods: options.methods === undefined ? base.methods : resolveMethods(options.methods),
  };
  if (typeof r.attempts !== 'number') {
    throw new TypeError(`keel: retry.attempts must be a number, got ${typeof r.attempts}`);
  }
  if (!Number.isInteger(r.attempts) || r.attempts < 1) {
    throw new RangeError(`keel: retry.attempts must be an integer >= 1, got ${String(r.attempts)}`);
  }
  checkMs('retry.baseDelay', r.baseDelay, MAX_TIMER_MS);
  checkMs('retry.maxDelay', r.maxDelay, MAX_TIMER_MS);
  checkMs('retry.maxRetryAfter', r.maxRetryAfter, MAX_TIMER_MS);
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

function resolveMethods(methods: unknown): readonly HttpMethod[] {
  if (!Array.isArray(methods)) {
    throw new TypeError(
      `keel: retry.methods must be an array of HTTP methods, got ${typeof methods}`,
    );
  }
  const out: HttpMethod[] = [];
  for (const m of methods) {
    const upper = typeof m === 'string' ? m.toUpperCase() : m;
    if (typeof upper !== 'string' || !HTTP_METHODS.has(upper)) {
      throw new RangeError(
        `keel: retry.methods must list HTTP methods (${[...HTTP_METHODS].join(', ')}), got ${JSON.stringify(m)}`,
      );
    }
    out.push(upper as HttpMethod);
  }
  return Object.freeze(out);
}

/**
 * A duration option: a non-number is a TypeError; a negative, NaN or infinite one, or one above
 * `max` (timers cannot wait longer than 2^31-1 ms: Node and browsers fire such a timer at once),
 * a RangeError.
 */
export function checkMs(name: string, value: unknown, max = Number.MAX_VALUE): void {
  if (typeof value !== 'number') {
    throw new TypeError(
      `keel: ${name} must be a number of ms, got ${typeof value} ${String(value)}`,
    );
  }
  if (!Number.isFinite(value) || value < 0) {
    throw new RangeError(`keel: ${name} must be a finite number >= 0, got ${String(value)}`);
  }
  if (value > max) {
    throw new RangeError(`keel: ${name} must be at most ${max} ms, got ${String(value)}`);
  }
}

export interface RetryInput {
  error: unknown;
  options: ResolvedRetryOptions;
  /**
   * The request's method: one outside `options.methods` is retried only when the server did not
   * process the request. Undefined: judged as an idempotent method.
   */
  method?: HttpMethod;
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
 * Not retried: cancellation, a response parse error or size excess, a redirect loop or integrity
 * mismatch, attempts used up, a status
 * that `retryOn` (default: 408/429/500/502/503/504) refuses, a method outside
 * `options.methods` unless the server did not process the request (429, 503 + Retry-After, or a
 * connection that failed before anything was sent), or a Retry-After above `maxRetryAfter`.
 * Network errors and timeouts are retried (`retryOn(undefined, error)` decides when given). A
 * Retry-After header wins over backoff when `respectRetryAfter` is on.
 */
export function decideRetry({
  error,
  options,
  method,
  attempts,
  baseDelayFactor = 1,
  maxBaseDelay,
  now,
  random,
}: RetryInput): RetryDecision {
  if (hasErrorName(error, 'CancelledError') || hasErrorName(error, 'AbortError')) {
    return { retry: false, delay: 0, reason: 'cancelled' };
  }
  if (
    hasErrorName(error, 'ParseError') ||
    hasErrorName(error, 'CircuitOpenError') ||
    hasErrorName(error, 'ResponseTooLargeError')
  ) {
    return NOT_RETRIABLE;
  }
  const status = hasErrorName(error, 'HttpError')
    ? (error as { status?: number }).status
    : undefined;
  const code = status === undefined ? errorCodeOf(error) : undefined;
  if (isPermanentCode(code)) return NOT_RETRIABLE;
  const eligible = options.retryOn
    ? options.retryOn(status, error)
    : status === undefined || isRetriableStatus(status);
  if (!eligible) return NOT_RETRIABLE;
  const headers = status === undefined ? undefined : (error as { headers?: Headers }).headers;
  // Computed once: the method gate and the wait both need it.
  const after = status === undefined ? -1 : retryAfterOf(error, headers, now);
  if (method !== undefined && !options.methods.includes(method)) {
    const unprocessed =
      status === 429 ||
      (status === 503 && after >= 0) ||
      (status === undefined && isNotSentCode(code));
    if (!unprocessed) return { retry: false, delay: 0, reason: 'not-idempotent' };
  }
  if (attempts >= options.attempts) return { retry: false, delay: 0, reason: 'attempts-exhausted' };

  if (options.respectRetryAfter && after >= 0) {
    if (after > options.maxRetryAfter)
      return { retry: false, delay: 0, reason: 'retry-after-too-long' };
    return { retry: true, delay: after, reason: 'retry-after' };
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

const NOT_RETRIABLE: RetryDecision = Object.freeze({
  retry: false,
  delay: 0,
  reason: 'not-retriable',
}) as RetryDecision;

/** The wait an HttpError asked for, in ms: its `retryAfter` when set, else its header; -1 if none. */
function retryAfterOf(
  error: unknown,
  headers: Headers | undefined,
  now: number | undefined,
): number {
  const known = (error as { retryAfter?: unknown }).retryAfter;
  if (typeof known === 'number' && known >= 0) return known;
  return parseRetryAfter(headers?.get('retry-after'), now);
}
