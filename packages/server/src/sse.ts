import type { ServerResponse } from 'node:http';
import { checkLine, rangeError, unserializable } from './checks';
import { type Clock, repeat } from './clock';
import { resetH2 } from './h2';
import { noop, progressOf, type QueueState, watchOwn, watchStall } from './send-watch';
import { promiseOf } from './thenable';

/** Server-sent event settings of an app (`createApp({ sse })`). */
export interface SseOptions {
  /**
   * A `:` comment is written to each stream idle for this many ms, so proxies keep it open;
   * `0` turns heartbeats off. One timer serves every stream of the app.
   *
   * @default 15000
   */
  heartbeatMs?: number | undefined;
  /**
   * Bytes a client may leave unsent (from earlier event-loop turns) before it is disconnected as
   * too slow. One turn may queue as much again on top (Node sends nothing before the next tick),
   * so a stream never holds more than twice this; a write past that disconnects it too (a hub
   * holds the rest of its burst instead, until the queue drains). Its EventSource reconnects; a
   * hub replays what it missed (or sends `keel:reset`).
   *
   * @default 1048576 (1 MiB)
   */
  maxBufferedBytes?: number | undefined;
}

/** {@link SseOptions} resolved once per app. */
export type SseSettings = Required<SseOptions>;

const LINE_BREAK = /\r\n|\r|\n/;
const LINE_BREAKS = /\r\n|\r|\n/g;

/** A surrogate code unit: rare in names and ids, so only those strings are checked further. */
const SURROGATE = /[\uD800-\uDFFF]/;
/** A lone surrogate (in `u` mode a well-formed pair is one code point, not `Cs`). */
const LONE_SURROGATE = /\p{Cs}/u;

/**
 * Throws when `value` could break out of an SSE field (CR, LF or NUL), or holds a lone surrogate:
 * it has no UTF-8 form and goes out as U+FFFD, so no listener for the name as sent would fire
 * (and a `Last-Event-ID` would come back as another id).
 */
export function assertSseField(kind: 'event' | 'id', value: unknown): asserts value is string {
  const expected = kind === 'event' ? 'an SSE event name' : 'an SSE event id';
  checkLine(kind, value, expected);
  if (SURROGATE.test(value as string) && LONE_SURROGATE.test(value as string)) {
    throw rangeError(kind, `${expected} of well-formed Unicode (no lone surrogate)`, value);
  }
}

/**
 * An event's data as sent: strings as-is, anything else as JSON (`undefined`: empty). Data JSON
 * cannot hold (a BigInt, a cycle, a throwing `toJSON`, a function or symbol) is a TypeError
 * naming the event (and the hub topic) and what was wrong, with JSON's error as the cause.
 */
export function serializeData(data: unknown, event: string | undefined, topic?: string): string {
  if (typeof data === 'string') return data;
  let text: string | undefined;
  let reason: unknown;
  try {
    text = JSON.stringify(data);
  } catch (err) {
    reason = err;
  }
  if (text !== undefined) return text;
  if (reason === undefined && data === undefined) return '';
  const what = event === undefined ? 'an unnamed event' : `event ${JSON.stringify(event)}`;
  throw unserializable(
    topic === undefined ? what : `${what} (topic ${JSON.stringify(topic)})`,
    data,
    reason,
  );
}

/**
 * Serializes one event. Strings are sent as-is, anything else as JSON; every line of the payload
 * becomes its own `data:` line, so newlines in data cannot end the event early.
 */
export function formatEvent(
  event: string | undefined,
  data: unknown,
  id: string | undefined,
): string {
  let out = '';
  if (id !== undefined) {
    assertSseField('id', id);
    out += `id: ${id}\n`;
  }
  if (event !== undefined) {
    assertSseField('event', event);
    out += `event: ${event}\n`;
  }
  const text = serializeData(data, event);
  if (text.indexOf('\n') === -1 && text.indexOf('\r') === -1) return `${out}data: ${text}\n\n`;
  for (const line of text.split(LINE_BREAK)) out += `data: ${line}\n`;
  return `${out}\n`;
}

