import {
  checkFunction,
  checkObject,
  checkOptions,
  errorText,
  integer,
  keysOf,
  rangeError,
  typeError,
} from './checks';
import { type Clock, checkClock, MAX_TIMER_MS, type TimerHandle } from './clock';
import type { Context } from './context';
import { HubPublishError } from './hub-errors';
import type { HubStore, ReplayRequest, ReplayResult, StoredEvent, StoreSink } from './hub-store';
import { memoryStore } from './memory-store';
import {
  assertSseField,
  FULL,
  formatEvent,
  offerFrame,
  type SseStream,
  serializeData,
  whenDrained,
  writeFrame,
  yieldIds,
} from './sse';

/**
 * Sent to a client whose missed events cannot be replayed exactly (its `Last-Event-ID` is older
 * than what is kept, foreign, or the replay is larger than its buffer cap), or when the store
 * lost events (then `lastEventId` is null). Data: `{ "lastEventId": "<what the client sent>" }`
 * (a value longer than 256 characters: its first 255 and `…`).
 * Its `id` is the current position, so the client resumes from there. Refetch your state.
 */
export const HUB_RESET_EVENT = 'keel:reset';

/**
 * Published by `hub.invalidate`. Data: `{ "target": "/todos" }` (a path) or
 * `{ "target": ["tag"] }` (tags), plus `"source"` when the change came from a client that sent
 * `x-keel-source`. `@keel/react`'s `useServerEvents` applies it with `client.invalidate(target)`.
 */
export const HUB_INVALIDATE_EVENT = 'keel:invalidate';

/**
 * The request header naming the client (a browser tab) that made a change; `@keel/react` sends
 * it with same-origin mutations. `hub.invalidate(target, { source: ctx })` copies it into the
 * event, so that tab skips the echo of its own change.
 */
export const SOURCE_HEADER = 'x-keel-source';

/**
 * An invalidation target as it travels: a path (segment-aware: the path, its children and its
 * query variants) or an array of tags. The same value means the same in `client.invalidate`.
 * A predicate cannot be sent.
 */
export type WireInvalidateTarget = string | readonly string[];

/** Options for {@link createEventHub}. */
export interface EventHubOptions {
  /**
   * Where events live. `redisStreams(...)` from `@keel/server/redis` shares them between
   * processes.
   * @default memoryStore({ bufferSize, bufferBytes })
   */
  store?: HubStore | undefined;
  /**
   * Events kept for `Last-Event-ID` replay by the default in-memory store (ignored with `store`).
   * @default 100
   */
  bufferSize?: number | undefined;
  /**
   * The most bytes of those events the default in-memory store keeps (ignored with `store`): past
   * it the oldest go, however few. See `memoryStore({ bufferBytes })`.
   * @default 16777216 (16 MiB)
   */
  bufferBytes?: number | undefined;
  /**
   * Called when a client is disconnected because it left more than `sse.maxBufferedBytes`
   * unsent (it reads too slowly). Its EventSource reconnects and is replayed what it missed.
   * What this throws is reported with `process.emitWarning`.
   *
   * @default undefined (drops are only counted, in `hub.metrics.slowDrops`)
   */
  onSlowClient?: ((client: SlowClientInfo) => void) | undefined;
  /**
   * Store replays (a reconnect with a `Last-Event-ID` the store answers asynchronously, e.g. an
   * `XRANGE` on Redis) run at once, hub-wide. Each may hold up to the client's
   * `sse.maxBufferedBytes` of events while it runs: a reconnect storm of N clients would
   * otherwise hold N times that and send N reads to the store at once. The others wait their
   * turn, first come first served (their live events held as during a replay); a client that
   * leaves meanwhile is dropped from the queue. Replays the store answers at once (the memory
   * store's, Redis's from the instance's recent events) take no slot.
   * @default 16
   */
  maxConcurrentReplays?: number | undefined;
  /**
   * A client whose replay failed (the store could not answer: Redis down) is sent a `retry:` of
   * this many ms plus a random part of up to as much again (so from this to twice this), then
   * ended: the clients of one outage come back spread out, not all at once at the browser's
   * default interval. An EventSource keeps that interval for its later reconnects too.
   * @default 3000
   */
  replayRetry?: number | undefined;
  /**
   * How long a store replay may take, in ms: one that has not settled by then (a custom store
   * that never answers) frees its slot, and its client is ended as for a failed replay (with
   * `retry:`, to reconnect with the same `Last-Event-ID`). Its late answer is ignored.
   * @default 30000
   */
  replayTimeout?: number | undefined;
  /**
   * The timers of the hub's own waits (`replayTimeout`). Tests pass a manual clock; the same
   * shape as `createApp({ clock })`.
   * @default the system clock
   */
  clock?: Clock | undefined;
}

