import type { CacheMeta, Client, HeadersOption, InvalidateTarget, RequestSpec } from '@keel/core';
import {
  checkBoolean,
  checkFunction,
  checkInteger,
  checkInvalidateTarget,
  checkMs,
  checkObject,
  clockOf,
  fetchOf,
  freeze,
  headerName,
  isRetriableStatus,
  oneOf,
  rangeError,
  setHeader,
} from '@keel/core/internals';
import { onSignal } from '../internal/environment';
import { noop, reportError } from '../internal/report';
import {
  type ConnectionOptions,
  type ConnectionState,
  type ConnectionStatus,
  type ServerEvent,
  ServerEventsError,
  STOPPED,
} from './connection';
import { echoCovered } from './echo';
import { sseParser } from './parse';
import { sourceIdOf } from './source';

/**
 * A handler for one event name. `data` is `unknown` unless the handler annotates it
 * (`(todo: Todo) => ...`, which is a type assertion: the server decides what arrives). Declared
 * as a method so that annotation is accepted.
 */
export type ServerEventHandler<T = unknown> = {
  bivarianceHack(data: T, event: ServerEvent<T>): void;
}['bivarianceHack'];

/**
 * Handlers by event name, plus `invalidate`: a map from event name to what `client.invalidate`
 * gets when that event arrives (a path, an array of tags, or a predicate over CacheMeta).
 */
export interface ServerEventHandlers {
  invalidate?: Readonly<Record<string, InvalidateTarget>> | ServerEventHandler | undefined;
  [event: string]: ServerEventHandler | Readonly<Record<string, InvalidateTarget>> | undefined;
}

/**
 * Sent by @keel/server's event hub when a client's `Last-Event-ID` cannot be replayed exactly:
 * events may have been lost, so the channel resyncs (see {@link Channel}).
 */
export const RESET_EVENT = 'keel:reset';

/**
 * Sent by @keel/server's `hub.invalidate`: data `{ "target": "/path" | ["tag", ...],
 * "source"?: "<tab id>" }`. Applied with `client.invalidate(target)` unless `source` is this tab.
 */
export const INVALIDATE_EVENT = 'keel:invalidate';

/**
 * Everything: what a resync invalidates. Events may have been lost (`keel:reset`, or a reconnect
 * with nothing to resume from); the targets the components name are not enough: a lost
 * `keel:invalidate` (the server's `hub.invalidate`) may have named any path or tag. (A predicate
 * is its own key in Targets.)
 */
const EVERYTHING = (_meta: CacheMeta): boolean => true;

/**
 * Told of every change of a channel (made, joined, left, closed, a new state) and of each event
 * it receives. Set by inspect.ts, when an app uses `inspectServerEvents` / `watchServerEvents`:
 * an app without that tooling carries none of its bookkeeping.
 */
let inspector: ((channel: Channel, event?: ServerEvent) => void) | undefined;

export function setInspector(fn: (channel: Channel, event?: ServerEvent) => void): void {
  inspector = fn;
}

/** One component's use of a channel: its latest handlers, and what to wake when the state changes. */
export interface ChannelSubscriber {
  handlers(): ServerEventHandlers;
  onState(): void;
}

/**
 * The shared connection of one URL (per client) and the components using it. The connection
 * starts with the first user and stops a microtask after the last one leaves (so StrictMode's
 * unmount-remount keeps it); closed for good, it starts again only with a first user.
 * Invalidation targets of one event are applied once however many components name them.
 *
 * The stream is read with `fetch` and a streaming body reader, parsed by `sseParser`. `fetch`
 * (rather than EventSource) works the same in browsers and Node, sends `Last-Event-ID` and other
 * headers on reconnect, and leaves the backoff to us:
 *
 *   start ─► connecting ─► open ─(stream ends / network error / 5xx)─► connecting (wait) ─► ...
 *                                (`error`: why, a ServerEventsError when the server ended it)
 *                     └─(204, other 4xx, not text/event-stream)─► closed (final, with error)
 *   stop ─► closed: the request is aborted (the socket closes) and the timer is cleared.
 *
 * The delay doubles per consecutive failure from `initialDelay` (or the server's `retry:`) up to
 * `maxDelay`; an event received resets it (a comment does not: see onEvent).
 */
