import type { Clock } from '../internal/clock';
import type { ListenerErrorContext } from './events';

/*
 * The options a client and a request take. Every field says what it does and its default, so an
 * editor's hover is enough to use it; the README has the longer story.
 */

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE' | 'HEAD' | 'OPTIONS';

export type ParamValue = string | number | boolean | null | undefined;

export type QueryParams = Record<string, ParamValue | readonly ParamValue[]>;

export type Priority = 'high' | 'normal' | 'low';

export type CacheStrategy = 'cache-first' | 'stale-while-revalidate';

export type FetchLike = (input: string, init: RequestInit) => Promise<Response>;

/**
 * How a response body is read into `data`: parsed JSON, a string, an ArrayBuffer, a Blob, or the
 * body's ReadableStream unread (`stream`: never cached nor shared by dedup).
 */
export type ResponseBodyType = 'json' | 'text' | 'arrayBuffer' | 'blob' | 'stream';

export interface CacheOptions {
  /** Default: false at type level; the client's default configuration sets true. */
  enabled?: boolean;
  /**
   * Freshness in ms.
   * @default 30000
   */
  ttl?: number;
  /** @default 'cache-first' */
  strategy?: CacheStrategy;
  /**
   * Client option only. How long an entry is kept once it is both expired and unwatched (no
   * `subscribe` interest in its key, e.g. no mounted `useQuery`), in ms. Until then an expired
   * entry can still be served by stale-while-revalidate; after it, it is collected. `Infinity`
   * keeps expired entries until they are replaced, invalidated or evicted.
   * @default 300000 (5 minutes)
   */
  gcTime?: number;
  /**
   * Client option only. The most entries the cache holds; past it, the least recently written
   * entry is evicted.
   * @default Infinity
   */
  maxEntries?: number;
}

export interface RetryOptions {
  /**
   * Total attempts including the first.
   * @default 3
   */
  attempts?: number;
  /**
   * First backoff delay in ms (at most 2^31-1).
   * @default 1000
   */
  baseDelay?: number;
  /**
   * Cap of the computed backoff delay in ms (at most 2^31-1). A server Retry-After is capped by
   * `maxRetryAfter` instead.
   * @default 30000
   */
  maxDelay?: number;
  /** @default 'exponential' */
  backoff?: 'exponential' | 'fixed';
  /** @default true */
  jitter?: boolean;
  /**
   * Custom eligibility of a failed attempt. `status` is the HTTP status, undefined for network
   * errors and timeouts; `error` is what the attempt failed with (`HttpError`, `NetworkError`,
   * `TimeoutError`, ...), so a timeout can be told from a network error. Cancellation, parse
   * errors, redirect loops and integrity mismatches are never retried, and methods outside
   * `methods` only in the
   * cases listed there, whatever this returns.
   * @default status === undefined || [408, 429, 500, 502, 503, 504].includes(status)
   */
  retryOn?: (status: number | undefined, error: unknown) => boolean;
  /**
   * A server Retry-After (seconds or an HTTP date) wins over the computed delay.
   * @default true
   */
  respectRetryAfter?: boolean;
  /**
   * The longest Retry-After, in ms, the client waits. A server asking for a longer wait fails the
   * request at once with its HttpError (whose `retryAfter` says how long it asked for), rather
   * than holding the request for an hour. At most 2^31-1.
   * @default 60000
   */
  maxRetryAfter?: number;
  /**
   * Methods retried on every retriable failure. A method not listed (by default POST and PATCH,
   * which are not idempotent) is retried only when the server said it did not process the
   * request: a 429, a 503 with a Retry-After header, or a connection that failed before
   * anything was sent (`ECONNREFUSED`, `ENOTFOUND`, `EAI_AGAIN`, `EHOSTUNREACH`, `ENETUNREACH`,
   * `UND_ERR_CONNECT_TIMEOUT`). List POST here to retry it like a GET.
   * @default ['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE']
   */
  methods?: readonly HttpMethod[];
}

export interface SchedulerRequestOptions {
  group?: string;
}

/**
 * Options handed to the fetch implementation as they are (RequestInit), at client or request
 * level (the request's win). Two are renamed because keel already uses the name: `fetchCache` is
 * fetch's `cache` (the HTTP cache mode; keel's `cache` is its response cache) and
 * `fetchPriority` is fetch's `priority` (keel's `priority` is the scheduler lane; the name
 * follows HTML's `fetchpriority` attribute). A platform may ignore or refuse some (Node's fetch
 * has no `mode` or HTTP cache). They are not part of the cache and dedup key.
 */
export interface FetchOptions {
  /** fetch's `credentials`: whether cookies and auth go along. */
  credentials?: 'omit' | 'same-origin' | 'include';
  /**
   * fetch's `redirect`. With `'manual'` a 3xx is not followed and rejects with its HttpError
   * (in browsers an opaque redirect, status 0); with `'error'` a redirect is a NetworkError
   * (`ERR_UNEXPECTED_REDIRECT` in Node), not retried.
   */
  redirect?: 'follow' | 'error' | 'manual';
  /** fetch's `mode` (browsers; `'navigate'` is the browser's own and refused). */
  mode?: 'cors' | 'no-cors' | 'same-origin';
  /** fetch's `cache`: the HTTP cache mode (`'no-store'`, `'reload'`, ...). */
  fetchCache?: 'default' | 'no-store' | 'reload' | 'no-cache' | 'force-cache' | 'only-if-cached';
  /** fetch's `keepalive`: the request may outlive the page (browsers). */
  keepalive?: boolean;
  /** fetch's `priority` (`'high'`, `'low'`, `'auto'`), a hint to the browser. */
  fetchPriority?: 'high' | 'low' | 'auto';
  /** fetch's `integrity` (subresource integrity metadata). */
  integrity?: string;
  /** fetch's `referrerPolicy`. */
  referrerPolicy?:
    | ''
    | 'no-referrer'
    | 'no-referrer-when-downgrade'
    | 'same-origin'
    | 'origin'
    | 'strict-origin'
    | 'origin-when-cross-origin'
    | 'strict-origin-when-cross-origin'
    | 'unsafe-url';
}

