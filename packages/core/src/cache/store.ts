import { Emitter } from '../events/emitter';
import { answer, checkFunction, checkMs, checkObject, typeError } from '../internal/checks';
import { type Clock, systemClock } from '../internal/clock';
import { urlOfKey } from '../internal/fingerprint';
import { freeze } from '../internal/freeze';
import { callUser, type ErrorReporter, logListenerError } from '../internal/report';
import { absoluteKeyURL, originOf, splitURL } from '../internal/url';
import { checkStrings } from '../request/fields';
import type { RequestSpec } from '../request/resolve';
import type { ApiResponse, CacheSubscriber, CacheUpdate, KeyMatcher } from '../types/client';
import { type CacheEntry, isFreshAt, metaOf } from './entry';
import type { Matchable, TargetMatcher } from './match';
import { CACHE_DEFAULTS, CACHE_STORE_DEFAULTS } from './options';
import { watchStore } from './watch';

/** How `CacheStore.set` stores one response. */
export interface WriteOptions {
  /**
   * Freshness of the entry in ms.
   * @default the spec's cache ttl, else the store's `defaultTtl` (30000)
   */
  ttl?: number | undefined;
  /**
   * Tags stored with the entry, for invalidation by tag.
   * @default none
   */
  tags?: readonly string[] | undefined;
  /**
   * The request the entry answers (its method, path and key), for matching and `CacheMeta`.
   * @default none (derived from the key)
   */
  spec?: RequestSpec | undefined;
  /**
   * The update type delivered to subscribers.
   * @default 'write'
   */
  update?: 'write' | 'revalidate' | undefined;
  /**
   * When the response was stored, on the store's clock (a hydrated entry keeps its age).
   * @default now
   */
  storedAt?: number | undefined;
}

/**
 * What a cache watcher hears (see `CacheStore.watch`): an entry written (by a response, by hand
 * or by hydration), an entry removed (invalidated, deleted, evicted or collected), or every entry
 * dropped at once. A write may carry its `response` too (the update its subscribers got).
 */
export type CacheChange =
  | { type: 'write'; key: string }
  | { type: 'remove'; key: string }
  | { type: 'clear' };

interface PredicateSubscription {
  match: (key: string) => boolean;
  listener: CacheSubscriber;
}

/** What collection looks at: an entry, or one about to be written (hydrate checks first). */
type Due = Pick<CacheEntry, 'key' | 'expiresAt'>;

const NO_TAGS: readonly string[] = /* @__PURE__ */ freeze([]);

/** Entries the collection hand inspects per write: more than one, so it outpaces the writes. */
const SWEEP_PER_WRITE = 2;

/** What the client's Store is built with: CacheStoreOptions resolved (the client's config). */
type StoreOptions = Required<Omit<CacheStoreOptions, 'keyBase'>> &
  Pick<CacheStoreOptions, 'keyBase'>;

/** The options of a standalone `CacheStore` (a client builds its own from `ClientOptions.cache`). */
export interface CacheStoreOptions {
  /**
   * Time source for freshness and collection (tests inject a fake).
   * @default systemClock
   */
  clock?: Clock | undefined;
  /**
   * Most entries kept; the least recently written goes first.
   * @default Infinity
   */
  maxEntries?: number | undefined;
  /**
   * How long an entry is kept once it is both expired and unwatched (no subscription wants its
   * key), in ms; `Infinity` keeps it until replaced, removed or evicted.
   * @default 300000 (5 minutes)
   */
  gcTime?: number | undefined;
  /**
   * The client's key base, for keys written by hand (relative keys resolve against it).
   * @default none (keys are used as written)
   */
  keyBase?: string | undefined;
  /**
   * Receives a subscriber's or matcher's error (never rethrown).
   * @default logs with console.error
   */
  onError?: ErrorReporter | undefined;
}

/**
 * The response cache plus its subscriptions.
 *
 * Entries live in a Map in write order, so `maxEntries` evicts the least recently written entry
 * in O(1). An expired entry is kept (stale-while-revalidate serves it) while a subscription
 * wants its key, and for `gcTime` after it is both expired and unwatched; then it is collected.
 *
 * Collection needs no timer (so it never holds a process open nor shows in a timer count): a
 * collectable entry is dropped when it is read, and every write moves a hand `SWEEP_PER_WRITE`
 * entries along the Map, dropping the collectable ones it passes. The hand goes round faster
 * than writes add entries, so a client writing `w` distinct keys a second holds at most about
 * `2 w (ttl + gcTime)` unwatched entries, whatever its total traffic; an idle client keeps what
 * it held until its next write.
 *
 * Interest: a subscription by exact key is reference-counted per key (a list per key, dropped
 * when its last listener leaves); a predicate subscription accepts any key it returns true for.
 * Invalidation refetches removed keys that someone is interested in.
 *
 * The client's own store: its options come checked from the client's config. The public
 * `CacheStore` below checks them and adds the readers only an app uses (`has`, `isFresh`,
 * `keys`, `watch`), so an app that never imports it bundles neither. Watching lives in
 * cache/watch.ts (inspect's `watchCache` is its other user): the store has one `watcher` slot.
 */
