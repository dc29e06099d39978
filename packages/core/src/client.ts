import type { Adaptive } from './adaptive/adaptive';
import { attemptOnce, dropStream } from './attempt/attempt';
import { decideRetry } from './attempt/retry-policy';
import { type CacheEntry, isFreshAt } from './cache/entry';
import { compileTarget, type Matchable, pathMatcher, type TargetMatcher } from './cache/match';
import { type CacheChange, Store } from './cache/store';
import { watchStore } from './cache/watch';
import { type CircuitGuard, OPEN_GUARD } from './circuit/guard';
import { type ClientConfig, resolveClientOptions } from './config';
import { Consumer, Flight } from './dedup/flight';
import { CancelledError } from './errors/cancelled-error';
import type { CircuitOpenError } from './errors/circuit-open-error';
import { isHttpError } from './errors/http-error';
import { isCircuitOpenError } from './errors/is-circuit-open-error';
import { hasErrorName, isKeelError } from './errors/keel-error';
import { isParseError } from './errors/parse-error';
import { isResponseTooLargeError } from './errors/response-too-large-error';
import { TimeoutError } from './errors/timeout-error';
import { Emitter } from './events/emitter';
import { CLIENT_EVENT_NAMES } from './events/names';
import {
  disabledAdaptive,
  disabledCircuitBreaker,
  disabledIntelligence,
} from './features/disabled';
import { type CircuitInspectable, collectFeatures, type Recommender } from './features/feature';
import type { HitTally } from './intelligence/hit-tally';
import type { Intelligence } from './intelligence/intelligence';
import {
  checkBoolean,
  checkFunction,
  checkObject,
  keysOf,
  oneOf,
  rangeError,
  typeError,
} from './internal/checks';
import { CONFIG } from './internal/client-config';
import { type Clock, timerDelay } from './internal/clock';
import { fingerprintOf, headersOf, KEY, urlOfKey } from './internal/fingerprint';
import { normalizeMethod } from './internal/methods';
import { noop } from './internal/noop';
import { report } from './internal/report';
import { originOf } from './internal/url';
import { isStreamBody } from './request/body';
import { checkHeaders } from './request/fields';
import { isDedupable, isJoinable, type RequestSpec, resolveRequest } from './request/resolve';
import { type AttemptGate, transparentGate } from './scheduler/gate';
import { Tracker } from './tracker/tracker';
import type {
  ApiResponse,
  CacheMeta,
  CacheSubscriber,
  CancellablePromise,
  Client,
  InvalidateTarget,
  KeyMatcher,
} from './types/client';
import type {
  AdaptiveController,
  CircuitBreakerController,
  IntelligenceController,
  SchedulerController,
} from './types/controllers';
import type { ClientEventName, ClientEvents } from './types/events';
import type { BaseClientOptions } from './types/features';
import type { HttpMethod, HttpMethodInput, PrefetchOptions, RequestOptions } from './types/options';

/**
 * Creates a client with the features it is given and no others: the lean way to build one, so an
 * app's bundle carries only the machinery it uses (README "Bundle size"). Without `features` it
 * has the cache, de-duplication, retry, timeouts, cancellation, invalidation and subscriptions;
 * `createClient(options)` is this with every feature its options ask for.
 *
 * @example
 * const client = createBaseClient({
 *   baseURL: 'https://api.example.com',
 *   features: [withIntelligence(), withCircuitBreaker()],
 * });
 */
export function createBaseClient(options?: BaseClientOptions): Client {
  return new KeelClient(options);
}

const SPEC_MEMO_LIMIT = 1000;
const INVALIDATE_KEYS = /* @__PURE__ */ keysOf('refetch');

const KEY_FORM = 'a `METHOD url` key with the marks a request writes (` |h`, ` |b`, ` |r`)';

/** What the hydration and inspection functions need from a client beyond its public API. */
export interface ClientInternals {
  readonly cache: Store;
  readonly clock: Clock;
  readonly baseURL: string | undefined;
  /** Every live flight (inspect/inspect.ts reads it; never written there). */
  readonly flights: ReadonlySet<Flight>;
  readonly gate: AttemptGate;
  /** Undefined without the circuit breaker feature. */
  readonly circuits: CircuitInspectable | undefined;
  /** Undefined without the intelligence feature. */
  readonly intelligence: Intelligence | undefined;
  /** The first flight id after the last successful write (see {@link afterWrite}). */
  write: number;
  /** An invalidation keeps the reads from this flight id on: none but in afterWrite. */
  keep: number;
}

const internals = new WeakMap<Client, ClientInternals>();

/** The cache and clock of a client made by keel (hydration.ts); a TypeError otherwise. */
export function internalsOf(client: Client, caller: string): ClientInternals {
  const found = internals.get(client);
  if (found === undefined) {
    throw typeError(
      `${caller}(client)`,
      'a client made by createClient or createBaseClient',
      client,
    );
  }
  return found;
}

/**
 * `inspect(client).watchCache` without the inspector (`@keel/core/internals`): @keel/react's
 * disabled queries follow their keys with it (no interest: invalidation refetches nothing for
 * them), and its store hears `clearCache()`. A client keel did not make has no cache to watch:
 * nothing is heard (no error: the hooks work with it as before).
 */
export function watchCache(client: Client, listener: (change: CacheChange) => void): () => void {
  const found = internals.get(client);
  return found ? watchStore(found.cache, listener) : noop;
}

/**
 * Runs `fn` as the synchronous reaction to the last successful write (@keel/react runs a
 * mutation's success callbacks so, `onSuccess: () => client.invalidate('/todos')` being the
 * common one): an invalidation it makes keeps the reads started since that write was answered
 * (the write's own invalidation refetch). They read after the write, so detaching one only sent
 * the same GET again. Only while `fn` runs: after it, anything may have changed again. For a
 * client keel did not make, `fn` runs as it is.
 */
export function afterWrite(client: Client, fn: () => unknown): unknown {
  const marks = internals.get(client);
  if (!marks) return fn();
  const outer = marks.keep;
  marks.keep = marks.write;
  try {
    return fn();
  } finally {
    marks.keep = outer;
  }
}

