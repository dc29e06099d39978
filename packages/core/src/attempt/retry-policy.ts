import { isAbortError } from '../errors/cancelled-error';
import { isCircuitOpenError } from '../errors/circuit-open-error';
import { errorCodeOf, isNotSentCode, isPermanentCode } from '../errors/error-code';
import { isHttpError } from '../errors/http-error';
import { isParseError } from '../errors/parse-error';
import { isResponseTooLargeError } from '../errors/response-too-large-error';
import {
  checkBoolean,
  checkFunction,
  checkInteger,
  checkMs,
  checkObject,
  oneOf,
  rangeError,
  typeError,
} from '../internal/checks';
import { HTTP_METHODS } from '../internal/methods';
import type { HttpMethod, RetryOptions } from '../types/options';
import { computeDelay } from './backoff';
import { parseRetryAfter } from './retry-after';
import { isRetriableStatus } from './status';

export interface ResolvedRetryOptions {
  attempts: number;
  baseDelay: number;
  maxDelay: number;
  backoff: 'exponential' | 'fixed';
  jitter: boolean;
  retryOn: ((status: number | undefined, error: unknown) => boolean) | undefined;
  respectRetryAfter: boolean;
  maxRetryAfter: number;
  methods: readonly HttpMethod[];
}

export interface RetryDecision {
  retry: boolean;
  /** ms to wait before the next attempt (0 when not retrying). */
  delay: number;
  /**
   * What decided: `retry-after`, `backoff`, or why not: `attempts-exhausted`, `not-retriable`
   * (the error or status), `not-idempotent` (a method outside `retry.methods` whose request may
   * have been processed), `retry-after-too-long` (the server asked for more than
   * `maxRetryAfter`), `cancelled`.
   */
  reason:
    | 'retry-after'
    | 'backoff'
    | 'attempts-exhausted'
    | 'not-retriable'
    | 'not-idempotent'
    | 'retry-after-too-long'
    | 'cancelled';
}

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
  checkObject('retry', options, 'true, false or an object');
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
  checkInteger('retry.attempts', r.attempts, 1);
  checkMs('retry.baseDelay', r.baseDelay);
  checkMs('retry.maxDelay', r.maxDelay);
  checkMs('retry.maxRetryAfter', r.maxRetryAfter);
  oneOf('retry.backoff', r.backoff, BACKOFFS);
  if (r.retryOn !== undefined) checkFunction('retry.retryOn', r.retryOn);
  checkBoolean('retry.jitter', r.jitter);
  checkBoolean('retry.respectRetryAfter', r.respectRetryAfter);
  return r;
}

const BACKOFFS = ['exponential', 'fixed'] as const;

function resolveMethods(methods: unknown): readonly HttpMethod[] {
  const expected = `an array of HTTP methods (${[...HTTP_METHODS].join(', ')})`;
  if (!Array.isArray(methods)) throw typeError('retry.methods', expected, methods);
  const out: HttpMethod[] = [];
  for (let i = 0; i < methods.length; i++) {
    const m: unknown = methods[i];
    if (typeof m !== 'string') throw typeError(`retry.methods[${i}]`, 'an HTTP method', m);
    const upper = m.toUpperCase();
    if (!HTTP_METHODS.has(upper)) throw rangeError(`retry.methods[${i}]`, expected, m);
    out.push(upper as HttpMethod);
  }
  return Object.freeze(out);
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
  if (isAbortError(error)) return { retry: false, delay: 0, reason: 'cancelled' };
  if (isParseError(error) || isCircuitOpenError(error) || isResponseTooLargeError(error)) {
    return NOT_RETRIABLE;
  }
  const status = isHttpError(error) ? error.status : undefined;
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
