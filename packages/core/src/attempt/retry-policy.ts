import { isAbortError } from '../errors/cancelled-error';
import { CodeKind, codeIs, errorCodeOf } from '../errors/error-code';
import { type HttpError, isHttpError } from '../errors/http-error';
import { isCircuitOpenError } from '../errors/is-circuit-open-error';
import { isKeelError } from '../errors/keel-error';
import { isParseError } from '../errors/parse-error';
import { isResponseTooLargeError } from '../errors/response-too-large-error';
import {
  answer,
  checkBoolean,
  checkFunction,
  checkInteger,
  checkMs,
  checkObject,
  keysOf,
  oneOf,
  rangeError,
  typeError,
  withDefaults,
} from '../internal/checks';
import { freeze } from '../internal/freeze';
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
  retryOn: ((status: number | undefined, error?: unknown) => boolean) | undefined;
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

export const RETRY_DEFAULTS: Readonly<ResolvedRetryOptions> = /* @__PURE__ */ freeze({
  attempts: 3,
  baseDelay: 1000,
  maxDelay: 30000,
  backoff: 'exponential',
  jitter: true,
  retryOn: undefined,
  respectRetryAfter: true,
  maxRetryAfter: 60_000,
  methods: /* @__PURE__ */ freeze(['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE'] as const),
});

const RETRY_KEYS = /* @__PURE__ */ keysOf('', RETRY_DEFAULTS);

/** The defaults switched off (`retry: false` over them): a request's `true` switches them on. */
const RETRY_OFF: Readonly<ResolvedRetryOptions> = /* @__PURE__ */ freeze({
  ...RETRY_DEFAULTS,
  attempts: 1,
});

/**
 * Fills in defaults and validates. `undefined` means the base (client) options, `false` a single
 * attempt, `true` the base, or the defaults where the base is `false`'s (as `cache: true` turns a
 * client's `cache: false` back on). Bad values throw a RangeError / TypeError naming the field.
 */
export function resolveRetryOptions(
  options?: RetryOptions | boolean,
  base: ResolvedRetryOptions = RETRY_DEFAULTS,
): ResolvedRetryOptions {
  if (options === undefined) return base;
  if (options === true) return base === RETRY_OFF ? RETRY_DEFAULTS : base;
  if (options === false) return base === RETRY_DEFAULTS ? RETRY_OFF : { ...base, attempts: 1 };
  checkObject('retry', options, 'true, false or an object', RETRY_KEYS);
  // Only undefined is absent: a null the caller wrote is checked, and refused.
  const r = withDefaults(options, base) as unknown as Record<string, unknown>;
  if (options.methods !== undefined) r.methods = resolveMethods(options.methods);
  for (const [key, check, arg] of CHECKS) {
    if (key !== 'retryOn' || r[key] !== undefined) check(`retry.${key}`, r[key], arg as never);
  }
  return r as unknown as ResolvedRetryOptions;
}

/** A check of `../internal/checks`; `arg` is its third parameter (a bound, the allowed values). */
type Check = (name: string, value: unknown, arg: never) => unknown;

/** Each field's check, in the order they are checked. */
const CHECKS: readonly (readonly [string, Check, unknown?])[] = [
  ['attempts', checkInteger, 1],
  ['baseDelay', checkMs],
  ['maxDelay', checkMs],
  ['maxRetryAfter', checkMs],
  ['backoff', oneOf, ['exponential', 'fixed']],
  ['retryOn', checkFunction],
  ['jitter', checkBoolean],
  ['respectRetryAfter', checkBoolean],
];

function resolveMethods(methods: unknown): readonly HttpMethod[] {
  const expected = `an array of HTTP methods (${[...HTTP_METHODS].join(', ')})`;
  if (!Array.isArray(methods)) throw typeError('retry.methods', expected, methods);
  return freeze(
    // Array.from, not map: a hole is a bad method too.
    Array.from(methods, (m: unknown, i) => {
      if (typeof m !== 'string') throw typeError(`retry.methods[${i}]`, 'an HTTP method', m);
      const upper = m.toUpperCase();
      if (!HTTP_METHODS.has(upper)) throw rangeError(`retry.methods[${i}]`, expected, m);
      return upper as HttpMethod;
    }),
  );
}

