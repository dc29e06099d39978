import type { Clock } from '../internal/clock';
import type { ListenerErrorContext } from './events';

/*
 * The options a client and a request take. Every field says what it does and its default, so an
 * editor's hover is enough to use it; the README has the longer story.
 */

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE' | 'HEAD' | 'OPTIONS';

/**
 * A method as a call may write it (`request`, `resolve`, `retry.methods`): upper or lower case.
 * keel upper-cases it once, so every spec, key, event and error says `GET`: that is HttpMethod.
 */
export type HttpMethodInput = HttpMethod | Lowercase<HttpMethod>;

export type ParamValue = string | number | boolean | null | undefined;

export type QueryParams = Record<string, ParamValue | readonly ParamValue[]>;

/**
 * Headers as `headers` takes them: a plain object (a value left undefined is not sent) or a
 * `Headers`. Not fetch's `[name, value][]` form: keel refuses it (a TypeError).
 */
export type HeadersOption = Readonly<Record<string, string | undefined>> | Headers;

export type Priority = 'high' | 'normal' | 'low';

export type CacheStrategy = 'cache-first' | 'stale-while-revalidate';

/**
 * The fetch keel calls: the global one fits. It may also return its Response as it is, or any
 * thenable of one (both are answered like a resolved promise); a throw fails like a rejection.
 */
export type FetchLike = (input: string, init: RequestInit) => Response | PromiseLike<Response>;

/**
 * How a response body is read into `data`: parsed JSON, a string, an ArrayBuffer, a Blob, or the
 * body's ReadableStream unread (`stream`: never cached nor shared by dedup).
 */
export type ResponseBodyType = 'json' | 'text' | 'arrayBuffer' | 'blob' | 'stream';

export interface CacheOptions {
  /**
   * Whether responses are cached. On a request, `cache: { ttl }` keeps the client's setting;
   * the client's default configuration has it on.
   * @default true
   */
  enabled?: boolean | undefined;
  /**
   * Freshness in ms: a cached response younger than this is served without a request.
   * @default 30000
   */
  ttl?: number | undefined;
  /**
   * `cache-first` serves a fresh entry and fetches otherwise; `stale-while-revalidate` also
   * serves an expired entry at once and refreshes it in the background.
   * @default 'cache-first'
   */
  strategy?: CacheStrategy | undefined;
  /**
   * Client option only. How long an entry is kept once it is both expired and unwatched (no
   * `subscribe` interest in its key, e.g. no mounted `useQuery`), in ms. Until then an expired
   * entry can still be served by stale-while-revalidate; after it, it is collected. `Infinity`
   * keeps expired entries until they are replaced, invalidated or evicted.
   * @default 300000 (5 minutes)
   */
  gcTime?: number | undefined;
  /**
   * Client option only. The most entries the cache holds; past it, the least recently written
   * entry is evicted.
   * @default Infinity
   */
  maxEntries?: number | undefined;
}

export interface RetryOptions {
  /**
   * Total attempts including the first.
   * @default 3
   */
  attempts?: number | undefined;
  /**
   * First backoff delay in ms (at most 2^31-1).
   * @default 1000
   */
  baseDelay?: number | undefined;
  /**
   * Cap of the computed backoff delay in ms (at most 2^31-1). A server Retry-After is capped by
   * `maxRetryAfter` instead.
   * @default 30000
   */
  maxDelay?: number | undefined;
  /**
   * `exponential` doubles the delay after each attempt (`baseDelay * 2^(attempt-1)`); `fixed`
   * waits `baseDelay` every time.
   * @default 'exponential'
   */
  backoff?: 'exponential' | 'fixed' | undefined;
  /**
   * Spreads each delay randomly between half and all of it, so many clients do not retry in step.
   * @default true
   */
  jitter?: boolean | undefined;
  /**
   * Custom eligibility of a failed attempt. `status` is the HTTP status, undefined for network
   * errors and timeouts; `error` is what the attempt failed with (`HttpError`, `NetworkError`,
   * `TimeoutError`, ...), so a timeout can be told from a network error. Cancellation, parse
   * errors, redirect loops and integrity mismatches are never retried, and methods outside
   * `methods` only in the
   * cases listed there, whatever this returns. keel always passes `error`; it is optional in the
   * type so that the function read back can be called as the client specification writes it,
   * `retryOn(status)`.
   * @default status === undefined || [408, 429, 500, 502, 503, 504].includes(status)
   */
  retryOn?: ((status: number | undefined, error?: unknown) => boolean) | undefined;
  /**
   * A server Retry-After (seconds or an HTTP date) wins over the computed delay.
   * @default true
   */
  respectRetryAfter?: boolean | undefined;
  /**
   * The longest Retry-After, in ms, the client waits. A server asking for a longer wait fails the
   * request at once with its HttpError (whose `retryAfter` says how long it asked for), rather
   * than holding the request for an hour. At most 2^31-1.
   * @default 60000
   */
  maxRetryAfter?: number | undefined;
  /**
   * Methods retried on every retriable failure. A method not listed (by default POST and PATCH,
   * which are not idempotent) is retried only when the server said it did not process the
   * request: a 429, a 503 with a Retry-After header, or a connection that failed before
   * anything was sent (`ECONNREFUSED`, `ENOTFOUND`, `EAI_AGAIN`, `EHOSTUNREACH`, `ENETUNREACH`,
   * `UND_ERR_CONNECT_TIMEOUT`). List POST here to retry it like a GET.
   * @default ['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE']
   */
  methods?: readonly HttpMethodInput[] | undefined;
}

