import { type ResolvedRetryOptions, resolveRetryOptions } from './attempt/retry-policy';
import {
  CACHE_DEFAULTS,
  CACHE_STORE_DEFAULTS,
  type ResolvedCacheOptions,
  resolveCacheOptions,
} from './cache/options';
import {
  checkFunction,
  checkInteger,
  checkMs,
  checkObject,
  keysOf,
  optionalMs,
  typeError,
  withDefaults,
} from './internal/checks';
import { type Clock, systemClock } from './internal/clock';
import { freeze } from './internal/freeze';
import { type ErrorReporter, logListenerError } from './internal/report';
import { keyBaseOf, resolveBaseURL } from './internal/url';
import { type FetchInit, resolveFetchInit, SHARED_OPTION_NAMES } from './request/fetch-init';
import { checkHeaders, checkMaxBytes, checkResponseType } from './request/fields';
import type { CacheOptions, ClientOptions, FetchLike, ResponseBodyType } from './types/options';

/** Client options after defaults and validation: read by every request, never mutated. */
export interface ClientConfig {
  /** Absolute (a relative one was resolved against the page when the client was created). */
  readonly baseURL: string | undefined;
  /** What cache keys are written relative to (internal/url keyBaseOf). */
  readonly keyBase: string | undefined;
  /** Client headers, names as written; undefined when none. */
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

/** The top-level client options' defaults (the blocks have their own: CACHE_DEFAULTS, ...). */
export const CLIENT_DEFAULTS = /* @__PURE__ */ freeze({
  timeout: 0,
  deadline: 0,
  maxResponseBytes: Infinity,
});

/** What createBaseClient takes (createClient hands it the rest of its own). */
const CLIENT_KEYS = /* @__PURE__ */ keysOf(
  `${SHARED_OPTION_NAMES} fetch clock random onError features intelligence circuitBreaker scheduler adaptive`,
);

/** Resolves and validates ClientOptions once; a bad value throws RangeError/TypeError naming it. */
export function resolveClientOptions(options: ClientOptions = {}): ClientConfig {
  checkObject('options', options, undefined, CLIENT_KEYS);
  // A relative baseURL resolves against the page in a browser; elsewhere it is a RangeError.
  const baseURL = options.baseURL === undefined ? undefined : resolveBaseURL(options.baseURL);
  if (options.fetch !== undefined) checkFunction('fetch', options.fetch);
  else if (typeof globalThis.fetch !== 'function') {
    throw typeError('fetch', 'a function where there is no global fetch', options.fetch);
  }
  // Checked as on a request (request/resolve.ts): only undefined takes the default.
  const timeout = optionalMs('timeout', options.timeout, CLIENT_DEFAULTS.timeout);
  const deadline = optionalMs('deadline', options.deadline, CLIENT_DEFAULTS.deadline);
  const responseType = checkResponseType(options.responseType);
  // undefined: no limit (CLIENT_DEFAULTS.maxResponseBytes).
  const maxResponseBytes = checkMaxBytes(options.maxResponseBytes);
  const cacheOpts = clientCacheOptions(options.cache);
  const cache = resolveCacheOptions(cacheOpts, CACHE_DEFAULTS, 'cache', true);
  const store = withDefaults(cacheOpts, CACHE_STORE_DEFAULTS);
  const maxEntries = checkInteger('cache.maxEntries', store.maxEntries, 1, true);
  const gcTime = checkMs('cache.gcTime', store.gcTime, Infinity);
  if (options.onError !== undefined) checkFunction('onError', options.onError);
  if (options.random !== undefined) checkFunction('random', options.random);
  // Only undefined takes the default, as for `fetch`, `random` and `onError`.
  const clock = options.clock === undefined ? systemClock : options.clock;
  if (
    typeof clock !== 'object' ||
    clock === null ||
    typeof clock.now !== 'function' ||
    typeof clock.setTimeout !== 'function' ||
    typeof clock.clearTimeout !== 'function'
  ) {
    throw typeError('clock', 'an object with now(), setTimeout() and clearTimeout()', clock);
  }
  return freeze({
    baseURL,
    keyBase: keyBaseOf(baseURL),
    headers: options.headers !== undefined ? checkHeaders(options.headers, 'headers') : undefined,
    cache,
    maxEntries,
    gcTime,
    // `retry: null` is refused here as on a request: it is neither a switch nor options.
    retry: resolveRetryOptions(options.retry),
    timeout,
    deadline,
    responseType,
    maxResponseBytes,
    fetchInit: resolveFetchInit(options),
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

const DISABLED: CacheOptions = /* @__PURE__ */ freeze({ enabled: false });

const globalFetch: FetchLike = (input, init) => globalThis.fetch(input, init);
