import type { RequestError } from '@keel/core';
import { shown } from '@keel/core/internals';
import { useCallback, useEffect, useSyncExternalStore } from 'react';
import { useCommit, useObserver } from './internal/use-observer';
import {
  QueryObserver,
  type QueryResult,
  type SuspenseQueryResult,
  type UseQueryOptions,
  type UseSuspenseQueryOptions,
} from './query/observer';
import type { QueryDefinition } from './query-options';

/**
 * Reads `url` (GET) through the keel client and re-renders when the data it reads changes.
 *
 * - `null` or `enabled: false`: no request.
 * - Identical queries share one entry and one request (core dedup and cache); the component
 *   registers interest in its key while mounted, so `client.invalidate` (and a successful
 *   mutation on the same path or tags) refetches it.
 * - Only fields the component reads re-render it: a write of equal data changes nothing.
 * - Unmounting cancels the read unless another consumer still needs it.
 * - A query written with `queryOptions` can be passed instead of the URL; `options` then add to
 *   (and win over) its own.
 *
 * @example
 * const { data, error, isPending } = useQuery<Todo[]>('/todos', { params: { done: false } });
 */
export function useQuery<TQueryData = unknown, TData = TQueryData, TError = RequestError>(
  url: string | null,
  options?: UseQueryOptions<TQueryData, TData>,
): QueryResult<TData, TError>;
export function useQuery<
  TQueryData,
  TDefined = TQueryData,
  TData = TDefined,
  TError = RequestError,
>(
  query: QueryDefinition<TQueryData, TDefined>,
  options?: UseQueryOptions<TQueryData, TData>,
): QueryResult<TData, TError>;
export function useQuery(
  query: string | null | QueryDefinition<unknown, unknown>,
  options?: UseQueryOptions<unknown, unknown>,
): QueryResult<unknown, unknown> {
  return useObservedQuery(query, options, false);
}

/**
 * `useQuery` for a `<Suspense>` boundary: it suspends while the key has no data, so `data` is
 * never undefined. A failed read with no data is thrown to the nearest error boundary, once, and
 * kept until the boundary resets (`<QueryErrorBoundary>`, or `useQueryErrorReset()` in your own),
 * then read again. On the server, a key with nothing cached is not fetched: the `<Suspense>`
 * boundary is rendered in the browser instead (see NoServerDataError).
 *
 * @example
 * function Todos() {
 *   const { data } = useSuspenseQuery<Todo[]>('/todos'); // Todo[]
 *   return <ul>{data.map((t) => <li key={t.id}>{t.title}</li>)}</ul>;
 * }
 */
export function useSuspenseQuery<TQueryData = unknown, TData = TQueryData, TError = RequestError>(
  url: string,
  options?: UseSuspenseQueryOptions<TQueryData, TData>,
): SuspenseQueryResult<TData, TError>;
export function useSuspenseQuery<
  TQueryData,
  TDefined = TQueryData,
  TData = TDefined,
  TError = RequestError,
>(
  query: QueryDefinition<TQueryData, TDefined>,
  options?: UseSuspenseQueryOptions<TQueryData, TData>,
): SuspenseQueryResult<TData, TError>;
export function useSuspenseQuery(
  query: string | QueryDefinition<unknown, unknown>,
  options?: UseSuspenseQueryOptions<unknown, unknown>,
): SuspenseQueryResult<unknown, unknown> {
  if (typeof query !== 'string' && (typeof query !== 'object' || query === null)) {
    throw new TypeError(`keel: useSuspenseQuery \`url\` must be a string, got ${shown(query)}`);
  }
  return useObservedQuery(query, options, true) as SuspenseQueryResult<unknown, unknown>;
}

/** The one place a query hook talks to the store: one observer per hook, read by useSyncExternalStore. */
function useObservedQuery(
  query: string | null | QueryDefinition<unknown, unknown>,
  given: UseQueryOptions<unknown, unknown> | undefined,
  forceSuspense: boolean,
): QueryResult<unknown, unknown> {
  const observer = useObserver(QueryObserver);

  observer.setQuery(query, given, forceSuspense);
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
  useCommit(observer);

  // Resolved with the inputs (defaults applied): a new options object of the same meaning
  // re-arms nothing.
  const { options, focus, reconnect, interval } = observer.inputs;
  // biome-ignore lint/correctness/useExhaustiveDependencies: a new key re-arms the timers
  useEffect(() => {
    if (!active) return undefined;
    return observer.watchEnvironment();
  }, [observer, key, active, focus, reconnect, interval]);

  // `suspense` is true, false or undefined (checkSwitches), and false by default.
  if (forceSuspense || options?.suspense) {
    observer.suspend();
  }
  return observer.result();
}