/** Options of `client.prefetch(spec, options)`. */
export interface PrefetchOptions {
  /**
   * Read only when the key has no fresh cached response (a cache-first read, as a mount's): a
   * fresh one is left alone and nothing is sent.
   * @default false
   */
  ifStale?: boolean | undefined;
  /**
   * A refusal by the endpoint's open circuit counts as a request's (`circuit-rejected`, and
   * intelligence's `circuitRejected`): for a read the user asked for, such as a refresh button.
   * Otherwise it is dropped silently, as the client's own refetches are.
   * @default false
   */
  reportRejection?: boolean | undefined;
}

/** A request's options for the scheduler (`RequestOptions.scheduler`). */
export interface SchedulerRequestOptions {
  /**
   * The scheduler group the request belongs to, for `pauseGroup`, `resumeGroup`, `cancelGroup`
   * and `prioritize`.
   * @default none (no group)
   */
  group?: string | undefined;
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
  /**
   * fetch's `credentials`: whether cookies and auth go along.
   * @default fetch's own (`'same-origin'`)
   */
  credentials?: 'omit' | 'same-origin' | 'include' | undefined;
  /**
   * fetch's `redirect`. With `'manual'` a 3xx is not followed and rejects with its HttpError
   * (in browsers an opaque redirect, status 0); with `'error'` a redirect is a NetworkError
   * (`ERR_UNEXPECTED_REDIRECT` in Node), not retried.
   * @default fetch's own (`'follow'`)
   */
  redirect?: 'follow' | 'error' | 'manual' | undefined;
  /**
   * fetch's `mode` (browsers; `'navigate'` is the browser's own and refused).
   * @default fetch's own (`'cors'`)
   */
  mode?: 'cors' | 'no-cors' | 'same-origin' | undefined;
  /**
   * fetch's `cache`: the HTTP cache mode (`'no-store'`, `'reload'`, ...).
   * @default fetch's own (`'default'`)
   */
  fetchCache?:
    | 'default'
    | 'no-store'
    | 'reload'
    | 'no-cache'
    | 'force-cache'
    | 'only-if-cached'
    | undefined;
  /**
   * fetch's `keepalive`: the request may outlive the page (browsers).
   * @default fetch's own (`false`)
   */
  keepalive?: boolean | undefined;
  /**
   * fetch's `priority` (`'high'`, `'low'`, `'auto'`), a hint to the browser.
   * @default fetch's own (`'auto'`)
   */
  fetchPriority?: 'high' | 'low' | 'auto' | undefined;
  /**
   * fetch's `integrity` (subresource integrity metadata).
   * @default none (not checked)
   */
  integrity?: string | undefined;
  /**
   * fetch's `referrerPolicy`: how much of the referrer is sent.
   * @default fetch's own (the document's policy)
   */
  referrerPolicy?:
    | ''
    | 'no-referrer'
    | 'no-referrer-when-downgrade'
    | 'same-origin'
    | 'origin'
    | 'strict-origin'
    | 'origin-when-cross-origin'
    | 'strict-origin-when-cross-origin'
    | 'unsafe-url'
    | undefined;
}

/**
 * The options of one request (`client.get(url, options)`, ...). Each one left out takes the
 * client's value.
 */
