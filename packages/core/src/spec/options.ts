import { checkMs, RETRY_DEFAULTS, resolveRetryOptions } from '../attempt/retry-policy';
import { checkGcTime, DEFAULT_GC_TIME } from '../cache/store';
import { type Clock, MAX_TIMER_MS, systemClock } from '../internal/clock';
import { type ErrorReporter, logListenerError } from '../internal/report';
import type {
  CacheOptions,
  CacheStrategy,
  ClientOptions,
  FetchInit,
  FetchLike,
  ResolvedCacheOptions,
  ResolvedRetryOptions,
  ResponseBodyType,
} from '../types';
import { resolveFetchInit } from './fetch-init';

export const CACHE_DEFAULTS: Readonly<ResolvedCacheOptions> = Object.freeze({
  enabled: true,
  ttl: 30000,
  strategy: 'cache-first',
});

/** Client options after defaults and validation: read by every request, never mutated. */
export interface ClientConfig {
  readonly baseURL: string | undefined;
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
  const { baseURL } = options;
  if (baseURL !== undefined) {
    if (typeof baseURL !== 'string' || !/^[a-zA-Z][a-zA-Z\d+\-.]*:/.test(baseURL)) {
      throw new TypeError(`keel: baseURL must be an absolute URL string, got ${String(baseURL)}`);
    }
    try {
      new URL(baseURL);
    } catch (cause) {
      throw new TypeError(`keel: baseURL is not a valid URL: ${baseURL}`, { cause });
    }
  }
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

/**
 * Layers cache options over `base`. `gcTime` and `maxEntries` belong to the client's store:
 * given on a request (`clientLevel` false) they are a TypeError saying where they go.
 */
export function resolveCacheOptions(
  options: CacheOptions,
  base: ResolvedCacheOptions,
  field: string,
  clientLevel = false,
): ResolvedCacheOptions {
  if (typeof options !== 'object' || options === null) {
    throw new TypeError(`keel: ${field} must be a boolean or an object, got ${typeof options}`);
  }
  if (!clientLevel && (options.gcTime !== undefined || options.maxEntries !== undefined)) {
    const name = options.gcTime !== undefined ? 'gcTime' : 'maxEntries';
    throw new TypeError(
      `keel: ${field}.${name} is a client option: pass it to createClient({ cache: { ${name} } })`,
    );
  }
  if (
    options.enabled === undefined &&
    options.ttl === undefined &&
    options.strategy === undefined
  ) {
    return base;
  }
  const ttl = options.ttl ?? base.ttl;
  checkMs(`${field}.ttl`, ttl);
  const strategy: CacheStrategy = options.strategy ?? base.strategy;
  if (strategy !== 'cache-first' && strategy !== 'stale-while-revalidate') {
    throw new RangeError(
      `keel: ${field}.strategy must be 'cache-first' or 'stale-while-revalidate', got ${String(strategy)}`,
    );
  }
  return Object.freeze({ enabled: options.enabled ?? base.enabled, ttl, strategy });
}

export function lowerCaseHeaders(
  headers: Record<string, string>,
  field: string,
): Record<string, string> {
  if (typeof headers !== 'object' || headers === null) {
    throw new TypeError(`keel: ${field} must be an object of strings, got ${typeof headers}`);
  }
  const out: Record<string, string> = {};
  for (const name of Object.keys(headers)) {
    const value = headers[name];
    if (value === undefined) continue;
    if (typeof value !== 'string' && typeof value !== 'number') {
      throw new TypeError(`keel: header "${name}" must be a string, got ${typeof value}`);
    }
    out[name.toLowerCase()] = String(value);
  }
  return out;
}

const globalFetch: FetchLike = (input, init) => globalThis.fetch(input, init);

const BODY_TYPES: ReadonlySet<string> = new Set(['json', 'text', 'arrayBuffer', 'blob', 'stream']);

/** `responseType`: undefined (from the Content-Type) or one of the body types. */
export function checkResponseType(value: unknown): ResponseBodyType | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string') {
    throw new TypeError(`keel: responseType must be a string, got ${typeof value}`);
  }
  if (!BODY_TYPES.has(value)) {
    throw new RangeError(
      `keel: responseType must be one of ${[...BODY_TYPES].join(', ')}, got ${JSON.stringify(value)}`,
    );
  }
  return value as ResponseBodyType;
}

/** `maxResponseBytes`: an integer >= 0; undefined or Infinity (no limit) resolve to undefined. */
export function checkMaxBytes(value: unknown): number | undefined {
  if (value === undefined || value === Number.POSITIVE_INFINITY) return undefined;
  if (typeof value !== 'number') {
    throw new TypeError(`keel: maxResponseBytes must be a number of bytes, got ${typeof value}`);
  }
  if (!(value >= 0) || !Number.isInteger(value)) {
    throw new RangeError(
      `keel: maxResponseBytes must be an integer >= 0 (or Infinity), got ${String(value)}`,
    );
  }
  return value;
}