/**
 * The open streams of one app and the single heartbeat timer they share (started with the first
 * stream, stopped with the last).
 */
export class SseRegistry {
  readonly streams = new Set<SseStream>();
  readonly clock: Clock;
  readonly options: SseSettings;
  /** The app's `sendTimeout` (0 = off): how long a waiting queue may make no progress. */
  readonly stallMs: number;
  /**
   * Counts event-loop turns that wrote. Node corks a response until the next tick, so bytes
   * written in the current turn are not yet "unsent" (see {@link SseStream.write}).
   */
  turn = 0;
  #turnPending = false;
  #stopHeartbeat: (() => void) | null = null;

  constructor(clock: Clock, options: SseSettings, stallMs = 0) {
    this.clock = clock;
    this.options = options;
    this.stallMs = stallMs;
  }

  /** Returns true when this stream armed the heartbeat: its first beat is a whole period away. */
  add(stream: SseStream): boolean {
    this.streams.add(stream);
    if (this.#stopHeartbeat === null && this.options.heartbeatMs > 0) {
      this.#stopHeartbeat = repeat(this.clock, this.options.heartbeatMs, this.#beat);
      return true;
    }
    return false;
  }

  delete(stream: SseStream): void {
    this.streams.delete(stream);
    if (this.streams.size === 0 && this.#stopHeartbeat !== null) {
      this.#stopHeartbeat();
      this.#stopHeartbeat = null;
    }
  }

  closeAll(): void {
    for (const stream of [...this.streams]) stream.close();
  }

  /** The current turn; the first write of a turn schedules the next one. */
  currentTurn(): number {
    if (!this.#turnPending) {
      this.#turnPending = true;
      setImmediate(this.#nextTurn);
    }
    return this.turn;
  }

  #nextTurn = (): void => {
    this.#turnPending = false;
    this.turn++;
  };

  #beat = (): void => {
    for (const stream of this.streams) internals.heartbeat(stream);
  };
}

/** Called once when a stream ends, for whatever reason. */
type CloseListener = (stream: SseStream) => void;

/**
 * What the registry, the hub and ctx reach inside a stream, and users cannot: set once by
 * `SseStream`'s static block, which alone can read its `#` members.
 */
interface StreamInternals {
  open(
    res: ServerResponse,
    registry: SseRegistry,
    /** null: ended at birth (see `endedSseStream`). */
    headers: string[] | null,
    report: (err: unknown) => void,
  ): SseStream;
  write(stream: SseStream, frame: string | Buffer): boolean;
  offer(stream: SseStream, frame: Buffer): Offer;
  whenDrained(stream: SseStream, fn: () => void): void;
  heartbeat(stream: SseStream): void;
  /** The hub owns this stream's ids from now on: its own events are sent without one. */
  yieldIds(stream: SseStream): void;
  every(
    stream: SseStream,
    fn: () => unknown,
    intervalMs: number,
    onError: (err: unknown) => void,
  ): Promise<void>;
}
let internals: StreamInternals;

/**
 * One open `text/event-stream` response. Holds the response and its timers, never a ctx, so it
 * can be kept (by a hub, or a handler's callback) after the handler returned: once the client is
 * gone every write is a no-op returning `false`.
 *
 * Backpressure: while the socket is congested, interval ticks are skipped (the next tick sends
 * fresh data); events are queued until `maxBufferedBytes` is left unsent from an earlier turn,
 * or the queue would pass twice that, then the client is disconnected.
 */
export class SseStream {
  #closed = false;
  #lastId = 0;
  /** Attached to a hub: `send` writes no id, so the client's Last-Event-ID stays the hub's. */
  #hubIds = false;
  #dropped = false;
  readonly #res: ServerResponse;
  readonly #registry: SseRegistry;
  /** Stops the stream's `every` repeats. */
  readonly #timers = new Set<() => void>();
  #listeners: CloseListener[] = [];
  /** The registry turn of this stream's last write. */
  #turn = -1;
  /** Writes so far, and as counted at the last heartbeat: equal means idle for a whole period. */
  #writes = 0;
  #beatWrites = -1;
  /** Stops the queue's watch, while a write left it waiting (see #watchQueue); null: none. */
  #unwatch: (() => void) | null = null;
  /** Takes what an onClose listener throws (the app's onError); dropped once they ran. */
  #report: ((err: unknown) => void) | null;