export class Channel {
  readonly key: string;
  readonly #subscribers = new Set<ChannelSubscriber>();
  readonly #onError: (error: unknown) => void;
  /**
   * The stream's URL, resolved against the client's base, with its query as written (not sorted
   * as in the key: a signature over it holds): what fetch gets.
   */
  readonly url: string;
  /**
   * The id of the last event that carried one (at first the caller's `Last-Event-ID` header, as
   * EventSource keeps its last id until the stream sets another); sent as `Last-Event-ID`.
   */
  lastEventId: string | undefined;
  #state: ConnectionState = STOPPED;
  readonly options: ConnectionOptions;
  #controller: AbortController | undefined;
  /** Ends the wait for a reconnect (its timer, its `online` listener); set while waiting. */
  #cancelWait: (() => void) | undefined;
  #failures = 0;
  #serverRetry: number | undefined;
  #opened = false;
  #running = false;

  /** Throws for bad options (before anything is made). */
  constructor(
    /** The client whose channel this is. */
    readonly client: Client,
    spec: RequestSpec,
    options: ServerEventsOptions | undefined,
  ) {
    this.options = resolveOptions(client, spec, options);
    this.lastEventId = this.options.headers[headerName(this.options.headers, 'last-event-id')];
    this.url = spec.fetchURL;
    this.key = spec.key;
    const onError = options?.onError;
    // What onError itself throws is reported: thrown from the stream reader, it would drop the
    // connection.
    this.#onError = onError
      ? (error) => {
          try {
            onError(error);
          } catch (err) {
            reportError(err);
          }
        }
      : reportError;
  }

