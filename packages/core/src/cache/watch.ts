import { checkFunction } from '../internal/checks';
import { callUser } from '../internal/report';
import type { CacheUpdate } from '../types/client';
import type { CacheChange, Store } from './store';

type Watcher = (change: CacheChange) => void;

/**
 * Each watched store's watchers. Kept out of the Store (inspect's `watchCache` and
 * `CacheStore.watch` are its only users), so a client nobody inspects bundles none of it.
 */
const watchers = new WeakMap<Store, Watcher[]>();

/**
 * Watches every change of `store` (see `CacheStore.watch`); returns the unwatch function. A
 * watcher that throws is reported like a subscriber, to the store's `onError`.
 */
export function watchStore(store: Store, listener: Watcher): () => void {
  checkFunction('listener', listener);
  // Its own identity per call: watching the same function twice needs two unwatches.
  const entry: Watcher = (change) => listener(change);
  // Copied on change, so a watcher that unwatches while being told does not skip another.
  watchers.set(store, [...(watchers.get(store) ?? []), entry]);
  // Told each change, and each update to subscribers (in the one order both go out in): an
  // update is a write (a response stored or revalidated), except an invalidation (its removal
  // was told as one). A write goes on as it came, its response along: while a React query store
  // watches, a write builds no second object.
  store.watcher ??= (told: CacheChange | CacheUpdate) => {
    if (told.type === 'invalidate') return;
    const key = 'key' in told ? told.key : '';
    const change = (
      told.type === 'revalidate' ? { type: 'write', key, response: told.response } : told
    ) as CacheChange;
    for (const w of watchers.get(store)!) callUser(store.onError, w, change, 'subscriber', key);
  };
  return () => {
    const left = watchers.get(store)!.filter((w) => w !== entry);
    watchers.set(store, left);
    // Unwatched: the store builds no change again.
    if (left.length === 0) store.watcher = undefined;
  };
}