/**
 * The request pipeline. This is the only place that knows the order of the stages:
 *
 *   request ─► #resolve ─► #fromCache ─► #consume ─┬─ join ─► #attach
 *                                                  └─ #admit ─► #startFlight ─► #fly
 *                                                                (circuit)      (scheduler gate, retry loop)
 *
 * Observers (intelligence, circuit breaker, adaptive) learn from the events emitted here only.
 */
class KeelClient implements Client {
  readonly #config: ClientConfig;
  readonly #clock: Clock;
  readonly #events: Emitter<ClientEvents>;
  readonly #cache: Store;
  /**
   * The dedup map: the joinable flight in progress per key. A plain Map, not the public Deduper:
   * an app that never imports Deduper does not bundle it (leave() is its conditional delete).
   */
  readonly #inflight = new Map<string, Flight>();
  /** Every live flight: deduped reads, mutations, and reads detached by invalidation. */
  readonly #flights = new Set<Flight>();
  /**
   * The specs of the entries clearCache dropped (or maxEntries evicted: the store's `evicted`)
   * while a subscription wanted them (on screen, showing older data): an invalidation that
   * matches one refetches it, as the entry's.
   */
  readonly #cleared = new Map<string, RequestSpec>();
  readonly #guard: CircuitGuard;
  readonly #circuitController: CircuitBreakerController;
  readonly #intelligenceController: IntelligenceController;
  /** Intelligence's cache-hit channel when it is enabled (see #fromCache and HitTally). */
  readonly #hitTally: HitTally | undefined;
  /** Listeners the observers hold on #events (not counted in `debug.listeners`). */
  readonly #observerListeners: number;
  readonly #gate: AttemptGate;
  /** The adaptive engine; undefined unless enabled (then nothing is measured). */
  readonly #adaptive: Adaptive | undefined;
  /** The recommendation stage of #resolve: undefined unless an observer can recommend. */
  readonly #recommend: Recommender | undefined;
  /**
   * Option-less requests resolve to the same spec every time: memoized per method, by the url
   * string as given (a hit builds and hashes no `METHOD url` key).
   */
  readonly #specMemo: { [M in HttpMethod]?: Map<string, RequestSpec> } = {};
  #nextFlightId = 1;
  /** What the internals functions see (its `write` and `keep` marks are the client's own). */
  readonly #internals: ClientInternals;

  constructor(options: BaseClientOptions = {}) {
    const config = resolveClientOptions(options);
    const features = collectFeatures(options as Record<string, unknown>);
    const clock = config.clock;
    this.#config = config;
    this.#clock = clock;
    // For clockOf / fetchOf (@keel/core/internals): the clock and fetch of sibling packages.
    Object.defineProperty(this, CONFIG, { value: config });
    // A throwing listener or subscriber is reported to `onError`, never rethrown.
    const events = (this.#events = new Emitter<ClientEvents>(config));
    this.#cache = new Store(config.cache.ttl, config);
    this.#cache.evicted = this.#cleared;
    // Installed in a fixed order (features/feature.ts). Observers subscribe before any user
    // listener, so their state already reflects an event when user listeners see it (e.g.
    // `circuitBreaker().status()` inside an `error` listener).
    const context = { clock, events };
    const scheduler = features.scheduler?.install(
      context,
      {
        clock,
        // Read at call time: the pre-start gate peeks whatever guard the client ends up with.
        permits: (endpoint) => this.#guard.permits(endpoint),
        cancelJob: (job, error) => this.#cancelFlight(job as Flight, error),
        keyOf: (selector) => {
          try {
            return this.#keyOf(selector);
          } catch {
            // No key a request can have: a group name.
            return selector;
          }
        },
        resumeNow: (job, error) => this.#resume(job as Flight, error),
        onError: config.onError,
      },
      features.adaptive?.endpointCeilings === true,
    ) ?? { gate: transparentGate(clock), ceilings: undefined };
    this.#gate = scheduler.gate;
    const circuit = features.circuitBreaker?.install(context);
    this.#guard = circuit?.guard ?? OPEN_GUARD;
    this.#circuitController = circuit?.controller ?? disabledCircuitBreaker;
    const adaptive = (this.#adaptive = features.adaptive?.install(context, scheduler));
    const adaptiveMetrics = adaptive && (() => adaptive.metrics());
    const observed = features.intelligence?.install(context, circuit?.view, adaptiveMetrics);
    const intelligence = observed?.observer;
    this.#intelligenceController = observed?.controller ?? disabledIntelligence(adaptiveMetrics);
    this.#hitTally = intelligence?.enabled ? intelligence.hits : undefined;
    // Brought by the features that recommend, so a client without them bundles none of it.
    this.#recommend = (features.intelligence ?? features.adaptive)?.recommender?.(
      intelligence,
      adaptive,
    );
    adaptive?.observe(events);
    this.#observerListeners = events.listenerCount();
    internals.set(
      this,
      (this.#internals = {
        cache: this.#cache,
        clock,
        baseURL: config.baseURL,
        flights: this.#flights,
        gate: this.#gate,
        circuits: circuit?.inspectable,
        intelligence,
        write: 0,
        keep: Infinity,
      }),
    );
  }

  // ── public API ────────────────────────────────────────────────────────────────────────────

