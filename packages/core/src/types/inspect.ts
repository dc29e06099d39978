import type { CacheChange } from '../cache/store';
import type { Clock } from '../internal/clock';
import type { RequestSpec } from '../request/resolve';
import type { Tracker } from '../tracker/tracker';
import type { ApiResponse } from './client';
import type { CircuitStatus, SchedulerStats } from './controllers';
import type { HttpMethod, Priority } from './options';

export type { CacheChange };

/**
 * Read-only views of a client's live state, for tooling (`@keel/devtools`): `inspect(client)`.
 * Every time in them is on the client's clock (`now()`), so a test's fake clock drives them too.
 */
export interface ClientInspector {
  /** The client's clock time now. */
  now(): number;
  /**
   * The client's clock itself (its `clock` option, else the system clock): a tool that redraws
   * ages and countdowns times its ticks on it, so an injected clock (a test's, a replay's) moves
   * the tool when it moves the client.
   */
  readonly clock: Clock;
  /**
   * The cached responses, in write order (oldest first), without the ones due for collection.
   * Reading changes nothing: no entry is collected, no interest is registered.
   */
  cache(): CachedEntryView[];
  /**
   * Calls `listener` on every cache change: a write (a response, `setCached`, `hydrate`), a
   * removal (invalidation, `setCached(key, undefined)`, eviction, collection) or `clearCache()`.
   * Unlike `client.subscribe`, a watcher is no interest in any key: it keeps nothing from being
   * collected and makes invalidation refetch nothing. Returns the unwatch function.
   */
  watchCache(listener: (change: CacheChange) => void): () => void;
  /** Every flight in progress (one per network request, shared by its dedup joiners), oldest first. */
  flights(): FlightView[];
  /** The scheduler's configuration and load; `enabled: false` without a scheduler. */
  scheduler(): SchedulerView;
  /** Every circuit the breaker keeps, with when an open one lets its probe through. */
  circuits(): CircuitView[];
  /**
   * The latency samples intelligence holds for an endpoint (`METHOD pathname`), oldest first
   * (at most 128, in ms); empty when it has none or intelligence is off.
   */
  latencies(endpoint: string): number[];
}

/** One cached response. */
export interface CachedEntryView {
  /** The cache key (`GET /todos`, relative to the client's base when under it). */
  readonly key: string;
  /** The URL pathname (what path invalidation matches). */
  readonly path: string;
  readonly tags: readonly string[];
  /** When it was stored (clock time). */
  readonly storedAt: number;
  /** When it stops being fresh (clock time). */
  readonly expiresAt: number;
  /** ms since it was stored. */
  readonly age: number;
  /** Within its ttl: a cache-first read is answered from it. */
  readonly fresh: boolean;
  /**
   * Subscriptions that want the key (exact-key ones plus the predicates that accept it): a
   * mounted `useQuery` holds one. A watched entry is refetched when invalidated.
   */
  readonly subscribers: number;
  /** A read for this key is in flight (`client.isFetching(key)`). */
  readonly fetching: boolean;
  /** The cached response: treat it as read-only. */
  readonly response: ApiResponse;
  /**
   * The request that filled the entry: `client.prefetch(spec)` fetches it again. Undefined for an
   * entry only ever written by hand with a key (a key-only write keeps the spec it replaces).
   */
  readonly spec: RequestSpec | undefined;
}

/**
 * Where a flight is now. `queued`: waiting in a scheduler lane for a slot (`paused` when its
 * group is paused); `active`: an attempt is running; `retry-wait`: waiting to try again after a
 * failed attempt (`reason` says whether the server's Retry-After or the backoff set `delay`,
 * which ends at `until`); `rate-wait`: parked by the scheduler since `since` until rate budget frees.
 */
export type FlightPhase =
  | { readonly state: 'queued'; readonly paused: boolean }
  | { readonly state: 'active' }
  | {
      readonly state: 'retry-wait';
      readonly reason: 'backoff' | 'retry-after';
      readonly delay: number;
      readonly until: number;
    }
  | {
      readonly state: 'rate-wait';
      /** When it was parked (clock time). */
      readonly since: number;
    };

/** One flight: a network request in progress, with every caller that shares it. */
export interface FlightView {
  /** The flight's id: the `id` of its scheduler events. */
  readonly id: number;
  readonly key: string;
  readonly method: HttpMethod;
  /** The canonical absolute URL. */
  readonly url: string;
  /** `METHOD pathname`. */
  readonly endpoint: string;
  /** The flight's tracker: the one its `request`, `retry`, `success` and `error` events carry. */
  readonly tracker: Tracker;
  /** When it started (clock time). */
  readonly startedAt: number;
  /** Attempts started so far. */
  readonly attempts: number;
  /**
   * Who waits for it: the caller that started it, the dedup joiners, and internal refetches
   * (stale-while-revalidate, post-invalidation).
   */
  readonly consumers: number;
  /** It is the half-open circuit's probe. */
  readonly probe: boolean;
  readonly phase: FlightPhase;
  /** Its scheduler lane (`normal` without priority lanes). */
  readonly priority: Priority;
  readonly group: string | undefined;
  /** When its `deadline` runs out (clock time); undefined without one. */
  readonly deadlineAt: number | undefined;
  /**
   * An invalidation (or `clearCache`) landed while it was in flight: its callers still get its
   * response, but it will not be stored, and a new identical read starts a flight of its own.
   */
  readonly detached: boolean;
}

/** The scheduler's configuration and load now. */
export interface SchedulerView {
  /** False without the `scheduler` option (or with `enabled: false`): then all below is idle. */
  readonly enabled: boolean;
  /** Simultaneous attempts allowed (`Infinity` without a scheduler). */
  readonly concurrency: number;
  /** high / normal / low lanes (`priority: true`), else one FIFO reported as `normal`. */
  readonly priorityLanes: boolean;
  readonly stats: SchedulerStats;
  /** The rate budget: `used` of `requests` in the last `interval` ms; undefined without one. */
  readonly rateLimit:
    | { readonly requests: number; readonly interval: number; readonly used: number }
    | undefined;
  /** Every host cap, with the attempts holding a slot for it now. */
  readonly hosts: readonly {
    readonly host: string;
    readonly cap: number;
    readonly active: number;
  }[];
  /** Groups paused now. */
  readonly pausedGroups: readonly string[];
}

/** A circuit, with when an open one lets a request through as its probe. */
export interface CircuitView extends CircuitStatus {
  /**
   * While open: the clock time from which the next request becomes the half-open probe
   * (`openedAt + resetTimeout`; now when the clock stepped back before `openedAt`, as the
   * breaker then probes at once; the move happens lazily, when that request arrives).
   */
  readonly probeAt?: number;
}
