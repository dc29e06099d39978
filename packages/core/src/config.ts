import {
  checkMs,
  RETRY_DEFAULTS,
  type ResolvedRetryOptions,
  resolveRetryOptions,
} from './attempt/retry-policy';
import {
  CACHE_DEFAULTS,
  checkGcTime,
  DEFAULT_GC_TIME,
  type ResolvedCacheOptions,
  resolveCacheOptions,
} from './cache/options';
import { type Clock, MAX_TIMER_MS, systemClock } from './internal/clock';
import { type ErrorReporter, logListenerError } from './internal/report';
import { keyBaseOf, resolveBaseURL } from './internal/url';
import { type FetchInit, resolveFetchInit } from './request/fetch-init';
import { checkMaxBytes, checkResponseType, lowerCaseHeaders } from './request/fields';
import type { CacheOptions, ClientOptions, FetchLike, ResponseBodyType } from './types/options';

/** Client options after defaults and validation: read by every request, never mutated. */
export interface ClientConfig {
  /** Absolute (a relative one was resolved against the page when the client was created). */
  readonly baseURL: string | undefined;
  /** What cache keys are written relative to (internal/url keyBaseOf). */
  readonly keyBase: string | undefined;
  /** Client headers with lower-cased names; undefined when none. */
  readonly headers: Readonly<Record<string, string>> | undefined;
  readonly cache: ResolvedCacheOptions;
  readonly maxEntries: number;
  readonly gcTime: number;
  readonly retry: ResolvedRetryOptions;
  readonly timeout: number;
  readonly deadline: number;
  readonly responseType: ResponseBodyType | undefined;
  /** undefined: no limit (not Infinity: a double field costs every spec a boxed number). */
  readonly maxResponseBytes: number | undefined;
  readonly fetchInit: FetchInit | undefined;
  readonly fetch: FetchLike;
  readonly clock: Clock;
  readonly random: () => number;
  /** Where a throwing listener or subscriber is reported (default: logged). */
  readonly onError: ErrorReporter;
}

/** Resolves and validates ClientOptions once; a bad value throws RangeError/TypeError naming it. */
export function resolveClientOptions(options: ClientOptions = {}): ClientConfig {
  if (typeof options !== 'object' || options === null) {
    throw new TypeError(`keel: createClient options must be an object, got ${typeof options}`);
  }
  // A relative baseURL resolves against the page in a browser; elsewhere it is a TypeError.
  const baseURL =
    options.baseURL === undefined ? undefined : resolveBaseURL(options.baseURL, 'baseURL');
  if (options.fetch !== undefined && typeof options.fetch !== 'function') {
    throw new TypeError(`keel: fetch must be a function, got ${typeof options.fetch}`);
  }
  if (options.fetch === undefined && typeof globalThis.fetch !== 'function') {
    throw new TypeError(
      'keel: no fetch implementation: pass options.fetch or run where fetch exists',
    );
  }
  const timeout = options.timeout ?? 0;
  checkMs('timeout', timeout, MAX_TIMER_MS);
  const deadline = options.deadline ?? 0;
  checkMs('deadline', deadline, MAX_TIMER_MS);
  const responseType = checkResponseType(options.responseType);
  const maxResponseBytes = checkMaxBytes(options.maxResponseBytes);
  const cacheOpts = clientCacheOptions(options.cache);
  const cache = resolveCacheOptions(cacheOpts, CACHE_DEFAULTS, 'cache', true);
  const maxEntries = cacheOpts.maxEntries ?? Number.POSITIVE_INFINITY;
  if (typeof maxEntries !== 'number') {
    throw new TypeError(`keel: cache.maxEntries must be a number, got ${typeof maxEntries}`);
  }
  if (
    !(maxEntries >= 1) ||
    (maxEntries !== Number.POSITIVE_INFINITY && !Number.isInteger(maxEntries))
  ) {
    throw new RangeError(
      `keel: cache.maxEntries must be an integer >= 1, got ${String(maxEntries)}`,
    );
  }
  const gcTime = checkGcTime(cacheOpts.gcTime ?? DEFAULT_GC_TIME);
  if (options.onError !== undefined && typeof options.onError !== 'function') {
    throw new TypeError(`keel: onError must be a function, got ${typeof options.onError}`);
  }
  const clock = options.clock ?? systemClock;
  if (typeof clock.now !== 'function' || typeof clock.setTimeout !== 'function') {
    throw new TypeError('keel: clock must have now(), setTimeout() and clearTimeout()');
  }
  return Object.freeze({
    baseURL,
    keyBase: keyBaseOf(baseURL),
    headers: options.headers ? lowerCaseHeaders(options.headers, 'headers') : undefined,
    cache,
    maxEntries,
    gcTime,
    retry: resolveRetryOptions(options.retry ?? {}, RETRY_DEFAULTS),
    timeout,
    deadline,
    responseType,
    maxResponseBytes,
    fetchInit: resolveFetchInit(options, undefined),
    // The global is looked up per call so a fetch patched later (msw, polyfills) is used.
    fetch: options.fetch ?? globalFetch,
    clock,
    random: options.random ?? Math.random,
    onError: options.onError ?? logListenerError,
  });
}

/** The client's `cache` option as an object: `false` disables caching, `true` is the default. */
function clientCacheOptions(option: ClientOptions['cache']): CacheOptions {
  if (option === undefined || option === true) return {};
  if (option === false) return DISABLED;
  return option;
}

const DISABLED: CacheOptions = Object.freeze({ enabled: false });

const globalFetch: FetchLike = (input, init) => globalThis.fetch(input, init);