/** What {@link EventHubOptions.onSlowClient} learns about a dropped client. */
export interface SlowClientInfo {
  /** The `x-request-id` of the client's event-stream request. */
  readonly requestId: string;
  /** The topics it was connected with. */
  readonly topics: readonly string[];
}

/** Options for `hub.connect`. */
export interface ConnectOptions {
  /**
   * Topics this client receives, besides broadcasts (events published without a topic). Decide
   * them in the route handler from what the request may see (cookies, auth headers): a client
   * never receives an event of a topic it was not connected with, live or replayed.
   * @default []
   */
  topics?: readonly string[] | undefined;
}

/** Options for `hub.publish`. */
export interface PublishOptions {
  /**
   * Only clients connected with this topic receive the event.
   * @default undefined (a broadcast to every client)
   */
  topic?: string | undefined;
}

/** Options for `hub.invalidate`. */
export interface InvalidateOptions extends PublishOptions {
  /**
   * Who made the change: the request's ctx (its `x-keel-source` header is used) or the id itself.
   * The client with that id skips the event: its own mutation already invalidated.
   * @default undefined (every client applies it)
   */
  source?: Context | string | undefined;
}

/** Counters of one hub (this process). */
export interface HubMetrics {
  /** Connected clients. */
  readonly clients: number;
  /** Events this hub published (stored successfully). */
  readonly published: number;
  /** Event frames written to clients, live and replayed. */
  readonly delivered: number;
  /** `keel:reset` events sent. */
  readonly resets: number;
  /** Clients disconnected for leaving more than `sse.maxBufferedBytes` unsent. */
  readonly slowDrops: number;
  /**
   * Reconnecting clients whose replay the store could not answer (e.g. Redis unreachable): each
   * was ended with no event, so its EventSource retries with the same `Last-Event-ID`.
   */
  readonly replayFailures: number;
  /** Store replays in flight (at most `maxConcurrentReplays`). */
  readonly replaying: number;
  /** Reconnecting clients waiting for a replay slot (see `maxConcurrentReplays`). */
  readonly replaysQueued: number;
}

/**
 * Fans events out to many SSE clients. Holds streams, never ctx objects, so a recycled ctx can
 * never receive another client's events.
 */
export interface EventHub {
  /**
   * Attaches the request's client: opens its event stream, replays the events it missed (from
   * its `Last-Event-ID` header, only of its topics) or sends `keel:reset`, and returns the stream.
   * Return it from the handler; the ctx is released when the client disconnects. Connecting the
   * same request again returns its stream and changes nothing (the first call's topics stay).
   *
   * @example
   * app.get('/events', (ctx) => hub.connect(ctx, { topics: [`user:${userOf(ctx)}`] }));
   */
  connect(ctx: Context, options?: ConnectOptions): SseStream;
  /**
   * Stores an event and sends it to every client of its topic (every client when it has none).
   * Data: strings as-is, anything else as JSON. Resolves with the event's id once stored;
   * rejects with a {@link HubPublishError} when the store cannot take it (nothing is sent then).
   * Throws a TypeError at once for a bad event name or topic, or data JSON cannot hold (a BigInt,
   * a cycle): nothing is stored then.
   *
   * @example
   * await hub.publish('todo-added', todo, { topic: `team:${todo.teamId}` });
   */
  publish(event: string, data: unknown, options?: PublishOptions): Promise<string>;
  /**
   * Publishes `keel:invalidate` for a path or tags; every `useServerEvents` client refetches its
   * mounted queries under it (except the `source` client, whose own mutation did already).
   * Throws a TypeError for any other target (a predicate cannot be sent).
   *
   * @example
   * await hub.invalidate('/todos', { source: ctx });
   */
  invalidate(target: WireInvalidateTarget, options?: InvalidateOptions): Promise<string>;
  /**
   * Resolves once the store is open and delivering (at once in memory; after the first round
   * trip with Redis). Listen after it: a client that connects earlier is sent `keel:reset` when
   * the store opens, since what was published meanwhile cannot be told. When the store fails to
   * open (its `open` rejects, or resolves to no id), this rejects with that error (also reported
   * as a process warning), every client, waiting or later, is ended at once and every publish
   * rejects with a {@link HubPublishError}.
   */
  readonly ready: Promise<void>;
  /** Connected clients. */
  readonly size: number;
  /** The id of the last event delivered by this hub ('' until its store is open). */
  readonly lastId: string;
  /** A snapshot of the counters. */
  readonly metrics: HubMetrics;
  /** Ends every stream and closes the store; later `connect` calls end the new stream at once. */
  close(): Promise<void>;
}