export interface RequestOptions extends FetchOptions {
  /**
   * The spec lists the method among a request's options; keel takes it as an argument
   * (`request(method, url, options)`, or the named method), which wins: this field is ignored.
   * @default the argument
   */
  method?: HttpMethodInput | undefined;
  /**
   * The spec lists the URL among a request's options; the `url` argument wins, and this field is
   * ignored.
   * @default the argument
   */
  url?: string | undefined;
  /**
   * Joined onto a relative URL instead of the client's `baseURL`.
   * @default the client's `baseURL`
   */
  baseURL?: string | undefined;
  /**
   * Request headers, merged over the client's (names compared case-insensitively).
   * @default the client's `headers`
   */
  headers?: HeadersOption | undefined;
  /**
   * Serialized into the query string with `buildQuery`; arrays repeat the key. A
   * URLSearchParams is read as its pairs.
   * @default none
   */
  params?: QueryParams | URLSearchParams | undefined;
  /**
   * The request body: JSON-stringified unless a string, URLSearchParams, FormData, Blob,
   * ArrayBuffer or typed array; `null`, as in fetch, is no body. A GET or HEAD request cannot
   * have one (RangeError).
   * @default none
   */
  body?: unknown;
  /**
   * Cancels this caller's request when it aborts (the network attempt stops once no caller
   * is left); a signal aborted with a TimeoutError rejects with a TimeoutError of kind `signal`.
   * @default none
   */
  signal?: AbortSignal | undefined;
  /**
   * Per-attempt timeout in ms; 0 means none.
   * @default the client's `timeout` (0), or intelligence's recommendation when on
   */
  timeout?: number | undefined;
  /**
   * Total time budget of the request in ms, from the call to its answer: every attempt, retry
   * wait and scheduler queueing included. When it runs out the request fails with a TimeoutError
   * of kind `deadline` (a retry whose wait would end past it fails at once with the last error
   * instead). 0 means none. Overrides the client's `deadline`.
   * @default the client's `deadline` (0)
   */
  deadline?: number | undefined;
  /**
   * How a 2xx body becomes `data`. Default: from the Content-Type: JSON for `application/json`
   * and `*+json`, text for text, XML, forms and a missing type, an ArrayBuffer for anything else
   * (a binary body is never decoded as text). `stream` hands over the unread body (not cached,
   * not de-duplicated). Error bodies are always read by their Content-Type.
   * @default the client's `responseType`, else from the Content-Type
   */
  responseType?: ResponseBodyType | undefined;
  /**
   * The largest body accepted, in bytes: past it the download is cancelled and the request fails
   * with ResponseTooLargeError (at once when the Content-Length says so).
   * @default the client's `maxResponseBytes` (Infinity)
   */
  maxResponseBytes?: number | undefined;
  /**
   * This request's caching: `false` bypasses the cache, `true` uses the client's settings, an
   * object layers over them (`gcTime` and `maxEntries` are client options: a TypeError here).
   * @default the client's `cache`
   */
  cache?: boolean | Omit<CacheOptions, 'gcTime' | 'maxEntries'> | undefined;
  /**
   * This request's retry policy: `false` makes one attempt, an object layers over the client's,
   * `true` is the client's (the defaults when the client's is `false`).
   * @default the client's `retry`
   */
  retry?: boolean | RetryOptions | undefined;
  /**
   * Tags stored with the cached response, for `client.invalidate(['tag'])`.
   * @default none
   */
  tags?: readonly string[] | undefined;
  /**
   * The scheduler lane (with `scheduler.priority: true`; ignored otherwise).
   * @default 'normal'
   */
  priority?: Priority | undefined;
  /**
   * Scheduler options of this request: its group.
   * @default none
   */
  scheduler?: SchedulerRequestOptions | undefined;
}