  request<T = unknown>(
    method: HttpMethodInput,
    url: string,
    options?: RequestOptions,
  ): CancellablePromise<ApiResponse<T>> {
    // Whatever throws here is the caller's rejection, never a throw: a bad option, a signal
    // whose `aborted` getter throws, an injected clock that threw arming a joiner's deadline (a
    // flight's own ends in #fly).
    try {
      const spec = this.#resolve(method, url, options);
      const signal = options?.signal;
      // Checked before any stage runs: a non-signal would otherwise throw after a flight started.
      if (signal != null && typeof (signal as AbortSignal).addEventListener !== 'function') {
        throw typeError('signal', 'an AbortSignal', signal);
      }
      if (signal?.aborted) throw abortedBy(signal, spec);
      return ((spec.cache && this.#fromCache(spec)) ||
        this.#consume(spec, signal)) as CancellablePromise<ApiResponse<T>>;
    } catch (err) {
      return rejected(err);
    }
  }

  get<T = unknown>(url: string, options?: RequestOptions) {
    return this.request<T>('GET', url, options);
  }
  delete<T = unknown>(url: string, options?: RequestOptions) {
    return this.request<T>('DELETE', url, options);
  }
  head<T = unknown>(url: string, options?: RequestOptions) {
    return this.request<T>('HEAD', url, options);
  }
  options<T = unknown>(url: string, options?: RequestOptions) {
    return this.request<T>('OPTIONS', url, options);
  }
  post<T = unknown>(url: string, body?: unknown, options?: RequestOptions) {
    return this.request<T>('POST', url, withBody(options, body));
  }
  put<T = unknown>(url: string, body?: unknown, options?: RequestOptions) {
    return this.request<T>('PUT', url, withBody(options, body));
  }
  patch<T = unknown>(url: string, body?: unknown, options?: RequestOptions) {
    return this.request<T>('PATCH', url, withBody(options, body));
  }

  on<E extends ClientEventName>(
    event: E,
    listener: (payload: ClientEvents[E]) => void,
  ): () => void {
    oneOf('event', event, CLIENT_EVENT_NAMES);
    checkFunction('listener', listener);
    return this.#events.on(event, listener);
  }

  subscribe(matcher: KeyMatcher, listener: CacheSubscriber): () => void {
    return this.#cache.subscribe(
      typeof matcher === 'string' ? this.#keyOf(matcher) : matcher,
      listener,
    );
  }

  invalidate(target: InvalidateTarget, options?: { refetch?: boolean | undefined }): string[] {
    if (options !== undefined) checkObject('options', options, undefined, INVALIDATE_KEYS);
    // Checked: a truthy non-boolean (`'no'`) would refetch.
    return this.#invalidate(
      this.#compile(target),
      target,
      checkBoolean('refetch', options?.refetch ?? true),
    );
  }

  cancelReads(target: InvalidateTarget): string[] {
    const matched = this.#matching(this.#flights, this.#compile(target), isRead);
    if (matched.length > 0) this.#cancelFlights(matched, 'Read cancelled by cancelReads');
    return cacheKeysOf(matched);
  }

