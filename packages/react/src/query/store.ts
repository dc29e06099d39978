import {
  type ApiResponse,
  type CacheChange,
  type CacheUpdate,
  type CancellablePromise,
  type Client,
  type Clock,
  isAbortError,
  type PrefetchOptions,
  type RequestOptions,
  type RequestSpec,
} from '@keel/core';
import { clockOf, watchCache } from '@keel/core/internals';
import { cancelNotify, notifyLater } from '../internal/batch';
import { replaceEqualDeep } from '../internal/equal';
import { noop } from '../internal/report';
import { sameFields } from '../internal/tracked-view';
import type { MutationRegistry } from '../mutation/registry';
import { cachedState, PENDING, type QueryState } from './state';

/**
 * How long an entry a suspending render created lives without an observer: once its read
 * settled, for the component to commit and observe it; once it threw its error to a boundary,
 * for React to finish with it (React renders an errored tree once more, synchronously, before it
 * shows the boundary). Each throw starts the wait again. Without it the next render would find
 * nothing and read again: with a read that fails, a loop.
 */
const SUSPENSE_GRACE_MS = 1000;

/**
 * How long a suspending render waits on a read before React is asked to render it again (to
 * learn whether it still waits, see `QueryEntry.suspend`): a read that never settles is
 * cancelled at most this plus SUSPENSE_GRACE_MS after its boundary went away.
 */
const SUSPENSE_CHECK_IN_MS = 5000;

/**
 * The one adapter between @keel/core and React: per-key query state that lives outside React.
 *
 * An entry exists while a component observes its key (or briefly for a suspending render). It
 * holds one core `subscribe` on its key (interest: invalidation refetches it), at most one own
 * consumer of the key's flight (cancelled when the last observer leaves), and an immutable
 * QueryState fed by the CacheUpdate stream plus the lifecycle events of the key's flights.
 * A disabled query follows its key without an entry (see `follow`). The store listens to the
 * events and watches the cache only while it has entries or followers.
 */
export class QueryStore {
  readonly client: Client;
  /** The client's clock: the store's timers run on it, as the core's do. */
  readonly clock: Clock;
  readonly #entries = new Map<string, QueryEntry>();
  /**
   * Disabled queries' listeners, by key: told of the key's cache changes (the core's cache
   * watcher, which is no interest, so invalidation reads nothing for them) and of its entry's
   * state changes (an enabled query's read or error). One that did not change renders nothing.
   */
  readonly followers = new Map<string, Set<() => void>>();
  #detach: (() => void) | undefined;
  /**
   * How many times an error boundary was reset (`useQueryErrorReset`, `<QueryErrorBoundary>`): an
   * error set before the last reset is read again by a suspending render, not thrown (`stale`).
   */
  resets = 0;
  /** The `resets` when a suspending render threw what `select` threw over a response. */
  readonly selectThrew = new WeakMap<ApiResponse, number>();

  constructor(client: Client) {
    this.client = client;
    this.clock = clockOf(client);
  }

  /** The running mutations of this client (useIsMutating). */
  readonly mutations: MutationRegistry = {
    running: new Set(),
    listeners: new Set(),
    settled: new Map(),
  };

  /**
   * The keys that running mutations wrote optimistically, once per mutation: a read landing on
   * one is held back (see QueryEntry.#onCacheUpdate). `writing` is set while such a write (or
   * its rollback) goes into the cache (see {@link writeShown}), so that write is shown.
   */
  readonly pending: string[] = [];
  writing = false;

  /** Runs a mutation's own cache writes (optimistic, or their rollback): shown over held keys. */
  writeShown(write: () => void): void {
    this.writing = true;
    try {
      write();
    } finally {
      this.writing = false;
    }
  }