interface HubClient {
  readonly stream: SseStream;
  readonly topics: readonly string[];
  readonly requestId: string;
  /** Live events held back while this client's replay is being read from the store. */
  pending: StoredEvent[] | null;
  /** While set (with `pending`), live events it is true for are dropped: the client has them. */
  skip: ((id: string) => boolean) | null;
  /** Bytes of the frames in `pending`. */
  held: number;
  /**
   * More was held than the client's `maxBufferedBytes`: the held events were let go (they could
   * never be written), and the client gets `keel:reset` at the current id instead.
   */
  overflow: boolean;
}

const NO_TOPICS: readonly string[] = Object.freeze([]);
/**
 * The longest `Last-Event-ID` a `keel:reset` echoes whole (no store's id is near it). A longer
 * one, echoed whole, could make the reset larger than the client's queue takes: dropped as slow
 * before it was sent, the client reconnected with the same id for ever.
 */
const ECHO_MAX = 256;
const SOURCE_ID = /^[A-Za-z0-9_-]{1,64}$/;

function isPromise<T>(value: T | Promise<T>): value is Promise<T> {
  return typeof (value as Promise<T>)?.then === 'function';
}

function includes(client: HubClient, topic: string | undefined): boolean {
  return topic === undefined || client.topics.includes(topic);
}

/** A lone surrogate: it has no UTF-8 form, so Redis would store (and route by) another topic. */
const LONE_SURROGATE = /\p{Cs}/u;

function checkTopic(name: string, topic: unknown): string | undefined {
  if (topic === undefined) return undefined;
  if (typeof topic !== 'string') throw typeError(name, 'a non-empty string', topic);
  if (topic === '') throw rangeError(name, 'a non-empty string', topic);
  if (LONE_SURROGATE.test(topic)) {
    throw rangeError(name, 'a non-empty string of well-formed Unicode (no lone surrogate)', topic);
  }
  return topic;
}

function checkTopics(topics: unknown): readonly string[] {
  if (topics === undefined) return NO_TOPICS;
  if (!Array.isArray(topics)) throw typeError('topics', 'an array of strings', topics);
  for (const topic of topics) checkTopic('topics[]', topic);
  return Object.freeze([...new Set<string>(topics)]);
}

function checkEventName(event: unknown): asserts event is string {
  // Also refuses a lone surrogate: Redis would store (and send) U+FFFD in its place.
  assertSseField('event', event);
  if (event.startsWith('keel:')) {
    throw rangeError('event', 'a name not starting with "keel:" (the hub\'s own events)', event);
  }
}

/** Validates an invalidation target for the wire: a path or an array of tags. */
function checkTarget(target: unknown): WireInvalidateTarget {
  if (typeof target === 'string') return target;
  if (Array.isArray(target)) {
    for (const tag of target) {
      if (typeof tag !== 'string') throw typeError('target[]', 'a tag (a string)', tag);
    }
    return target;
  }
  throw typeError('target', 'a path or an array of tags (a predicate cannot be sent)', target);
}

function sourceOf(source: Context | string | undefined): string | undefined {
  if (source === undefined) return undefined;
  if (typeof source === 'string') {
    if (!SOURCE_ID.test(source)) {
      throw rangeError('source', '1-64 characters of [A-Za-z0-9_-]', source);
    }
    return source;
  }
  if (typeof source !== 'object' || source === null || typeof source.header !== 'function') {
    throw typeError('source', 'a ctx or a source id', source);
  }
  // From the request: anything malformed is ignored (the event is then applied everywhere).
  const header = source.header(SOURCE_HEADER);
  return header !== undefined && SOURCE_ID.test(header) ? header : undefined;
}