/**
 * The options decideRetry reads: resolveRetryOptions' result, or the spec's RetryOptions fields
 * written by hand, where `retryOn` (408/429/500/502/503/504), `maxRetryAfter` (60 s) and
 * `methods` (GET, HEAD, OPTIONS, PUT, DELETE) take their defaults when left out.
 */
export interface RetryPolicy
  extends Omit<ResolvedRetryOptions, 'retryOn' | 'maxRetryAfter' | 'methods'> {
  retryOn?: ResolvedRetryOptions['retryOn'];
  maxRetryAfter?: number | undefined;
  methods?: readonly HttpMethod[] | undefined;
}

export interface RetryInput {
  error: unknown;
  options: RetryPolicy;
  /**
   * The request's method: one outside `options.methods` is retried only when the server did not
   * process the request. Undefined: the failed request's, which keel's errors carry (`error.method`);
   * judged as an idempotent method when the error names none.
   */
  method?: HttpMethod | undefined;
  /** Attempts made so far, including the one that just failed. */
  attempts: number;
  /** Multiplier on baseDelay (the adaptive engine's throttle); default 1. */
  baseDelayFactor?: number | undefined;
  /** Cap for the scaled base delay; default none. */
  maxBaseDelay?: number | undefined;
  now?: number | undefined;
  random?: (() => number) | undefined;
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
  options: given,
  method,
  attempts,
  baseDelayFactor = 1,
  maxBaseDelay,
  now,
  random,
}: RetryInput): RetryDecision {
  // Options written by hand (the spec's RetryOptions) may leave out retryOn, maxRetryAfter, methods.
  const options = withDefaults(given, RETRY_DEFAULTS);
  if (isAbortError(error)) return stop('cancelled');
  // A keel error names its request: a POST's 503 is judged as a POST's without `method` too.
  // One built without a request names none ('').
  if (method === undefined && isKeelError(error))
    method = ((error as { method?: HttpMethod }).method || undefined) as HttpMethod | undefined;
  const status = isHttpError(error) ? error.status : undefined;
  const code = status === undefined ? errorCodeOf(error) : undefined;
  if (
    isParseError(error) ||
    isCircuitOpenError(error) ||
    isResponseTooLargeError(error) ||
    codeIs(code, CodeKind.Permanent) ||
    !(options.retryOn
      ? answer('retry.retryOn', options.retryOn(status, error))
      : status === undefined || isRetriableStatus(status))
  ) {
    return stop('not-retriable');
  }
  // The wait the server asked for (-1: none), its `retryAfter` or else its header: computed
  // once, the method gate and the wait both need it.
  const known = status === undefined ? -1 : (error as HttpError).retryAfter;
  const after =
    typeof known === 'number' && known >= 0
      ? known
      : parseRetryAfter(
          status === undefined ? null : (error as HttpError).headers?.get('retry-after'),
          now,
        );
  if (
    method !== undefined &&
    !options.methods.includes(method) &&
    // Unless the server did not process the request.
    !(
      status === 429 ||
      (status === 503 && after >= 0) ||
      (status === undefined && codeIs(code, CodeKind.NotSent))
    )
  ) {
    return stop('not-idempotent');
  }
  if (attempts >= options.attempts) return stop('attempts-exhausted');
  if (options.respectRetryAfter && after >= 0) {
    return after > options.maxRetryAfter
      ? stop('retry-after-too-long')
      : { retry: true, delay: after, reason: 'retry-after' };
  }
  let baseDelay = options.baseDelay * baseDelayFactor;
  if (maxBaseDelay !== undefined) baseDelay = Math.min(baseDelay, maxBaseDelay);
  const delay = computeDelay({
    ...options,
    attempts,
    baseDelay,
    // Only an adaptive scale-up may lift the cap; a caller's own maxDelay always caps its baseDelay.
    maxDelay: baseDelayFactor > 1 ? Math.max(options.maxDelay, baseDelay) : options.maxDelay,
    random,
  });
  return { retry: true, delay, reason: 'backoff' };
}

function stop(reason: RetryDecision['reason']): RetryDecision {
  return { retry: false, delay: 0, reason };
}
