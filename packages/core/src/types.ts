import type { CircuitOpenError } from './errors/circuit-open-error';
import type { Clock } from './internal/clock';
import type { Tracker } from './tracker/tracker';

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

export interface ResolvedCacheOptions {
  enabled: boolean;
  ttl: number;
  strategy: CacheStrategy;
}

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

/**
 * FetchOptions as RequestInit fields (`fetchCache` -> `cache`, `fetchPriority` -> `priority`).
 * Spelled out rather than picked from RequestInit, whose fields differ between the DOM types and
 * Node's.
 */
export interface FetchInit {
  readonly credentials?: FetchOptions['credentials'];
  readonly redirect?: FetchOptions['redirect'];
  readonly mode?: FetchOptions['mode'];
  readonly cache?: FetchOptions['fetchCache'];
  readonly keepalive?: boolean;
  readonly priority?: FetchOptions['fetchPriority'];
  readonly integrity?: string;
  readonly referrerPolicy?: FetchOptions['referrerPolicy'];
}

export interface RequestOptions extends FetchOptions {
  method?: HttpMethod;
  url?: string;
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

export interface ApiResponse<T = unknown> {
  data: T;
  status: number;
  statusText: string;
  headers: Headers;
}

/** A Promise with `cancel()`: rejects this caller with CancelledError. */
export interface CancellablePromise<T> extends Promise<T> {
  cancel(): void;
}

/**
 * A fully-resolved, frozen request description. Computed once at the boundary; every stage reads
 * it. It holds no caller signal, so it can be stored in the cache and replayed to refetch.
 */
export interface RequestSpec {
  readonly method: HttpMethod;
  /** Canonical absolute URL, query included. */
  readonly url: string;
  /** Fingerprint: the cache and dedup key. */
  readonly key: string;
  /** `METHOD pathname`: circuit, intelligence and adaptive key. */
  readonly endpoint: string;
  /** URL pathname, for path invalidation. */
  readonly path: string;
  readonly host: string;
  readonly headers: Readonly<Record<string, string>>;
  /** The serialized body as handed to fetch. */
  readonly body: BodyInit | undefined;
  /** Per-attempt timeout ms, 0 = none. */
  readonly timeout: number;
  /** Total time budget ms across attempts and waits, 0 = none. */
  readonly deadline: number;
  /** undefined: from the Content-Type. */
  readonly responseType: ResponseBodyType | undefined;
  /** undefined when unlimited. */
  readonly maxResponseBytes: number | undefined;
  /** The fetch options (client and request merged), as RequestInit fields; undefined if none. */
  readonly fetchInit: FetchInit | undefined;
  /** null when this request is not cached (non-GET, `cache:false`, or caching disabled). */
  readonly cache: ResolvedCacheOptions | null;
  readonly retry: ResolvedRetryOptions;
  readonly tags: readonly string[];
  readonly priority: Priority;
  readonly group: string | undefined;
}

export interface CacheMeta {
  key: string;
  tags: string[];
  storedAt: number;
  expiresAt: number;
}

export interface CacheUpdate {
  type: 'write' | 'revalidate' | 'invalidate';
  key: string;
  response?: ApiResponse;
}

export type CacheSubscriber = (update: CacheUpdate) => void;
export type KeyMatcher = string | ((key: string) => boolean);
export type InvalidateTarget = string | string[] | ((meta: CacheMeta) => boolean);

export interface RemovedEntry {
  key: string;
  path: string;
  tags: string[];
}

export type InvalidationResult = string[];

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

export type CircuitState = 'closed' | 'open' | 'halfOpen';

export interface CircuitStatus {
  endpoint: string;
  state: CircuitState;
  consecutiveFailures: number;
  openedAt?: number;
  probing: boolean;
}

export interface SchedulerOptions {
  enabled?: boolean;
  concurrency?: number;
  priority?: boolean;
  hosts?: Record<string, number>;
  rateLimit?: { requests: number; interval: number };
}

export interface SchedulerStats {
  active: number;
  queued: number;
  delayed: number;
  completed: number;
  rejected: number;
  lanes: Record<Priority, number>;
}

export type ParkReason = 'backoff' | 'retry-after' | 'rate-limit';

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

export interface AdaptiveMetrics {
  decisions: number;
  concurrencyReductions: number;
  concurrencyRecoveries: number;
  throttles: number;
  retryChanges: number;
}

export interface LatencyStats {
  avg: number;
  p50: number;
  p95: number;
  samples: number;
}

export interface EndpointAdaptiveState {
  endpoint: string;
  configured: number;
  effective: number;
  mode: 'nominal' | 'reducing' | 'recovering';
  health: 'good' | 'recovering' | 'degraded' | 'throttled';
  reason: string;
  retryMultiplier: number;
  retryMode: 'nominal' | 'throttled';
  retryReason: string;
  strategy?: 'stale-while-revalidate';
  strategyReason: string;
  signals: LatencyStats & { errorRatio: number; rateLimitRatio: number; active: number };
  degradedSince?: number;
  counters: AdaptiveMetrics;
}

export interface IntelligenceSummary {
  totalRequests: number;
  cacheHits: number;
  cacheMisses: number;
  deduplicated: number;
  retriesPerformed: number;
  retriesRecovered: number;
  failures: number;
  rateLimited: number;
  timeouts: number;
  cancels: number;
  activeRequests: number;
  cacheHitRate: number;
  dedupRate: number;
  retryRate: number;
  failureRate: number;
  rateLimitRate: number;
  adaptive: AdaptiveMetrics;
  circuits: { open: number; halfOpen: number; closed: number };
  circuitRejected: number;
}

export interface EndpointStats {
  method: string;
  path: string;
  requests: number;
  successes: number;
  failures: number;
  cacheHits: number;
  cacheMisses: number;
  dedupPrevented: number;
  retriesPerformed: number;
  retriesRecovered: number;
  rateLimited: number;
  timeouts: number;
  cancels: number;
  latency: LatencyStats;
  circuit: CircuitState;
  circuitFailures: number;
  circuitRejected: number;
}

export interface IntelligenceSnapshot {
  summary: IntelligenceSummary;
  endpoints: EndpointStats[];
}

export interface IntelligenceRecommendation {
  /** Recommended per-attempt timeout in ms. */
  timeout?: number;
  strategy?: CacheStrategy;
}

export interface IntelligenceController {
  snapshot(): IntelligenceSnapshot;
  endpoint(method: string, pathname: string): EndpointStats | undefined;
  reset(): void;
}

export interface CircuitBreakerController {
  status(method: string, path: string): CircuitStatus;
  statuses(): CircuitStatus[];
  reset(method?: string, path?: string): void;
}

export interface SchedulerController {
  stats(): SchedulerStats;
  pauseGroup(group: string): void;
  resumeGroup(group: string): void;
  cancelGroup(group: string): void;
  /** Moves queued jobs matched by group name or request key; returns how many moved. */
  prioritize(selector: string, priority: Priority): number;
}

export interface AdaptiveController {
  snapshot(): { enabled: boolean; endpoints: Record<string, EndpointAdaptiveState> };
  endpoint(method: string, path: string): EndpointAdaptiveState | undefined;
  metrics(): AdaptiveMetrics;
  reset(): void;
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

/**
 * What threw, for `onError`: a `client.on` listener (`event`), a `subscribe` listener
 * (`subscriber`) or predicate (`matcher`) with the key it was given, the `onError` handler itself
 * (then logged), or a step of keel's own (`internal`: a bug worth reporting).
 */
export type ListenerErrorContext =
  | { source: 'event'; event: string }
  | { source: 'subscriber'; key: string }
  | { source: 'matcher'; key: string }
  | { source: 'onError' }
  | { source: 'internal' };

/** Every event a client emits, by name, with its payload. */
export interface ClientEvents {
  /** A flight starts (owners only; not for circuit-rejected requests). */
  request: {
    key: string;
    method: HttpMethod;
    url: string;
    tracker: Tracker;
    endpoint: string;
    /** This flight is the half-open circuit probe. */
    probe: boolean;
  };
  /**
   * A flight ends successfully (once per flight, not per consumer). `attemptMs`: how long its
   * last attempt took, from the moment it got its slot to the parsed response.
   */
  success: {
    key: string;
    tracker: Tracker;
    response: ApiResponse;
    endpoint: string;
    attemptMs?: number;
  };
  /**
   * A flight ends in error (once per flight; never for circuit-rejected requests). `attemptMs`:
   * how long the last attempt took, when it got an HTTP response (HttpError, ParseError);
   * absent for timeouts, network errors and errors no attempt made.
   */
  error: { key: string; tracker: Tracker; error: unknown; endpoint: string; attemptMs?: number };
  /** A retry is scheduled after a failed attempt; `error` is its HttpError, TimeoutError or NetworkError. */
  retry: {
    key: string;
    tracker: Tracker;
    attempts: number;
    /** ms until the next attempt. */
    delay: number;
    /** What set `delay`: the server's Retry-After header, or the backoff. */
    reason: 'backoff' | 'retry-after';
    error: unknown;
    endpoint: string;
    /** How long the failed attempt took, when it got an HTTP response (as for `error`). */
    attemptMs?: number;
  };
  /**
   * A request (one caller) was cancelled. `final` is true when this cancellation ended the
   * flight itself (its last consumer left, or cancelAll / a group cancel).
   */
  cancel: { key: string; tracker: Tracker; endpoint: string; final: boolean };
  /** A request joined an in-flight flight; `consumers` counts them, owner included. */
  dedup: { key: string; method: HttpMethod; url: string; consumers: number; endpoint: string };
  /** Served from cache: fresh, or stale under stale-while-revalidate (`stale: true`). */
  'cache-hit': { key: string; tracker: Tracker; stale: boolean; endpoint: string };
  'cache-write': { key: string; response: ApiResponse };
  invalidate: { keys: string[]; target: InvalidateTarget };
  revalidate: { key: string; response: ApiResponse };
  'circuit-open': { endpoint: string; method: string; path: string };
  'circuit-half-open': { endpoint: string; method: string; path: string };
  'circuit-closed': { endpoint: string; method: string; path: string };
  'circuit-rejected': { endpoint: string; method: string; path: string; error: CircuitOpenError };
  'request-queued': SchedulerEventBase & { position: number };
  'request-dequeued': SchedulerEventBase;
  'request-started': SchedulerEventBase;
  'request-delayed': SchedulerEventBase & { reason: ParkReason; delay: number };
  'request-scheduled': SchedulerEventBase;
  'request-prioritized': SchedulerEventBase & { from: Priority; to: Priority };
  'request-rejected': SchedulerEventBase & { reason: 'cancelled' };
  'queue-paused': { group?: string };
  'queue-resumed': { group?: string };
}

export interface SchedulerEventBase {
  id: number;
  key: string;
  method: HttpMethod;
  url: string;
  priority: Priority;
}

export type ClientEventName = keyof ClientEvents;

export interface Client {
  request<T = unknown>(
    method: HttpMethod,
    url: string,
    options?: RequestOptions,
  ): CancellablePromise<ApiResponse<T>>;
  get<T = unknown>(url: string, options?: RequestOptions): CancellablePromise<ApiResponse<T>>;
  delete<T = unknown>(url: string, options?: RequestOptions): CancellablePromise<ApiResponse<T>>;
  head<T = unknown>(url: string, options?: RequestOptions): CancellablePromise<ApiResponse<T>>;
  options<T = unknown>(url: string, options?: RequestOptions): CancellablePromise<ApiResponse<T>>;
  post<T = unknown>(
    url: string,
    body?: unknown,
    options?: RequestOptions,
  ): CancellablePromise<ApiResponse<T>>;
  put<T = unknown>(
    url: string,
    body?: unknown,
    options?: RequestOptions,
  ): CancellablePromise<ApiResponse<T>>;
  patch<T = unknown>(
    url: string,
    body?: unknown,
    options?: RequestOptions,
  ): CancellablePromise<ApiResponse<T>>;
  on<E extends ClientEventName>(event: E, listener: (payload: ClientEvents[E]) => void): () => void;
  /** Listens to CacheUpdates for keys the matcher accepts (a key string, or a predicate). */
  subscribe(matcher: KeyMatcher, listener: CacheSubscriber): () => void;
  invalidate(target: InvalidateTarget, options?: { refetch?: boolean }): string[];
  /**
   * Cancels the reads (GET, HEAD, OPTIONS) in flight that `target` matches, with the meaning it
   * has for `invalidate` (a path, an array of tags, or a predicate over CacheMeta): every caller
   * of such a read gets `CancelledError`, and its response is not cached. For optimistic updates:
   * a read started before a mutation cannot overwrite what the mutation wrote into the cache.
   * Returns the keys of the cancelled reads.
   *
   * @example
   * client.cancelReads('/todos');
   * client.setCached(client.resolve('GET', '/todos'), optimistic);
   */
  cancelReads(target: InvalidateTarget): string[];
  /**
   * The keys of the reads in flight now (the flights an identical read would join), all of them
   * or those `target` matches (same meaning as for `invalidate`).
   */
  fetchingKeys(target?: InvalidateTarget): string[];
  /**
   * Whether a request falls under an invalidation target (a path, an array of tags or a
   * predicate over CacheMeta): the test `invalidate` and `cancelReads` apply to each entry.
   */
  matches(target: InvalidateTarget, spec: RequestSpec): boolean;
  cancelAll(): void;
  clearCache(): void;
  cancelGroup(group: string): void;
  intelligence(): IntelligenceController;
  circuitBreaker(): CircuitBreakerController;
  scheduler(): SchedulerController;
  adaptive(): AdaptiveController;
  /** Resolves a request without sending it: the spec (key, URL, endpoint) it would use. */
  resolve(method: HttpMethod, url: string, options?: RequestOptions): RequestSpec;
  /** The cached response for a key, fresh or stale, without touching the network. */
  getCached<T = unknown>(key: string): ApiResponse<T> | undefined;
  /**
   * Writes a response (or data) into the cache for a key and notifies subscribers with `write`,
   * e.g. for optimistic updates. `undefined` removes the entry. Pass the RequestSpec (from
   * `resolve`) instead of its key to store it with the entry, so that invalidation can refetch
   * an entry that was written by hand (its ttl and tags then come from the spec too).
   */
  setCached<T = unknown>(target: string | RequestSpec, value: ApiResponse<T> | undefined): void;
  /** Starts (or joins) a fetch for a spec with no caller promise: errors are swallowed. */
  prefetch(spec: RequestSpec): void;
  /**
   * Whether a read for this key is in flight now: the flight an identical read would join.
   * Lifecycle events (`request`, `dedup`, `success`, `error`, `cancel`) tell when it may change.
   */
  isFetching(key: string): boolean;
}