const HUB_KEYS = keysOf<EventHubOptions>({
  store: 0,
  bufferSize: 0,
  bufferBytes: 0,
  onSlowClient: 0,
  maxConcurrentReplays: 0,
  replayRetry: 0,
  replayTimeout: 0,
  clock: 0,
});
const CONNECT_KEYS = keysOf<ConnectOptions>({ topics: 0 });
const PUBLISH_KEYS = keysOf<PublishOptions>({ topic: 0 });
const INVALIDATE_KEYS = keysOf<InvalidateOptions>({ topic: 0, source: 0 });

/**
 * Creates an {@link EventHub}.
 *
 * Delivery: each event is formatted once and the same bytes are written to every client of its
 * topic. Replay: a client reconnecting with `Last-Event-ID` gets exactly the events after it
 * (of its topics), or `keel:reset` (with the current id, so it resumes from there) when the store
 * cannot tell them exactly or they would not fit in the client's `sse.maxBufferedBytes`.
 *
 * @example
 * const hub = createEventHub();
 * app.get('/events', (ctx) => hub.connect(ctx));
 * app.post('/todos', async (ctx) => {
 *   const todo = await todos.add(ctx.body);
 *   await hub.invalidate('/todos', { source: ctx });
 *   return ctx.status(201).json(todo);
 * });
 */