  fetchingKeys(target?: InvalidateTarget): string[] {
    return cacheKeysOf(
      this.#matching(
        this.#inflight.values(),
        target === undefined ? undefined : this.#compile(target),
        isUnsettled,
      ),
    );
  }

  matches(target: InvalidateTarget, spec: RequestSpec): boolean {
    checkSpec(spec);
    return this.#compile(target)(specMatchable(spec, this.#clock.now()));
  }

  cancelAll(): void {
    this.#cancelFlights([...this.#flights], 'All requests cancelled');
  }

  clearCache(): void {
    for (const { key, spec } of this.#cache.values()) {
      if (spec && this.#cache.hasInterest(key)) this.#cache.remember(key, spec);
    }
    // Reads already in flight started before the clear: they still answer their callers, but are
    // not stored and are not joined by later requests (no pre-clear data comes back, e.g. on logout).
    // Before the clear: a cache watcher told of it finds them no longer fetching.
    for (const flight of this.#inflight.values()) flight.stale = true;
    this.#inflight.clear();
    this.#cache.clear();
  }

  cancelGroup(group: string): void {
    this.scheduler().cancelGroup(group);
  }

  intelligence(): IntelligenceController {
    return this.#intelligenceController;
  }

  circuitBreaker(): CircuitBreakerController {
    return this.#circuitController;
  }

  scheduler(): SchedulerController {
    return this.#gate.controller;
  }

  adaptive(): AdaptiveController {
    return this.#adaptive?.controller ?? disabledAdaptive;
  }

  resolve(method: HttpMethodInput, url: string, options?: RequestOptions): RequestSpec {
    return this.#resolve(method, url, options);
  }

  getCached<T = unknown>(key: string): ApiResponse<T> | undefined {
    // Stored keys are canonical: the key a hook read from a spec finds its entry at once.
    return (this.#cache.get(key) ?? this.#cache.get(this.#keyOf(key)))?.response as
      | ApiResponse<T>
      | undefined;
  }

  setCached<T = unknown>(target: string | RequestSpec, value: ApiResponse<T> | undefined): void {
    const spec = typeof target === 'string' ? undefined : target;
    // A spec's key is canonical as it is; anything else is read as a hand-written key (a
    // non-string, or an object that is no spec, is the TypeError naming key).
    const key = typeof spec?.key === 'string' ? spec.key : this.#keyOf(target as unknown as string);
    if (value === undefined) {
      if (this.#cache.delete(key)) this.#cache.notify({ type: 'invalidate', key });
    } else this.#cache.set(key, value as ApiResponse, spec && { spec });
  }

  prefetch(spec: RequestSpec, options?: PrefetchOptions): CircuitOpenError | undefined {
    checkSpec(spec);
    if (options !== undefined) {
      checkObject('options', options);
      checkBoolean('ifStale', options.ifStale ?? false);
      checkBoolean('reportRejection', options.reportRejection ?? false);
      if (options.ifStale && spec.cache) {
        const entry = this.#cache.peek(spec.key);
        if (entry !== undefined && isFresh(entry, spec, this.#clock.now())) return undefined;
      }
    }
    return this.#refetch(spec, false, options?.reportRejection);
  }

  isFetching(key: string): boolean {
    // A flight whose last consumer just cancelled it is being torn down: not fetching any more.
    // Called on every query state change (React): a request's own key, as a spec or a hook holds
    // it, is found as it is, with no parsing (stored keys are canonical, as in getCached).
    return isUnsettled(this.#inflight.get(key) ?? this.#inflight.get(this.#keyOf(key)));
  }

  /** Internals for tests and tooling: live flight and timer-free state. Not part of the API. */
  get debug() {
    return {
      flights: this.#flights.size,
      inflight: this.#inflight.size,
      cacheSize: this.#cache.size,
      subscriptions: this.#cache.subscriptionCount,
      listeners: this.#events.listenerCount() - this.#observerListeners,
      /** Flights the adaptive observer follows (0 without the engine). */
      adaptiveFlights: this.#adaptive?.observer.size ?? 0,
      remembered: this.#cleared.size,
    };
  }

  #compile(target: InvalidateTarget): TargetMatcher {
    return compileTarget(target, this.#config.baseURL);
  }

  /** The flights of `flights` that `keep` accepts and `matcher` (when given) matches. */
  #matching(
    flights: Iterable<Flight>,
    matcher: TargetMatcher | undefined,
    keep: (flight: Flight) => boolean,
  ): Flight[] {
    const now = this.#clock.now();
    const out: Flight[] = [];
    for (const flight of flights) {
      if (
        keep(flight) &&
        (!matcher || matcher(specMatchable(flight.spec, flight.tracker.startedAt || now)))
      ) {
        out.push(flight);
      }
    }
    return out;
  }

  // ── stage 1: resolve ──────────────────────────────────────────────────────────────────────

  /**
   * Resolves without recommendations first (memoized when option-less: such a spec depends on
   * `METHOD url` only), which yields the endpoint key; if the observers recommend something for
   * that endpoint, layers it onto that spec (a shallow copy, no second resolution). A
   * recommended spec is never memoized, since the recommendation changes as samples arrive.
   */
  #resolve(method: unknown, url: string, options?: RequestOptions): RequestSpec {
    const m = normalizeMethod(method);
    let spec: RequestSpec | undefined;
    if (options === undefined) {
      const byUrl = (this.#specMemo[m] ??= new Map());
      spec = byUrl.get(url);
      if (spec === undefined) {
        spec = resolveRequest(this.#config, m, url);
        if (byUrl.size >= SPEC_MEMO_LIMIT) byUrl.clear();
        byUrl.set(url, spec);
      }
    } else {
      spec = resolveRequest(this.#config, m, url, options);
    }
    return this.#recommend === undefined ? spec : this.#recommend(spec, options);
  }

  /**
   * A key written by hand (`getCached`, `setCached`, `isFetching`, `subscribe`) as the client's
   * requests write it, so any spelling of a resource names its entry: the `METHOD url` part is
   * the key of `resolve(METHOD, url)` (memoized there), the marks after it (` |h ...`) are
   * written again as a request writes them (header names lower-cased, lines sorted, the client's
   * responseType when there is no ` |r`), and must be ones a request writes (KEY). A key no
   * request of this client can have is the error such a request gets.
   */
  #keyOf(key: string): string {
    const [, method, url, marks, block, body, type] =
      (typeof key === 'string' && KEY.exec(key)) || [];
    // A mark no request writes would name nothing. (A ` |b` on a GET is not refused: a header
    // value may hold ` |b `, and the request's own key must name its entry.)
    if (url === undefined) {
      throw (typeof key === 'string' ? rangeError : typeError)('key', KEY_FORM, key);
    }
    // `GET ` is the key base itself (the baseURL without its trailing slash), as in the store;
    // resolving `''` would be the baseURL as written, with its slash: `GET /`.
    const spec = this.#resolve(method, url || this.#config.keyBase || url);
    return marks
      ? fingerprintOf(
          spec.method,
          urlOfKey(spec.key),
          // Checked as a request's headers are: `__proto__`, a name no token, a value fetch
          // refuses would name an entry no request has.
          checkHeaders(headersOf(block) ?? {}, 'key'),
          body,
          type ?? spec.responseType,
        )
      : spec.key;
  }

  // ── stage 2: cache ────────────────────────────────────────────────────────────────────────

  #fromCache(spec: RequestSpec): CancellablePromise<ApiResponse> | undefined {
    const entry = this.#cache.peek(spec.key);
    if (entry === undefined) return undefined;
    const now = this.#clock.now();
    const fresh = isFresh(entry, spec, now);
    // An expired entry unwatched for gcTime is collected here, not served stale.
    if (
      !fresh &&
      (spec.cache!.strategy !== 'stale-while-revalidate' || this.#cache.collect(entry, now))
    ) {
      return undefined;
    }
    // Intelligence takes the cache-hit event through its tally, inline: a listener's payload and
    // dispatch (or even a call) would cost more than the hit itself (bench/circuit.bench.mjs).
    const hits = this.#hitTally;
    if (hits !== undefined) {
      if (hits.spec === spec) hits.pending++;
      else hits.switchTo(spec);
    }
    if (this.#events.has('cache-hit')) {
      const tracker = new Tracker(spec.key);
      tracker.succeed(now);
      this.#events.emit('cache-hit', {
        key: spec.key,
        tracker,
        stale: !fresh,
        endpoint: spec.endpoint,
      });
    }
    if (!fresh) this.#refetch(entry.spec ?? spec, true);
    return cancellable(Promise.resolve(entry.response));
  }

  // ── stage 3: dedup ────────────────────────────────────────────────────────────────────────

  #consume(spec: RequestSpec, signal: AbortSignal | undefined): CancellablePromise<ApiResponse> {
    const joined = isJoinable(spec) ? this.#inflight.get(spec.key) : undefined;
    if (joined) {
      joined.cacheFor(spec);
      return this.#join(joined, signal, spec.deadline);
    }
    // The circuit first: a request it refuses costs no flight, caller, closure or listener.
    const flight = this.#admit(spec, true);
    if (!(flight instanceof Flight)) return rejected(flight);
    // Attached before it flies: a signal that throws leaves no flight in the maps (#attach).
    const { promise } = this.#attach(flight, NaN, signal);
    this.#fly(flight);
    return promise as CancellablePromise<ApiResponse>;
  }

  #join(
    flight: Flight,
    signal: AbortSignal | undefined,
    deadline: number,
  ): CancellablePromise<ApiResponse> {
    const now = this.#clock.now();
    // A joiner shares the flight's fate, deadline included; its own deadline, when it ends
    // first, ends its wait alone (like a cancel, but with a TimeoutError).
    const own = deadline > 0 && (flight.deadlineAt === 0 || now + deadline < flight.deadlineAt);
    const { promise } = this.#attach(flight, now, signal, own ? deadline : 0);
    if (this.#events.has('dedup')) {
      const { spec } = flight;
      this.#events.emit('dedup', {
        key: spec.key,
        method: spec.method,
        url: spec.url,
        consumers: flight.consumerCount,
        endpoint: spec.endpoint,
      });
    }
    return promise as CancellablePromise<ApiResponse>;
  }

  /**
   * A caller on the flight, with its promise. `joinedAt` is NaN for the owner (its tracker is the
   * flight's). The deadline's and the signal's closures are made by their own methods, so a plain
   * join allocates only the one `cancel` needs (made here).
   */
  #attach(
    flight: Flight,
    joinedAt: number,
    signal: AbortSignal | undefined,
    deadline = 0,
  ): Consumer {
    const consumer = new Consumer(flight, joinedAt, true, signal);
    // Armed and listening first: a clock or a signal that throws leaves nothing attached
    // (request() rejects with it).
    try {
      if (deadline > 0) this.#arm(consumer, deadline);
      if (signal) this.#listen(consumer, signal);
    } catch (error) {
      // Whatever letting go throws too, the caller gets what failed first.
      this.#release(consumer);
      // An owner's probe, never flown, gives its slot back, or the circuit stayed half-open (a
      // joined probe flies: the breaker bound it at its `request`, and this changes nothing).
      if (flight.probe) this.#guard.release?.(flight.spec.endpoint);
      throw error;
    }
    flight.addConsumer(consumer);
    (consumer.promise as CancellablePromise<ApiResponse>).cancel = () =>
      this.#cancelConsumer(consumer, new CancelledError(flight.spec));
    return consumer;
  }

  #listen(consumer: Consumer, signal: AbortSignal): void {
    consumer.onAbort = () =>
      this.#cancelConsumer(consumer, abortedBy(signal, consumer.flight.spec));
    signal.addEventListener('abort', consumer.onAbort, { once: true });
  }

  /** A joiner's own deadline, when it ends before the flight's. */
  #arm(consumer: Consumer, deadline: number): void {
    consumer.timer = this.#clock.setTimeout(() => {
      consumer.timer = undefined;
      this.#cancelConsumer(
        consumer,
        new TimeoutError(consumer.flight.spec, { kind: 'deadline', timeout: deadline }),
      );
    }, timerDelay(deadline));
  }

  /**
   * An internal refetch (or a prefetch): joins the live flight or starts one; its outcome is
   * swallowed. An open circuit drops it silently (no circuit-rejected unless `report`, no error)
   * and its refusal is returned.
   */
  #refetch(spec: RequestSpec, revalidate: boolean, report?: boolean): CircuitOpenError | undefined {
    let flight: Flight | CircuitOpenError | undefined = this.#inflight.get(spec.key);
    const joined = flight !== undefined;
    if (!flight && !((flight = this.#admit(spec, report)) instanceof Flight)) return flight;
    flight.cacheFor(spec);
    if (revalidate) flight.revalidate = true;
    flight.addConsumer(new Consumer(flight, NaN, false));
    if (!joined) this.#fly(flight);
    return undefined;
  }

  // ── stage 4/5: circuit admitted, flight starts through the scheduler gate ─────────────────

  /**
   * A new flight of `spec` if the circuit admits it, started (its tracker, its deadline) but in
   * no map until #fly; otherwise the circuit's refusal, reported (`circuit-rejected`) when
   * `report`, and nothing allocated.
   */
  #admit(spec: RequestSpec, report?: boolean): Flight | CircuitOpenError {
    // Read first: a clock that throws leaves no probe admitted.
    const now = this.#clock.now();
    const admission = this.#guard.beforeRequest(spec);
    if (!admission.ok) {
      if (report) this.#circuitRejected(spec, admission.error);
      return admission.error;
    }
    const flight = new Flight(this.#nextFlightId++, spec);
    flight.probe = admission.probe;
    flight.tracker.start(now);
    // Its timer is armed by #fly, where a clock that throws ends the flight.
    if (spec.deadline > 0) flight.deadlineAt = now + spec.deadline;
    return flight;
  }

  /**
   * Announces the flight (`request`), once its first consumer is attached: a listener may join
   * or cancel it, as any caller can. Then it enters the scheduler gate and asks for its first
   * slot, unless a listener cancelled it: then it ends here, cancelled. An injected clock whose
   * setTimeout throws here (the deadline timer, a scheduler wait) ends the flight with that
   * error: its callers get a rejection, and no later request joins a flight that never runs.
   */
  #fly(flight: Flight): void {
    const { spec } = flight;
    if (isJoinable(spec)) this.#inflight.set(spec.key, flight);
    this.#flights.add(flight);
    try {
      if (this.#events.has('request')) {
        this.#events.emit('request', {
          key: spec.key,
          method: spec.method,
          url: spec.url,
          tracker: flight.tracker,
          endpoint: spec.endpoint,
          probe: flight.probe,
        });
        if (flight.aborted) throw flight.reason;
      }
      // Armed once announced: a clock that throws here ends a flight whose `request` was heard,
      // so its `error` ends something (intelligence's active count, the circuit's probe).
      if (spec.deadline > 0) {
        flight.timer = this.#clock.setTimeout(
          () => this.#expire(flight),
          timerDelay(spec.deadline),
        );
      }
      this.#gate.enter(flight);
      this.#acquire(flight);
    } catch (error) {
      this.#end(flight, false, error);
    }
  }

  /**
   * The attempt runs now if the gate gives a slot; otherwise the gate answers through its
   * `resume` hook, delivered to #resume once the gate call has returned.
   */
  #acquire(flight: Flight): void {
    if (this.#gate.acquire(flight)) void this.#attempt(flight);
  }

  /** The scheduler's answer to an `acquire` that returned false (ClientSchedulerHooks). */
  #resume(flight: Flight, error: unknown): void {
    // Ended meanwhile (its deadline ran out while it waited): nothing left to run or report.
    if (flight.settled) return;
    if (error === undefined) {
      void this.#attempt(flight);
      return;
    }
    // Refused by the pre-start gate: its circuit opened while it waited. Blocked by an open
    // circuit (`circuit-rejected`), and ended (`error`, the terminal event of its `request`).
    // It leaves the dedup map first: a request made meanwhile must not join a refused flight.
    leave(this.#inflight, flight);
    if (isCircuitOpenError(error)) this.#circuitRejected(flight.spec, error);
    this.#end(flight, false, error);
  }

  #circuitRejected(spec: RequestSpec, error: CircuitOpenError): void {
    this.#events.emit('circuit-rejected', {
      endpoint: spec.endpoint,
      method: spec.method,
      path: spec.path,
      error,
    });
  }

  /**
   * One network attempt of a flight that holds a slot, then its outcome or a retry. Run as
   * `void`: anything that throws on the way (an injected clock) ends the flight with that error,
   * never an unhandled rejection with its callers left pending.
   */
  async #attempt(flight: Flight): Promise<void> {
    const { spec } = flight;
    try {
      flight.attemptAt = this.#clock.now();
      flight.tracker.attempt();
      flight.wait = undefined;
      let response: ApiResponse;
      try {
        // The slot is held until finish (or park), so stats never lose the job.
        response = await attemptOnce(this.#config.fetch, spec, flight, this.#clock, spec.timeout);
      } catch (error) {
        // An attempt fails with a KeelError; anything else is its clock's (clearTimeout): that
        // fails the flight, it is no failed attempt to retry.
        if (!isKeelError(error)) throw error;
        await this.#afterFailure(flight, error);
        return;
      }
      // The last consumer may have left between the response and here: the flight was cancelled
      // (and reported so), so it must not also report success or write the cache: it ends with
      // its reason (below), and a stream handed over (no caller will read it) is cancelled.
      if (flight.aborted) {
        dropStream(spec, response, flight.reason);
        throw flight.reason;
      }
      this.#end(flight, true, response);
    } catch (error) {
      this.#end(flight, false, error);
    }
  }

  /**
   * A failed attempt: the flight ends with the error, or waits out the retry delay parked (no
   * slot held) and asks the gate again.
   */
  async #afterFailure(flight: Flight, error: unknown): Promise<void> {
    const { spec, tracker } = flight;
    const now = this.#clock.now();
    // The attempt's duration, when it got an HTTP response (a timed-out or failed connection is
    // no latency sample: it measures the limit, not the server). Reported once, by the event
    // that ends the attempt.
    let attemptMs = answered(error) ? now - flight.attemptAt : undefined;
    try {
      if (flight.aborted) throw flight.reason;
      const decision = decideRetry({
        error,
        options: spec.retry,
        method: spec.method,
        attempts: tracker.attempts,
        // While the adaptive engine throttles the endpoint its base delay is scaled (capped):
        // its RetryScale is `baseDelayFactor` and `maxBaseDelay`.
        ...this.#adaptive?.retryScale(spec.endpoint, spec.retry.baseDelay),
        now,
        random: this.#config.random,
      });
      // A wait that would end past the deadline cannot lead to an answer in time: fail now, with
      // what the server said, rather than wait to fail with a TimeoutError. A stream body was
      // read by the attempt that failed: it cannot be sent again.
      if (
        !decision.retry ||
        (flight.deadlineAt !== 0 && now + decision.delay >= flight.deadlineAt) ||
        isStreamBody(spec.body)
      )
        throw error;
      tracker.retry(now);
      // A decision to retry says one of these two (decideRetry).
      const reason = decision.reason as 'retry-after' | 'backoff';
      flight.wait = { reason, delay: decision.delay, until: now + decision.delay, error };
      this.#events.emit('retry', {
        key: spec.key,
        tracker,
        attempts: tracker.attempts,
        delay: decision.delay,
        reason,
        // decideRetry stops at every other error an attempt fails with (README, Events).
        error: error as ClientEvents['retry']['error'],
        endpoint: spec.endpoint,
        attemptMs,
      });
      attemptMs = undefined;
      await this.#gate.park(flight, reason, decision.delay);
    } catch (err) {
      this.#end(flight, false, err, attemptMs);
      return;
    }
    this.#acquire(flight);
  }

  // ── the end of a flight ───────────────────────────────────────────────────────────────────

  /**
   * Ends a flight once: with its response (`ok`), or with an error, a cancellation when the
   * flight was aborted (not by its deadline). It leaves the live maps, then every consumer
   * still attached is answered. `attemptMs`: the duration of the attempt that ended the flight,
   * when it got a response. A step that throws (an injected clock's `now` or `clearTimeout`, a
   * caller's signal) fails the flight with that error: its callers get it, never left pending.
   */
  #end(flight: Flight, ok: boolean, value: unknown, attemptMs?: number): void {
    if (flight.settled) return;
    flight.settled = true;
    leave(this.#inflight, flight);
    this.#flights.delete(flight);
    const { spec, tracker } = flight;
    // Aborted, other than by its deadline: its last consumer cancelled it, and that final `cancel`
    // was its terminal event, whatever error its work ends with afterwards (a listener may cancel
    // it while it is being refused). (Never ok: #attempt ends an aborted flight with its reason.)
    const cancelled = flight.aborted && !flight.expired;
    // NaN: the time, when the clock could not tell it.
    let now = NaN;
    try {
      this.#clearDeadline(flight);
      now = this.#clock.now();
      if (ok) {
        const response = value as ApiResponse;
        const writer = flight.writer;
        if (writer && !flight.stale) {
          this.#cache.set(spec.key, response, {
            spec: writer,
            update: flight.revalidate ? 'revalidate' : 'write',
          });
          if (this.#events.has('cache-write')) {
            this.#events.emit('cache-write', { key: spec.key, response });
          }
        }
        // After the write (whose clock may throw): a flight that fails there ends with `error`.
        tracker.succeed(now);
        if (this.#events.has('success')) {
          this.#events.emit('success', {
            key: spec.key,
            tracker,
            response,
            endpoint: spec.endpoint,
            attemptMs: now - flight.attemptAt,
          });
        }
        if (flight.revalidate && !flight.stale) {
          this.#events.emit('revalidate', { key: spec.key, response });
        }
        // A successful mutation invalidates its path and tags before its caller resumes.
        if (!isDedupable(spec.method)) this.#invalidateAfterMutation(spec);
      }
    } catch (error) {
      ok = false;
      value = error;
    }
    if (cancelled) tracker.cancel(now);
    // Unsettled: no `success` was told (one told is its end, whatever failed after it), so not
    // ok either (an ok flight's tracker succeeded above).
    else if (!tracker.settled) {
      tracker.fail(now, value);
      if (this.#events.has('error')) {
        this.#events.emit('error', {
          key: spec.key,
          tracker,
          error: value,
          endpoint: spec.endpoint,
          attemptMs,
        });
      }
    }
    this.#gate.finish(flight, cancelled ? 'rejected' : 'completed');
    for (const consumer of flight.takeConsumers()) {
      // Its signal or its timer could not be let go: this caller gets that error instead.
      const answer = this.#release(consumer, value);
      (ok && answer === value ? consumer.resolve : consumer.reject)?.(answer as ApiResponse);
    }
  }

  /**
   * The flight's deadline ran out: its work stops (the running attempt, retry wait or queue
   * place is aborted) and it fails with a TimeoutError of kind `deadline`, an `error` like any
   * failure. Between two attempts its `cause` is the error it waited to retry after: no attempt
   * timed out, so intelligence counts no timeout then (nor before the first attempt; the circuit
   * breaker counts a failure once an attempt was made: a flight that never left the queue says
   * nothing about its endpoint).
   */
  #expire(flight: Flight): void {
    flight.timer = undefined;
    // Aborted: its last caller cancelled it and that cancel was its end; its work is unwinding.
    if (flight.settled || flight.aborted) return;
    const { spec } = flight;
    const error = new TimeoutError(spec, {
      kind: 'deadline',
      timeout: spec.deadline,
      cause: flight.wait?.error,
    });
    flight.expired = true;
    flight.abort(error);
    this.#end(flight, false, error);
  }

  /** Clears a flight's or a consumer's deadline timer. */
  #clearDeadline(holder: Flight | Consumer): void {
    if (holder.timer !== undefined) {
      this.#clock.clearTimeout(holder.timer);
      holder.timer = undefined;
    }
  }

  // ── cancellation ──────────────────────────────────────────────────────────────────────────

  /** Cancels one consumer; the flight is aborted when no consumer is left. */
  #cancelConsumer(consumer: Consumer, error: CancelledError | TimeoutError): void {
    if (consumer.settled) return;
    const { flight } = consumer;
    flight.deleteConsumer(consumer);
    // A timer or signal that cannot be let go, or a clock that cannot tell the time (NaN), does
    // not stop the cancel half way (the caller out of its flight, never rejected): it gets its
    // error, the flight is torn down, and what threw (the clock's, when both did), which no
    // caller gets, goes to `onError`. The flight stands for "nothing threw": no clock throws it.
    let failure = this.#release(consumer, flight);
    let now = NaN;
    try {
      now = this.#clock.now();
    } catch (error) {
      failure = error;
    }
    if (failure !== flight)
      report(this.#config.onError, failure, { source: 'cancel', key: flight.key });
    const final = flight.consumerCount === 0 && !flight.settled;
    if (final) {
      flight.tracker.cancel(now);
      // Leave the dedup map before anyone hears of it: a request made from a `cancel` listener
      // must not join a flight that is being torn down.
      leave(this.#inflight, flight);
    }
    if (this.#events.has('cancel')) {
      this.#events.emit(
        'cancel',
        // `flight` (internal, not in the event's type) is the flight's own tracker, whoever
        // left, so the adaptive observer finds the flight a joiner ended without a search (its
        // CancelEvent). Not enumerable: a listener's `Object.keys` or `JSON.stringify` shows
        // only the documented fields.
        Object.defineProperty(
          {
            key: flight.key,
            // The flight's own when this ended it (and it was the owner); otherwise the caller's
            // own: started when it joined (the owner: when the flight started), cancelled now.
            tracker:
              final && Number.isNaN(consumer.joinedAt)
                ? flight.tracker
                : leaverTracker(consumer, now),
            endpoint: flight.spec.endpoint,
            final,
          },
          'flight',
          { value: flight.tracker },
        ),
      );
    }
    consumer.reject?.(error);
    if (final) {
      flight.abort(error);
      // The scheduler drops the job now (queued, parked or running): its slot frees at once.
      this.#gate.cancel(flight);
    }
  }

  #cancelFlight(flight: Flight, error: CancelledError): void {
    // Out of the dedup map first: a request made from a `cancel` listener must not join (and
    // keep alive) a flight whose every consumer is being cancelled.
    leave(this.#inflight, flight);
    for (const consumer of flight.consumers()) this.#cancelConsumer(consumer, error);
  }

  /**
   * Cancels every consumer of `flights`, dispatch held meanwhile (no queued job starts only to be
   * cancelled).
   */
  #cancelFlights(flights: Flight[], message: string): void {
    this.#gate.batch(() => {
      for (const flight of flights) {
        this.#cancelFlight(flight, new CancelledError(flight.spec, { message }));
      }
    });
  }

  /**
   * The consumer's answer is settled: its signal listener and timer go, both even when one throws
   * (a signal's removeEventListener, the clock's clearTimeout). Never throws: returns `answer`,
   * or what threw instead (the timer's, when both did).
   */
  #release(consumer: Consumer, answer?: unknown): unknown {
    const { onAbort } = consumer;
    consumer.onAbort = undefined;
    try {
      try {
        if (onAbort) consumer.signal!.removeEventListener('abort', onAbort);
      } finally {
        this.#clearDeadline(consumer);
      }
    } catch (error) {
      answer = error;
    }
    return answer;
  }

  // ── invalidation ──────────────────────────────────────────────────────────────────────────

  #invalidateAfterMutation(spec: RequestSpec): void {
    this.#internals.write = this.#nextFlightId;
    // Its path on its own origin: a POST to another API's `/users` leaves this one's alone.
    const byPath = pathMatcher(spec.path, originOf(spec.url));
    const tags = spec.tags;
    const matcher: TargetMatcher =
      tags.length === 0
        ? byPath
        : (item) => byPath(item) || item.tags.some((t) => tags.includes(t));
    this.#invalidate(matcher, tags.length === 0 ? spec.path : [spec.path, ...tags], true);
  }

  /**
   * Removes matching entries and detaches matching in-flight reads. A detached read still answers
   * its callers but is not stored as fresh (it started before the invalidation); a subscribed key
   * is refetched by a new flight, so it ends with data fetched after the invalidation.
   */
  #invalidate(matcher: TargetMatcher, target: InvalidateTarget, refetch: boolean): string[] {
    // Wanted keys clearCache left without an entry: told and refetched once, when matched. One
    // with an entry again (read since), no longer wanted, or matched now, is forgotten.
    const cleared: { key: string; spec: RequestSpec }[] = [];
    for (const [key, spec] of this.#cleared) {
      if (
        this.#cache.peek(key) ||
        !this.#cache.hasInterest(key) ||
        (matcher(specMatchable(spec, this.#clock.now())) && cleared.push({ key, spec }))
      ) {
        this.#cleared.delete(key);
      }
    }
    // Every matching read, cached or not: a later read must not join one older than this. Not
    // one started after the write a reaction reacts to (see afterWrite). Before the removals: a
    // watcher told of one finds its read no longer fetching.
    const { keep } = this.#internals;
    const stale = this.#matching(
      this.#inflight.values(),
      matcher,
      (flight) => isUnsettled(flight) && flight.id < keep,
    );
    for (const flight of stale) {
      flight.stale = true;
      this.#inflight.delete(flight.key);
    }
    // A detached read no caller waits for (a refetch, a prefetch, a stale-while-revalidate
    // refresh) would be stored nowhere: cancelled, a burst of invalidations costs one read to
    // the end, not one each.
    const orphans = stale.filter((flight) => flight.consumers().every((c) => !c.promise));
    if (orphans.length > 0) this.#cancelFlights(orphans, 'Superseded by an invalidation');
    const removed = this.#cache.removeMatching(matcher);
    const keys = cacheKeysOf(removed);
    if (keys.length > 0) this.#events.emit('invalidate', { keys, target });
    const told = new Set(cacheKeysOf([...removed, ...cleared]));
    for (const key of told) this.#cache.notify({ type: 'invalidate', key });
    if (refetch) {
      const seen = new Set<string>();
      for (const { key, spec } of [...removed, ...stale, ...cleared]) {
        if (spec?.cache && !seen.has(key) && this.#cache.hasInterest(key)) {
          seen.add(key);
          this.#refetch(spec, true);
        }
      }
    }
    // A read cut off with no entry removed (a first read), and not refetched, stopped fetching
    // all the same: watchers hear it as a removal, subscribers as an invalidation (useQuery,
    // useIsFetching).
    for (const { key } of stale) {
      if (!told.has(key) && !this.#inflight.has(key)) {
        this.#cache.drop(key);
        this.#cache.notify({ type: 'invalidate', key });
      }
    }
    return keys;
  }
}