  static {
    internals = {
      open: (res, registry, headers, report) => new SseStream(res, registry, headers, report),
      write: (stream, frame) => stream.#write(frame),
      offer: (stream, frame) => stream.#write(frame, true),
      whenDrained: (stream, fn) => {
        const res = stream.#res;
        // Under a cap below the socket's high-water mark no 'drain' may come: the next turn.
        if (res.writableNeedDrain) res.once('drain', fn);
        else setImmediate(fn);
      },
      heartbeat: (stream) => stream.#heartbeat(),
      yieldIds: (stream) => {
        stream.#hubIds = true;
      },
      every: (stream, fn, intervalMs, onError) => stream.#every(fn, intervalMs, onError),
    };
  }

  /** Made by `ctx.sseStream()` / `hub.connect()`. */
  private constructor(
    res: ServerResponse,
    registry: SseRegistry,
    headers: string[] | null,
    report: (err: unknown) => void,
  ) {
    this.#res = res;
    this.#registry = registry;
    this.#report = report;
    if (headers === null) {
      this.#closed = true;
      return;
    }
    // Its queue has its own watch (#watchQueue), which drops it as too slow: an HTTP/2 stream's
    // watch of every response leaves it alone.
    watchOwn(res);
    // The client left before the stream opened (a handler that awaited first): no head is
    // written, so onResponse tells status 0; the stream ends at once (below).
    if (!res.destroyed) this.#writeHead(headers);
    res.on('close', this.#onClose);
    // A stream that armed the timer is idle a whole period at the first beat; one opened
    // mid-period is skipped at its first beat (-1 never equals the write count).
    if (registry.add(this)) this.#beatWrites = 0;
    // Its response's 'close' has fired already and would never end the stream.
    if (res.destroyed) this.#onClose();
  }

  #writeHead(headers: string[]): void {
    const res = this.#res;
    res.writeHead(200, [
      'content-type',
      // As the README and issue #6 name it: an event stream is UTF-8 by definition (WHATWG).
      'text/event-stream',
      'cache-control',
      'no-cache',
      'x-accel-buffering',
      'no',
      ...headers,
    ]);
    res.flushHeaders();
  }

  /** True once the stream ended (client gone, closed by the server, or too slow). */
  get closed(): boolean {
    return this.#closed;
  }

  /**
   * The id of the last event written by `send` (0 before the first). Always 0 on a hub's stream
   * after `hub.connect`: its ids are the hub's, and `send` writes none there.
   */
  get lastId(): number {
    return this.#lastId;
  }

  /** True when the stream ended because its queue passed `maxBufferedBytes` (too slow). */
  get dropped(): boolean {
    return this.#dropped;
  }

  /** True while the socket buffer is above its high-water mark. */
  get congested(): boolean {
    return this.#res.writableNeedDrain;
  }

  /** Bytes queued for this client and not yet taken by the kernel. */
  get bufferedBytes(): number {
    return this.#res.writableLength;
  }

  /** The app's `sse.maxBufferedBytes`: the most a client may have queued. */
  get maxBufferedBytes(): number {
    return this.#registry.options.maxBufferedBytes;
  }