export interface RequestOptions extends FetchOptions {
  baseURL?: string;
  headers?: Record<string, string>;
  /** Serialized into the query string with `buildQuery`; arrays repeat the key. */
  params?: QueryParams;
  /** JSON-stringified unless a string, URLSearchParams, FormData, Blob, ArrayBuffer or typed array. */
  body?: unknown;
  signal?: AbortSignal;
  /** Per-attempt timeout in ms; 0 means none. */
  timeout?: number;
  /**
   * Total time budget of the request in ms, from the call to its answer: every attempt, retry
   * wait and scheduler queueing included. When it runs out the request fails with a TimeoutError
   * of kind `deadline` (a retry whose wait would end past it fails at once with the last error
   * instead). 0 means none. Overrides the client's `deadline`.
   * @default the client's `deadline` (0)
   */
  deadline?: number;
  /**
   * How a 2xx body becomes `data`. Default: from the Content-Type: JSON for `application/json`
   * and `*+json`, text for text, XML, forms and a missing type, an ArrayBuffer for anything else
   * (a binary body is never decoded as text). `stream` hands over the unread body (not cached,
   * not de-duplicated). Error bodies are always read by their Content-Type.
   * @default the client's `responseType`, else from the Content-Type
   */
  responseType?: ResponseBodyType;
  /**
   * The largest body accepted, in bytes: past it the download is cancelled and the request fails
   * with ResponseTooLargeError (at once when the Content-Length says so).
   * @default the client's `maxResponseBytes` (Infinity)
   */
  maxResponseBytes?: number;
  cache?: boolean | CacheOptions;
  retry?: boolean | RetryOptions;
  tags?: string[];
  priority?: Priority;
  scheduler?: SchedulerRequestOptions;
}

export interface ClientOptions extends FetchOptions {
  baseURL?: string;
  headers?: Record<string, string>;
  /**
   * The response cache. `false` disables it (a request can still opt in with `cache: true`),
   * `true` is the default configuration.
   * @default { enabled: true, ttl: 30000, strategy: 'cache-first', gcTime: 300000 }
   */
  cache?: CacheOptions | boolean;
  /** `false` makes every request a single attempt unless the request says otherwise. */
  retry?: RetryOptions | boolean;
  /** Default per-attempt timeout in ms; 0 = none. */
  timeout?: number;
  /**
   * Default total time budget of a request in ms, across attempts, retry waits and queueing:
   * the way to bound a request end to end (the per-attempt `timeout` alone does not: with the
   * default retry a hanging server costs 3 attempts plus waits). 0 = none.
   * @default 0
   */
  deadline?: number;
  /** Default `responseType` of every request (see RequestOptions.responseType). */
  responseType?: ResponseBodyType;
  /**
   * Default body size limit of every request in bytes (see RequestOptions.maxResponseBytes).
   * @default Infinity
   */
  maxResponseBytes?: number;
  fetch?: FetchLike;
  intelligence?: IntelligenceOptions;
  circuitBreaker?: CircuitBreakerOptions;
  scheduler?: SchedulerOptions;
  adaptive?: AdaptiveOptions;
  /** Time source for every timer and timestamp (tests inject a fake). Default: the real clock. */
  clock?: Clock;
  /** Random source in [0,1) for retry jitter. Default Math.random. */
  random?: () => number;
  /**
   * Receives the error of a listener (`on`) or subscriber (`subscribe`) that threw. The throw
   * never reaches the request pipeline, the other listeners, or the process (it is not rethrown:
   * in Node an uncaught exception ends the process). Should `onError` throw, that is logged.
   * @default logs with console.error
   */
  onError?: (error: unknown, context: ListenerErrorContext) => void;
}

export interface IntelligenceOptions {
  enabled?: boolean;
  adaptiveTimeout?: boolean;
  adaptiveStaleWhileRevalidate?: boolean;
}

export interface CircuitBreakerOptions {
  enabled?: boolean;
  failureThreshold?: number;
  resetTimeout?: number;
}

export interface SchedulerOptions {
  enabled?: boolean;
  concurrency?: number;
  priority?: boolean;
  hosts?: Record<string, number>;
  rateLimit?: { requests: number; interval: number };
}

export interface AdaptiveOptions {
  enabled?: boolean;
  concurrency?: boolean;
  retry?: boolean;
  rateLimit?: boolean;
  staleWhileRevalidate?: boolean;
  highLatencyMs?: number;
  lowLatencyMs?: number;
  degradeSamples?: number;
  recoverySamples?: number;
  changeCooldown?: number;
  minConcurrency?: number;
  rateLimitRatio?: number;
  errorRatio?: number;
  backoffFactor?: number;
  maxBackoffMs?: number;
  swrLatencyMs?: number;
  latencyWindow?: number;
  outcomeWindow?: number;
}