/** Takes `flight` out of the dedup map, unless another flight holds its key now. */
function leave(inflight: Map<string, Flight>, flight: Flight): void {
  if (inflight.get(flight.key) === flight) inflight.delete(flight.key);
}

const isRead = (flight: Flight) => isDedupable(flight.spec.method);
const isUnsettled = (flight: Flight | undefined) => flight?.tracker.settled === false;
const cacheKeysOf = (items: readonly { key: string }[]) => items.map((item) => item.key);

/**
 * A spec from `resolve`. A key string (as setCached takes), a cache entry or `{ method, url }`
 * would start a flight from undefined fields (listeners throwing, an unhandled rejection).
 */
function checkSpec(spec: RequestSpec): void {
  if (typeof spec?.key !== 'string' || typeof spec.url !== 'string') {
    throw typeError('spec', 'a spec from `resolve`', spec);
  }
}

/** A request as invalidation sees it; CacheMeta's times are `at` (it has not been stored). */
function specMatchable(spec: RequestSpec, at: number): Matchable {
  return {
    key: spec.key,
    path: spec.path,
    origin: originOf(spec.url),
    tags: spec.tags,
    meta: (): CacheMeta => ({ key: spec.key, tags: [...spec.tags], storedAt: at, expiresAt: at }),
  };
}

