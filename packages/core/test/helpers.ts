/**
 * Shared test helpers for @keel/core (and the stages built on it: circuit, scheduler, ...).
 *
 * - FakeClock: a Clock whose timers run only when the test advances time; it counts live timers
 *   so a test can assert that nothing was leaked.
 * - createFakeFetch: a fetch implementation the test controls call by call (deferred responses,
 *   scripted handlers, abort behaviour like the real fetch).
 * - startServer: a real loopback node:http server on 127.0.0.1, port 0.
 * - small promise utilities: deferred(), flush(), promiseState(), settle().
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterEach, beforeEach, expect } from 'vitest';
import type { AbortSource } from '../src/attempt/attempt';
import { CLIENT_EVENT_NAMES } from '../src/events/names';
import {
  type Client,
  type ClientEventName,
  type ClientEvents,
  type ClientFeature,
  type ClientOptions,
  type Clock,
  createBaseClient,
  createClient,
  type FetchLike,
  type RequestOptions,
  systemClock,
  withAdaptive,
  withCircuitBreaker,
  withIntelligence,
  withScheduler,
} from '../src/index';

// ── the client under test ───────────────────────────────────────────────────────────────────

/**
 * The same client built the lean way: createBaseClient with each feature the options ask for,
 * made by its with...() function (not by createClient's own mapping). The `core-composed`
 * vitest project (vitest.composed.config.ts) runs the pipeline, circuit, scheduler and adaptive
 * suites against it, so the composed client is held to every behaviour createClient is.
 */
export function composedClient(options: ClientOptions = {}): Client {
  const { intelligence, circuitBreaker, scheduler, adaptive, ...base } = options;
  const features: ClientFeature[] = [withCircuitBreaker(circuitBreaker)];
  // Listed out of install order on purpose: the client installs them in its own fixed order.
  if (adaptive?.enabled === true) features.push(withAdaptive(adaptive));
  features.push(withIntelligence(intelligence));
  if (scheduler !== undefined) features.push(withScheduler(scheduler));
  return createBaseClient({ ...base, features });
}

/** createClient, or composedClient in the `core-composed` project. */
export const createTestClient: (options?: ClientOptions) => Client =
  process.env.KEEL_CLIENT === 'composed' ? composedClient : createClient;

// ── promises ────────────────────────────────────────────────────────────────────────────────

export interface Deferred<T> {
  promise: Promise<T>;
  resolve(value: T): void;
  reject(error: unknown): void;
}