  /**
   * A settled mutation no longer holds the keys it wrote: one that no other running mutation
   * holds shows the server's data, read again if a read was held back meanwhile.
   */
  release(keys: readonly string[]): void {
    const { pending } = this;
    for (const key of keys) {
      const at = pending.indexOf(key);
      // splice(-1) would drop another mutation's key.
      if (at !== -1) pending.splice(at, 1);
      if (!pending.includes(key)) this.#entries.get(key)?.caughtUp();
    }
  }

  /** Live entries (for leak checks). */
  get size(): number {
    return this.#entries.size;
  }

  peek(key: string): QueryEntry | undefined {
    return this.#entries.get(key);
  }

  /** The entry of `spec.key`, made when missing. */
  entry(spec: RequestSpec, url: string, options: RequestOptions | undefined): QueryEntry {
    let entry = this.#entries.get(spec.key);
    if (entry === undefined) {
      entry = new QueryEntry(this, spec, url, options);
      this.#entries.set(spec.key, entry);
      this.#sync();
    }
    return entry;
  }

  /** Called by an entry when it is released. */
  remove(entry: QueryEntry): void {
    if (this.#entries.get(entry.key) !== entry) return;
    this.#entries.delete(entry.key);
    this.#sync();
  }

  /**
   * A disabled query's `onChange`, told when its key's data may have changed; returns the
   * release. No wrapper: an `onChange` is one subscription's (useQueries gives its one to all its
   * observers and releases them together); one queued when it leaves does nothing.
   */
  follow(key: string, onChange: () => void): () => void {
    const { followers } = this;
    const set = followers.get(key) ?? new Set();
    followers.set(key, set.add(onChange));
    this.#sync();
    return () => {
      set.delete(onChange);
      if (set.size === 0 && followers.get(key) === set) followers.delete(key);
      this.#sync();
    };
  }

  /** Tells the followers of `key` (an entry's state changed). */
  tell(key: string): void {
    this.followers.get(key)?.forEach(notifyLater);
  }

  /**
   * Listens while there are entries or followers: one listener per lifecycle event, routed by
   * key, and one cache watcher.
   */
  #sync(): void {
    const busy = this.#entries.size + this.followers.size > 0;
    if (busy && !this.#detach) {
      const offs = FLIGHT_EVENTS.map((type) =>
        this.client.on(type, (e: FlightEvent) => this.#entries.get(e.key)?.onFlight(type, e)),
      );
      offs.push(watchCache(this.client, this.#onCacheChange));
      this.#detach = () => {
        for (const off of offs) off();
      };
    } else if (!busy && this.#detach) {
      this.#detach();
      this.#detach = undefined;
    }
  }

  /**
   * A write or removal reaches the key's followers; `clearCache()` (which tells no subscriber)
   * reaches every follower and every entry, whose reads it cut off stop counting as fetching.
   */
  #onCacheChange = (change: CacheChange): void => {
    if (change.type !== 'clear') this.tell(change.key);
    else {
      for (const key of this.followers.keys()) this.tell(key);
      for (const entry of this.#entries.values()) entry.syncFetching();
    }
  };
}

/** A refetch() the user asked for: a refusal of the circuit counts, as a request's would. */
const EXPLICIT: PrefetchOptions = { reportRejection: true };
/** A focus or reconnect revalidation: a fresh key is left alone. */
const IF_STALE: PrefetchOptions = { ifStale: true };

/** The lifecycle events of a key's flights that an entry follows. */
const FLIGHT_EVENTS = ['request', 'dedup', 'success', 'error', 'cancel'] as const;

/** The fields of those events an entry reads. */
interface FlightEvent {
  key: string;
  tracker?: object;
  response?: ApiResponse;
  error?: unknown;
}

const stores = new WeakMap<Client, QueryStore>();

/** The store of a client, created on first use; one per client however many providers use it. */
export function storeFor(client: Client): QueryStore {
  let store = stores.get(client);
  if (store === undefined) {
    store = new QueryStore(client);
    stores.set(client, store);
  }
  return store;
}

/**
 * One key's state and resources.
 *
 * Races: flights of one key can overlap (an invalidation detaches the running flight and starts
 * a new one). Each flight seen starting gets a sequence number; an outcome of a flight older than
 * one that already settled is dropped, so a late failure of a superseded flight cannot replace
 * fresher data with an error:
 *
 *   flight A ──────────────────────────────x (error, seq 1 < settled 2: ignored)
 *        invalidate ─► flight B ────✓ (seq 2, writes the cache)
 */
export class QueryEntry {
  readonly key: string;
  state: QueryState;
  /** One per observation: the entry is observed while there is any. */
  readonly #listeners = new Set<() => void>();
  /** This entry's own consumer of the key's flight; cancelled when the last observer leaves. */
  #request: CancellablePromise<ApiResponse> | undefined;
  readonly #unsubscribe: () => void;
  #waiters: (() => void)[] = [];
  readonly #seqOf = new WeakMap<object, number>();
  #flightSeq = 0;
  #settledSeq = 0;
  #released = false;
  #graceTimer: unknown;
  /** The store's `resets` at this entry's last error or suspending read (see `stale`). */
  #epoch = 0;

  /** Parameter properties: what the entry reads its requests from, with no private copies. */
  constructor(
    readonly store: QueryStore,
    readonly spec: RequestSpec,
    readonly url: string,
    readonly options: RequestOptions | undefined,
  ) {
    this.key = spec.key;
    this.state = cachedState(this.store.client, spec.key);
    this.#unsubscribe = this.store.client.subscribe(spec.key, this.#onCacheUpdate);
  }

  /**
   * Starts observing the key: `listener` runs after state changes (batched into one task, see
   * internal/batch.ts); with `fetch`, a cache-first read starts now (not for a disabled query
   * observed for a manual refetch). Returns the release function; the entry (interest, own
   * request) goes away a microtask after its last observer, so StrictMode's unmount-remount and
   * a key handed from one component to another keep it.
   */
  observe(listener: () => void, fetch: boolean): () => void {
    // A wrapper per observation: the same callback observing twice needs two releases.
    const entry = () => listener();
    this.#listeners.add(entry);
    this.#clearGrace();
    if (fetch) this.fetch();
    return () => {
      if (!this.#listeners.delete(entry)) return;
      cancelNotify(entry);
      if (this.#listeners.size === 0) queueMicrotask(this.releaseIfUnobserved);
    };
  }

  /**
   * A cache-first read through the client: a fresh cached response answers without network, an
   * identical read in flight is joined, otherwise a flight starts. At most one at a time.
   */
  fetch(): void {
    if (this.#request !== undefined || this.#released) return;
    const request = this.store.client.request(this.spec.method, this.url, this.options);
    this.#request = request;
    // Read after the call: a flight it started has already been numbered by its `request` event.
    const seq = this.#flightSeq;
    this.syncFetching();
    request.then(
      (response) => this.#onOwnOutcome(request, seq, false, response),
      (error: unknown) => this.#onOwnOutcome(request, seq, true, error),
    );
  }

  /**
   * A network read even over a fresh cache entry (joins one in flight); resolves when settled.
   * The breaker is consulted once: refused, nothing is in flight and refetch() shows the
   * CircuitOpenError (counted as a request's rejection); `quiet` (an interval tick) drops it
   * silently, as the core drops its own refetches.
   */
  refetch(quiet?: boolean): Promise<void> {
    if (!this.#released) {
      const refused = this.store.client.prefetch(this.spec, quiet ? undefined : EXPLICIT);
      if (refused !== undefined) {
        if (!quiet) this.#applyError(refused);
      } else {
        this.syncFetching();
        if (this.state.isFetching) return new Promise((resolve) => this.#waiters.push(resolve));
      }
    }
    return Promise.resolve();
  }

  /**
   * A focus or reconnect: a cache-first read (only a key without fresh data is read), dropped
   * silently by an open circuit, as an interval tick is.
   */
  revalidate(): void {
    if (this.#released) return;
    this.store.client.prefetch(this.spec, IF_STALE);
    this.syncFetching();
  }

  /** Settles when this entry's own read (if any) has settled; never rejects. */
  read(): Promise<void> {
    const request = this.#request;
    return request ? request.then(noop, noop) : Promise.resolve();
  }

  /**
   * For a suspending render: starts the read and returns a promise that settles with it, then
   * the grace period of an entry a suspending render made (nobody observes it).
   */
  suspend(network = false): Promise<void> {
    // Read after the last reset: what it ends with is thrown, even an error it leaves in place.
    this.#epoch = this.store.resets;
    // `network`: over a fresh entry too (the cache would answer with the same data).
    if (!network) this.fetch();
    const read = network ? this.refetch() : this.read();
    // A render waits for this read: the entry is not abandoned (see #checkIn).
    if (network || this.#request !== undefined) this.#clearGrace();
    return (this.#suspended ??= this.#checkIn(read));
  }

  /**
   * The promise suspending renders wait on: it settles with the read, or after
   * SUSPENSE_CHECK_IN_MS, whichever comes first, and then starts the grace period. React renders
   * a suspended component again when it settles; one still waiting suspends again (on the same
   * read), which ends the grace period. One whose boundary is gone does not: React gives no other
   * sign of that, and without this a read that never settles would keep the entry, its interest
   * and its request for good.
   */
  #checkIn(read: Promise<void>): Promise<void> {
    const { clock } = this.store;
    let timer: unknown;
    const due = new Promise<void>((resolve) => {
      timer = clock.setTimeout(resolve, SUSPENSE_CHECK_IN_MS);
    });
    return Promise.race([read, due]).then(() => {
      clock.clearTimeout(timer);
      this.#suspended = undefined;
      if (this.#graceTimer === undefined) this.hold();
    });
  }
  #suspended: Promise<void> | undefined;

  /**
   * A suspending render waits for a read instead of throwing this entry's error: its own read is
   * in flight, or the error was set before the last boundary reset. A reset thus reads again every
   * key whose error it could show, not only the one on screen: a key that failed while the
   * boundary already showed another error would otherwise be thrown, unread, after the reset.
   */
  get stale(): boolean {
    return (
      this.#request !== undefined ||
      (this.state.status === 'error' && this.#epoch < this.store.resets)
    );
  }

  /**
   * (Re)starts the grace period of an entry nobody observes. For a suspending render that throws
   * this entry's error to a boundary: keeps the entry and its error (every render throws the same
   * error, none reads again) until a boundary reset makes it `stale`, or until SUSPENSE_GRACE_MS
   * after the last throw.
   */
  hold(): void {
    if (this.#listeners.size > 0 || this.#released) return;
    this.#clearGrace();
    this.#graceTimer = this.store.clock.setTimeout(this.releaseIfUnobserved, SUSPENSE_GRACE_MS);
  }

  #clearGrace(): void {
    if (this.#graceTimer === undefined) return;
    this.store.clock.clearTimeout(this.#graceTimer);
    this.#graceTimer = undefined;
  }

  /** Forgets data and error (the cached value was removed by a rollback) and reads again. */
  reset(): void {
    this.#set(PENDING);
    if (this.#listeners.size > 0) this.fetch();
  }

  // ── inputs: the CacheUpdate stream and the key's lifecycle events ─────────────────────────

  #onCacheUpdate = (update: CacheUpdate): void => {
    if (update.type === 'invalidate') {
      // Keep showing the last data: a refetch follows when the key is observed.
      this.syncFetching();
      return;
    }
    // A read landing while a mutation that wrote this key optimistically still runs may lack that
    // change (it left the server, or was not even sent, before the read was answered): showing it
    // would drop the row until that mutation's own refetch. It is held back (TanStack Query's
    // "invalidate only when the last mutation settles"): see `caughtUp`.
    const store = this.store;
    if (!store.writing && store.pending.includes(this.key)) {
      this.#missed = true;
      return;
    }
    this.#applyResponse(update.response!);
  };

  /**
   * The last running mutation that wrote this key settled: a read held back meanwhile is read
   * again, or joined when one is in flight (that mutation's own invalidation refetch).
   */
  caughtUp(): void {
    if (this.#missed) void this.refetch(true);
    this.#missed = false;
  }
  #missed = false;

  /** A flight of this key started, was joined, settled or was cancelled. */
  onFlight(type: (typeof FLIGHT_EVENTS)[number], event: FlightEvent): void {
    if (type === 'request') {
      this.#seqOf.set(event.tracker!, ++this.#flightSeq);
    } else if (type === 'success' || type === 'error') {
      // The outcome of a flight older than one that already settled is dropped.
      const seq = this.#seqOf.get(event.tracker!) ?? 0;
      if (seq >= this.#settledSeq) {
        this.#settledSeq = seq;
        if (type === 'error') this.#applyError(event.error);
        // Not cached, so no CacheUpdate carries it: the flight's outcome is the data.
        else if (this.spec.cache === null) this.#applyResponse(event.response!);
      }
    }
    this.syncFetching();
  }

  /** `isFetching` follows the core: true while a read of this key is in flight. */
  syncFetching(): void {
    this.#set({});
    if (!this.state.isFetching) this.#wake();
  }

  // ── internals ─────────────────────────────────────────────────────────────────────────────

  /** `outcome`: the response, or (`failed`) the error. */
  #onOwnOutcome(
    request: CancellablePromise<ApiResponse>,
    seq: number,
    failed: boolean,
    outcome: unknown,
  ): void {
    if (this.#request !== request) return;
    this.#request = undefined;
    if (this.#released) return;
    // The `error` / `success` events already reported the flight; the own promise matters for
    // outcomes without a flight (a circuit rejection, an invalid URL) and for uncached reads.
    if (this.#settledSeq <= seq) {
      if (failed) {
        // A cancellation (cancelAll, a group cancel) is not an error of the query: keep the state.
        if (!isAbortError(outcome)) this.#applyError(outcome);
      } else if (this.spec.cache === null) {
        this.#applyResponse(outcome as ApiResponse);
      } else if (this.state.status === 'pending' && this.#listeners.size > 0) {
        // Answered but not stored (`clearCache()` detached it) and nothing on screen: read
        // again, or the key stays blank for good (an invalidation starts its own refetch).
        this.fetch();
      }
    }
    this.syncFetching();
  }

  #applyResponse(response: ApiResponse): void {
    this.#set({
      status: 'success',
      response,
      data: replaceEqualDeep(this.state.data, response.data),
      error: null,
    });
  }

  #applyError(error: unknown): void {
    // The data stays (a failed refetch does not erase what was shown), as in TanStack Query.
    this.#epoch = this.store.resets;
    this.#set({ status: 'error', error });
  }

  /** Applies `change`, with `isFetching` as the core says now; wakes the observers if it changed. */
  #set(change: Partial<QueryState>): void {
    const next = { ...this.state, ...change, isFetching: this.store.client.isFetching(this.key) };
    if (sameFields(this.state, next)) return;
    this.state = next;
    for (const listener of this.#listeners) notifyLater(listener);
    this.store.tell(this.key);
  }

  #wake(): void {
    const waiters = this.#waiters;
    if (waiters.length === 0) return;
    this.#waiters = [];
    for (const resolve of waiters) resolve();
  }

  /** Goes away unless observed (or gone already). */
  releaseIfUnobserved = (): void => {
    this.#clearGrace();
    if (this.#listeners.size > 0 || this.#released) return;
    this.#released = true;
    const request = this.#request;
    this.#request = undefined;
    // Cancels only this consumer: the core aborts the flight when no other consumer needs it.
    request?.cancel();
    this.#unsubscribe();
    this.#wake();
    this.store.remove(this);
  };
}