  /**
   * Sends one event with the next id of this stream (1, 2, ...). Data: strings as-is, anything
   * else as JSON. Returns false if the stream is closed. An event name with CR, LF or NUL throws
   * a RangeError. On a stream attached to a hub (`hub.connect`) the event carries no id: the
   * hub's ids are the client's `Last-Event-ID`, which an app counter would overwrite.
   */
  send(event: string | undefined, data: unknown): boolean {
    if (this.#closed) return false;
    if (this.#hubIds) return this.#write(formatEvent(event, data, undefined));
    const id = this.#lastId + 1;
    const frame = formatEvent(event, data, String(id));
    this.#lastId = id;
    return this.#write(frame);
  }

  /** Sends a comment line (`: text`), ignored by EventSource (heartbeats are comments). */
  comment(text: string): boolean {
    return this.#write(`:${text.replace(LINE_BREAKS, ' ')}\n\n`);
  }

  /** Registers `fn` to run once when the stream ends; returns an unsubscribe function. */
  onClose(fn: CloseListener): () => void {
    if (this.#closed) {
      fn(this);
      return () => {};
    }
    this.#listeners.push(fn);
    return () => {
      this.#listeners = this.#listeners.filter((l) => l !== fn);
    };
  }

  /** Ends the stream from the server side. */
  close(): void {
    if (this.#closed) return;
    this.#res.end();
    // 'close' follows 'finish'; cleanup runs there, but do it now so close() is synchronous.
    this.#onClose();
  }

  /**
   * Called by the shared heartbeat every `heartbeatMs`: writes a `:` comment when nothing was
   * written since the previous beat (a counter, so a write costs no clock read).
   */
  #heartbeat(): void {
    if (this.#writes === this.#beatWrites) this.comment('');
    this.#beatWrites = this.#writes;
  }

  /**
   * Writes a frame (the hub formats once for all clients). Disconnects the client when what it
   * left unsent in earlier event-loop turns is past `maxBufferedBytes` (checked at the first write
   * of a turn). What this turn wrote counts less: Node corks the response until the next tick, so
   * a burst published in one turn sits in the queue even for a client that reads at once. It is
   * still bounded: no write takes the queue past twice `maxBufferedBytes`.
   */
  #write(frame: string | Buffer): boolean;
  #write(frame: string | Buffer, offer: true): Offer;
  #write(frame: string | Buffer, offer?: true): boolean | Offer {
    if (this.#closed) return false;
    const registry = this.#registry;
    const res = this.#res;
    const max = registry.options.maxBufferedBytes;
    const queued = res.writableLength;
    const turn = registry.currentTurn();
    if (turn !== this.#turn) {
      this.#turn = turn;
      if (queued > max) return this.#drop();
    }
    // Whatever the app does in one turn (a loop of sseEvent, a burst of publishes), the queue
    // stops at twice the cap: earlier turns may leave `max`, this turn may add as much again.
    if (queued + frame.length > 2 * max) return offer ? FULL : this.#drop();
    res.write(frame);
    this.#writes++;
    if (this.#unwatch === null && (queued + frame.length > max || res.writableNeedDrain)) {
      this.#watchQueue();
    }
    return true;
  }

  /**
   * The cap is judged at a turn's first write (a heartbeat is one), but none may come: heartbeats
   * off, a quiet topic, `sseInterval` ticks skipped while congested. A client that stopped
   * reading would hold its queue and connection for ever. So a write that leaves the queue
   * waiting (congested, or over the cap) watches it as `sendTimeout` watches a body: checked
   * every quarter period until it is taken; over the cap, or no progress for `sendTimeout`, and
   * the client is dropped as too slow.
   */
  #watchQueue(): void {
    const { clock, stallMs } = this.#registry;
    if (stallMs === 0) return;
    this.#unwatch = watchStall(progressOf(this.#res), clock, stallMs, this.#queueState, () => {
      this.#unwatch = null;
      this.#drop();
    });
  }

  #queueState = (): QueueState => {
    const res = this.#res;
    if (!this.#closed && res.writableLength > this.#registry.options.maxBufferedBytes) return 'cut';
    // Closed, or taken: the next write that leaves it waiting watches again.
    if (this.#closed || !res.writableNeedDrain) {
      this.#unwatch = null;
      return 'done';
    }
    return 'waiting';
  };

  /** Disconnects a client too slow (or fed too much at once) for its queue cap. */
  #drop(): false {
    this.#dropped = true;
    // HTTP/2: its stream reset with CANCEL, not NO_ERROR (which would read as a normal end).
    resetH2(this.#res);
    this.#res.destroy();
    this.#onClose(); // release now; the socket's 'close' event comes later
    return false;
  }

