import { type Clock, type FailedRequest, KeelError, type TimerHandle } from '@keel/core';
import { guardFor } from '@keel/core/internals';
import { noop } from '../internal/report';
import { sseParser } from './parse';

/** `connecting` covers the first connect and every reconnect wait; `closed` is final or unused. */
export type ConnectionStatus = 'connecting' | 'open' | 'closed';

export interface ConnectionState {
  readonly status: ConnectionStatus;
  /** Why the last attempt failed (a ServerEventsError, a network error); null once open. */
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
  status?: number;
}

/** The HTTP answer to an event-stream request was not a usable stream. */
export class ServerEventsError extends KeelError {
  override name = 'ServerEventsError' as const;
  /** HTTP status, when there was a response. */
  readonly status: number | undefined;
  readonly method: string;
  readonly url: string;

  constructor(request: FailedRequest, init: ServerEventsErrorInit) {
    super(`${init.message} (${request.method} ${request.url})`);
    this.status = init.status;
    this.method = request.method;
    this.url = request.url;
  }
}

/** True for a ServerEventsError, also one from another copy of the package. */
export const isServerEventsError = /* @__PURE__ */ guardFor(
  ServerEventsError,
  'react',
  'ServerEventsError',
);

export interface ConnectionOptions {
  /** The fetch to use; default: the global fetch, looked up at each connect. */
  fetch: typeof fetch | undefined;
  /** Sent with every (re)connect, besides `accept` and `last-event-id`. */
  headers: Readonly<Record<string, string>>;
  credentials: RequestCredentials | undefined;
  /** First reconnect delay in ms (the server's `retry:` field replaces it). */
  initialDelay: number;
  maxDelay: number;
  /** Spread the delay over [delay/2, delay) so many clients do not reconnect in step. */
  jitter: boolean;
  random: () => number;
  clock: Clock;
}

/** Closed without an error: stopped, or never started. */
export const STOPPED: ConnectionState = Object.freeze({ status: 'closed', error: null });
/** Statuses worth reconnecting after, as EventSource would for a network error. */
const RETRIABLE = new Set([408, 429, 500, 502, 503, 504]);
const MAX_EXPONENT = 20;

/**
 * One server-sent-events stream over `fetch` and a streaming body reader, parsed by
 * `sseParser`. `fetch` (rather than EventSource) works the same in browsers and Node,
 * sends `Last-Event-ID` and other headers on reconnect, and leaves the backoff to us:
 *
 *   start ─► connecting ─► open ─(stream ends / network error / 5xx)─► connecting (wait) ─► ...
 *                     └─(204, other 4xx, not text/event-stream)─► closed (final, with error)
 *   stop ─► closed: the request is aborted (the socket closes) and the timer is cleared.
 *
 * The delay doubles per consecutive failure from `initialDelay` (or the server's `retry:`) up to
 * `maxDelay`; any event or comment received resets it. What it receives goes to the methods a
 * subclass implements (the channel: one class, no handler object in between).
 */
export abstract class SseConnection {
  readonly url: string;
  /** The id of the last event that carried one; sent as `Last-Event-ID` on reconnect. */
  lastEventId: string | undefined;
  #state: ConnectionState = STOPPED;
  readonly options: ConnectionOptions;
  #controller: AbortController | undefined;
  #timer: TimerHandle | undefined;
  #failures = 0;
  #serverRetry: number | undefined;
  #opened = false;
  #running = false;

  constructor(url: string, options: ConnectionOptions) {
    this.url = url;
    this.options = options;
  }

  /** An event arrived. */
  protected abstract onEvent(event: ServerEvent): void;
  /**
   * The stream opened; `missed`: a reconnect that could not send `Last-Event-ID`, so the server
   * cannot replay what was missed.
   */
  protected abstract onOpen(missed: boolean): void;
  /** `state` changed. */
  protected abstract onState(): void;

  get state(): ConnectionState {
    return this.#state;
  }

