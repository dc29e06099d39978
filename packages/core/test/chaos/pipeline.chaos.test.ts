/**
 * Chaos monkey for the whole request pipeline, through the public API only: seeded random
 * clients (cache with a tiny maxEntries, dedup, retry with backoff and Retry-After, per-attempt
 * timeouts, deadlines, circuit breaker, scheduler with lanes / host caps / rate limit / groups,
 * intelligence with adaptive timeouts, the adaptive engine; sometimes a wall clock that jumps) on
 * a FakeClock, against a scripted fetch that, call by call, answers 2xx / 4xx / 5xx / 429
 * (Retry-After in seconds, as an HTTP date, or garbage), rejects (plain or "connection
 * refused"), throws at once, raises an AbortError by itself, hangs until aborted (or for ever,
 * ignoring its signal), answers after a delay on the clock, answers a body that does not parse,
 * never ends or is cut short, and sometimes calls back into the client as it is called. Callers
 * get / post / put / delete / head / options a few keys, join flights, cancel, abort their
 * signals (plainly or with a timeout reason), invalidate, setCached, subscribe and unsubscribe,
 * dehydrate and hydrate, inspect, pause / resume / cancel scheduler groups, cancelAll,
 * cancelReads, and the clock moves; some app listeners call back into the client (often joining
 * the flight they hear of) and some throw.
 *
 * Once the clock has run out, for every seed:
 * - every promise settled, with the error class its story allows: a caller's own cancel or
 *   abort is a CancelledError (an abort with a timeout reason a TimeoutError of kind `signal`),
 *   never an error of the flight; a caller nobody cancelled gets a response of its own URL (or
 *   its setCached data) or an HttpError / NetworkError / TimeoutError / ParseError /
 *   ResponseTooLargeError / CircuitOpenError the script can explain, and a CancelledError only
 *   when a mass cancel or a self-aborting fetch explains it;
 * - a POST sent more than once was retried only after an answer that says it was not processed
 *   (429, 503 with a valid Retry-After, a refused connection), unless `retry.methods` lists POST;
 *   every `retry` waits the server's Retry-After when it sent a valid one, else a bounded backoff;
 * - never more attempts running at once than the scheduler's concurrency and host cap, nor more
 *   starting in a window than its rate limit; every fetch that heeds its signal was aborted;
 * - no timer left on the clock, no listener left on a caller's signal, no subscription, flight
 *   or adaptive flight left, intelligence's activeRequests 0, the scheduler drained, every
 *   `request` of a key with exactly one terminal event, every `request-queued` with its
 *   `request-dequeued`, no circuit still probing;
 * - what dehydrate hands over, hydrate takes (dehydrate refuses, naming it, only an entry written
 *   by hand under a POST request's key); a hostile signal (addEventListener throws) rejects its
 *   request with that error, nothing left behind;
 * - no unhandled rejection, nothing reported to onError but the app listeners' own throws.
 *
 * CHAOS_SEED=<n> reruns one seed (CHAOS_TRACE=1 prints its story), CHAOS_COUNT=<n> runs more
 * seeds (from 1), CHAOS_STATS=1 prints how often each outcome and event occurred.
 */
import { describe, expect, test } from 'vitest';
import {
  type ApiResponse,
  type CancellablePromise,
  CancelledError,
  CircuitOpenError,
  type ClientOptions,
  dehydrate,
  HttpError,
  type HttpMethod,
  hydrate,
  inspect,
  NetworkError,
  ParseError,
  parseRetryAfter,
  type RequestOptions,
  ResponseTooLargeError,
  TimeoutError,
} from '../../src/index';
import {
  collectUnhandledRejections,
  createTestClient,
  debugOf,
  FakeClock,
  type PromiseState,
  prng,
  recordEvents,
  spiedSignal,
  track,
} from '../helpers';

const LISTENER_BUG = new Error('a listener of the app threw');
const RETRY_ON_BUG = new Error('retryOn threw');
const SIGNAL_BUG = new Error('addEventListener threw');
/** A signal-like object whose addEventListener throws (a broken polyfill). */
const HOSTILE_SIGNAL = {
  aborted: false,
  addEventListener() {
    throw SIGNAL_BUG;
  },
  removeEventListener() {},
} as unknown as AbortSignal;
const PATHS = ['/a', '/a?x=1', '/b', '/c/1', '/c/2'];
const GROUPS = ['g1', 'g2'];
const BASE = 'https://api.test';

/** How one fetch call was answered (what the checks may explain an outcome with). */
type CallOutcome =
  | { kind: 'ok'; status: number }
  | { kind: 'status'; status: number; retryAfterValid: boolean }
  | { kind: 'reject'; notSent: boolean }
  | { kind: 'self-abort' }
  | { kind: 'bad-json' }
  | { kind: 'hang' }
  | { kind: 'hang-body' }
  | { kind: 'cut-body' }
  | { kind: 'throw' };

interface Call {
  n: number;
  method: string;
  url: string;
  body: unknown;
  outcome: CallOutcome | undefined;
  /** The call reads its signal (and stops when it aborts). */
  respects: boolean;
  /** Its promise (or its body) is still open: a call that respects its signal must not be. */
  open: boolean;
  /** The fake has answered it (resolved or rejected). */
  answered: boolean;
  /** The signal keel gave it (read whether or not the call heeds it). */
  signal: AbortSignal | undefined;
  /** When it was made (the fake clock, never skewed). */
  at: number;
}