export class Store {
  readonly #entries = new Map<string, CacheEntry>();
  /**
   * Each key's subscribers, in a list replaced on change (copy-on-write, as the emitter's): a
   * delivery iterates the list of its start, uncopied, so one removed meanwhile still hears the
   * update and one added does not.
   */
  readonly #byKey = new Map<string, CacheSubscriber[]>();
  #predicates: PredicateSubscription[] = [];
  readonly maxEntries: number;
  readonly gcTime: number;
  readonly #clock: Clock;
  /** The client's key base: a key written by hand is resolved against it (internal/url keyURL). */
  readonly #keyBase: string | undefined;
  /** Receives a subscriber's, matcher's or watcher's error (never rethrown). */
  readonly onError: ErrorReporter;
  /** The collection hand: a live iterator over #entries (see the class comment). */
  #hand: IterableIterator<CacheEntry> | undefined;
  /** When a key's last exact-key subscription left while its entry existed. */
  readonly #releasedAt = new Map<string, number>();
  /** When a predicate subscription last left: it may have been what kept any entry. */
  #predicateReleasedAt = -Infinity;
  /**
   * Told of every change while someone watches (cache/watch.ts installs it): tooling, not
   * interest in any key. One slot, so a store nobody watches carries no watcher list. Told
   * through the updates' queue: removals and clears as they are, writes as the update
   * subscribers get (watch.ts makes the change of it).
   */
  watcher: ((change: CacheChange | CacheUpdate) => void) | undefined;
  /**
   * The specs of subscribed keys whose entry `maxEntries` evicted, kept where the client keeps
   * those `clearCache` dropped: a later invalidation still refetches them. Forgotten when no
   * subscription wants the key any more.
   */
  evicted: Map<string, RequestSpec> | undefined;
  /**
   * Updates and watchers' changes go out through one emitter's queue, its one listener delivering
   * each to the watcher and the subscribers: one written from a watcher or a subscriber waits
   * until the one being delivered has reached them all (else a later one heard new, then old, and
   * kept the old).
   */
  readonly #updates = new Emitter<{ u: CacheUpdate; c: CacheChange }>();

  /** `options` as the client's config has them: checked, with every default in place. */
  constructor(
    readonly defaultTtl: number,
    options: StoreOptions,
  ) {
    this.#updates.on('u', (update) => this.#deliver(update));
    this.#updates.on('c', (change) => this.watcher?.(change));
    this.maxEntries = options.maxEntries;
    this.gcTime = options.gcTime;
    this.#clock = options.clock;
    this.#keyBase = options.keyBase;
    this.onError = options.onError;
  }

  get size(): number {
    return this.#entries.size;
  }