export function deferred<T = void>(): Deferred<T> {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/**
 * Lets every pending microtask (and promise chain) run. Uses a real macrotask, so it must not be
 * called while vitest's fake timers replace setImmediate; with fake timers use
 * `vi.advanceTimersByTimeAsync(0)` instead.
 */
export function flush(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

export type PromiseState<T> =
  | { state: 'pending' }
  | { state: 'fulfilled'; value: T }
  | { state: 'rejected'; reason: unknown };

/** Observes a promise without changing it; the state is read after `flush()`. */
export function track<T>(promise: Promise<T>): { readonly current: PromiseState<T> } {
  const box: { current: PromiseState<T> } = { current: { state: 'pending' } };
  promise.then(
    (value) => {
      box.current = { state: 'fulfilled', value };
    },
    (reason) => {
      box.current = { state: 'rejected', reason };
    },
  );
  return box;
}

/** The state of a promise after pending work has run (real timers only). */
export async function promiseState<T>(promise: Promise<T>): Promise<PromiseState<T>> {
  const t = track(promise);
  await flush();
  return t.current;
}

/** Resolves with the outcome of a promise instead of throwing. */
export function settle<T>(promise: Promise<T>): Promise<PromiseState<T>> {
  return promise.then(
    (value) => ({ state: 'fulfilled', value }) as const,
    (reason) => ({ state: 'rejected', reason }) as const,
  );
}

/** mulberry32: a small seeded PRNG, so a failing scenario replays from its seed. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// ── clock ───────────────────────────────────────────────────────────────────────────────────

interface FakeTimer {
  id: number;
  at: number;
  fn: () => void;
}

/** 2024-01-01T00:00:00Z: a realistic epoch so HTTP dates (Retry-After) mean something. */
export const FAKE_EPOCH = Date.UTC(2024, 0, 1);

/**
 * A Clock driven by the test. Timers fire only inside `advance()` / `runAll()`, in due-time order
 * (ties in creation order), with pending promise work flushed after each one, so a timer that
 * schedules another (a retry wait after a timeout) fires in the same advance when it is due.
 *
 * `live` is the number of timers set and neither fired nor cleared: a leak check.
 */
export class FakeClock implements Clock {
  #now: number;
  #nextId = 1;
  readonly #timers = new Map<number, FakeTimer>();
  /** Every timer ever set (for assertions on delays). */
  readonly history: { id: number; ms: number; at: number }[] = [];
  created = 0;
  cleared = 0;
  fired = 0;

  constructor(start = FAKE_EPOCH) {
    this.#now = start;
  }

  now = (): number => this.#now;

  setTimeout = (fn: () => void, ms: number): number => {
    const id = this.#nextId++;
    const delay = Math.max(0, Number.isFinite(ms) ? ms : 0);
    this.#timers.set(id, { id, at: this.#now + delay, fn });
    this.history.push({ id, ms, at: this.#now + delay });
    this.created++;
    return id;
  };

  clearTimeout = (handle: unknown): void => {
    if (this.#timers.delete(handle as number)) this.cleared++;
  };

  /** Timers set and neither fired nor cleared. */
  get live(): number {
    return this.#timers.size;
  }

  /** Delays (ms) of the timers still pending, soonest first. */
  pendingDelays(): number[] {
    return [...this.#timers.values()].sort((a, b) => a.at - b.at).map((t) => t.at - this.#now);
  }

  /** Moves time forward by `ms`, firing due timers in order and flushing promises after each. */
  async advance(ms: number): Promise<void> {
    const target = this.#now + ms;
    await flush();
    for (;;) {
      const next = this.#due(target);
      if (!next) break;
      // Every timer due at this instant fires in creation order, then pending promise work runs.
      // (Node also runs microtasks between two such callbacks; timers due at the very same
      // moment that depend on each other's promise work are not something keel relies on.)
      const at = next.at;
      this.#now = Math.max(this.#now, at);
      const due = [...this.#timers.values()].filter((t) => t.at === at);
      for (const t of due) {
        if (!this.#timers.delete(t.id)) continue; // cleared by an earlier callback
        this.fired++;
        t.fn();
      }
      await flush();
    }
    this.#now = target;
    await flush();
  }

  /** Fires timers until none is left (bounded, to catch a timer loop). */
  async runAll(limit = 10_000): Promise<void> {
    await flush();
    for (let i = 0; i < limit && this.#timers.size > 0; i++) {
      const next = this.#due(Number.POSITIVE_INFINITY)!;
      await this.advance(next.at - this.#now);
    }
  }

  #due(limit: number): FakeTimer | undefined {
    let best: FakeTimer | undefined;
    for (const t of this.#timers.values()) {
      if (t.at <= limit && (!best || t.at < best.at || (t.at === best.at && t.id < best.id))) {
        best = t;
      }
    }
    return best;
  }
}

/**
 * A real-time clock that records every delay asked for but waits at most `cap` ms, so a
 * Retry-After of seconds can be checked against a real socket without the test waiting for it.
 */
export function compressedClock(cap = 5): Clock & { delays: number[] } {
  const delays: number[] = [];
  return {
    delays,
    now: systemClock.now,
    setTimeout: (fn, ms) => {
      delays.push(ms);
      return globalThis.setTimeout(fn, Math.min(ms, cap));
    },
    clearTimeout: systemClock.clearTimeout,
  };
}

// ── fetch ───────────────────────────────────────────────────────────────────────────────────

export interface FetchCall {
  /** 0-based index of the call. */
  index: number;
  url: string;
  method: string;
  headers: Record<string, string>;
  body: BodyInit | null | undefined;
  init: RequestInit;
  signal: AbortSignal | undefined;
  /** Resolves this call with a Response (or builds one). */
  respond(response: Response): void;
  /** Shorthand: a JSON response. */
  json(data: unknown, init?: ResponseInit): void;
  /** Shorthand: a text response. */
  text(body: string, init?: ResponseInit): void;
  /** Rejects this call (a network error by default). */
  fail(error?: unknown): void;
  /** Whether this call has been answered (or aborted). */
  readonly done: boolean;
}

export type FetchHandler = (call: FetchCall) => Response | Promise<Response> | undefined | void;

export interface FakeFetch {
  fetch: FetchLike;
  calls: FetchCall[];
  /** Calls not answered yet. */
  pending(): FetchCall[];
  /** The last call (throws when there is none). */
  last(): FetchCall;
  /** Resolves after the n-th call (1-based count) has been made. */
  waitForCalls(n: number): Promise<void>;
}

export interface FakeFetchOptions {
  /**
   * Answers a call; returning undefined leaves it pending for the test to answer through
   * `calls[i].respond(...)`. Default: leave every call pending.
   */
  handler?: FetchHandler;
  /** Simulate a fetch that ignores its abort signal (keel must still settle). Default false. */
  ignoreAbort?: boolean;
}

export function networkError(message = 'fetch failed'): TypeError {
  return new TypeError(message);
}

export function jsonResponse(data: unknown, init: ResponseInit = {}): Response {
  const headers = new Headers(init.headers);
  if (!headers.has('content-type')) headers.set('content-type', 'application/json');
  return new Response(JSON.stringify(data), { status: 200, ...init, headers });
}

export function textResponse(body: string, init: ResponseInit = {}): Response {
  return new Response(body, { status: 200, ...init });
}

/**
 * A fetch the test controls. Each call is recorded; its promise settles when the handler returns
 * a response, when the test answers it, or, like the real fetch, with an AbortError
 * DOMException when its signal aborts.
 */
export function createFakeFetch(options: FakeFetchOptions = {}): FakeFetch {
  const calls: FetchCall[] = [];
  const waiters: { n: number; resolve: () => void }[] = [];
  const fetch: FetchLike = (input, init = {}) => {
    const d = deferred<Response>();
    let done = false;
    const signal = init.signal ?? undefined;
    const finish = () => {
      done = true;
      signal?.removeEventListener('abort', onAbort);
    };
    const onAbort = () => {
      if (done) return;
      finish();
      d.reject(signal?.reason ?? new DOMException('This operation was aborted', 'AbortError'));
    };
    const call: FetchCall = {
      index: calls.length,
      url: String(input),
      method: init.method ?? 'GET',
      headers: Object.fromEntries(new Headers(init.headers as HeadersInit).entries()),
      body: init.body,
      init,
      signal,
      respond(response) {
        if (done) return;
        finish();
        d.resolve(response);
      },
      json(data, responseInit) {
        call.respond(jsonResponse(data, responseInit));
      },
      text(body, responseInit) {
        call.respond(textResponse(body, responseInit));
      },
      fail(error = networkError()) {
        if (done) return;
        finish();
        d.reject(error);
      },
      get done() {
        return done;
      },
    };
    calls.push(call);
    if (signal?.aborted) onAbort();
    else if (signal && !options.ignoreAbort) signal.addEventListener('abort', onAbort);
    for (const w of [...waiters]) {
      if (calls.length >= w.n) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve();
      }
    }
    if (options.handler && !done) {
      let out: ReturnType<FetchHandler>;
      try {
        out = options.handler(call);
      } catch (err) {
        call.fail(err);
        return d.promise;
      }
      if (out !== undefined) Promise.resolve(out).then(call.respond, call.fail);
    }
    return d.promise;
  };
  return {
    fetch,
    calls,
    pending: () => calls.filter((c) => !c.done),
    last() {
      const c = calls[calls.length - 1];
      if (!c) throw new Error('no fetch call was made');
      return c;
    },
    waitForCalls(n) {
      if (calls.length >= n) return Promise.resolve();
      return new Promise((resolve) => waiters.push({ n, resolve }));
    },
  };
}

/** What the fake backend answers for one call: after `ms` on the fake clock, with `status`. */
export interface Answer {
  ms: number;
  status?: number;
  headers?: Record<string, string>;
}

/**
 * A Response stand-in whose body is read in microtasks only: a real Response's body stream may
 * need extra event-loop turns on a loaded machine, which would let the fake clock run ahead of
 * an attempt's end and make measured latencies depend on the machine.
 */
export function quickResponse(
  status: number,
  data: unknown,
  headers?: Record<string, string>,
): Response {
  const h = new Headers(headers);
  h.set('content-type', 'application/json');
  const body = JSON.stringify(data);
  return {
    status,
    statusText: status === 200 ? 'OK' : 'Error',
    ok: status >= 200 && status < 300,
    headers: h,
    text: async () => body,
  } as unknown as Response;
}

/** Wraps a fetch so every call is answered by `handler` (sync or async). */
export function fetchFrom(handler: FetchHandler): FakeFetch {
  return createFakeFetch({ handler });
}

// ── signals ─────────────────────────────────────────────────────────────────────────────────

/**
 * An AbortController whose signal counts abort listeners added and removed, so a test can prove
 * that the client removed every listener it added to a caller's signal.
 */
export function spiedSignal(): {
  controller: AbortController;
  signal: AbortSignal;
  live(): number;
} {
  const controller = new AbortController();
  const { signal } = controller;
  const listeners = new Set<unknown>();
  const add = signal.addEventListener.bind(signal);
  const remove = signal.removeEventListener.bind(signal);
  signal.addEventListener = ((
    type: string,
    fn: EventListenerOrEventListenerObject,
    opts?: unknown,
  ) => {
    if (type === 'abort') {
      listeners.add(fn);
      // A `once` listener removes itself when the event fires.
      if (typeof opts === 'object' && opts !== null && (opts as { once?: boolean }).once) {
        add('abort', () => listeners.delete(fn), { once: true });
      }
    }
    add(type, fn, opts as AddEventListenerOptions);
  }) as AbortSignal['addEventListener'];
  signal.removeEventListener = ((
    type: string,
    fn: EventListenerOrEventListenerObject,
    opts?: unknown,
  ) => {
    if (type === 'abort') listeners.delete(fn);
    remove(type, fn, opts as EventListenerOptions);
  }) as AbortSignal['removeEventListener'];
  return { controller, signal, live: () => listeners.size };
}

// ── loopback server ─────────────────────────────────────────────────────────────────────────

export type RouteHandler = (req: IncomingMessage, res: ServerResponse) => void | Promise<void>;

export interface TestServer {
  /** `http://127.0.0.1:<port>` */
  url: string;
  server: Server;
  /** Requests received, in order (method and url). */
  requests: { method: string; url: string }[];
  /** TCP connections accepted so far (keep-alive reuse shows as fewer connections). */
  readonly connections: number;
  /** Requests whose client went away before the response finished (aborted sockets). */
  readonly aborted: number;
  /** Resolves when `aborted` reaches n. */
  waitForAborted(n: number): Promise<void>;
  close(): Promise<void>;
}

/**
 * Starts a node:http server on 127.0.0.1, port 0. Routes are matched by pathname; unknown paths
 * get 404. `close()` destroys open sockets so tests never hang on keep-alive connections.
 */
export async function startServer(routes: Record<string, RouteHandler>): Promise<TestServer> {
  const sockets = new Set<Socket>();
  const requests: { method: string; url: string }[] = [];
  let connections = 0;
  let aborted = 0;
  const abortWaiters: { n: number; resolve: () => void }[] = [];
  const server = createServer((req, res) => {
    requests.push({ method: req.method ?? 'GET', url: req.url ?? '/' });
    res.on('close', () => {
      if (!res.writableFinished) {
        aborted++;
        for (const w of [...abortWaiters]) {
          if (aborted >= w.n) {
            abortWaiters.splice(abortWaiters.indexOf(w), 1);
            w.resolve();
          }
        }
      }
    });
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    const route = routes[path];
    if (!route) {
      res.statusCode = 404;
      res.end('not found');
      return;
    }
    Promise.resolve(route(req, res)).catch((err) => {
      if (!res.headersSent) res.statusCode = 500;
      res.end(String(err));
    });
  });
  server.on('connection', (socket) => {
    connections++;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    server,
    requests,
    get connections() {
      return connections;
    },
    get aborted() {
      return aborted;
    },
    waitForAborted(n) {
      if (aborted >= n) return Promise.resolve();
      return new Promise((resolve) => abortWaiters.push({ n, resolve }));
    },
    close() {
      for (const s of sockets) s.destroy();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

// ── client ──────────────────────────────────────────────────────────────────────────────────

export interface TestClient {
  client: Client;
  fake: FakeFetch;
  clock: FakeClock;
  /** Every event the client emitted, in order. */
  events: RecordedEvent[];
  /** Events of one name, payloads only. */
  of<E extends ClientEventName>(name: E): ClientEvents[E][];
}

export type RecordedEvent = {
  [E in ClientEventName]: { name: E; payload: ClientEvents[E] };
}[ClientEventName];

/** Every event name (the client's own list: `client.on` refuses any other). */
export const ALL_EVENTS: ClientEventName[] = [...CLIENT_EVENT_NAMES];

/** Records every event of a client (or the given names) in emission order. */
export function recordEvents(
  client: Client,
  names: ClientEventName[] = ALL_EVENTS,
): { events: RecordedEvent[]; stop(): void } {
  const events: RecordedEvent[] = [];
  const offs = names.map((name) =>
    client.on(name, (payload) => events.push({ name, payload } as RecordedEvent)),
  );
  return {
    events,
    stop: () => {
      for (const off of offs) off();
    },
  };
}

/**
 * A client on a FakeClock and a fake fetch, with every event recorded. Retries default to no
 * jitter and a 100 ms base delay so retry timing is exact; a `retry` object layers over that,
 * and any other `retry` (`false`, `true`, even an invalid one) reaches `createClient` as given.
 */
export function makeClient(
  options: ClientOptions = {},
  fetchOptions: FakeFetchOptions = {},
): TestClient {
  const fake = createFakeFetch(fetchOptions);
  const clock = new FakeClock();
  const client = createTestClient({
    baseURL: 'https://api.test',
    fetch: fake.fetch,
    clock,
    ...options,
    // Only absent or an object gets the exact-timing defaults: `false` once became them, so
    // tests that turned retries off still retried.
    retry:
      options.retry === undefined || (typeof options.retry === 'object' && options.retry !== null)
        ? { jitter: false, baseDelay: 100, ...options.retry }
        : options.retry,
  });
  const { events } = recordEvents(client);
  return {
    client,
    fake,
    clock,
    events,
    of: (name) =>
      events.filter((e) => e.name === name).map((e) => e.payload) as ClientEvents[typeof name][],
  };
}

/** The internal counters exposed by `client.debug` (not part of the public type). */
export function debugOf(client: Client): {
  flights: number;
  inflight: number;
  cacheSize: number;
  subscriptions: number;
  listeners: number;
  /** Specs of wanted keys clearCache or maxEntries dropped, kept for invalidation. */
  remembered: number;
} {
  return (client as unknown as { debug: ReturnType<typeof debugOf> }).debug;
}

/** An AbortSource like Flight: `abort` keeps the first reason and calls whoever holds the slot. */
export class FakeAbortSource implements AbortSource {
  aborted = false;
  reason: unknown = undefined;
  onAbort: ((reason: unknown) => void) | undefined = undefined;
  abort(reason: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    this.onAbort?.(reason);
  }
}

/**
 * An option that is wrong both ways: `createClient` throws `type` with `message`, and a request
 * given it rejects with `type` without fetching anything.
 */
export async function expectRefusedOption(
  options: ClientOptions & RequestOptions,
  type: new (...args: never[]) => Error,
  message: RegExp,
): Promise<void> {
  const make = () => createClient({ fetch: async () => new Response(''), ...options });
  expect(make).toThrow(type);
  expect(make).toThrow(message);
  const t = makeClient();
  const outcome = await settle(t.client.get('/x', options));
  expect((outcome as { reason: unknown }).reason).toBeInstanceOf(type);
  expect((outcome as { reason: Error }).reason.message).toMatch(message);
  expect(t.fake.calls).toHaveLength(0);
}

/**
 * Collects what the process reports as nobody's (`unhandledRejection` reasons or
 * `uncaughtException` errors) while each test of the calling suite runs (register it at the top
 * of a `describe`): the returned array is emptied before each test.
 */
export function collectProcessFailures(
  event: 'unhandledRejection' | 'uncaughtException',
): unknown[] {
  const seen: unknown[] = [];
  const onFailure = (reason: unknown) => seen.push(reason);
  beforeEach(() => {
    seen.length = 0;
    process.on(event, onFailure);
  });
  afterEach(() => {
    process.off(event, onFailure);
  });
  return seen;
}

/** The rejections nobody handled, per test (see collectProcessFailures). */
export function collectUnhandledRejections(): unknown[] {
  return collectProcessFailures('unhandledRejection');
}
