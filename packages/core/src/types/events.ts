import type { CircuitOpenError } from '../errors/circuit-open-error';
import type { HttpError } from '../errors/http-error';
import type { NetworkError } from '../errors/network-error';
import type { TimeoutError } from '../errors/timeout-error';
import type { CLIENT_EVENT_NAMES } from '../events/names';
import type { Tracker } from '../tracker/tracker';
import type { ApiResponse, InvalidateTarget } from './client';
import type { HttpMethod, Priority } from './options';

/** The spec's HttpError fields, absent on a retried failure that got no response. */
interface NoResponse {
  readonly status?: undefined;
  readonly statusText?: undefined;
  readonly headers?: undefined;
}

/**
 * Every event a client emits, by name, with its payload: a key for each of CLIENT_EVENT_NAMES
 * and no other (test/types.test-d.ts checks it).
 */
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
  /** A retry is scheduled after a failed attempt. */
  retry: {
    key: string;
    tracker: Tracker;
    attempts: number;
    /** ms until the next attempt. */
    delay: number;
    /** What set `delay`: the server's Retry-After header, or the backoff. */
    reason: 'backoff' | 'retry-after';
    /**
     * What the attempt failed with: a retried status (HttpError), a network failure
     * (NetworkError) or an attempt or transport timeout (TimeoutError). The spec types it
     * HttpError; a failure with no response carries its own error, on which the spec's HttpError
     * fields (`status`, `statusText`, `headers`) read as undefined, so `error.status` type-checks
     * on every one. Nothing else is retried (a ParseError, a too-large body, a cancellation or a
     * permanent network code ends the request).
     */
    error: HttpError | (NetworkError & NoResponse) | (TimeoutError & NoResponse);
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
  /**
   * Entries were removed: by `client.invalidate(target)`, or after a successful mutation (`target`:
   * its path, or with tags `[path, ...tags]`, the path joined with its tags).
   */
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

/** An event's name: one of CLIENT_EVENT_NAMES (events/names.ts), ClientEvents' keys. */
export type ClientEventName = (typeof CLIENT_EVENT_NAMES)[number];

export interface SchedulerEventBase {
  id: number;
  key: string;
  method: HttpMethod;
  url: string;
  priority: Priority;
}

export type ParkReason = 'backoff' | 'retry-after' | 'rate-limit';

/**
 * What threw, for `onError`: a `client.on` listener (`event`), a `subscribe` listener
 * (`subscriber`) or predicate (`matcher`) with the key it was given, the `onError` handler itself
 * (then logged), the injected clock or the caller's signal as a caller of `key` was cancelled
 * (`cancel`: the caller still gets its CancelledError), or a step of keel's own (`internal`: a
 * bug worth reporting).
 */
export type ListenerErrorContext =
  | { source: 'event'; event: string }
  | { source: 'subscriber'; key: string }
  | { source: 'matcher'; key: string }
  | { source: 'onError' }
  | { source: 'cancel'; key: string }
  | { source: 'internal' };
