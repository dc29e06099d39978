import type { InvalidateTarget } from '@keel/core';
import { checkInvalidateTarget, watchCache } from '@keel/core/internals';
import { useCallback, useSyncExternalStore } from 'react';
import { notifyLater } from './internal/batch';
import { countMutations } from './mutation/registry';
import { useClient } from './provider';
import { storeFor } from './query/store';

/** The lifecycle events after which the set of reads in flight may have changed. */
const FLIGHT_EVENTS = ['request', 'success', 'error', 'cancel'] as const;

/**
 * How many reads of this client are in flight now (one per key, however many components wait on
 * it), all of them or those `target` matches: a path, an array of tags or a predicate, as for
 * `client.invalidate`. For a global "loading" indicator.
 *
 * @example
 * const fetching = useIsFetching();          // every read
 * const todos = useIsFetching('/todos');     // reads under /todos
 */
export function useIsFetching(target?: InvalidateTarget): number {
  if (target !== undefined) checkInvalidateTarget(target, 'target');
  const client = useClient();
  const subscribe = useCallback(
    (onChange: () => void) => {
      const wake = () => notifyLater(onChange);
      const offs = FLIGHT_EVENTS.map((name) => client.on(name, wake));
      // `clearCache()`, and an invalidation that refetches nothing, stop reads counting and emit
      // no flight event: the cache watcher hears them (a clear, a removal).
      offs.push(watchCache(client, (change) => change.type !== 'write' && wake()));
      return () => {
        for (const off of offs) off();
      };
    },
    [client],
  );
  const count = () => client.fetchingKeys(target).length;
  // On the server nothing is fetched while rendering.
  return useSyncExternalStore(subscribe, count, zero);
}

/**
 * How many `useMutation` calls of this client are running now (from `mutate()` until their state
 * settles, `onMutate` included), all of them or those whose request `target` matches (a path,
 * an array of tags or a predicate, as for `client.invalidate`).
 *
 * @example
 * const saving = useIsMutating('/todos') > 0;
 */
export function useIsMutating(target?: InvalidateTarget): number {
  if (target !== undefined) checkInvalidateTarget(target, 'target');
  const client = useClient();
  const { mutations } = storeFor(client);
  const subscribe = useCallback(
    (onChange: () => void) => {
      // A wrapper per subscription: the same callback subscribing twice needs two releases.
      const entry = () => onChange();
      mutations.listeners.add(entry);
      return () => {
        mutations.listeners.delete(entry);
      };
    },
    [mutations],
  );
  const count = () => countMutations(client, mutations, target);
  return useSyncExternalStore(subscribe, count, zero);
}

function zero(): number {
  return 0;
}