  /**
   * Calls `fn` now and every `intervalMs`, sending its result as an unnamed event (skipped when
   * `undefined`). A tick is skipped while the previous async `fn` is pending or the socket is
   * congested. Resolves when the stream ends; `onError` gets what `fn` throws, and the stream ends.
   */
  #every(fn: () => unknown, intervalMs: number, onError: (err: unknown) => void): Promise<void> {
    const done = new Promise<void>((resolve) => this.onClose(() => resolve()));
    if (this.#closed) return done;
    let pending = false;
    const fail = (err: unknown): void => {
      pending = false;
      onError(err);
      this.close();
    };
    const settle = (value: unknown): void => {
      pending = false;
      if (value === undefined) return;
      // Data JSON cannot hold throws here, in a timer or a promise callback: it is `fn`'s error.
      try {
        this.send(undefined, value);
      } catch (err) {
        fail(err);
      }
    };
    const tick = (): void => {
      if (pending || this.#closed || this.congested) return;
      let value: unknown;
      let promise: Promise<unknown> | null;
      try {
        value = fn();
        promise = promiseOf(value); // a `then` getter is app code: it may throw (in a timer)
      } catch (err) {
        fail(err);
        return;
      }
      if (promise !== null) {
        pending = true;
        promise.then(settle, fail);
      } else settle(value);
    };
    this.#timers.add(repeat(this.#registry.clock, intervalMs, tick));
    tick();
    return done;
  }

  #onClose = (): void => {
    if (this.#closed) return;
    this.#closed = true;
    if (this.#unwatch !== null) {
      this.#unwatch();
      this.#unwatch = null;
    }
    for (const stop of this.#timers) stop();
    this.#timers.clear();
    this.#res.off('close', this.#onClose);
    this.#registry.delete(this);
    const listeners = this.#listeners;
    this.#listeners = [];
    const report = this.#report!;
    this.#report = null; // a kept stream does not pin its request's ctx
    // App code, run from the response's 'close' event: a throw would escape into Node's emitter
    // (an uncaughtException) and skip the listeners after it, keel's own among them.
    for (const fn of listeners) {
      try {
        fn(this);
      } catch (err) {
        report(err);
      }
    }
  };
}

/** Opens an event stream on `res` (writes its head). */
export function openSseStream(
  res: ServerResponse,
  registry: SseRegistry,
  headers: string[],
  report: (err: unknown) => void,
): SseStream {
  return internals.open(res, registry, headers, report);
}

/**
 * A stream ended at birth, on a response already answered (a ctx kept past its request): its
 * writes return false, its close listeners run at once, nothing is written or watched.
 */
export function endedSseStream(res: ServerResponse, registry: SseRegistry): SseStream {
  return internals.open(res, registry, null, noop);
}

/**
 * What `offerFrame` did: wrote it (true), found the stream closed or dropped it as too slow
 * (false), or left it unwritten: this turn has queued all it may ({@link FULL}).
 */
export type Offer = boolean | typeof FULL;
export const FULL = 'full';

/**
 * Writes a hub's frame as `writeFrame` does, except past what one turn may queue (twice
 * `maxBufferedBytes`): then it is not written and the client is not dropped (a client that reads
 * takes it all once the turn ends); the hub holds what follows until `whenDrained`.
 */
export function offerFrame(stream: SseStream, frame: Buffer): Offer {
  return internals.offer(stream, frame);
}

/** Calls `fn` once the stream's queue has drained (or the next turn): after a {@link FULL}. */
export function whenDrained(stream: SseStream, fn: () => void): void {
  internals.whenDrained(stream, fn);
}

/** Writes a pre-formatted frame; false when the stream is closed or was dropped as too slow. */
export function writeFrame(stream: SseStream, frame: string | Buffer): boolean {
  return internals.write(stream, frame);
}

/** Hands the stream's id space to a hub (see `SseStream#send`). */
export function yieldIds(stream: SseStream): void {
  internals.yieldIds(stream);
}

/** `ctx.sseInterval`: see `SseStream#every`. */
export function streamEvery(
  stream: SseStream,
  fn: () => unknown,
  intervalMs: number,
  onError: (err: unknown) => void,
): Promise<void> {
  return internals.every(stream, fn, intervalMs, onError);
}
