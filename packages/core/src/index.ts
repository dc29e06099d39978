export { computeDelay, type DelayInput } from './attempt/backoff';
export { parseRetryAfter } from './attempt/retry-after';
export {
  decideRetry,
  RETRY_DEFAULTS,
  type RetryInput,
  resolveRetryOptions,
} from './attempt/retry-policy';
export { isRetriableStatus, isSuccessStatus } from './attempt/status';
export type { CacheEntry } from './cache/entry';
export { checkInvalidateTarget } from './cache/match';
export { CacheStore } from './cache/store';
export { CIRCUIT_DEFAULTS } from './circuit/options';
export { isCountableFailure } from './circuit/outcome';
export { createClient } from './client';
export { Deduper } from './dedup/deduper';
export {
  CancelledError,
  CircuitOpenError,
  HttpError,
  type HttpErrorInit,
  isAbortError,
  isHttpError,
  isNetworkError,
  isTimeoutError,
  KeelError,
  NetworkError,
  type NetworkErrorInit,
  ParseError,
  type RequestError,
  ResponseTooLargeError,
  TimeoutError,
  type TimeoutErrorInit,
  type TimeoutKind,
} from './errors/index';
export { EventEmitter } from './events/emitter';
export {
  type DehydratedEntry,
  type DehydratedResponse,
  type DehydratedState,
  type DehydrateOptions,
  dehydrate,
  hydrate,
} from './hydration';
export { inspect } from './inspect/inspect';
export type {
  CacheChange,
  CachedEntryView,
  CircuitView,
  ClientInspector,
  FlightPhase,
  FlightView,
  SchedulerView,
} from './inspect/views';
export { INTELLIGENCE_DEFAULTS } from './intelligence/options';
export { type Clock, systemClock, type TimerHandle } from './internal/clock';
export { createFingerprint, type FingerprintInput } from './spec/fingerprint';
export { CACHE_DEFAULTS } from './spec/options';
export { buildQuery } from './spec/query';
export { canonicalizeURL, resolveURL } from './spec/url';
export { type RequestState, Tracker } from './tracker/tracker';
export type * from './types';