  /** The components using the channel now. */
  get users(): number {
    return this.#subscribers.size;
  }

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
    this.#cancelWait?.();
    const controller = this.#controller;
    this.#controller = undefined;
    controller?.abort();
    this.#setState('closed', null);
  }

  async #connect(): Promise<void> {
    const controller = new AbortController();
    this.#controller = controller;
    this.#setState('connecting', this.#state.error);
    // No `cache-control: no-cache`: not CORS-safelisted, it cost every cross-origin stream a
    // preflight. The fetch cache mode (options.init) keeps caches out, as EventSource does.
    // The spec's header names are as the caller wrote them: an `Accept` (or `Last-Event-ID`) of
    // theirs is replaced, not sent along with ours (fetch joins the two values).
    const headers: Record<string, string> = { ...this.options.headers };
    setHeader(headers, 'accept', 'text/event-stream');
    // The caller's goes out as lastEventId (below), or not at all once the stream reset it.
    delete headers[headerName(headers, 'last-event-id')];
    // An empty id (the server's reset) is not sent, nor one with a control character: Node's
    // fetch refuses it as a header value, so every reconnect failed; resynced instead.
    const resumed = /^[\t -~\x80-\uffff]+$/.test(this.lastEventId ?? '');
    // Its UTF-8 bytes, as EventSource sends it: a header value is bytes (one char per byte), and
    // an id beyond latin1 (`id: ✓`) made every reconnect throw, so the stream never resumed.
    // (unescape of the URI encoding: the UTF-8 bytes as chars, the smallest way to write it.)
    if (resumed)
      setHeader(headers, 'last-event-id', unescape(encodeURIComponent(this.lastEventId!)));
    let failure: unknown = null;
    let retry = true;
    try {
      const fetchImpl = this.options.fetch ?? globalThis.fetch;
      const response = await fetchImpl(this.url, {
        ...this.options.init,
        headers,
        signal: controller.signal,
      });
      const { status, body } = response;
      const type = response.headers.get('content-type') ?? '';
      // 204 means "stop reconnecting" in the SSE protocol; so does a client error.
      // The media type exactly, any case, parameters allowed (`text/event-streamx` is not one).
      const message =
        !response.ok || status === 204
          ? `Event stream answered HTTP ${status}`
          : !/^text\/event-stream\s*(;|$)/i.test(type)
            ? `Not an event stream (content-type "${type}"): the wrong URL?`
            : body === null
              ? 'The fetch returned no readable body'
              : undefined;
      // The answer is not a usable stream. Worth reconnecting after 408, 429, 5xx (as
      // EventSource would after a network error), not after an answer that was ok.
      const refusal = (message: string) =>
        new ServerEventsError({ method: 'GET', url: this.url }, { message, status });
      const fail = (message: string): never => {
        retry = !response.ok && isRetriableStatus(status);
        throw refusal(message);
      };
      if (message !== undefined) {
        await body?.cancel().catch(noop);
        fail(message);
      }
      this.#setState('open', null);
      // A reconnect without Last-Event-ID may have missed events.
      if (this.#opened && !resumed) this.#apply([EVERYTHING]);
      this.#opened = true;
      // Read until the stream ends or fails; an abort (stop) cancels the read.
      const reader = body!.getReader();
      const decoder = new TextDecoder();
      const { signal } = controller;
      const { maxEventLength } = this.options;
      signal.addEventListener('abort', () => {
        reader.cancel().catch(noop);
      });
      const feed = sseParser(
        {
          onEvent: (message) => {
            if (signal.aborted) return;
            // Only an event resets the backoff: a proxy that answers `: ok` and closes would
            // otherwise be reconnected to at the base delay forever.
            this.#failures = 0;
            if (message.id !== undefined) this.lastEventId = message.id;
            this.#onEvent({
              event: message.event || 'message',
              data: parseData(message.data),
              raw: message.data,
              id: message.id,
            });
          },
          onRetry: (ms) => {
            this.#serverRetry = ms;
          },
          // A server (or proxy) that never ends a line or a block: failing for good rather than
          // reconnecting, where Last-Event-ID would have the same event sent again, and again.
          onOverflow: () =>
            fail(`Event not ended within maxEventLength (${maxEventLength} characters)`),
          onId: (id) => {
            if (signal.aborted) return;
            this.lastEventId = id;
            // No event follows to tell the watchers: the id alone may change what they show.
            inspector?.(this);
          },
        },
        maxEventLength,
      );
      // `stream: true` holds a character split between chunks until its last byte. No final
      // `decode()` at the end: what it could flush (a cut character) follows the last line end,
      // in the unterminated last event, which WHATWG drops with the stream; a dispatched event
      // only ever holds whole characters.
      for (
        let chunk = await reader.read();
        !chunk.done && !signal.aborted;
        chunk = await reader.read()
      )
        feed(decoder.decode(chunk.value, { stream: true }));
      // Ended by the server (a restart, a proxy's time limit): reconnected as after a failure,
      // as EventSource does, with the end as the state's error meanwhile, not a silent
      // `connecting`. (An abort, ours, returns below.)
      throw refusal('The server ended the event stream');
    } catch (err) {
      failure = err;
    }
    // Stopped (or replaced) meanwhile: the abort is ours, nothing to report or retry.
    if (this.#controller !== controller || !this.#running) return;
    this.#controller = undefined;
    // The response may still be streaming (a stream over maxEventLength): close its socket.
    controller.abort();
    if (!retry) {
      this.#running = false;
      this.#setState('closed', failure);
      return;
    }
    // Reconnect after the backoff delay.
    const { initialDelay, maxDelay, jitter, random, clock } = this.options;
    // Never at once: a `retry: 0` (or initialDelay 0) against a server that closes each stream
    // would otherwise reconnect in a tight loop, and 0 would never double.
    const base = Math.max(MIN_RECONNECT_MS, this.#serverRetry ?? initialDelay);
    // Uncapped: 2 ** failures grows to Infinity (base is never 0), and min takes maxDelay; a
    // cap on the exponent stopped the doubling below a maxDelay of more than a day.
    let delay = Math.max(MIN_RECONNECT_MS, Math.min(maxDelay, base * 2 ** this.#failures));
    if (jitter) delay = delay / 2 + (random() * delay) / 2;
    this.#failures++;
    this.#setState('connecting', failure);
    const wake = (): void => {
      cancel();
      if (this.#running) void this.#connect();
    };
    const timer = clock.setTimeout(wake, delay);
    // Back online: the network is back now, so is the stream (the queries refetch then too),
    // rather than after a backoff grown while offline.
    const off = onSignal('online', wake);
    const cancel = (): void => {
      this.#cancelWait = undefined;
      clock.clearTimeout(timer);
      off();
    };
    this.#cancelWait = cancel;
  }

  #setState(status: ConnectionStatus, error: unknown): void {
    const prev = this.#state;
    if (prev.status === status && prev.error === error) return;
    this.#state = { status, error };
    for (const subscriber of this.#subscribers) subscriber.onState();
    inspector?.(this);
  }

  /** An event arrived. */
  #onEvent(event: ServerEvent): void {
    inspector?.(this, event);
    const targets: Targets = new Map();
    if (event.event === INVALIDATE_EVENT) {
      // The server's target, unless this tab made the change (the echo). A primitive has no
      // `target`: the check refuses it.
      const data = event.data as { target?: unknown; source?: unknown } | null | undefined;
      const target = data?.target;
      try {
        // The one check of an invalidation target (core); JSON cannot carry a predicate.
        checkInvalidateTarget(target, 'keel:invalidate data.target');
        // The echo of this tab's own change: skipped when its mutations invalidated all of it.
        if (
          data!.source !== sourceIdOf(this.client) ||
          !echoCovered(this.client, target as InvalidateTarget)
        )
          addTarget(targets, target as InvalidateTarget);
      } catch (error) {
        // A server bug must not break the page: the event is ignored and reported.
        this.#onError(error);
      }
    } else if (event.event === RESET_EVENT) addTarget(targets, EVERYTHING);
    for (const subscriber of [...this.#subscribers]) {
      // One unmounted by an earlier handler of this event gets no more of it.
      if (!this.#subscribers.has(subscriber)) continue;
      const handlers = subscriber.handlers();
      // Own handlers only: an event named `valueOf` must not call Object.prototype's.
      const handler = Object.hasOwn(handlers, event.event) ? handlers[event.event] : undefined;
      if (typeof handler === 'function') {
        try {
          handler(event.data, event);
        } catch (err) {
          reportError(err);
        }
      }
      const map = invalidateMap(handlers);
      if (map && Object.hasOwn(map, event.event)) addTarget(targets, map[event.event]!);
    }
    this.#apply(targets.values());
    inspector?.(this);
  }

  /**
   * Adds a user; the connection starts with the first. One closed for good (a 204, a 4xx,
   * maxEventLength) stays closed for the others: each new component would otherwise ask the
   * server again for what it refused. Returns the release function.
   */
  join(subscriber: ChannelSubscriber): () => void {
    // A copy per join: the same subscriber joining twice needs two releases.
    const entry: ChannelSubscriber = { ...subscriber };
    if (this.#subscribers.add(entry).size < 2) this.start();
    inspector?.(this);
    return () => {
      if (!this.#subscribers.delete(entry)) return;
      if (this.#subscribers.size === 0) queueMicrotask(this.#closeIfUnused);
      inspector?.(this);
    };
  }

  #closeIfUnused = (): void => {
    if (this.#subscribers.size > 0) return;
    this.stop();
    const byKey = channels.get(this.client)!;
    if (byKey.get(this.key) === this) byKey.delete(this.key);
    inspector?.(this);
  };

  /** Invalidates each target once; what one throws goes to onError, the others still apply. */
  #apply(targets: Iterable<InvalidateTarget>): void {
    for (const target of targets) {
      try {
        this.client.invalidate(target);
      } catch (err) {
        this.#onError(err);
      }
    }
  }
}

/** The `invalidate` map of some handlers; undefined when there is none. */
export function invalidateMap(
  handlers: ServerEventHandlers,
): Readonly<Record<string, InvalidateTarget>> | undefined {
  const map = handlers.invalidate;
  // A function under `invalidate` is the handler of an event named "invalidate".
  return map !== null && typeof map === 'object' ? map : undefined;
}

/** Targets deduplicated by meaning (same path, same tag set, same predicate), keyed by it. */
type Targets = Map<unknown, InvalidateTarget>;

function addTarget(targets: Targets, target: InvalidateTarget): void {
  const id =
    typeof target === 'string'
      ? `path:${target}`
      : Array.isArray(target)
        ? `tags:${JSON.stringify([...target].sort())}`
        : target;
  if (!targets.has(id)) targets.set(id, target);
}

/** The reconnect backoff of an event stream when `reconnect` leaves a field out. */
export const RECONNECT_DEFAULTS = /* @__PURE__ */ freeze({
  initialDelay: 1000,
  maxDelay: 30000,
  jitter: true,
});

/** Options for the shared connection; the first component to open a URL decides them. */
export interface ServerEventsOptions {
  /**
   * Extra request headers, an object or a Headers (the client's default headers are sent too).
   * Anything but an object (`null` included) is a TypeError at render.
   * @default none
   */
  headers?: HeadersOption | undefined;
  /**
   * `fetch` credentials mode, e.g. `include` for cookies on a cross-origin stream.
   * @default the client's (`createClient({ credentials })`), else fetch's own (`'same-origin'`)
   */
  credentials?: RequestCredentials | undefined;
  /**
   * Reconnect backoff: the delay doubles from `initialDelay` to `maxDelay` after each failed
   * connect, and an event resets it.
   * @default { initialDelay: 1000, maxDelay: 30000, jitter: true }
   */
  reconnect?:
    | {
        /**
         * The first reconnect delay in ms (the server's `retry:` field replaces it); any delay is at
         * least 100 ms before jitter.
         * @default 1000
         */
        initialDelay?: number | undefined;
        /**
         * The longest reconnect delay in ms (at least `initialDelay`).
         * @default 30000
         */
        maxDelay?: number | undefined;
        /**
         * Spread each delay over [delay/2, delay), so many clients do not reconnect in step.
         * @default true
         */
        jitter?: boolean | undefined;
      }
    | undefined;
  /**
   * The most characters one event may take while it is read (its line not yet ended plus its
   * `data:` lines so far); past it the stream is closed for good with a ServerEventsError.
   * `Infinity` for no limit, as EventSource.
   * @default 8388608 (8 Mi characters)
   */
  maxEventLength?: number | undefined;
  /**
   * The fetch implementation.
   * @default the client's (`createClient({ fetch })`), else the global fetch, looked up at each
   * connect
   */
  fetch?: typeof fetch | undefined;
  /**
   * Time source for reconnect timers (tests inject a fake).
   * @default the client's clock (`createClient({ clock })`), as the queries' timers
   */
  clock?: import('@keel/core').Clock | undefined;
  /**
   * Random source in [0, 1) for the jitter.
   * @default Math.random
   */
  random?: (() => number) | undefined;
  /**
   * Gets what the channel ignores instead of applying: a `keel:invalidate` event of the wrong
   * shape, an invalidation that threw.
   * @default rethrown asynchronously (like an uncaught error: the console shows it, nothing
   * else breaks)
   */
  onError?: ((error: unknown) => void) | undefined;
}

const channels = new WeakMap<Client, Map<string, Channel>>();

export function peekChannel(client: Client, key: string): Channel | undefined {
  return channels.get(client)?.get(key);
}

/**
 * The channel of a stream, created (not started) when missing. `spec`: the client's resolution
 * of the URL with the headers (`client.resolve('GET', url, { headers })`), so two spellings of
 * one stream share a connection.
 */
export function channelFor(
  client: Client,
  spec: RequestSpec,
  options?: ServerEventsOptions,
): Channel {
  let byKey = channels.get(client);
  if (byKey === undefined) channels.set(client, (byKey = new Map()));
  let channel = byKey.get(spec.key);
  if (channel === undefined) {
    byKey.set(spec.key, (channel = new Channel(client, spec, options)));
    inspector?.(channel);
  }
  return channel;
}

/** The channels of a client now, in the order they were made. */
export function channelsOf(client: Client): Iterable<Channel> {
  return channels.get(client)?.values() ?? [];
}

/** Open channels of a client (for leak checks). */
export function channelCount(client: Client): number {
  return channels.get(client)?.size ?? 0;
}

function resolveOptions(
  client: Client,
  { headers, fetchInit }: RequestSpec,
  options: ServerEventsOptions | undefined,
): ConnectionOptions {
  const reconnect = options?.reconnect;
  // Checked now: a bad one would only fail at a reconnect, outside any caller.
  if (reconnect !== undefined) checkObject('reconnect', reconnect);
  for (const name of ['fetch', 'random', 'onError'] as const) {
    if (options?.[name] !== undefined) checkFunction(name, options[name]);
  }
  const clock = options?.clock === undefined ? clockOf(client) : options.clock;
  checkObject('clock', clock);
  // A value fetch does not know would fail every connect as a network error, retried for ever.
  const credentials =
    options?.credentials === undefined
      ? fetchInit?.credentials
      : oneOf('credentials', options.credentials, ['omit', 'same-origin', 'include']);
  // now() too: the inspector stamps each event with it, and throwing there dropped the stream.
  for (const name of ['setTimeout', 'clearTimeout', 'now'] as const) {
    checkFunction(`clock.${name}`, clock[name]);
  }
  const initialDelay = checkMs(
    'reconnect.initialDelay',
    reconnect?.initialDelay ?? RECONNECT_DEFAULTS.initialDelay,
  );
  const maxDelay = checkMs(
    'reconnect.maxDelay',
    reconnect?.maxDelay ?? RECONNECT_DEFAULTS.maxDelay,
  );
  if (maxDelay < initialDelay) {
    throw rangeError(
      'reconnect.maxDelay',
      `at least reconnect.initialDelay (${initialDelay})`,
      maxDelay,
    );
  }
  // The client's fetch options (credentials, mode, ...), but not those that break a stream:
  // `integrity` waits for the whole body, `keepalive` outlives the page, and a cache mode other
  // than no-store could serve a stored answer (EventSource's own mode). Undefined is absent to
  // fetch (a smaller form than a rest pattern).
  return {
    fetch: options?.fetch ?? fetchOf(client),
    headers,
    init: {
      ...fetchInit,
      credentials,
      cache: 'no-store',
      integrity: undefined,
      keepalive: undefined,
    },
    initialDelay,
    maxDelay,
    jitter: checkBoolean('reconnect.jitter', reconnect?.jitter ?? RECONNECT_DEFAULTS.jitter),
    random: options?.random ?? Math.random,
    clock,
    maxEventLength: checkInteger(
      'maxEventLength',
      options?.maxEventLength ?? MAX_EVENT_LENGTH,
      1,
      true,
    ),
  };
}

/** The default `maxEventLength`: room for a large snapshot, not for a stream that never ends. */
export const MAX_EVENT_LENGTH = 8 * 2 ** 20;
/** The shortest reconnect delay before jitter, whatever `reconnect` or the server's `retry:` say. */
const MIN_RECONNECT_MS = 100;

function parseData(raw: string): unknown {
  try {
    return JSON.parse(raw);
  } catch {
    return raw;
  }
}
