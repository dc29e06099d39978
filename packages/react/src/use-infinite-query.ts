import type { RequestError } from '@keel/core';
import { useCallback, useEffect, useSyncExternalStore } from 'react';
import {
  type InfiniteData,
  InfiniteObserver,
  type InfiniteQueryResult,
  type UseInfiniteQueryOptions,
} from './infinite/observer';
import { useCommit, useObserver } from './internal/use-observer';

/**
 * A list read page by page (a cursor or a page number): `data.pages` holds the pages loaded so
 * far, `fetchNextPage()` reads the next one, `hasNextPage` says whether there is one.
 *
 * Each page is its own GET (the URL with `paramsFor(pageParam)` merged into `params`), cached,
 * de-duplicated and invalidated like any query: an invalidation of the URL (or the pages' tags)
 * refetches every loaded page with the param it was loaded with, and `getNextPageParam` runs
 * again over the new last page. Pages still cached when the component mounts again come back at
 * once.
 *
 * @example
 * const feed = useInfiniteQuery<FeedPage, string | null>('/feed', {
 *   initialPageParam: null,
 *   paramsFor: (cursor) => ({ cursor }),
 *   getNextPageParam: (last) => last.nextCursor,
 * });
 * feed.data?.pages.flatMap((p) => p.items);
 * <button disabled={!feed.hasNextPage} onClick={() => feed.fetchNextPage()}>More</button>
 */
export function useInfiniteQuery<
  TPage = unknown,
  TPageParam = unknown,
  TData = InfiniteData<TPage, TPageParam>,
  TError = RequestError,
>(
  url: string | null,
  options: UseInfiniteQueryOptions<TPage, TPageParam, TData>,
): InfiniteQueryResult<TData, TError> {
  const observer = useObserver(InfiniteObserver);
  observer.setInputs(url, options);
  observer.beginRender();
  const key = observer.key;
  // biome-ignore lint/correctness/useExhaustiveDependencies: the first page's key decides what is observed
  const subscribe = useCallback(
    (onChange: () => void) => observer.subscribe(onChange),
    [observer, key],
  );
  useSyncExternalStore(subscribe, observer.getSnapshot, observer.getSnapshot);
  useCommit(observer);
  // Resolved with the inputs (defaults applied): a new options object of the same meaning
  // re-arms nothing.
  const { focus, reconnect } = observer.inputs;
  // biome-ignore lint/correctness/useExhaustiveDependencies: a new key or switch re-arms the listeners
  useEffect(() => {
    if (key === undefined) return undefined;
    return observer.watchEnvironment();
  }, [observer, key, focus, reconnect]);
  return observer.result() as InfiniteQueryResult<TData, TError>;
}
