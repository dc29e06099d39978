import type { Clock, FailedRequest, FetchLike } from '@keel/core';
import { freeze, guardFor, KeelRequestError } from '@keel/core/internals';

/** `connecting` covers the first connect and every reconnect wait; `closed` is final or unused. */
export type ConnectionStatus = 'connecting' | 'open' | 'closed';

export interface ConnectionState {
  readonly status: ConnectionStatus;
  /** Why the last attempt failed or ended (a ServerEventsError, a network error); null once open. */
  readonly error: unknown;
}

/** One server-sent event as the handlers receive it. */
export interface ServerEvent<T = unknown> {
  /** The event name; `message` when the server sent none. */
  event: string;
  /** The data parsed as JSON, or the raw text when it is not JSON. */
  data: T;
  /** The data text as received. */
  raw: string;
  /** The event's id, when it carried one. */
  id: string | undefined;
}

/** What a ServerEventsError adds to its request. */
export interface ServerEventsErrorInit {
  /** What was wrong with the answer. */
  message: string;
  /** The HTTP status of the answer. */
  status?: number | undefined;
}

/** The HTTP answer to an event-stream request was not a usable stream, or the server ended it. */
export class ServerEventsError extends KeelRequestError {
  override name = 'ServerEventsError' as const;
  /** HTTP status, when there was a response. */
  declare readonly status: number | undefined;

  constructor(request: FailedRequest, init: ServerEventsErrorInit) {
    super(request, init.message, { status: init.status });
  }
}

/** True for a ServerEventsError, also one from another copy of the package. */
export const isServerEventsError = /* @__PURE__ */ guardFor(
  ServerEventsError,
  'ServerEventsError',
  'react',
);

export interface ConnectionOptions {
  /** The fetch to use (its own, else the client's); default: the global fetch, looked up at each connect. */
  fetch: FetchLike | undefined;
  /** Sent with every (re)connect, besides `accept` and `last-event-id`. */
  headers: Readonly<Record<string, string>>;
  /** The other fetch options (credentials, mode, cache: 'no-store', ...). */
  init: RequestInit;
  /** First reconnect delay in ms (the server's `retry:` field replaces it). */
  initialDelay: number;
  maxDelay: number;
  /** Spread the delay over [delay/2, delay) so many clients do not reconnect in step. */
  jitter: boolean;
  random: () => number;
  clock: Clock;
  /** Characters one event may take while read (see ServerEventsOptions.maxEventLength). */
  maxEventLength: number;
}

/** Closed without an error: stopped, or never started. */
export const STOPPED: ConnectionState = /* @__PURE__ */ freeze({ status: 'closed', error: null });