/** The tracker of a caller that left: started when it joined (or the flight started), cancelled now. */
function leaverTracker({ flight, joinedAt }: Consumer, now: number): Tracker {
  const tracker = new Tracker(flight.key);
  tracker.start(Number.isNaN(joinedAt) ? flight.tracker.startedAt : joinedAt);
  tracker.cancel(now);
  return tracker;
}

/**
 * The error for a caller whose signal aborted: a TimeoutError when the signal timed out
 * (`AbortSignal.timeout()`, or any reason named TimeoutError), else a CancelledError; either way
 * the reason is the `cause`.
 */
function abortedBy(signal: AbortSignal, spec: RequestSpec): CancelledError | TimeoutError {
  let reason: unknown;
  try {
    reason = signal.reason;
  } catch (error) {
    // A `reason` getter that throws: the caller rejects with its error (thrown in the abort
    // listener it was an uncaught exception, and the caller was left pending).
    return error as CancelledError;
  }
  if (hasErrorName(reason, 'TimeoutError')) {
    return new TimeoutError(spec, { kind: 'signal', cause: reason });
  }
  return new CancelledError(spec, { message: 'Request aborted by its signal', cause: reason });
}

/** An error that carries an HTTP response: the server answered, so the attempt is a latency sample. */
function answered(error: unknown): boolean {
  return isHttpError(error) || isParseError(error) || isResponseTooLargeError(error);
}

function withBody(options: RequestOptions | undefined, body: unknown): RequestOptions | undefined {
  // Spreading undefined copies nothing: `{ body }` alone without options.
  return body === undefined ? options : { ...options, body };
}

/** A settled promise as the API returns it: its `cancel` has nothing to do. */
function cancellable<T>(promise: Promise<T>): CancellablePromise<T> {
  (promise as CancellablePromise<T>).cancel = noop;
  return promise as CancellablePromise<T>;
}

function rejected<T>(error: unknown): CancellablePromise<T> {
  return cancellable(Promise.reject(error));
}

/**
 * Fresh for the entry's own ttl and for this reader's (a per-request ttl asks for newer data).
 * Stored after `now` (the clock stepped back): its age is unknown, so not fresh.
 */
function isFresh(entry: CacheEntry, spec: RequestSpec, now: number): boolean {
  return isFreshAt(entry, now) && now - entry.storedAt < spec.cache!.ttl;
}