/** The options of `createClient`: each is validated once, there, and read by every request. */
export interface ClientOptions extends FetchOptions {
  /**
   * Joined onto relative URLs, keeping its path (`/users` on `https://x.test/v1` is
   * `https://x.test/v1/users`). A relative one (`'/api'`) resolves against the page's location
   * when the client is created; outside a browser it is a RangeError.
   * @default none (every URL must be absolute)
   */
  baseURL?: string | undefined;
  /**
   * Headers sent with every request; a request's own headers win (names compared
   * case-insensitively, sent as written).
   * @default none
   */
  headers?: HeadersOption | undefined;
  /**
   * The response cache. `false` disables it (a request can still opt in with `cache: true`),
   * `true` is the default configuration.
   * @default { enabled: true, ttl: 30000, strategy: 'cache-first', gcTime: 300000 }
   */
  cache?: CacheOptions | boolean | undefined;
  /**
   * The retry policy of every request: `false` makes every request a single attempt unless the
   * request says otherwise; an object layers over the defaults.
   * @default { attempts: 3, baseDelay: 1000, maxDelay: 30000, backoff: 'exponential', jitter: true }
   */
  retry?: RetryOptions | boolean | undefined;
  /**
   * Default per-attempt timeout in ms; 0 = none.
   * @default 0
   */
  timeout?: number | undefined;
  /**
   * Default total time budget of a request in ms, across attempts, retry waits and queueing:
   * the way to bound a request end to end (the per-attempt `timeout` alone does not: with the
   * default retry a hanging server costs 3 attempts plus waits). 0 = none.
   * @default 0
   */
  deadline?: number | undefined;
  /**
   * Default `responseType` of every request (see RequestOptions.responseType).
   * @default none (read by the Content-Type)
   */
  responseType?: ResponseBodyType | undefined;
  /**
   * Default body size limit of every request in bytes (see RequestOptions.maxResponseBytes).
   * @default Infinity
   */
  maxResponseBytes?: number | undefined;
  /**
   * The fetch implementation; the global one is looked up at each call, so one installed later
   * (msw, a polyfill) is used. `init.signal` is an own getter: the attempt's AbortSignal is made
   * when it is first read (already aborted if the attempt ended), so a fetch that never reads it
   * costs no signal, and one that spreads `init` passes it on.
   * @default globalThis.fetch
   */
  fetch?: FetchLike | undefined;
  /**
   * Request observation (counters, latency per endpoint) and its recommendations.
   * @default { enabled: true }
   */
  intelligence?: IntelligenceOptions | undefined;
  /**
   * The per-endpoint circuit breaker, read once at creation.
   * @default { enabled: true, failureThreshold: 5, resetTimeout: 10000 }
   */
  circuitBreaker?: CircuitBreakerOptions | undefined;
  /**
   * The request scheduler (lanes, host caps, rate limit, groups). Absent: no scheduler, every
   * request starts at once.
   * @default none
   */
  scheduler?: SchedulerOptions | undefined;
  /**
   * The adaptive engine (per-endpoint ceilings, backoff under 429, stale-while-revalidate for a
   * slow endpoint). Absent or not enabled: no engine is built.
   * @default none
   */
  adaptive?: AdaptiveOptions | undefined;
  /**
   * Time source for every timer and timestamp (tests inject a fake).
   * @default systemClock (Date.now and the global timers)
   */
  clock?: Clock | undefined;
  /**
   * Random source in [0, 1) for retry jitter (a value outside is taken modulo 1, NaN as 0).
   * @default Math.random
   */
  random?: (() => number) | undefined;
  /**
   * Receives the error of a listener (`on`) or subscriber (`subscribe`) that threw. The throw
   * never reaches the request pipeline, the other listeners, or the process (it is not rethrown:
   * in Node an uncaught exception ends the process). Should `onError` throw, that is logged.
   * @default logs with console.error
   */
  onError?: ((error: unknown, context: ListenerErrorContext) => void) | undefined;
}

/** `ClientOptions.intelligence`: request observation from lifecycle events (README "Intelligence"). */
export interface IntelligenceOptions {
  /**
   * Observe requests: per-endpoint counters and latency, `client.intelligence()`. Off, nothing
   * is recorded or recommended.
   * @default true
   */
  enabled?: boolean | undefined;
  /**
   * Recommend a per-attempt timeout of 3 × p95 (100 ms .. 60 s, never above the client's
   * `timeout`) for an endpoint with at least 5 samples.
   * @default false
   */
  adaptiveTimeout?: boolean | undefined;
  /**
   * Read an endpoint whose p95 is 500 ms or more with `stale-while-revalidate`.
   * @default false
   */
  adaptiveStaleWhileRevalidate?: boolean | undefined;
}

/** `ClientOptions.circuitBreaker`: one circuit per `METHOD pathname` (README "Circuit breaker"). */
export interface CircuitBreakerOptions {
  /**
   * Whether circuits open at all.
   * @default true
   */
  enabled?: boolean | undefined;
  /**
   * Consecutive countable failures (5xx, 429, timeouts, network errors) that open a circuit; an
   * integer >= 1.
   * @default 5
   */
  failureThreshold?: number | undefined;
  /**
   * How long an open circuit refuses requests before it lets one probe through, in ms.
   * @default 10000
   */
  resetTimeout?: number | undefined;
}

