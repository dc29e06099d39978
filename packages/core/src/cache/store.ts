import { type Clock, systemClock } from '../internal/clock';
import { reportError } from '../internal/report';
import { parseKey } from '../spec/fingerprint';
import { absoluteKeyURL, originOf, splitURL } from '../spec/url';
import type { ApiResponse, CacheSubscriber, CacheUpdate, KeyMatcher, RequestSpec } from '../types';
import { type CacheEntry, metaOf } from './entry';
import type { Matchable, TargetMatcher } from './match';

export interface WriteOptions {
  ttl?: number;
  tags?: readonly string[];
  spec?: RequestSpec;
  /** Update type delivered to subscribers; default `write`. */
  update?: 'write' | 'revalidate';
  /** When the response was stored (a hydrated entry keeps its age); default now. */
  storedAt?: number;
}

interface PredicateSubscription {
  match: (key: string) => boolean;
  listener: CacheSubscriber;
}

/**
 * The response cache plus its subscriptions.
 *
 * Entries live in a Map in write order, so `maxEntries` evicts the least recently written entry
 * in O(1). Expired entries are kept (stale-while-revalidate serves them) until replaced, removed
 * or evicted.
 *
 * Interest: a subscription by exact key is reference-counted per key (a Set per key, dropped
 * when its last listener leaves); a predicate subscription accepts any key it returns true for.
 * Invalidation refetches removed keys that someone is interested in.
 */
export class CacheStore {
  readonly #entries = new Map<string, CacheEntry>();
  readonly #byKey = new Map<string, Set<CacheSubscriber>>();
  #predicates: PredicateSubscription[] = [];
  readonly defaultTtl: number;
  readonly maxEntries: number;
  readonly #clock: Clock;
  /** The client's key base: a key written by hand is resolved against it (spec/url keyURL). */
  readonly #keyBase: string | undefined;

  constructor(
    defaultTtl = 30000,
    options: { clock?: Clock; maxEntries?: number; keyBase?: string } = {},
  ) {
    if (!Number.isFinite(defaultTtl) || defaultTtl < 0) {
      throw new RangeError(
        `keel: cache ttl must be a finite number >= 0, got ${String(defaultTtl)}`,
      );
    }
    this.defaultTtl = defaultTtl;
    this.maxEntries = options.maxEntries ?? Number.POSITIVE_INFINITY;
    this.#clock = options.clock ?? systemClock;
    this.#keyBase = options.keyBase;
  }

  get size(): number {
    return this.#entries.size;
  }

  get(key: string): CacheEntry | undefined {
    return this.#entries.get(key);
  }

  has(key: string): boolean {
    return this.#entries.has(key);
  }

  /** True while the entry is within its ttl. */
  isFresh(entry: CacheEntry, now: number = this.#clock.now()): boolean {
    return entry.expiresAt > now;
  }

  set(key: string, response: ApiResponse, options: WriteOptions = {}): CacheEntry {
    const now = this.#clock.now();
    const ttl = options.ttl ?? options.spec?.cache?.ttl ?? this.defaultTtl;
    const spec = options.spec;
    const previous = this.#entries.get(key);
    let path = previous?.path ?? '/';
    let origin = previous?.origin ?? '';
    if (spec) {
      // The spec's URL is canonical and its path already split: no second parse per write.
      path = spec.path;
      origin = originOf(spec.url);
    } else if (!previous) {
      const u = splitURL(absoluteKeyURL(parseKey(key).url, this.#keyBase));
      path = u.path;
      origin = u.origin;
    }
    const entry: CacheEntry = {
      key,
      path,
      origin,
      response,
      spec: spec ?? previous?.spec,
      tags: options.tags ? [...options.tags] : spec ? [...spec.tags] : (previous?.tags ?? []),
      storedAt: options.storedAt ?? now,
      expiresAt: (options.storedAt ?? now) + ttl,
    };
    if (previous) this.#entries.delete(key);
    this.#entries.set(key, entry);
    if (this.#entries.size > this.maxEntries) this.#evictOldest();
    // Most writes have no subscriber: skip building the update.
    if (this.#watched) this.notify({ type: options.update ?? 'write', key, response });
    return entry;
  }

  delete(key: string): boolean {
    return this.#entries.delete(key);
  }

  clear(): void {
    this.#entries.clear();
  }

  keys(): IterableIterator<string> {
    return this.#entries.keys();
  }

  values(): IterableIterator<CacheEntry> {
    return this.#entries.values();
  }

  /** Removes every entry the matcher accepts; returns them in write order. */
  removeMatching(matcher: TargetMatcher): CacheEntry[] {
    const removed: CacheEntry[] = [];
    for (const entry of this.#entries.values()) {
      if (matcher(asMatchable(entry))) removed.push(entry);
    }
    for (const entry of removed) this.#entries.delete(entry.key);
    return removed;
  }

  subscribe(matcher: KeyMatcher, listener: CacheSubscriber): () => void {
    if (typeof listener !== 'function') {
      throw new TypeError(`keel: subscribe listener must be a function, got ${typeof listener}`);
    }
    if (typeof matcher === 'string') {
      let set = this.#byKey.get(matcher);
      if (!set) this.#byKey.set(matcher, (set = new Set()));
      // A wrapper gives every subscription its own identity, so subscribing the same function
      // twice needs two unsubscribes (reference counting).
      const entry: CacheSubscriber = (u) => listener(u);
      set.add(entry);
      let active = true;
      return () => {
        if (!active) return;
        active = false;
        const s = this.#byKey.get(matcher);
        if (!s) return;
        s.delete(entry);
        if (s.size === 0) this.#byKey.delete(matcher);
      };
    }
    if (typeof matcher !== 'function') {
      throw new TypeError(
        `keel: subscribe matcher must be a key or a function, got ${typeof matcher}`,
      );
    }
    const sub: PredicateSubscription = { match: matcher, listener };
    this.#predicates = [...this.#predicates, sub];
    let active = true;
    return () => {
      if (!active) return;
      active = false;
      this.#predicates = this.#predicates.filter((s) => s !== sub);
    };
  }

  /** Whether any subscription wants this key (so invalidation must refetch it). */
  hasInterest(key: string): boolean {
    if (this.#byKey.has(key)) return true;
    for (const sub of this.#predicates) if (safeMatch(sub, key)) return true;
    return false;
  }

  /** Number of keys with exact-key interest plus predicate subscriptions (for leak checks). */
  get subscriptionCount(): number {
    let n = this.#predicates.length;
    for (const s of this.#byKey.values()) n += s.size;
    return n;
  }

  notify(update: CacheUpdate): void {
    if (!this.#watched) return;
    const set = this.#byKey.get(update.key);
    if (set) for (const l of [...set]) deliver(l, update);
    const preds = this.#predicates;
    for (let i = 0; i < preds.length; i++) {
      const sub = preds[i]!;
      if (safeMatch(sub, update.key)) deliver(sub.listener, update);
    }
  }

  /** Some subscription exists (by key or by predicate). */
  get #watched(): boolean {
    return this.#byKey.size > 0 || this.#predicates.length > 0;
  }

  #evictOldest(): void {
    const oldest = this.#entries.keys().next();
    if (!oldest.done) this.#entries.delete(oldest.value);
  }
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

function safeMatch(sub: PredicateSubscription, key: string): boolean {
  try {
    return sub.match(key);
  } catch (err) {
    reportError(err);
    return false;
  }
}

function deliver(listener: CacheSubscriber, update: CacheUpdate): void {
  try {
    listener(update);
  } catch (err) {
    reportError(err);
  }
}
