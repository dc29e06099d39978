export { computeDelay, type DelayInput } from './attempt/backoff';
export { parseRetryAfter } from './attempt/retry-after';
export {
  decideRetry,
  type ResolvedRetryOptions,
  type RetryDecision,
  type RetryInput,
  type RetryPolicy,
  resolveRetryOptions,
} from './attempt/retry-policy';
export { isRetriableStatus, isSuccessStatus } from './attempt/status';
export type { CacheEntry, RemovedEntry } from './cache/entry';
export type { ResolvedCacheOptions } from './cache/options';
export {
  CacheStore,
  type CacheStoreOptions,
  type StoredEntry,
  type WriteOptions,
} from './cache/store';
export { createBaseClient } from './client';
export { createClient } from './create-client';
export { Deduper } from './dedup/deduper';
export {
  CancelledError,
  type CancelledErrorInit,
  CircuitOpenError,
  type CircuitOpenErrorInit,
  type FailedRequest,
  HttpError,
  type HttpErrorInit,
  isAbortError,
  isCancelledError,
  isCircuitOpenError,
  isHttpError,
  isKeelError,
  isNetworkError,
  isParseError,
  isResponseTooLargeError,
  isTimeoutError,
  KeelError,
  NetworkError,
  type NetworkErrorInit,
  ParseError,
  type ParseErrorInit,
  type RequestError,
  ResponseTooLargeError,
  type ResponseTooLargeErrorInit,
  TimeoutError,
  type TimeoutErrorInit,
  type TimeoutKind,
} from './errors/index';
export { EventEmitter } from './events/emitter';
export { withAdaptive } from './features/adaptive';
export { withCircuitBreaker } from './features/circuit-breaker';
export { withIntelligence } from './features/intelligence';
export { withScheduler } from './features/scheduler';
export {
  type DehydratedEntry,
  type DehydratedResponse,
  type DehydratedState,
  type DehydrateOptions,
  dehydrate,
  hydrate,
} from './hydration';
export { inspect } from './inspect/inspect';
export { type Clock, systemClock, type TimerHandle } from './internal/clock';
export { createFingerprint, type FingerprintInput } from './internal/fingerprint';
export { canonicalizeURL, resolveURL } from './internal/url';
export type { FetchInit } from './request/fetch-init';
export { buildQuery } from './request/query';
export type { IntelligenceRecommendation, RequestSpec } from './request/resolve';
export { type RequestState, Tracker } from './tracker/tracker';
export type {
  ApiResponse,
  CacheMeta,
  CacheSubscriber,
  CacheUpdate,
  CancellablePromise,
  Client,
  InvalidateTarget,
  InvalidationResult,
  KeyMatcher,
} from './types/client';
export type {
  AdaptiveController,
  AdaptiveMetrics,
  CircuitBreakerController,
  CircuitState,
  CircuitStatus,
  EndpointAdaptiveState,
  EndpointStats,
  IntelligenceController,
  IntelligenceSnapshot,
  IntelligenceSummary,
  LatencyStats,
  SchedulerController,
  SchedulerStats,
} from './types/controllers';
export type {
  ClientEventName,
  ClientEvents,
  ListenerErrorContext,
  ParkReason,
  SchedulerEventBase,
} from './types/events';
export type { BaseClientOptions, ClientFeature, FeatureName } from './types/features';
export type {
  CacheChange,
  CachedEntryView,
  CircuitView,
  ClientInspector,
  FlightPhase,
  FlightView,
  SchedulerView,
} from './types/inspect';
export type {
  AdaptiveOptions,
  CacheOptions,
  CacheStrategy,
  CircuitBreakerOptions,
  ClientOptions,
  FetchLike,
  FetchOptions,
  HeadersOption,
  HttpMethod,
  HttpMethodInput,
  IntelligenceOptions,
  ParamValue,
  PrefetchOptions,
  Priority,
  QueryParams,
  RequestOptions,
  ResponseBodyType,
  RetryOptions,
  SchedulerOptions,
  SchedulerRequestOptions,
} from './types/options';