  /** The entry for a key, fresh or stale; undefined once it has been (or is due to be) collected. */
  get(key: string): CacheEntry | undefined {
    const entry = this.#entries.get(key);
    return entry && this.collect(entry, this.#clock.now()) ? undefined : entry;
  }

  /** The entry as stored, collectable or not: the client's hit path checks freshness itself. */
  peek(key: string): CacheEntry | undefined {
    return this.#entries.get(key);
  }

  /**
   * Drops the entry if it is collectable at `now` (expired and unwatched for `gcTime`) and says
   * whether it did. A fresh entry is never collectable, so a hit path calls this only for an
   * expired one.
   */
  collect(entry: CacheEntry, now: number): boolean {
    if (!this.isCollectable(entry, now)) return false;
    this.drop(entry.key);
    return true;
  }

  /** Whether the entry is due for collection at `now` (inspection and dehydrate skip it). */
  isCollectable(entry: Due, now: number): boolean {
    const gcTime = this.gcTime;
    // Kept for gcTime after it expired (the quick reject: most entries looked at are fresh or
    // recently expired), after a predicate subscription left (it may have been what wanted this
    // entry), and after the key's own last subscription left.
    if (
      now - entry.expiresAt < gcTime ||
      now - Math.max(this.#predicateReleasedAt, this.#releasedAt.get(entry.key) ?? -Infinity) <
        gcTime
    ) {
      return false;
    }
    return !this.#watched || !this.hasInterest(entry.key);
  }

  /** Moves the collection hand `steps` entries, dropping the collectable ones it passes. */
  #sweep(now: number, steps: number): void {
    if (this.gcTime === Infinity) return;
    for (let i = 0; i < steps; i++) {
      const hand = (this.#hand ??= this.#entries.values());
      const next = hand.next();
      if (next.done) {
        // A finished Map iterator stays finished: start the next round on the next write.
        this.#hand = undefined;
        return;
      }
      if (this.isCollectable(next.value, now)) this.drop(next.value.key);
    }
  }

  /**
   * Removes the key's entry and its release time; `tell`: a removal watchers hear of (the client
   * also tells one for a key with no entry whose read an invalidation cut off).
   */
  drop(key: string, tell = true): void {
    this.#entries.delete(key);
    if (this.#releasedAt.size > 0) this.#releasedAt.delete(key);
    if (tell && this.watcher) this.#updates.emit('c', { type: 'remove', key });
  }

  set(key: string, response: ApiResponse, options: WriteOptions = {}): CacheEntry {
    const now = this.#clock.now();
    // Before the write, so the hand never drops the entry being written (ttl 0, gcTime 0).
    this.#sweep(now, SWEEP_PER_WRITE);
    const previous = this.#entries.get(key);
    // A write without a spec (by hand, with a key) keeps the one the entry had: the request that
    // can refetch it, with its ttl and tags.
    const spec = options.spec ?? previous?.spec;
    // The spec's URL is canonical and its path already split: no second parse per write. A key
    // written by hand is split once, when first written.
    const { path, origin } = spec
      ? { path: spec.path, origin: originOf(spec.url) }
      : (previous ?? splitURL(absoluteKeyURL(urlOfKey(key), this.#keyBase)));
    const storedAt = options.storedAt ?? now;
    const entry: CacheEntry = {
      key,
      path,
      origin,
      response,
      spec,
      tags: options.tags
        ? freeze([...options.tags])
        : (options.spec?.tags ?? previous?.tags ?? NO_TAGS),
      storedAt,
      expiresAt: storedAt + (options.ttl ?? spec?.cache?.ttl ?? this.defaultTtl),
    };
    // Deleted first, so a rewrite moves the key to the end of the write order; and this write is
    // newer than any release of the key: the release no longer decides.
    this.drop(key, false);
    this.#entries.set(key, entry);
    // Over maxEntries: the least recently written goes (the Map's first key).
    if (this.#entries.size > this.maxEntries) {
      const { key: oldest, spec: lost } = this.#entries.values().next().value!;
      if (lost && this.hasInterest(oldest)) this.remember(oldest, lost);
      this.drop(oldest);
    }
    // Most writes have no subscriber nor watcher: skip building the update.
    if (this.watcher || this.#watched) {
      this.notify({ type: options.update ?? 'write', key, response });
    }
    return entry;
  }

  delete(key: string): boolean {
    const had = this.#entries.has(key);
    if (had) this.drop(key);
    return had;
  }

  clear(): void {
    this.#entries.clear();
    this.#releasedAt.clear();
    this.#hand = undefined;
    // As drop: told only if someone watches now (a later watcher never hears it).
    if (this.watcher) this.#updates.emit('c', { type: 'clear' });
  }

  values(): IterableIterator<CacheEntry> {
    return this.#entries.values();
  }

  /**
   * Removes every entry the matcher accepts; returns them in write order. Entries due for
   * collection are dropped without being offered to the matcher (they are already gone).
   */
  removeMatching(matcher: TargetMatcher): CacheEntry[] {
    const now = this.#clock.now();
    const removed: CacheEntry[] = [];
    const due: CacheEntry[] = [];
    for (const entry of this.#entries.values()) {
      if (this.isCollectable(entry, now)) due.push(entry);
      else if (matcher(asMatchable(entry))) removed.push(entry);
    }
    for (const entry of [...due, ...removed]) this.drop(entry.key);
    return removed;
  }

  subscribe(matcher: KeyMatcher, listener: CacheSubscriber): () => void {
    checkFunction('listener', listener);
    if (typeof matcher === 'string') {
      // A wrapper gives every subscription its own identity, so subscribing the same function
      // twice needs two unsubscribes (reference counting).
      const entry: CacheSubscriber = (u) => listener(u);
      this.#byKey.set(matcher, [...(this.#byKey.get(matcher) ?? []), entry]);
      // A second call finds no list (dropped when emptied) or one this entry is not in.
      return () => {
        const list = this.#byKey.get(matcher);
        if (!list?.includes(entry)) return;
        if (list.length > 1)
          return void this.#byKey.set(
            matcher,
            list.filter((l) => l !== entry),
          );
        this.#byKey.delete(matcher);
        if (!this.hasInterest(matcher)) this.evicted?.delete(matcher);
        // gcTime counts from now for an entry that was kept only by this interest.
        if (this.#entries.has(matcher)) this.#releasedAt.set(matcher, this.#clock.now());
      };
    }
    if (typeof matcher !== 'function') throw typeError('matcher', 'a key or a function', matcher);
    const sub: PredicateSubscription = {
      match: (key) => answer('matcher', matcher(key)),
      listener,
    };
    this.#predicates = [...this.#predicates, sub];
    let active = true;
    return () => {
      if (!active) return;
      active = false;
      this.#predicates = this.#predicates.filter((s) => s !== sub);
      this.#predicateReleasedAt = this.#clock.now();
      // What only it wanted is wanted no more: nothing would refetch it.
      for (const key of this.evicted?.keys() ?? []) {
        if (!this.hasInterest(key)) this.evicted!.delete(key);
      }
    };
  }

  /**
   * Keeps the spec of a wanted key that lost its entry (see `evicted`): the newest `maxEntries`
   * of them, so a broad predicate subscription holds no more specs than entries.
   */
  remember(key: string, spec: RequestSpec): void {
    const kept = this.evicted;
    if (!kept) return;
    kept.delete(key);
    kept.set(key, spec);
    if (kept.size > this.maxEntries) kept.delete(kept.keys().next().value!);
  }

  /** Whether any subscription wants this key (so invalidation must refetch it). */
  hasInterest(key: string): boolean;
  /**
   * With `count` (internal: see CountingStore), how many subscriptions want the key, calling
   * every predicate; without, whether one does, calling predicates only until one accepts it.
   * One method rather than two: the count (`subscriberCount`, inspect) is then no second copy
   * of the loop in every client.
   */
  hasInterest(key: string, count?: boolean): boolean | number {
    let n = this.#byKey.get(key)?.length ?? 0;
    // `=== true`: a public store's hasInterest may get a second argument (map, filter).
    const all = count === true;
    // Once one wants it, a yes/no question calls no further predicate.
    for (const sub of this.#predicates) if ((all || !n) && this.#matches(sub, key)) n++;
    return all ? n : n > 0;
  }

  /** Number of keys with exact-key interest plus predicate subscriptions (for leak checks). */
  get subscriptionCount(): number {
    let n = this.#predicates.length;
    for (const list of this.#byKey.values()) n += list.length;
    return n;
  }

  /** Delivers (or queues) an update; with no subscription it reaches none (`set` checks first). */
  notify(update: CacheUpdate): void {
    this.#updates.emit('u', update);
  }

  /**
   * One update to the watcher (which reads it as a change: see cache/watch.ts), then to the
   * subscribers of its key, now (a queued one: to those there when it goes out).
   */
  #deliver(update: CacheUpdate): void {
    this.watcher?.(update);
    const { key } = update;
    const list = this.#byKey.get(key);
    // A subscriber's or matcher's error goes to `onError`, never up.
    if (list) for (const l of list) callUser(this.onError, l, update, 'subscriber', key);
    for (const sub of this.#predicates) {
      if (this.#matches(sub, key)) callUser(this.onError, sub.listener, update, 'subscriber', key);
    }
  }

  /** Some subscription exists (by key or by predicate). */
  get #watched(): boolean {
    return this.#byKey.size > 0 || this.#predicates.length > 0;
  }

  #matches(sub: PredicateSubscription, key: string): boolean {
    return !!callUser(this.onError, sub.match, key, 'matcher', key);
  }
}

/**
 * A Store seen with `hasInterest`'s second argument, `count`, which its public overload leaves
 * out: the number of subscriptions that want the key, exact-key ones plus the predicates that
 * accept it (CacheStore.subscriberCount and inspect read it).
 */
export interface CountingStore {
  hasInterest(key: string, count: true): number;
}

export function asMatchable(entry: CacheEntry): Matchable {
  return {
    key: entry.key,
    path: entry.path,
    origin: entry.origin,
    tags: entry.tags,
    meta: () => metaOf(entry),
  };
}

/** An entry of a standalone CacheStore: a CacheEntry with the spec's `subscribers`. */
export interface StoredEntry extends CacheEntry {
  /**
   * The CacheSubscribers that want the entry's key now (its key's subscriptions and the
   * predicate subscriptions that accept it, in subscription order): a new Set at each read.
   */
  readonly subscribers: ReadonlySet<CacheSubscriber>;
}

/**
 * The response cache as an app builds it on its own (`new CacheStore(defaultTtl, options)`):
 * the client's Store, with its arguments checked, and entries that list their subscribers (the
 * client's own entries do not: its store answers interest by key, and an entry stays lean).
 */
export class CacheStore extends Store {
  readonly #clock: Clock;
  /** Every live subscription (its key or predicate, and listener), for `subscribers`. */
  #subs: [KeyMatcher, CacheSubscriber][] = [];

  constructor(defaultTtl = CACHE_DEFAULTS.ttl, options: CacheStoreOptions = {}) {
    checkMs('defaultTtl', defaultTtl, Number.MAX_VALUE);
    const clock = options.clock ?? systemClock;
    super(defaultTtl, {
      clock,
      maxEntries: options.maxEntries ?? CACHE_STORE_DEFAULTS.maxEntries,
      gcTime: checkMs('cache.gcTime', options.gcTime ?? CACHE_STORE_DEFAULTS.gcTime, Infinity),
      keyBase: options.keyBase,
      onError: options.onError ?? logListenerError,
    });
    this.#clock = clock;
  }

  /**
   * Watches every change of the cache, for tooling: unlike `subscribe`, a watcher is no interest
   * in any key (it keeps nothing from being collected and makes invalidation refetch nothing).
   * A watcher that throws is reported like a subscriber. Returns the unwatch function.
   */
  watch(listener: (change: CacheChange) => void): () => void {
    return watchStore(this, listener);
  }

  override set(key: string, response: ApiResponse, options?: WriteOptions): StoredEntry {
    // Checked here, not in the client's store (it writes only what it built): a bad value was
    // used as given (a NaN ttl stored an entry no read found, tags 'abc' the tags a, b and c).
    if (typeof key !== 'string') throw typeError('key', 'a string', key);
    checkObject('response', response);
    if (options !== undefined) {
      checkObject('options', options);
      const { ttl, tags, storedAt } = options;
      if (ttl !== undefined) checkMs('ttl', ttl, Number.MAX_VALUE);
      if (tags !== undefined) checkStrings('tags', tags, 'an array of strings');
      if (storedAt !== undefined) checkMs('storedAt', storedAt, Number.MAX_VALUE);
    }
    const entry = super.set(key, response, options);
    return Object.defineProperty(entry, 'subscribers', {
      get: () => this.#subscribersOf(key),
      enumerable: true,
    }) as StoredEntry;
  }

  override get(key: string): StoredEntry | undefined {
    return super.get(key) as StoredEntry | undefined;
  }

  override values(): IterableIterator<StoredEntry> {
    return super.values() as IterableIterator<StoredEntry>;
  }

  override subscribe(matcher: KeyMatcher, listener: CacheSubscriber): () => void {
    const off = super.subscribe(matcher, listener);
    const sub: [KeyMatcher, CacheSubscriber] = [matcher, listener];
    this.#subs = [...this.#subs, sub];
    return () => {
      off();
      this.#subs = this.#subs.filter((s) => s !== sub);
    };
  }

  #subscribersOf(key: string): Set<CacheSubscriber> {
    const out = new Set<CacheSubscriber>();
    for (const [matcher, listener] of this.#subs) {
      if (matcher === key || (typeof matcher === 'function' && this.#accepts(matcher, key))) {
        out.add(listener);
      }
    }
    return out;
  }

  /** A predicate's answer, read as the store reads it: one that throws accepts nothing. */
  #accepts(matcher: (key: string) => boolean, key: string): boolean {
    try {
      return answer('matcher', matcher(key));
    } catch {
      return false;
    }
  }

  has(key: string): boolean {
    return this.get(key) !== undefined;
  }

  /**
   * Subscriptions that want this key: its exact-key subscriptions plus the predicate
   * subscriptions that accept it.
   */
  subscriberCount(key: string): number {
    return (this as unknown as CountingStore).hasInterest(key, true);
  }

  /** True while the entry is within its ttl. */
  isFresh(entry: CacheEntry, now: number = this.#clock.now()): boolean {
    return isFreshAt(entry, now);
  }

  *keys(): IterableIterator<string> {
    for (const entry of this.values()) yield entry.key;
  }
}