  start(): void {
    if (this.#running) return;
    this.#running = true;
    void this.#connect();
  }

  stop(): void {
    if (!this.#running) return;
    this.#running = false;
    if (this.#timer !== undefined) {
      this.options.clock.clearTimeout(this.#timer);
      this.#timer = undefined;
    }
    const controller = this.#controller;
    this.#controller = undefined;
    controller?.abort();
    this.#setState('closed', null);
  }

  async #connect(): Promise<void> {
    const controller = new AbortController();
    this.#controller = controller;
    this.#setState('connecting', this.#state.error);
    const headers: Record<string, string> = {
      ...this.options.headers,
      accept: 'text/event-stream',
      'cache-control': 'no-cache',
    };
    // An empty id (the server's reset) is not sent.
    const resumed = !!this.lastEventId;
    if (resumed) headers['last-event-id'] = this.lastEventId!;
    let failure: unknown = null;
    let retry = true;
    try {
      const fetchImpl = this.options.fetch ?? globalThis.fetch;
      const response = await fetchImpl(this.url, {
        headers,
        signal: controller.signal,
        credentials: this.options.credentials,
        cache: 'no-store',
      });
      const { status, body } = response;
      const type = response.headers.get('content-type') ?? '';
      // 204 means "stop reconnecting" in the SSE protocol; so does a client error.
      const message =
        !response.ok || status === 204
          ? `Event stream answered HTTP ${status}`
          : !type.toLowerCase().startsWith('text/event-stream') || body === null
            ? `Not an event stream (content-type "${type}")`
            : undefined;
      if (message !== undefined) {
        retry = !response.ok && RETRIABLE.has(status);
        await body?.cancel().catch(noop);
        throw new ServerEventsError({ method: 'GET', url: this.url }, { message, status });
      }
      this.#setState('open', null);
      this.onOpen(this.#opened && !resumed);
      this.#opened = true;
      // Read until the stream ends or fails; an abort (stop) cancels the read.
      const reader = body!.getReader();
      const decoder = new TextDecoder();
      const { signal } = controller;
      signal.addEventListener('abort', () => {
        reader.cancel().catch(noop);
      });
      const feed = sseParser({
        onEvent: (message) => {
          if (signal.aborted) return;
          this.#failures = 0;
          if (message.id !== undefined) this.lastEventId = message.id;
          this.onEvent({
            event: message.event || 'message',
            data: parseData(message.data),
            raw: message.data,
            id: message.id,
          });
        },
        onRetry: (ms) => {
          this.#serverRetry = ms;
        },
        onComment: () => {
          this.#failures = 0;
        },
      });
      for (
        let chunk = await reader.read();
        !chunk.done && !signal.aborted;
        chunk = await reader.read()
      )
        feed(decoder.decode(chunk.value, { stream: true }));
    } catch (err) {
      failure = err;
    }
    // Stopped (or replaced) meanwhile: the abort is ours, nothing to report or retry.
    if (this.#controller !== controller || !this.#running) return;
    this.#controller = undefined;
    if (!retry) {
      this.#running = false;
      this.#setState('closed', failure);
      return;
    }
    // Reconnect after the backoff delay.
    const { initialDelay, maxDelay, jitter, random, clock } = this.options;
    const base = this.#serverRetry ?? initialDelay;
    let delay = Math.min(maxDelay, base * 2 ** Math.min(this.#failures, MAX_EXPONENT));
    if (jitter) delay = delay / 2 + (random() * delay) / 2;
    this.#failures++;
    this.#setState('connecting', failure);
    this.#timer = clock.setTimeout(() => {
      this.#timer = undefined;
      if (this.#running) void this.#connect();
    }, delay);
  }

  #setState(status: ConnectionStatus, error: unknown): void {
    const prev = this.#state;
    if (prev.status === status && prev.error === error) return;
    this.#state = { status, error };
    this.onState();
  }
}

function parseData(raw: string): unknown {
  try {
    return JSON.parse(raw);
  } catch {
    return raw;
  }
}
