import {
  type CacheMeta,
  type Client,
  type InvalidateTarget,
  type RequestSpec,
  systemClock,
} from '@keel/core';
import { checkBoolean, checkInvalidateTarget, checkMs, rangeError } from '@keel/core/internals';
import { reportError } from '../internal/report';
import { type ConnectionOptions, type ServerEvent, SseConnection } from './connection';
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
  invalidate?: Readonly<Record<string, InvalidateTarget>> | ServerEventHandler;
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

/** Everything: what a resync invalidates when no component named its own targets. */
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
 * unmount-remount keeps it). Invalidation targets of one event are applied once however many
 * components name them.
 */
export class Channel extends SseConnection {
  readonly key: string;
  /** The client whose channel this is. */
  readonly client: Client;
  readonly #subscribers = new Set<ChannelSubscriber>();
  readonly #onError: (error: unknown) => void;

  /** Throws for bad options (before anything is made). */
  constructor(client: Client, spec: RequestSpec, options: ServerEventsOptions | undefined) {
    super(spec.url, resolveOptions(spec.headers, options));
    this.client = client;
    this.key = spec.key;
    this.#onError = options?.onError ?? reportError;
  }

  /** The components using the channel now. */
  get users(): number {
    return this.#subscribers.size;
  }

  protected onEvent(event: ServerEvent): void {
    inspector?.(this, event);
    const targets: Targets = new Map();
    if (event.event === INVALIDATE_EVENT) this.#invalidation(event, targets);
    else if (event.event === RESET_EVENT) this.#resync(targets);
    for (const subscriber of [...this.#subscribers]) {
      const handlers = subscriber.handlers();
      const handler = handlers[event.event];
      if (typeof handler === 'function') {
        try {
          handler(event.data, event);
        } catch (err) {
          reportError(err);
        }
      }
      const map = invalidateMap(handlers);
      if (map !== undefined && Object.hasOwn(map, event.event))
        addTarget(targets, map[event.event]!);
    }
    this.#apply(targets);
    inspector?.(this);
  }

  /** A reconnect without Last-Event-ID may have missed events. */
  protected onOpen(missed: boolean): void {
    if (missed) this.#apply(this.#resync(new Map()));
  }

  protected onState(): void {
    for (const subscriber of this.#subscribers) subscriber.onState();
    inspector?.(this);
  }

  /** Adds a user; the connection starts with the first. Returns the release function. */
  join(subscriber: ChannelSubscriber): () => void {
    // A copy per join: the same subscriber joining twice needs two releases.
    const entry: ChannelSubscriber = { ...subscriber };
    this.#subscribers.add(entry);
    this.start();
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

  /** `keel:invalidate`: the server's target, unless this tab made the change (the echo). */
  #invalidation(event: ServerEvent, targets: Targets): void {
    // A primitive has no `target`: the check below refuses it.
    const data = event.data as { target?: unknown; source?: unknown } | null | undefined;
    const target = data?.target;
    try {
      // The one check of an invalidation target (core); JSON cannot carry a predicate.
      checkInvalidateTarget(target, 'keel:invalidate data.target');
    } catch (error) {
      // A server bug must not break the page: the event is ignored and reported.
      this.#onError(error);
      return;
    }
    if (data!.source === sourceIdOf(this.client)) return;
    addTarget(targets, target as InvalidateTarget);
  }

  /**
   * Events may have been lost (`keel:reset`, or a reconnect with nothing to resume from): apply
   * every `invalidate` target the components name, or, when none names any, invalidate every
   * query (what the server invalidated meanwhile is unknown).
   */
  #resync(targets: Targets): Targets {
    for (const subscriber of this.#subscribers) {
      const map = invalidateMap(subscriber.handlers());
      for (const name in map) addTarget(targets, map[name]!);
    }
    if (targets.size === 0) addTarget(targets, EVERYTHING);
    return targets;
  }

  /** Invalidates each target once; what one throws goes to onError, the others still apply. */
  #apply(targets: Targets): void {
    for (const target of targets.values()) {
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
export const RECONNECT_DEFAULTS = Object.freeze({
  initialDelay: 1000,
  maxDelay: 30000,
  jitter: true,
});

/** Options for the shared connection; the first component to open a URL decides them. */
export interface ServerEventsOptions {
  /**
   * Extra request headers (the client's default headers are sent too).
   * @default none
   */
  headers?: Record<string, string>;
  /**
   * `fetch` credentials mode, e.g. `include` for cookies on a cross-origin stream.
   * @default fetch's own (`'same-origin'`)
   */
  credentials?: RequestCredentials;
  /**
   * Reconnect backoff: the delay doubles from `initialDelay` to `maxDelay` after each failed
   * connect, and an event resets it.
   * @default { initialDelay: 1000, maxDelay: 30000, jitter: true }
   */
  reconnect?: {
    /**
     * The first reconnect delay in ms (the server's `retry:` field replaces it).
     * @default 1000
     */
    initialDelay?: number;
    /**
     * The longest reconnect delay in ms (at least `initialDelay`).
     * @default 30000
     */
    maxDelay?: number;
    /**
     * Spread each delay over [delay/2, delay), so many clients do not reconnect in step.
     * @default true
     */
    jitter?: boolean;
  };
  /**
   * The fetch implementation.
   * @default the global fetch, looked up at each connect
   */
  fetch?: typeof fetch;
  /**
   * Time source for reconnect timers (tests inject a fake).
   * @default systemClock
   */
  clock?: import('@keel/core').Clock;
  /**
   * Random source in [0, 1) for the jitter.
   * @default Math.random
   */
  random?: () => number;
  /**
   * Gets what the channel ignores instead of applying: a `keel:invalidate` event of the wrong
   * shape, an invalidation that threw.
   * @default rethrown asynchronously (like an uncaught error: the console shows it, nothing
   * else breaks)
   */
  onError?: (error: unknown) => void;
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
  headers: Readonly<Record<string, string>>,
  options: ServerEventsOptions | undefined,
): ConnectionOptions {
  const reconnect = options?.reconnect;
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
  return {
    fetch: options?.fetch,
    headers,
    credentials: options?.credentials,
    initialDelay,
    maxDelay,
    jitter: checkBoolean('reconnect.jitter', reconnect?.jitter ?? RECONNECT_DEFAULTS.jitter),
    random: options?.random ?? Math.random,
    clock: options?.clock ?? systemClock,
  };
}
