import { useCallback, useEffect, useState } from 'react';
import { useSyncExternalStore } from 'use-sync-external-store/shim';
import { useClient } from './provider';
import { QueryObserver, type QueryResult, type UseQueryOptions } from './query/observer';
import { storeFor } from './query/store';

/**
 * Reads `url` (GET) through the keel client and re-renders when the data it reads changes.
 *
 * - `null` or `enabled: false`: no request.
 * - Identical queries share one entry and one request (core dedup and cache); the component
 *   registers interest in its key while mounted, so `client.invalidate` (and a successful
 *   mutation on the same path or tags) refetches it.
 * - Only fields the component reads re-render it: a write of equal data changes nothing.
 * - Unmounting cancels the read unless another consumer still needs it.
 *
 * @example
 * const { data, error, isPending } = useQuery<Todo[]>('/todos', { params: { done: false } });
 */
export function useQuery<TQueryData = unknown, TData = TQueryData, TError = Error>(
  url: string | null,
  options?: UseQueryOptions<TQueryData, TData>,
): QueryResult<TData, TError> {
  const store = storeFor(useClient());
  const [holder] = useState(() => ({ observer: new QueryObserver(store) }));
  // A different client below the same component: start over with its store.
  if (holder.observer.store !== store) holder.observer = new QueryObserver(store);
  const observer = holder.observer;

  observer.setInputs(url, options);
  observer.beginRender();
  const key = observer.key;
  const active = observer.active;
  // The key and `active` decide what is observed: when they change, React must re-subscribe.
  // biome-ignore lint/correctness/useExhaustiveDependencies: key and active are read through observer
  const subscribe = useCallback(
    (onChange: () => void) => observer.subscribe(onChange),
    [observer, key, active],
  );
  useSyncExternalStore(subscribe, observer.getSnapshot, observer.getSnapshot);

  const focus = options?.refetchOnWindowFocus ?? true;
  const reconnect = options?.refetchOnReconnect ?? true;
  const interval = options?.refetchInterval ?? false;
  // biome-ignore lint/correctness/useExhaustiveDependencies: a new key re-arms the timers
  useEffect(() => {
    if (!active) return undefined;
    return observer.watchEnvironment(focus, reconnect, interval);
  }, [observer, key, active, focus, reconnect, interval]);

  if (options?.suspense) {
    const suspension = observer.suspension();
    if (suspension instanceof Promise) throw suspension;
    if (suspension !== undefined) throw suspension.error;
  }
  return observer.result() as QueryResult<TData, TError>;
}
