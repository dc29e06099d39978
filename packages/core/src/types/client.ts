import type { CircuitOpenError } from '../errors/circuit-open-error';
import type { RequestSpec } from '../request/resolve';
import type {
  AdaptiveController,
  CircuitBreakerController,
  IntelligenceController,
  SchedulerController,
} from './controllers';
import type { ClientEventName, ClientEvents } from './events';
import type { HttpMethodInput, PrefetchOptions, RequestOptions } from './options';

export interface Client {
  request<T = unknown>(
    method: HttpMethodInput,
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
  invalidate(
    target: InvalidateTarget,
    options?: { refetch?: boolean | undefined },
  ): InvalidationResult;
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
  resolve(method: HttpMethodInput, url: string, options?: RequestOptions): RequestSpec;
  /**
   * The cached response for a key, fresh or stale, without touching the network. A key written
   * by hand names the entry a request for the same resource has, however it is spelled
   * (absolute or relative to `baseURL`, query in any order; see the README's Key paragraph); one
   * no request of this client can have is a RangeError (e.g. `GET /x` without a baseURL in Node).
   * @example client.getCached('GET /users?page=2')
   */
  getCached<T = unknown>(key: string): ApiResponse<T> | undefined;
  /**
   * Writes a response (or data) into the cache for a key and notifies subscribers with `write`,
   * e.g. for optimistic updates. `undefined` removes the entry. Pass the RequestSpec (from
   * `resolve`) instead of its key to store it with the entry, so that invalidation can refetch
   * an entry that was written by hand (its ttl and tags then come from the spec too). A write with
   * a key only, over an entry that has a spec, keeps that spec, its ttl and its tags. A key
   * written by hand is read as for `getCached`. Only GET responses are cached: an entry written
   * under any other method's key is kept, but no request reads it and `dehydrate` refuses it
   * (a RangeError naming the key).
   */
  setCached<T = unknown>(target: string | RequestSpec, value: ApiResponse<T> | undefined): void;
  /**
   * Starts (or joins) a fetch for a spec with no caller promise: errors are swallowed. Returns
   * the `CircuitOpenError` when the endpoint's open circuit refused it (nothing was sent; see
   * `reportRejection`), undefined otherwise.
   */
  prefetch(spec: RequestSpec, options?: PrefetchOptions): CircuitOpenError | undefined;
  /**
   * Whether a read for this key is in flight now: the flight an identical read would join.
   * Lifecycle events (`request`, `dedup`, `success`, `error`, `cancel`) tell when it may change.
   */
  isFetching(key: string): boolean;
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

export type InvalidateTarget = string | readonly string[] | ((meta: CacheMeta) => boolean);

/** The spec's `InvalidationResult`: what `invalidate` returns, the keys it removed. */
export type InvalidationResult = string[];