interface Caller {
  id: number;
  method: HttpMethod;
  path: string;
  url: string;
  /** Its cache and dedup key. */
  key: string;
  opts: RequestOptions;
  /** Set once `request` returned (a re-entrant fetch may act before that). */
  p: CancellablePromise<ApiResponse> | undefined;
  state: { readonly current: PromiseState<ApiResponse> };
  signal?: ReturnType<typeof spiedSignal>;
  /** What ended it first, by its own hand or everyone's, while it was pending. */
  term?: 'cancel' | 'abort' | 'abort-timeout' | 'all' | 'pre-aborted';
  /** Given HOSTILE_SIGNAL: answered from the cache, or rejected with SIGNAL_BUG. */
  hostile: boolean;
  /** A group cancel or cancelReads may have reached it (conservative). */
  maybeCancelled: boolean;
  /** Its signal aborted with a timeout reason from a re-entrant call (it may have settled). */
  maybeSignalTimeout: boolean;
  retriesPost: boolean;
}

/** Outcomes and events over all seeds (CHAOS_STATS=1 prints them: is every path exercised?). */
const tally = new Map<string, number>();

async function flushAll(): Promise<void> {
  await new Promise((resolve) => setImmediate(resolve));
}

async function runScenario(seed: number): Promise<string[]> {
  const r = prng(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
  const chance = (p: number) => r() < p;
  const int = (n: number) => Math.floor(r() * n);
  const problems: string[] = [];
  const trace = process.env.CHAOS_TRACE ? (...a: unknown[]) => console.log(...a) : () => {};

  const clock = new FakeClock();
  const calls: Call[] = [];
  let reentrant = 40;
  let maxRunning = Infinity;
  let depth = 0;
  // Hoisted: the fetch and the delayed answers act too.
  let act: () => void = () => {};
  let reenter: (payload?: unknown) => void = () => {};
  /** The key of the event a listener acting now hears: it often joins that very flight. */
  let heard: string | undefined;

  // ── the scripted fetch ──
  const fetch = (input: string | URL | Request, init: RequestInit = {}): Promise<Response> => {
    const respects = chance(0.75);
    const call: Call = {
      n: calls.length,
      method: init.method ?? 'GET',
      url: String(input),
      body: typeof init.body === 'string' ? JSON.parse(init.body) : init.body,
      outcome: undefined,
      respects,
      open: true,
      answered: false,
      signal: init.signal ?? undefined,
      at: clock.now(),
    };
    // Attempts keel runs now (asked, not answered, not aborted): never more than the scheduler
    // allows at once (its concurrency, the host's cap).
    const running = calls.filter((k) => !k.answered && !k.signal?.aborted).length + 1;
    if (running > maxRunning) {
      problems.push(
        `fetch call ${call.n}: ${running} attempts running at once (cap ${maxRunning})`,
      );
    }
    calls.push(call);
    const signal = respects ? init.signal : undefined;
    /** Like a real fetch: an abort after the call started is heard, even one before this runs. */
    const whenAborted = (fn: () => void) => {
      if (signal?.aborted) queueMicrotask(fn);
      else signal?.addEventListener('abort', fn, { once: true });
    };
    const closed = <T>(x: T): T => {
      call.open = false;
      return x;
    };
    /** A body whose reading never ends (or ends cut short): it errors when the signal aborts. */
    const streamBody = (cut: boolean) =>
      new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(new TextEncoder().encode('{"partial":'));
          if (cut) {
            call.open = false;
            controller.error(new TypeError('terminated'));
            return;
          }
          const onAbort = () => {
            call.open = false;
            controller.error(signal!.reason);
          };
          whenAborted(onAbort);
          // Ignoring the signal, nothing to check; a HEAD's body is never read (none is sent).
          if (!signal || call.method === 'HEAD') call.open = false;
        },
      });
    const answer = (): Response | Error => {
      const x = r();
      if (x < 0.4) {
        call.outcome = { kind: 'ok', status: pick([200, 201, 204]) };
        call.open = false;
        if (call.outcome.status === 204) return new Response(null, { status: 204 });
        return Response.json({ call: call.n }, { status: call.outcome.status });
      }
      if (x < 0.62) {
        const status = pick([400, 404, 409, 429, 500, 502, 503, 503, 429]);
        const headers: Record<string, string> = {};
        if (chance(0.6)) {
          headers['retry-after'] = pick([
            '0',
            '1',
            `${int(4)}`,
            '99999',
            new Date(clock.now() + int(3) * 1000).toUTCString(),
            new Date(clock.now() - 5000).toUTCString(),
            'soon',
            '-1',
            '1.5',
            ' 2 ',
          ]);
        }
        const ra = headers['retry-after'] ?? null;
        call.outcome = {
          kind: 'status',
          status,
          retryAfterValid: parseRetryAfter(ra, clock.now()) >= 0,
        };
        call.open = false;
        return chance(0.5)
          ? Response.json({ err: call.n }, { status, headers })
          : new Response('nope', { status, headers });
      }
      if (x < 0.74) {
        const notSent = chance(0.3);
        call.outcome = { kind: 'reject', notSent };
        call.open = false;
        return notSent
          ? new TypeError('fetch failed', { cause: { code: 'ECONNREFUSED' } })
          : new TypeError('fetch failed');
      }
      if (x < 0.76) {
        call.outcome = { kind: 'self-abort' };
        call.open = false;
        return new DOMException('The operation was aborted', 'AbortError');
      }
      if (x < 0.82) {
        call.outcome = { kind: 'hang-body' };
        return new Response(streamBody(false), {
          headers: { 'content-type': 'application/json' },
        });
      }
      if (x < 0.86) {
        call.outcome = { kind: 'cut-body' };
        return new Response(streamBody(true), {
          headers: { 'content-type': 'application/json' },
        });
      }
      call.outcome = { kind: 'bad-json' };
      call.open = false;
      return new Response('{nope', { headers: { 'content-type': 'application/json' } });
    };
    queueMicrotask(() => trace(`fetch ${call.n} ${call.method} ${call.url} ${call.outcome?.kind}`));
    // A fetch wrapper that calls back into the client as it is called (bounded).
    if (chance(0.15)) {
      trace(`(from fetch ${call.n})`);
      reenter();
    }
    const mode = r();
    if (mode < 0.02) {
      call.outcome = { kind: 'throw' };
      call.answered = true;
      call.open = false;
      throw new TypeError('fetch threw at once');
    }
    if (mode < 0.12) {
      call.outcome = { kind: 'hang' };
      if (!signal) call.open = false; // ignores the signal: keel races it
      return new Promise((_, reject) => {
        whenAborted(() => {
          call.answered = true;
          reject(closed(signal!.reason));
        });
      });
    }
    if (mode < 0.4) {
      // After a delay on the clock (the answer is drawn when it comes).
      return new Promise((resolve, reject) => {
        const timer = clock.setTimeout(
          () => {
            signal?.removeEventListener('abort', onAbort);
            call.answered = true;
            const a = answer();
            if (a instanceof Response) resolve(a);
            else reject(a);
          },
          pick([5, 50, 150, 400, 1200]),
        );
        const onAbort = () => {
          clock.clearTimeout(timer);
          call.answered = true;
          reject(closed(signal!.reason));
        };
        whenAborted(onAbort);
      });
    }
    call.answered = true;
    const a = answer();
    return a instanceof Response ? Promise.resolve(a) : Promise.reject(a);
  };

  // ── the client ──
  const skews = chance(0.25);
  let skew = 0;
  const postRetried = chance(0.25);
  const retryOnThrows = chance(0.1);
  const retryOn = chance(0.2)
    ? (status: number | undefined) => {
        if (retryOnThrows && chance(0.3)) throw RETRY_ON_BUG;
        return status === undefined || status === 429 || status >= 500;
      }
    : undefined;
  const deadline = chance(0.4) ? pick([300, 1000, 3000]) : 0;
  const options: ClientOptions = {
    baseURL: BASE,
    fetch,
    // Sometimes a wall clock that jumps (NTP, a laptop waking up): now() moves, timers do not.
    clock: skews
      ? {
          now: () => clock.now() + skew,
          setTimeout: clock.setTimeout,
          clearTimeout: clock.clearTimeout,
        }
      : clock,
    random: r,
    // Every request is bounded (per attempt, or in total), so all of them settle.
    timeout: deadline > 0 && chance(0.5) ? 0 : pick([100, 250, 600]),
    deadline,
    retry: {
      attempts: pick([1, 2, 3, 4]),
      baseDelay: pick([10, 50, 200]),
      maxDelay: 500,
      maxRetryAfter: pick([1500, 5000]),
      jitter: chance(0.5),
      backoff: pick(['exponential', 'fixed']),
      respectRetryAfter: chance(0.85),
      // An app's own retryOn: the default rule, or one that sometimes throws (its error is then
      // the request's).
      ...(retryOn ? { retryOn } : {}),
      ...(postRetried ? { methods: ['GET', 'PUT', 'DELETE', 'POST'] } : {}),
    },
    cache: {
      maxEntries: pick([2, 100]),
      ttl: pick([0, 50, 300, 2000]),
      strategy: pick(['cache-first', 'stale-while-revalidate']),
      gcTime: pick([0, 100, 5000]),
    },
    circuitBreaker: chance(0.8)
      ? { failureThreshold: pick([2, 3, 6]), resetTimeout: pick([200, 1000]) }
      : { enabled: false },
    intelligence: { adaptiveTimeout: chance(0.3), adaptiveStaleWhileRevalidate: chance(0.3) },
    onError: (err) => {
      if (err !== LISTENER_BUG) problems.push(`onError: ${String(err)}`);
    },
  };
  if (chance(0.7)) {
    options.scheduler = { concurrency: pick([1, 2, 3, 8]), priority: chance(0.5) };
    if (chance(0.3)) options.scheduler.rateLimit = { requests: pick([1, 2]), interval: 100 };
    if (chance(0.3)) options.scheduler.hosts = { 'api.test': pick([1, 2]) };
  }
  if (chance(0.4)) {
    options.adaptive = {
      enabled: true,
      concurrency: chance(0.5),
      retry: chance(0.5),
      rateLimit: chance(0.5),
      staleWhileRevalidate: chance(0.5),
      outcomeWindow: 4,
      latencyWindow: 4,
      degradeSamples: 1,
      recoverySamples: 1,
      changeCooldown: 0,
      highLatencyMs: 300,
      lowLatencyMs: 100,
      swrLatencyMs: 200,
    };
  }
  const client = createTestClient(options);
  const sched = options.scheduler;
  const hostCap = sched?.hosts?.['api.test'] ?? Infinity;
  maxRunning = sched ? Math.min(sched.concurrency ?? 8, hostCap) : Infinity;
  const lanes = options.scheduler?.priority === true;
  const recorder = recordEvents(client);
  /** Path invalidations and cache clears ('/'), by their place in the event log. */
  const wiped = new Map<number, string>();
  /** Listeners of the app that call back into the client (and sometimes throw). */
  const appOffs: (() => void)[] = [];
  reenter = (payload) => {
    if (reentrant <= 0) return;
    reentrant--;
    depth++;
    const outer = heard;
    heard = (payload as { key?: string } | undefined)?.key;
    try {
      act();
    } finally {
      depth--;
      heard = outer;
    }
  };
  for (const name of [
    'request',
    'retry',
    'success',
    'error',
    'cancel',
    'dedup',
    'cache-hit',
    'request-started',
    'request-delayed',
    'circuit-open',
    'invalidate',
  ] as const) {
    if (!chance(0.15)) continue;
    const throws = chance(0.2);
    appOffs.push(
      client.on(name, (payload) => {
        if (chance(0.3)) reenter(payload);
        if (throws && chance(0.5)) throw LISTENER_BUG;
      }),
    );
  }

  // ── the callers ──
  const callers: Caller[] = [];
  let nextId = 0;
  let massCancelling = 0;
  const mass = (fn: () => void) => {
    massCancelling++;
    try {
      fn();
    } finally {
      massCancelling--;
    }
  };
  const pending = () => callers.filter((c) => c.state.current.state === 'pending');
  const offs: (() => void)[] = [];

  const request = (joinOf?: Caller) => {
    const method = joinOf
      ? joinOf.method
      : pick<HttpMethod>(['GET', 'GET', 'GET', 'GET', 'POST', 'PUT', 'DELETE', 'HEAD', 'OPTIONS']);
    const path = joinOf ? joinOf.path : pick(PATHS);
    const id = nextId++;
    const opts: RequestOptions = {};
    if (chance(0.25)) opts.scheduler = { group: pick(GROUPS) };
    if (lanes && chance(0.3)) opts.priority = pick(['high', 'low']);
    if (chance(0.15)) opts.deadline = pick([80, 400, 2000]);
    if (chance(0.1)) opts.timeout = pick([60, 300]);
    if (chance(0.1)) opts.tags = ['t'];
    if (!joinOf && chance(0.05)) opts.headers = { 'x-n': '1' };
    else if (joinOf?.opts.headers) opts.headers = joinOf.opts.headers;
    // Joiners ask for the same body type as their flight (it is part of the key).
    if (joinOf?.opts.responseType) opts.responseType = joinOf.opts.responseType;
    else if (!joinOf && chance(0.1)) opts.responseType = pick(['json', 'text'] as const);
    if (chance(0.05)) opts.maxResponseBytes = 5;
    if (method === 'GET' && chance(0.1))
      opts.cache = chance(0.5) ? false : { strategy: 'stale-while-revalidate' };
    let retriesPost = postRetried;
    if (chance(0.1)) {
      opts.retry = chance(0.5) ? false : { attempts: 2, methods: ['POST'] };
      retriesPost = opts.retry !== false;
    }
    let signal: ReturnType<typeof spiedSignal> | undefined;
    let term: Caller['term'];
    if (chance(0.3)) {
      // Sometimes one signal for several requests (a page's controller), not aborted yet.
      const shared = callers.filter((c) => c.signal && !c.signal.signal.aborted);
      signal = shared.length > 0 && chance(0.4) ? pick(shared).signal! : spiedSignal();
      opts.signal = signal.signal;
      if (chance(0.1)) {
        for (const o of callers) if (o.signal === signal) markPending(o, 'abort');
        signal.controller.abort();
        term = 'pre-aborted';
      }
    }
    const hostile = !signal && chance(0.03);
    if (hostile) opts.signal = HOSTILE_SIGNAL;
    if (method === 'POST' || method === 'PUT') opts.body = { caller: id };
    const caller: Caller = {
      id,
      method,
      path,
      url: client.resolve(method, path).fetchURL,
      key: client.resolve(method, path, { headers: opts.headers, responseType: opts.responseType })
        .key,
      opts,
      p: undefined,
      state: { current: { state: 'pending' } },
      signal,
      term,
      // Made by a listener while a mass cancel runs: it may join a flight being cancelled.
      maybeCancelled: massCancelling > 0,
      maybeSignalTimeout: false,
      hostile,
      retriesPost,
    };
    // Listed first: a fetch that calls back into the client (cancelAll) may reach it at once.
    callers.push(caller);
    trace(`#${id} ${method} ${path} ${JSON.stringify({ ...opts, signal: !!signal })}`);
    caller.p = client.request(method, path, opts);
    caller.state = track(caller.p);
  };

  const markPending = (c: Caller, term: Caller['term']) => {
    // From inside the client (a re-entrant fetch), a caller that looks pending may be settled
    // already, its reaction not run yet: its end is then allowed, not required.
    if (depth > 0 || c.p === undefined) {
      if (term === 'abort-timeout') c.maybeSignalTimeout = true;
      else c.maybeCancelled = true;
    } else if (c.state.current.state === 'pending' && c.term === undefined) c.term = term;
  };

  let wroteNonGet = false;
  /** dehydrate, which refuses (naming it) only an entry written by hand under a non-GET key. */
  const dehydrateOrRefuse = () => {
    try {
      return dehydrate(client);
    } catch (error) {
      const named = error instanceof RangeError && /key of a GET request/.test(error.message);
      if (!named || !wroteNonGet) problems.push(`dehydrate threw ${String(error)}`);
      return undefined;
    }
  };

  act = () => {
    const open = pending();
    const same = heard === undefined ? [] : open.filter((c) => c.key === heard);
    if (same.length > 0 && chance(0.5)) {
      request(pick(same));
      return;
    }
    const x = r();
    if (x < 0.3) request();
    else if (x < 0.42 && open.length > 0) {
      // A joiner of a request in flight (the same method and path).
      request(pick(open));
    } else if (x < 0.52 && open.length > 0) {
      const c = pick(open);
      markPending(c, 'cancel');
      trace(`cancel #${c.id}`);
      c.p?.cancel();
    } else if (x < 0.6) {
      const withSignal = open.filter((c) => c.signal);
      if (withSignal.length > 0) {
        const c = pick(withSignal);
        const timeout = chance(0.4);
        // Every caller that shares the signal hears the abort.
        for (const o of callers) {
          if (o.signal === c.signal && !o.signal!.signal.aborted) {
            markPending(o, timeout ? 'abort-timeout' : 'abort');
          }
        }
        trace(`abort #${c.id} ${timeout ? '(timeout)' : ''}`);
        c.signal!.controller.abort(
          timeout ? new DOMException('The operation timed out', 'TimeoutError') : undefined,
        );
      }
    } else if (x < 0.66) {
      const target = chance(0.7) ? pick(PATHS).split('?')[0]! : ['t'];
      trace(`invalidate ${String(target)}`);
      // Marked in the event log (at the top level only: inside a listener, events emitted
      // earlier may still be on their way to it).
      if (depth === 0 && typeof target === 'string') wiped.set(recorder.events.length, target);
      client.invalidate(target, { refetch: chance(0.7) });
    } else if (x < 0.7) {
      const path = pick(PATHS);
      const value = chance(0.7)
        ? { data: { set: path }, status: 200, statusText: 'OK', headers: new Headers() }
        : undefined;
      // Sometimes under a POST request's key (an app's mistake dehydrate must name).
      const method = chance(0.1) ? 'POST' : 'GET';
      trace(`setCached ${method} ${path} ${value ? 'value' : 'undefined'}`);
      if (method === 'POST') wroteNonGet = true;
      client.setCached(client.resolve(method, path), value);
    } else if (x < 0.75) {
      const path = pick(PATHS);
      const off = chance(0.5)
        ? client.subscribe(client.resolve('GET', path).key, () => chance(0.2) && reenter())
        : client.subscribe(
            (key) => key.includes(path),
            () => chance(0.2) && reenter(),
          );
      offs.push(off);
    } else if (x < 0.78 && offs.length > 0) {
      offs.splice(int(offs.length), 1)[0]!();
    } else if (x < 0.8) {
      // What dehydrate hands over (as JSON), a fresh client's hydrate takes.
      const state = dehydrateOrRefuse();
      if (state) hydrate(createTestClient({ baseURL: BASE }), JSON.parse(JSON.stringify(state)));
    } else if (x < 0.84) {
      const g = pick(GROUPS);
      trace(`pause ${g}`);
      client.scheduler().pauseGroup(g);
    } else if (x < 0.88) {
      const g = pick(GROUPS);
      trace(`resume ${g}`);
      client.scheduler().resumeGroup(g);
    } else if (x < 0.9) {
      const g = pick(GROUPS);
      trace(`cancelGroup ${g}`);
      // The flight is its owner's job, in its owner's group, even once the owner left.
      const keys = new Set(
        callers.filter((c) => c.opts.scheduler?.group === g).map((c) => `${c.method} ${c.path}`),
      );
      for (const c of open) if (keys.has(`${c.method} ${c.path}`)) c.maybeCancelled = true;
      mass(() => client.cancelGroup(g));
    } else if (x < 0.91) {
      trace('cancelAll');
      for (const c of open) markPending(c, 'all');
      mass(() => client.cancelAll());
    } else if (x < 0.92) {
      const path = pick(PATHS);
      trace(`cancelReads ${path}`);
      for (const c of open) c.maybeCancelled = true;
      mass(() => client.cancelReads(path.split('?')[0]!));
    } else if (x < 0.94) {
      trace('clearCache');
      if (depth === 0) wiped.set(recorder.events.length, '/');
      client.clearCache();
    } else if (x < 0.96) {
      client.prefetch(client.resolve('GET', pick(PATHS)));
    } else if (x < 0.965) {
      client.circuitBreaker().reset();
    } else if (x < 0.975) {
      // A dehydrated state written back (over newer or older entries alike).
      const state = dehydrateOrRefuse();
      if (state) hydrate(client, JSON.parse(JSON.stringify(state)));
    } else if (x < 0.985) {
      // The inspector reads every live structure; it must not throw mid-flight.
      const view = inspect(client);
      view.cache();
      view.flights();
    } else if (x < 0.99) {
      skew += pick([-5000, -100, 100, 5000]);
      trace(`skew ${skew}`);
    } else if (lanes) {
      client.scheduler().prioritize(pick([...GROUPS, ...PATHS]), pick(['high', 'low']));
    }
  };

  /**
   * What holds between any two steps: intelligence counts exactly the flights whose `request`
   * was heard and whose end was not; a half-open circuit has its probe in flight.
   */
  const midway = (): string[] => {
    const out: string[] = [];
    let open = 0;
    for (const { name, payload } of recorder.events) {
      if (name === 'request') open++;
      else if (name === 'success' || name === 'error') open--;
      else if (name === 'cancel' && (payload as { final: boolean }).final) open--;
    }
    const active = client.intelligence().snapshot().summary.activeRequests;
    if (active !== open)
      out.push(`at ${clock.now()}: activeRequests ${active}, events say ${open}`);
    for (const c of client.circuitBreaker().statuses()) {
      if (c.state === 'halfOpen' && !c.probing)
        out.push(`circuit ${c.endpoint} halfOpen, no probe`);
    }
    // Every number the observers report is finite and not negative, whatever the clock did.
    const numbers = (what: string, value: unknown): void => {
      if (typeof value === 'number') {
        // Without a scheduler there is no ceiling: `configured` and `effective` read Infinity.
        const noCeiling = !sched && /\.(configured|effective)$/.test(what) && value === Infinity;
        if ((!Number.isFinite(value) && !noCeiling) || value < 0) out.push(`${what} = ${value}`);
      } else if (value !== null && typeof value === 'object') {
        for (const [k, v] of Object.entries(value)) numbers(`${what}.${k}`, v);
      }
    };
    numbers('intelligence', client.intelligence().snapshot());
    const adaptive = client.adaptive().snapshot();
    numbers('adaptive', adaptive);
    for (const [endpoint, e] of Object.entries(adaptive.endpoints)) {
      if (e.effective < 1 || e.effective > e.configured) {
        out.push(`adaptive ${endpoint}: effective ${e.effective} of ${e.configured}`);
      }
      if (e.retryMultiplier < 1) out.push(`adaptive ${endpoint}: multiplier ${e.retryMultiplier}`);
    }
    return out;
  };

  const initial = 2 + int(6);
  for (let i = 0; i < initial; i++) request();
  await flushAll();
  const steps = 20 + int(30);
  for (let step = 0; step < steps; step++) {
    const n = int(3);
    for (let i = 0; i < n; i++) {
      act();
      await flushAll();
    }
    const ms = pick([0, 1, 10, 60, 120, 300, 800, 2500]);
    trace(`advance ${ms}`);
    await clock.advance(ms);
    problems.push(...midway());
  }
  reentrant = 0;
  for (const off of offs) off();
  // A paused group keeps its queued jobs for ever: that is what pausing means.
  for (const g of GROUPS) client.scheduler().resumeGroup(g);
  await clock.runAll();
  await flushAll();

  // ── invariants ──
  const say = (c: Caller, what: string) =>
    problems.push(`#${c.id} ${c.method} ${c.path} (${c.term ?? '-'}): ${what}`);
  const callsOf = (c: Caller) => calls.filter((k) => k.method === c.method && k.url === c.url);
  for (const c of callers) {
    const s = c.state.current;
    if (s.state === 'pending') {
      say(c, 'never settled');
      continue;
    }
    const mine = callsOf(c);
    if (c.hostile) {
      if (s.state === 'rejected' && s.reason !== SIGNAL_BUG) say(c, `hostile signal: ${s.reason}`);
      continue;
    }
    if (s.state === 'fulfilled') {
      if (
        c.term === 'cancel' ||
        c.term === 'abort' ||
        c.term === 'abort-timeout' ||
        c.term === 'pre-aborted' ||
        c.term === 'all'
      ) {
        say(c, 'fulfilled after its cancel');
      }
      const { status } = s.value;
      let data = s.value.data;
      if (typeof data === 'string' && data !== '') {
        // Read as text: the JSON the script sent, or the bad body of a call of its URL.
        try {
          data = JSON.parse(data);
        } catch {
          if (!mine.some((k) => k.outcome?.kind === 'bad-json')) say(c, `got text ${data}`);
          continue;
        }
      }
      const callN = (data as { call?: number } | undefined)?.call;
      const setPath = (data as { set?: string } | undefined)?.set;
      if (status < 200 || status > 299) say(c, `fulfilled with status ${status}`);
      if (callN !== undefined) {
        const k = calls[callN];
        if (k?.url !== c.url || k.method !== c.method)
          say(c, `got call ${callN}'s answer (${k?.method} ${k?.url})`);
      } else if (setPath !== undefined) {
        if (client.resolve('GET', setPath).key !== client.resolve('GET', c.path).key)
          say(c, `got setCached data of ${setPath}`);
      } else if (status !== 204 && c.method !== 'HEAD') {
        say(c, `fulfilled with unexplained data ${JSON.stringify(data)}`);
      }
      continue;
    }
    const e = s.reason;
    const name = (e as Error)?.constructor?.name;
    const kind = (e as TimeoutError).kind;
    const ownCancel =
      c.term === 'cancel' || c.term === 'abort' || c.term === 'all' || c.term === 'pre-aborted';
    if (ownCancel) {
      if (!(e instanceof CancelledError))
        say(c, `expected CancelledError, got ${name}: ${String(e)}`);
      continue;
    }
    if (c.term === 'abort-timeout') {
      const ok =
        (e instanceof TimeoutError && kind === 'signal') ||
        (c.maybeCancelled && e instanceof CancelledError);
      if (!ok) say(c, `expected TimeoutError(signal), got ${name} ${kind ?? ''}: ${String(e)}`);
      continue;
    }
    if (e instanceof TimeoutError && kind === 'signal' && c.maybeSignalTimeout) continue;
    if (e instanceof CancelledError) {
      if (!c.maybeCancelled && !mine.some((k) => k.outcome?.kind === 'self-abort')) {
        say(c, `unexplained CancelledError: ${String(e)}`);
      }
    } else if (e instanceof HttpError) {
      if (!mine.some((k) => k.outcome?.kind === 'status' && k.outcome.status === e.status)) {
        say(c, `HttpError ${e.status} no call of its URL answered`);
      }
    } else if (e instanceof NetworkError) {
      const explains = ['reject', 'throw', 'cut-body'];
      if (!mine.some((k) => explains.includes(k.outcome?.kind ?? ''))) {
        say(c, `unexplained NetworkError ${String(e)}`);
      }
    } else if (e instanceof ParseError) {
      if (!mine.some((k) => k.outcome?.kind === 'bad-json')) say(c, 'unexplained ParseError');
    } else if (e instanceof TimeoutError) {
      if (kind === 'deadline') {
        const anyDeadline =
          deadline > 0 ||
          callers.some((o) => o.method === c.method && o.path === c.path && o.opts.deadline);
        if (!anyDeadline) say(c, 'TimeoutError(deadline) without a deadline');
      } else if (kind !== 'attempt') say(c, `TimeoutError of kind ${kind}`);
    } else if (e instanceof ResponseTooLargeError) {
      if (
        !callers.some((o) => o.method === c.method && o.path === c.path && o.opts.maxResponseBytes)
      ) {
        say(c, 'ResponseTooLargeError without a limit');
      }
    } else if (e instanceof CircuitOpenError) {
      if ((options.circuitBreaker as { enabled?: boolean }).enabled === false)
        say(c, 'CircuitOpenError with the breaker off');
    } else if (e !== RETRY_ON_BUG || !retryOnThrows) {
      say(c, `unexpected rejection ${name}: ${String(e)}`);
    }
  }

  for (const c of callers) {
    const st = c.state.current;
    const label =
      st.state === 'rejected'
        ? `${(st.reason as Error).constructor.name}${(st.reason as TimeoutError).kind ? `:${(st.reason as TimeoutError).kind}` : ''}`
        : st.state;
    tally.set(label, (tally.get(label) ?? 0) + 1);
  }
  for (const { name } of recorder.events)
    tally.set(`event ${name}`, (tally.get(`event ${name}`) ?? 0) + 1);

  // A POST sent again only where the server said the request was not processed.
  for (const c of callers) {
    if (c.method !== 'POST' || c.retriesPost) continue;
    const sent = calls.filter((k) => (k.body as { caller?: number } | undefined)?.caller === c.id);
    for (const k of sent.slice(0, -1)) {
      const o = k.outcome;
      const unprocessed =
        (o?.kind === 'status' && (o.status === 429 || (o.status === 503 && o.retryAfterValid))) ||
        (o?.kind === 'reject' && o.notSent);
      if (!unprocessed) say(c, `POST retried after call ${k.n} (${JSON.stringify(o)})`);
    }
  }

  // Per key: as many terminal events (`success`, `error`, `cancel {final}`) as `request`s (a
  // final cancel by a joiner carries the joiner's own tracker), and every flight's tracker ended.
  const open = new Map<string, number>();
  for (const { name, payload } of recorder.events) {
    const p = payload as { tracker?: { settled: boolean }; key?: string; final?: boolean };
    if (name === 'request') {
      open.set(p.key!, (open.get(p.key!) ?? 0) + 1);
      if (!p.tracker) problems.push(`request of ${p.key} without a tracker`);
    } else if (name === 'success' || name === 'error' || (name === 'cancel' && p.final)) {
      open.set(p.key!, (open.get(p.key!) ?? 0) - 1);
    }
  }
  for (const [key, n] of open) if (n !== 0) problems.push(`${key}: requests - ends = ${n}`);
  for (const { name, payload } of recorder.events) {
    const t = (payload as { tracker?: { settled: boolean; state: string } }).tracker;
    if (name === 'request' && !t?.settled) problems.push(`a flight's tracker is ${t?.state}`);
  }
  // A retry waits what the server asked for when it asked (and no longer than maxRetryAfter),
  // else a backoff within maxDelay (or the adaptive engine's cap while it throttles).
  const { maxRetryAfter, respectRetryAfter } = options.retry as {
    maxRetryAfter: number;
    respectRetryAfter: boolean;
  };
  for (const { name, payload } of recorder.events) {
    if (name !== 'retry') continue;
    const { error, delay, reason, key } = payload;
    const after = error instanceof HttpError ? error.retryAfter : undefined;
    if (
      !(
        error instanceof HttpError ||
        error instanceof NetworkError ||
        error instanceof TimeoutError
      )
    ) {
      problems.push(`retry of ${key} after a ${String(error)}`);
    } else if (
      error instanceof TimeoutError &&
      error.kind !== 'attempt' &&
      error.kind !== 'transport'
    ) {
      problems.push(`retry of ${key} after a TimeoutError of kind ${error.kind}`);
    }
    if (after !== undefined && respectRetryAfter) {
      if (reason !== 'retry-after' || delay !== after || delay > maxRetryAfter) {
        problems.push(`retry of ${key}: ${reason} ${delay} ms, the server asked ${after} ms`);
      }
    } else if (reason !== 'backoff' || delay < 0 || delay > (options.adaptive ? 10_000 : 500)) {
      problems.push(`retry of ${key}: ${reason} ${delay} ms without a Retry-After`);
    }
  }
  // The rate limit: at most `requests` attempts start in any `interval` (on an unskewed clock).
  const rate = options.scheduler?.rateLimit;
  if (rate && !skews) {
    for (let i = 0; i < calls.length; i++) {
      const inWindow = calls.filter((k) => k.n <= i && k.at > calls[i]!.at - rate.interval).length;
      if (inWindow > rate.requests) {
        problems.push(`fetch call ${i}: ${inWindow} attempts within ${rate.interval} ms`);
        break;
      }
    }
  }
  // A read that started before an invalidation of its path (or a cache clear) is not stored.
  const startedAt = new Map<unknown, number>();
  recorder.events.forEach(({ name, payload }, i) => {
    if (name === 'request') startedAt.set(payload.tracker, i);
    if (name !== 'cache-write') return;
    const next = recorder.events[i + 1];
    const from = next?.name === 'success' ? startedAt.get(next.payload.tracker) : undefined;
    if (from === undefined) return;
    // `GET /a?x=1` (relative to the base), marks after a space.
    const path = new URL(payload.key.split(' ')[1]!, BASE).pathname;
    for (const [at, target] of wiped) {
      const hit = target === '/' || path === target || path.startsWith(`${target}/`);
      if (at > from && at <= i && hit) {
        problems.push(`${payload.key} stored by a read started before ${target} was wiped`);
      }
    }
  });
  // One half-open probe at a time per endpoint (a final cancel names its flight in `flight`).
  const probes = new Map<unknown, string>();
  for (const { name, payload } of recorder.events) {
    const p = payload as {
      tracker?: unknown;
      flight?: unknown;
      probe?: boolean;
      endpoint?: string;
    };
    if (name === 'request' && p.probe) {
      if ([...probes.values()].includes(p.endpoint!)) problems.push(`two probes of ${p.endpoint}`);
      probes.set(p.tracker, p.endpoint!);
    } else if (name === 'success' || name === 'error') probes.delete(p.tracker);
    else if (name === 'cancel' && (payload as { final: boolean }).final) {
      probes.delete(p.flight ?? p.tracker);
    }
  }
  const queued = new Map<unknown, number>();
  for (const { name, payload } of recorder.events) {
    const id = (payload as { id?: unknown }).id;
    if (name === 'request-queued') queued.set(id, (queued.get(id) ?? 0) + 1);
    if (name === 'request-dequeued') queued.set(id, (queued.get(id) ?? 0) - 1);
  }
  for (const [id, n] of queued) if (n !== 0) problems.push(`job ${id}: queued - dequeued = ${n}`);
  recorder.stop();
  for (const off of appOffs) off();

  for (const k of calls) {
    if (k.open) problems.push(`fetch call ${k.n} (${k.outcome?.kind}) never aborted`);
  }
  for (const c of callers) {
    if (c.signal && c.signal.live() !== 0) {
      say(c, `${c.signal.live()} listener(s) left on its signal`);
      break; // one report per shared signal is enough
    }
  }
  if (clock.live !== 0) problems.push(`timers left: ${clock.pendingDelays().join(', ')}`);
  const debug = debugOf(client) as ReturnType<typeof debugOf> & { adaptiveFlights: number };
  if (debug.flights !== 0 || debug.inflight !== 0)
    problems.push(`flights left: ${JSON.stringify(debug)}`);
  if (debug.adaptiveFlights !== 0) problems.push(`adaptive flights left: ${debug.adaptiveFlights}`);
  if (debug.subscriptions !== 0) problems.push(`subscriptions left: ${debug.subscriptions}`);
  if (debug.listeners !== 0) problems.push(`listeners left: ${debug.listeners}`);
  // Intelligence's counters, each incremented by exactly one kind of event (README, Intelligence).
  const summary = client.intelligence().snapshot().summary;
  if (summary.activeRequests !== 0) problems.push(`activeRequests ${summary.activeRequests}`);
  const count = (name: string, keep: (p: Record<string, unknown>) => boolean = () => true) =>
    recorder.events.filter((e) => e.name === name && keep(e.payload as Record<string, unknown>))
      .length;
  // A job the pre-start gate refused: its `error` is a CircuitOpenError, no failure, and it
  // counts once in `requests` (its `request` and its `circuit-rejected`).
  const refusedAtStart = count('error', (p) => p.error instanceof CircuitOpenError);
  const want = {
    cacheHits: count('cache-hit'),
    deduplicated: count('dedup'),
    retriesPerformed: count('retry'),
    cancels: count('cancel'),
    circuitRejected: count('circuit-rejected'),
    failures: count('error') - refusedAtStart,
    totalRequests:
      count('cache-hit') +
      count('request') +
      count('dedup') +
      count('circuit-rejected') -
      refusedAtStart,
  };
  for (const [field, n] of Object.entries(want)) {
    const got = summary[field as keyof typeof want];
    if (got !== n) problems.push(`intelligence ${field} ${got}, events say ${n}`);
  }
  const stats = client.scheduler().stats();
  if (stats.active + stats.queued + stats.delayed !== 0)
    problems.push(`scheduler: ${JSON.stringify(stats)}`);
  for (const s of client.circuitBreaker().statuses()) {
    if (s.probing) problems.push(`circuit ${s.endpoint} still probing`);
  }
  return problems;
}

describe('pipeline chaos monkey', () => {
  const unhandled = collectUnhandledRejections();
  const only = process.env.CHAOS_SEED;
  const seeds = only
    ? [Number(only)]
    : Array.from({ length: Number(process.env.CHAOS_COUNT ?? 300) }, (_, i) => i + 1);

  test(`${seeds.length} seeds keep every invariant`, async () => {
    const failed: string[] = [];
    for (const seed of seeds) {
      const problems = await runScenario(seed);
      if (problems.length > 0) {
        failed.push(`seed ${seed} (CHAOS_SEED=${seed}): ${problems.slice(0, 4).join('; ')}`);
      }
    }
    await flushAll();
    if (process.env.CHAOS_STATS) console.log([...tally].sort());
    expect(failed.slice(0, 8), `${failed.length} failing seed(s)`).toEqual([]);
    expect(unhandled).toEqual([]);
  }, 60_000);
});