/** `ClientOptions.scheduler`: its presence turns the request scheduler on (README "Scheduler"). */
export interface SchedulerOptions {
  /**
   * `false` keeps the client transparent (no scheduler) while the block stays validated.
   * @default true
   */
  enabled?: boolean | undefined;
  /**
   * Simultaneous network attempts; an integer >= 1.
   * @default 8
   */
  concurrency?: number | undefined;
  /**
   * `true`: high / normal / low lanes, weighted round-robin 4:2:1; `false`: one FIFO and
   * `RequestOptions.priority` is ignored.
   * @default false
   */
  priority?: boolean | undefined;
  /**
   * Per-host caps, `{ hostname: cap }` (integers >= 1, hostnames matched case-insensitively;
   * every port of a host shares its cap; a key with a scheme, port or path is a RangeError).
   * @default none
   */
  hosts?: Record<string, number> | undefined;
  /**
   * At most `requests` attempts (retries included) start in any `interval` ms; a job with a
   * free slot but no budget waits parked (no slot held) until budget frees.
   * @default none
   */
  rateLimit?:
    | {
        /** Attempts allowed per `interval`; an integer >= 1. */
        requests: number;
        /** The window, in ms. */
        interval: number;
      }
    | undefined;
}

/**
 * `ClientOptions.adaptive`: the adaptive engine (README "Adaptive engine"). Every switch is off
 * by default, so `enabled: true` alone measures and explains but changes nothing.
 */
export interface AdaptiveOptions {
  /**
   * Build the engine. Absent or false: nothing is measured and the client behaves as without it.
   * @default false
   */
  enabled?: boolean | undefined;
  /**
   * Adapt each endpoint's scheduler ceiling (needs `scheduler`).
   * @default false
   */
  concurrency?: boolean | undefined;
  /**
   * Scale the retry backoff by `backoffFactor` while an endpoint is throttled.
   * @default false
   */
  retry?: boolean | undefined;
  /**
   * Throttle an endpoint after a window with 429 pressure (`rateLimitRatio`).
   * @default false
   */
  rateLimit?: boolean | undefined;
  /**
   * Read a degraded endpoint with `stale-while-revalidate`.
   * @default false
   */
  staleWhileRevalidate?: boolean | undefined;
  /**
   * A window whose p95 is at or above this, in ms, is pressured.
   * @default 2000
   */
  highLatencyMs?: number | undefined;
  /**
   * A window is healthy only with p95 below this, in ms (at most `highLatencyMs`).
   * @default 1000
   */
  lowLatencyMs?: number | undefined;
  /**
   * Consecutive pressured windows that lower the ceiling by one; an integer >= 1.
   * @default 3
   */
  degradeSamples?: number | undefined;
  /**
   * Consecutive healthy windows that raise the ceiling by one (and release a throttle); >= 1.
   * @default 3
   */
  recoverySamples?: number | undefined;
  /**
   * Windows that must close after a ceiling change before the next one; an integer >= 0.
   * @default 2
   */
  changeCooldown?: number | undefined;
  /**
   * The lowest ceiling the engine sets; an integer >= 1.
   * @default 1
   */
  minConcurrency?: number | undefined;
  /**
   * A window with at least this share of 429 answers (0..1) has 429 pressure.
   * @default 0.2
   */
  rateLimitRatio?: number | undefined;
  /**
   * A window with at least this share of errors (0..1) is pressured.
   * @default 0.1
   */
  errorRatio?: number | undefined;
  /**
   * What a throttle multiplies the retry base delay by; >= 1.
   * @default 2
   */
  backoffFactor?: number | undefined;
  /**
   * The cap of a throttled base delay, in ms (never below the request's own base delay).
   * @default 10000
   */
  maxBackoffMs?: number | undefined;
  /**
   * An endpoint whose p95 is at or above this, in ms, is degraded (stale-while-revalidate).
   * @default 1500
   */
  swrLatencyMs?: number | undefined;
  /**
   * Latencies kept per endpoint for p95; an integer from 4 to 65536.
   * @default 64
   */
  latencyWindow?: number | undefined;
  /**
   * Samples per window: a window closes, and is judged, every this many; an integer from 2 to
   * 65536.
   * @default 32
   */
  outcomeWindow?: number | undefined;
}