export function createEventHub(options: EventHubOptions = {}): EventHub {
  checkOptions('createEventHub options', options, HUB_KEYS);
  if (options.store !== undefined) checkObject('store', options.store);
  const store =
    options.store ??
    memoryStore({ bufferSize: options.bufferSize, bufferBytes: options.bufferBytes });
  for (const method of ['open', 'append', 'replay', 'close'] as const) {
    checkFunction(`store.${method}`, store[method]);
  }
  if (store.replayAtOnce !== undefined) checkFunction('store.replayAtOnce', store.replayAtOnce);
  const onSlowClient = options.onSlowClient;
  if (onSlowClient !== undefined) checkFunction('onSlowClient', onSlowClient);
  const maxConcurrentReplays = integer(
    'maxConcurrentReplays',
    options.maxConcurrentReplays,
    16,
    1,
    undefined,
    'replays',
  );
  // Twice it (the jitter's top) must still be a delay a timer takes.
  const replayRetry = integer(
    'replayRetry',
    options.replayRetry,
    3000,
    1,
    Math.floor(MAX_TIMER_MS / 2),
    'ms',
  );
  const replayTimeout = integer(
    'replayTimeout',
    options.replayTimeout,
    30_000,
    1,
    MAX_TIMER_MS,
    'ms',
  );
  const clock = checkClock(options.clock);
  /** The `replayTimeout` timers of the store replays in flight, cleared by `close()`. */
  const replayTimers = new Set<TimerHandle>();
  /** Every client; broadcasts go to all of them. */
  const clients = new Set<HubClient>();
  const byTopic = new Map<string, Set<HubClient>>();
  /** Every stream this hub attached, so connecting one request twice attaches it once. */
  const streams = new WeakSet<SseStream>();
  /** Formatted once per event, reused by every replay of it. */
  const frames = new WeakMap<StoredEvent, Buffer | null>();
  /** Ids of the events skipped as unsendable, reported once each. */
  const unsendable = new Set<string>();
  /** The last id delivered, where replays end and live delivery goes on; null until open. */
  let head: string | null = null;
  /** Clients that connected before the store was open (`after`: their Last-Event-ID). */
  let waiting = new Map<HubClient, string | null>();
  let closed = false;
  let published = 0;
  let delivered = 0;
  let resets = 0;
  let slowDrops = 0;
  let replayFailures = 0;
  /** The smallest `maxBufferedBytes` of any client attached so far (see fanOut). */
  let smallestCap = Number.POSITIVE_INFINITY;
  /** Whether a failed replay was reported since the last one that succeeded (once per outage). */
  let replayWarned = false;
  /** Store replays in flight (answers still to come): at most `maxConcurrentReplays`. */
  let replaying = 0;
  /**
   * Clients waiting for a replay slot, in arrival order (a Map keeps it: the oldest is its first
   * key, and a client that leaves is deleted at once, both O(1)), with the replay's bounds.
   */
  const replayQueue = new Map<HubClient, { readonly after: string; readonly upTo: string }>();
  /**
   * The clients whose store replay is in flight, each with what frees its slot: a client that
   * leaves frees it at once (the next waiting client starts), and the late answer is ignored.
   */
  const inFlight = new Map<HubClient, () => boolean>();

  /**
   * The event's frame, or null for one that cannot be sent (a store holding an entry written
   * past the hub, e.g. an event name with a line break): skipped for every client, live and
   * replayed, and reported once. Thrown here it would fail every replay that reaches it.
   */
  function frameOf(event: StoredEvent): Buffer | null {
    let frame = frames.get(event);
    if (frame === undefined) {
      try {
        frame = Buffer.from(formatEvent(event.event, event.data, event.id));
      } catch (err) {
        frame = null;
        // Once per id, not per replay of it (a store may hand over a new object each time).
        if (!unsendable.has(event.id)) {
          if (unsendable.size === 1000) unsendable.clear();
          unsendable.add(event.id);
          // A custom store's data can quote anything (a URL with its password).
          process.emitWarning(
            `keel: the event hub skipped stored event ${JSON.stringify(event.id)}, which cannot be sent (${errorText(err)})`,
          );
        }
      }
      frames.set(event, frame);
    }
    return frame;
  }

  /** `lastEventId` is what the client sent, or null when the store lost events. */
  function sendReset(client: HubClient, lastEventId: string | null, id: string): boolean {
    resets++;
    const echo =
      lastEventId !== null && lastEventId.length > ECHO_MAX
        ? `${lastEventId.slice(0, ECHO_MAX - 1)}\u2026`
        : lastEventId;
    return writeFrame(client.stream, formatEvent(HUB_RESET_EVENT, { lastEventId: echo }, id));
  }

  function fanOut(event: StoredEvent): void {
    head = event.id;
    const targets = event.topic === undefined ? clients : byTopic.get(event.topic);
    if (targets === undefined || targets.size === 0) return;
    const frame = frameOf(event);
    if (frame === null) return;
    // Rare: a frame past the smallest cap of any client; checked per client only then.
    if (frame.length > 2 * smallestCap) {
      fanOutHuge(targets, event, frame);
      return;
    }
    for (const client of targets) deliver(client, event, frame);
  }

  /**
   * Writes a live frame, or holds it while the client's events are held (a replay being read).
   * Past what one turn may queue (a burst published in one tick: Node sends nothing before the
   * tick ends), the client is not dropped: what follows is held (bounded, as during a replay)
   * until its queue drains, then written, or, past the cap, replaced by `keel:reset`. A client
   * that does not read is dropped by its stream's watch, as slow.
   */
  function deliver(client: HubClient, event: StoredEvent, frame: Buffer): void {
    if (client.pending !== null) {
      hold(client, event);
      return;
    }
    const sent = offerFrame(client.stream, frame);
    if (sent !== FULL) {
      if (sent) delivered++;
      return;
    }
    client.pending = [];
    hold(client, event);
    whenDrained(client.stream, () => {
      if (!client.stream.closed && !resetOverflowed(client, null)) flushPending(client);
    });
  }

  /**
   * A frame over twice a client's `maxBufferedBytes` can never be queued (the stream would drop
   * the client as slow, and its replay would be a reset anyway): that client gets `keel:reset`
   * at the event's id instead, and stays.
   */
  function fanOutHuge(targets: Set<HubClient>, event: StoredEvent, frame: Buffer): void {
    for (const client of targets) {
      if (client.pending === null && frame.length > 2 * client.stream.maxBufferedBytes) {
        sendReset(client, null, event.id);
      } else deliver(client, event, frame);
    }
  }

  function resetAll(newHead: string): void {
    head = newHead;
    for (const client of [...clients]) {
      // Mid-replay: its answer may predate the loss; let it reconnect and ask again.
      if (client.pending !== null) endToRetry(client.stream);
      else sendReset(client, null, newHead);
    }
  }

  /**
   * What the store hands over while a fan-out runs: a client dropped mid-fan-out runs close
   * listeners (onSlowClient, the app's), and an event one publishes must not reach the clients
   * not yet written to before the event being delivered. Queued, then sent in order.
   */
  type Delivery = StoredEvent | { readonly resetTo: string };
  let fanning = false;
  const queued: Delivery[] = [];

  function run(item: Delivery): void {
    if (fanning) {
      queued.push(item);
      return;
    }
    fanning = true;
    try {
      for (let next: Delivery | undefined = item, i = 0; next !== undefined; next = queued[i++]) {
        if ('resetTo' in next) resetAll(next.resetTo);
        else fanOut(next);
      }
    } finally {
      fanning = false;
      queued.length = 0;
    }
  }

  const sink: StoreSink = {
    deliver: run,
    reset(newHead) {
      run({ resetTo: newHead });
    },
  };

  function hold(client: HubClient, event: StoredEvent): void {
    const skip = client.skip;
    if (skip === null) {
      // Bounded like the stream's queue: a slow replay must not hold live events without limit.
      if (client.overflow) return;
      const frame = frameOf(event);
      if (frame === null) return;
      client.held += frame.length;
      if (client.held > client.stream.maxBufferedBytes) {
        client.overflow = true;
        client.pending = [];
        return;
      }
      client.pending!.push(event);
      return;
    }
    if (skip(event.id)) return;
    // The first event the client lacks: it is live from here on.
    client.skip = null;
    client.pending = null;
    const frame = frameOf(event);
    if (frame !== null && writeFrame(client.stream, frame)) delivered++;
  }

  function attach(client: HubClient): void {
    clients.add(client);
    if (client.stream.maxBufferedBytes < smallestCap) smallestCap = client.stream.maxBufferedBytes;
    for (const topic of client.topics) {
      let set = byTopic.get(topic);
      if (set === undefined) byTopic.set(topic, (set = new Set()));
      set.add(client);
    }
    client.stream.onClose((stream) => {
      clients.delete(client);
      waiting.delete(client);
      replayQueue.delete(client);
      inFlight.get(client)?.();
      for (const topic of client.topics) {
        const set = byTopic.get(topic);
        if (set?.delete(client) && set.size === 0) byTopic.delete(topic);
      }
      if (stream.dropped) {
        slowDrops++;
        if (onSlowClient !== undefined) {
          try {
            onSlowClient({ requestId: client.requestId, topics: client.topics });
          } catch (err) {
            process.emitWarning(err instanceof Error ? err : String(err));
          }
        }
      }
    });
  }

  function replay(client: HubClient, after: string, upTo: string): void {
    if (after === upTo) {
      flushPending(client);
      return;
    }
    // Every slot taken: it waits its turn, its live events held (bounded) meanwhile, unless the
    // store can answer without I/O (its recent events): that takes no slot.
    if (replaying >= maxConcurrentReplays) {
      if (store.replayAtOnce !== undefined) {
        let now: ReplayResult | undefined;
        try {
          now = store.replayAtOnce(requestOf(client, after, upTo));
        } catch (err) {
          replayFailed(client, after, err);
          return;
        }
        if (now !== undefined) {
          finishReplay(client, after, upTo, now);
          return;
        }
      }
      replayQueue.set(client, { after, upTo });
      return;
    }
    askStore(client, after, upTo);
  }

  function requestOf(client: HubClient, after: string, upTo: string): ReplayRequest {
    return {
      after,
      upTo,
      include: (topic) => includes(client, topic),
      maxBytes: client.stream.maxBufferedBytes,
    };
  }

  function askStore(client: HubClient, after: string, upTo: string): void {
    let result: ReplayResult | Promise<ReplayResult>;
    try {
      result = store.replay(requestOf(client, after, upTo));
    } catch (err) {
      replayFailed(client, after, err);
      return;
    }
    if (!isPromise(result)) {
      finishReplay(client, after, upTo, result);
      return;
    }
    replaying++;
    // Whichever comes first, the answer or `replayTimeout`, frees the slot; the other is ignored.
    let timer: TimerHandle | null = null;
    const settle = (): boolean => {
      if (timer === null) return false;
      clock.clearTimeout(timer);
      replayTimers.delete(timer);
      timer = null;
      inFlight.delete(client);
      replayDone();
      return true;
    };
    timer = clock.setTimeout(() => {
      if (settle()) {
        const err = new Error(`keel: the store's replay did not answer within ${replayTimeout} ms`);
        replayFailed(client, after, err);
      }
    }, replayTimeout);
    replayTimers.add(timer);
    inFlight.set(client, settle);
    result.then(
      (answer) => {
        if (settle()) finishReplay(client, after, upTo, answer);
      },
      (err: unknown) => {
        if (settle()) replayFailed(client, after, err);
      },
    );
  }

  /** A store replay answered or failed: its slot goes to the clients waiting, oldest first. */
  function replayDone(): void {
    replaying--;
    while (replaying < maxConcurrentReplays && !closed) {
      const next = replayQueue.entries().next();
      if (next.done) return;
      const [client, { after, upTo }] = next.value;
      replayQueue.delete(client);
      // Its held events overflowed while it waited: a reset, whatever the store would answer.
      if (client.stream.closed || resetOverflowed(client, after)) continue;
      askStore(client, after, upTo);
    }
  }

  /**
   * Ends a stream for its EventSource to reconnect after a `retry:` of `replayRetry` to twice
   * that, at random: the clients ended together (an outage, a reset) do not all come back at once.
   */
  function endToRetry(stream: SseStream): void {
    writeFrame(stream, `retry: ${replayRetry + Math.floor(Math.random() * replayRetry)}\n\n`);
    stream.close();
  }

  /**
   * The store could not answer (e.g. Redis is down): the stream is ended with no event, so the
   * client reconnects with the same Last-Event-ID instead of missing events; after a `retry:` of
   * `replayRetry` to twice that, so the clients of one outage do not all come back at once.
   * Counted, and reported once until a replay succeeds again (every client of an outage retries).
   */
  function replayFailed(client: HubClient, after: string, err: unknown): void {
    replayFailures++;
    endToRetry(client.stream);
    if (replayWarned || closed) return;
    replayWarned = true;
    // A store's error can name its server with the password (a custom store's, unhidden).
    process.emitWarning(
      `keel: the event hub could not replay the events after ${JSON.stringify(after)} to a reconnecting client (request ${client.requestId}); it was ended to retry with the same Last-Event-ID (${errorText(err)})`,
    );
  }

  /**
   * A client whose held events overflowed gets `keel:reset` at the current id (what it missed
   * cannot be sent exactly), then live events. False when it did not overflow.
   */
  function resetOverflowed(client: HubClient, lastEventId: string | null): boolean {
    if (!client.overflow) return false;
    client.pending = null;
    client.skip = null;
    client.overflow = false;
    client.held = 0;
    sendReset(client, lastEventId, head!);
    return true;
  }

  function finishReplay(client: HubClient, after: string, upTo: string, answer: ReplayResult) {
    replayWarned = false;
    const stream = client.stream;
    if (stream.closed) return;
    if (resetOverflowed(client, after)) return;
    if (answer.kind === 'ahead') {
      // Held events the client already has are dropped; until one it lacks arrives, so are
      // the next live ones (this instance has not read as far as the client's last id yet).
      const held = client.pending!.filter((event) => !answer.has(event.id));
      if (held.length === 0) {
        client.pending = held;
        client.skip = answer.has;
        return;
      }
      client.pending = held;
      flushPending(client);
      return;
    }
    let replayed: Buffer[] | null = null;
    if (answer.kind === 'events') {
      const max = stream.maxBufferedBytes;
      let bytes = 0;
      replayed = [];
      for (const event of answer.events) {
        if (!includes(client, event.topic)) continue;
        const frame = frameOf(event);
        if (frame === null) continue;
        bytes += frame.length;
        if (bytes > max) {
          replayed = null;
          break;
        }
        replayed.push(frame);
      }
    }
    if (replayed === null) {
      if (!sendReset(client, after, upTo)) return;
    } else {
      for (const frame of replayed) {
        if (!writeFrame(stream, frame)) return;
        delivered++;
      }
    }
    flushPending(client);
  }

  function flushPending(client: HubClient): void {
    const pending = client.pending;
    client.pending = null;
    client.held = 0;
    if (pending === null) return;
    for (const event of pending) {
      const frame = frameOf(event);
      if (frame === null) continue;
      if (!writeFrame(client.stream, frame)) return;
      delivered++;
    }
  }

  function appendEvent(event: string, text: string, topic: string | undefined): Promise<string> {
    if (closed) return Promise.reject(new HubPublishError(event, 'closed'));
    if (openFailure !== null) {
      return Promise.reject(new HubPublishError(event, 'store', { cause: openFailure.cause }));
    }
    let result: string | Promise<string>;
    try {
      result = store.append(event, text, topic);
    } catch (err) {
      return Promise.reject(new HubPublishError(event, 'store', { cause: err }));
    }
    if (!isPromise(result)) {
      published++;
      return Promise.resolve(result);
    }
    return result.then(
      (id) => {
        published++;
        return id;
      },
      (err) => {
        throw new HubPublishError(event, 'store', { cause: err });
      },
    );
  }

  /** Set when the store failed to open: clients are ended at once, publishes refused. */
  let openFailure: { readonly cause: unknown } | null = null;

  const opened = store.open(sink);
  const start = (id: string): void => {
    // `''` is the hub's "not open" (`lastId`), and an empty SSE id clears the client's.
    if (typeof id !== 'string' || id === '') {
      const check = typeof id === 'string' ? rangeError : typeError;
      throw check('store.open() id', 'a non-empty string', id);
    }
    head = id;
    const queued = waiting;
    waiting = new Map();
    for (const [client, after] of queued) {
      if (client.stream.closed) continue;
      if (after !== null) replay(client, after, id);
      else if (!resetOverflowed(client, null) && sendReset(client, null, id)) flushPending(client);
    }
  };
  let ready: Promise<void>;
  if (isPromise(opened)) {
    ready = opened.then(start).catch((err: unknown) => {
      // The store gave up opening (closed meanwhile) or failed: the waiting clients are ended
      // (their EventSource retries), and so is every later one: nothing would ever reach them.
      openFailure = { cause: err };
      for (const client of [...waiting.keys()]) endToRetry(client.stream);
      waiting.clear();
      if (closed) return;
      // `ready` rejects with it too, but an app that does not await it must still hear of it.
      process.emitWarning(
        `keel: the event hub's store failed to open; its clients are ended and publishes refused (${errorText(err)})`,
      );
      throw err;
    });
    // Observed here too: a hub whose `ready` nobody awaits must not fail the process.
    ready.catch(() => {});
  } else {
    start(opened);
    ready = Promise.resolve();
  }

  return {
    connect(ctx, connectOptions) {
      if (connectOptions !== undefined) {
        checkOptions('connect options', connectOptions, CONNECT_KEYS);
      }
      const topics = checkTopics(connectOptions?.topics);
      const stream = ctx.sseStream();
      // The same request connected again: one client (each event once), the first topics.
      if (streams.has(stream)) return stream;
      if (closed || openFailure !== null) {
        // Failed to open: retried spread out, as the clients that waited for it were.
        if (openFailure !== null && !closed) endToRetry(stream);
        else stream.close();
        return stream;
      }
      const client: HubClient = {
        stream,
        topics,
        requestId: ctx.requestId,
        pending: null,
        skip: null,
        held: 0,
        overflow: false,
      };
      // An empty id is no id: an `id:` with no value clears the client's last id (WHATWG HTML,
      // https://html.spec.whatwg.org/multipage/server-sent-events.html#event-stream-interpretation).
      const after = ctx.header('last-event-id') || undefined;
      streams.add(stream);
      yieldIds(stream);
      attach(client);
      if (stream.closed) return stream;
      if (head === null) {
        // Before the store is open nothing can be told: held until then.
        client.pending = [];
        waiting.set(client, after ?? null);
      } else if (after !== undefined) {
        // Live events published while the replay is read are held, then sent after it.
        client.pending = [];
        replay(client, after, head);
      }
      return stream;
    },
    publish(event, data, publishOptions) {
      checkEventName(event);
      // A topic passed where the options go must not become a broadcast.
      if (publishOptions !== undefined) {
        checkOptions('publish options', publishOptions, PUBLISH_KEYS);
      }
      const topic = checkTopic('topic', publishOptions?.topic);
      return appendEvent(event, serializeData(data, event, topic), topic);
    },
    invalidate(target, invalidateOptions) {
      const payload: { target: WireInvalidateTarget; source?: string } = {
        target: checkTarget(target),
      };
      if (invalidateOptions !== undefined) {
        checkOptions('invalidate options', invalidateOptions, INVALIDATE_KEYS);
      }
      const topic = checkTopic('topic', invalidateOptions?.topic);
      const source = sourceOf(invalidateOptions?.source);
      if (source !== undefined) payload.source = source;
      return appendEvent(HUB_INVALIDATE_EVENT, JSON.stringify(payload), topic);
    },
    ready,
    get size() {
      return clients.size;
    },
    get lastId() {
      return head ?? '';
    },
    get metrics() {
      return {
        clients: clients.size,
        published,
        delivered,
        resets,
        slowDrops,
        replayFailures,
        replaying,
        replaysQueued: replayQueue.size,
      };
    },
    async close() {
      closed = true;
      for (const client of [...clients]) client.stream.close();
      clients.clear();
      byTopic.clear();
      waiting.clear();
      replayQueue.clear();
      inFlight.clear();
      for (const timer of replayTimers) clock.clearTimeout(timer);
      replayTimers.clear();
      await store.close();
    },
  };
}
