import { act, render, renderHook, screen, waitFor } from '@testing-library/react';
import { HttpResponse, http } from 'msw';
import { describe, expect, it, vi } from 'vitest';
import { type InfiniteData, type UseInfiniteQueryOptions, useInfiniteQuery } from '../src/index';
import { environmentListenerCount } from '../src/internal/environment';
import {
  API,
  debugOf,
  deferred,
  flush,
  mswServer,
  readAll,
  testClient,
  wrapperFor,
} from './helpers';

const server = mswServer();

interface Page {
  items: number[];
  next: number | null;
}

/** /items?cursor=n: 3 items per page from n, 9 items in all; counts requests per cursor. */
function itemsApi(total = 9) {
  const state = { total, version: 0, requests: [] as string[], gate: null as Promise<void> | null };
  server.use(
    http.get(`${API}/items`, async ({ request }) => {
      const cursor = Number(new URL(request.url).searchParams.get('cursor') ?? 0);
      state.requests.push(String(cursor));
      if (state.gate) await state.gate;
      const items: number[] = [];
      for (let i = cursor; i < Math.min(cursor + 3, state.total); i++)
        items.push(i + state.version);
      const next = cursor + 3 < state.total ? cursor + 3 : null;
      return HttpResponse.json({ items, next } satisfies Page);
    }),
  );
  return state;
}

const feedOptions = {
  initialPageParam: null as number | null,
  paramsFor: (cursor: number | null) => ({ cursor }),
  getNextPageParam: (last: Page) => last.next,
};

function useFeed() {
  return useInfiniteQuery<Page, number | null>('/items', feedOptions);
}

const flat = (data: InfiniteData<Page, number | null> | undefined) =>
  data?.pages.flatMap((p) => p.items);

/** Page numbers, selected into a list of numbers; counts its renders. */
function Numbers({ counter }: { counter: { renders: number } }) {
  counter.renders++;
  const q = useInfiniteQuery<{ page: number; last: boolean }, number, number[]>('/numbers', {
    initialPageParam: 1,
    getNextPageParam: (last, _pages, param) => (last.last ? null : param + 1),
    select: (data) => data.pages.map((p) => p.page),
  });
  return (
    <button type="button" onClick={() => q.fetchNextPage()}>
      {q.data?.join(',') ?? '-'}
    </button>
  );
}

/** Reads only `data`; counts its renders. */
function OnlyData({ counter }: { counter: { renders: number } }) {
  counter.renders++;
  const { data } = useFeed();
  return <p>{flat(data)?.join(',') ?? '-'}</p>;
}

describe('useInfiniteQuery', () => {
  it('reads page after page with a cursor; hasNextPage follows getNextPageParam', async () => {
    const api = itemsApi();
    const client = testClient();
    const { result } = renderHook(() => readAll(useFeed()), { wrapper: wrapperFor(client) });
    expect(result.current).toMatchObject({ status: 'pending', isLoading: true, data: undefined });
    await waitFor(() => expect(flat(result.current.data)).toEqual([0, 1, 2]));
    expect(result.current).toMatchObject({ hasNextPage: true, isFetchingNextPage: false });
    // The first page has no cursor (null is left out of the URL).
    expect(api.requests).toEqual(['0']);

    let next!: Promise<void>;
    act(() => {
      next = result.current.fetchNextPage();
    });
    await waitFor(() => expect(result.current.isFetchingNextPage).toBe(true));
    // While the next page loads, the last loaded page still has one (TanStack's rule).
    expect(result.current.hasNextPage).toBe(true);
    await act(() => next);
    await waitFor(() => expect(flat(result.current.data)).toEqual([0, 1, 2, 3, 4, 5]));
    await act(() => result.current.fetchNextPage());
    await waitFor(() => expect(flat(result.current.data)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8]));
    expect(result.current.hasNextPage).toBe(false);
    expect(result.current.data?.pageParams).toEqual([null, 3, 6]);
    // Nothing more to read: a call does nothing.
    await act(() => result.current.fetchNextPage());
    expect(api.requests).toEqual(['0', '3', '6']);
  });

  it('an invalidation refetches every loaded page, each with its param', async () => {
    const api = itemsApi();
    const client = testClient();
    const { result } = renderHook(() => readAll(useFeed()), { wrapper: wrapperFor(client) });
    await waitFor(() => expect(result.current.hasNextPage).toBe(true));
    await act(() => result.current.fetchNextPage());
    await waitFor(() => expect(flat(result.current.data)).toHaveLength(6));
    api.version = 100;
    api.requests = [];
    act(() => {
      client.invalidate('/items');
    });
    await waitFor(() => expect(flat(result.current.data)).toEqual([100, 101, 102, 103, 104, 105]));
    expect(api.requests.sort()).toEqual(['0', '3']);
    expect(result.current.hasNextPage).toBe(true);
  });

  it('remounting brings back the pages still cached, without a request', async () => {
    const api = itemsApi();
    const client = testClient();
    const first = renderHook(() => readAll(useFeed()), { wrapper: wrapperFor(client) });
    await waitFor(() => expect(first.result.current.hasNextPage).toBe(true));
    await act(() => first.result.current.fetchNextPage());
    await waitFor(() => expect(flat(first.result.current.data)).toHaveLength(6));
    first.unmount();
    await flush();
    const again = renderHook(() => readAll(useFeed()), { wrapper: wrapperFor(client) });
    expect(flat(again.result.current.data)).toEqual([0, 1, 2, 3, 4, 5]);
    await flush();
    expect(api.requests).toEqual(['0', '3']);
    again.unmount();
    await flush();
    expect(debugOf(client)).toMatchObject({ subscriptions: 0, flights: 0 });
  });

  it('a failed next page keeps the loaded pages (status error); fetchNextPage reads it again', async () => {
    itemsApi();
    let failing = true;
    server.use(
      http.get(`${API}/items`, ({ request }) =>
        failing && new URL(request.url).searchParams.get('cursor') === '3'
          ? HttpResponse.json({ message: 'nope' }, { status: 500 })
          : undefined,
      ),
    );
    const client = testClient();
    const { result } = renderHook(() => readAll(useFeed()), { wrapper: wrapperFor(client) });
    await waitFor(() => expect(result.current.hasNextPage).toBe(true));
    await act(() => result.current.fetchNextPage());
    await waitFor(() => expect(result.current.status).toBe('error'));
    expect(flat(result.current.data)).toEqual([0, 1, 2]);
    expect(result.current.error).toMatchObject({ status: 500 });
    // The last loaded page still has a next one: a `disabled={!hasNextPage}` button (the README's
    // Feed) stays enabled, so the user can ask for it again.
    expect(result.current.hasNextPage).toBe(true);
    failing = false;
    await act(() => result.current.fetchNextPage());
    await waitFor(() => expect(flat(result.current.data)).toEqual([0, 1, 2, 3, 4, 5]));
    expect(result.current).toMatchObject({ status: 'success', error: null, hasNextPage: true });
  });

  it('page numbers by default (`page` param), select, and one render per change', async () => {
    const seen: string[] = [];
    server.use(
      http.get(`${API}/numbers`, ({ request }) => {
        const page = Number(new URL(request.url).searchParams.get('page'));
        seen.push(String(page));
        return HttpResponse.json({ page, last: page === 2 });
      }),
    );
    const client = testClient();
    const counter = { renders: 0 };
    render(<Numbers counter={counter} />, { wrapper: wrapperFor(client) });
    await screen.findByText('1');
    const before = counter.renders;
    act(() => screen.getByRole('button').click());
    await screen.findByText('1,2');
    expect(seen).toEqual(['1', '2']);
    // The click (isFetchingNextPage) and the page's arrival.
    expect(counter.renders - before).toBeLessThanOrEqual(2);
  });

  it('a missing getNextPageParam is a TypeError at render', () => {
    const client = testClient();
    expect(() =>
      renderHook(() => useInfiniteQuery('/items', { initialPageParam: 0 } as never), {
        wrapper: wrapperFor(client),
      }),
    ).toThrow('keel: useInfiniteQuery `getNextPageParam` must be a function, got undefined');
  });

  it('unmounting while a page is in flight cancels it and leaves nothing', async () => {
    const api = itemsApi();
    const gate = deferred();
    api.gate = gate.promise;
    const client = testClient();
    const { unmount } = renderHook(() => readAll(useFeed()), { wrapper: wrapperFor(client) });
    await waitFor(() => expect(api.requests).toEqual(['0']));
    unmount();
    await flush();
    gate.resolve();
    await flush();
    expect(debugOf(client)).toMatchObject({ subscriptions: 0, flights: 0, listeners: 0 });
  });

  it('re-renders only for the fields it reads: a refetch of equal pages renders nothing', async () => {
    itemsApi();
    const client = testClient();
    const counter = { renders: 0 };
    render(<OnlyData counter={counter} />, { wrapper: wrapperFor(client) });
    await screen.findByText('0,1,2');
    await flush();
    const before = counter.renders;
    act(() => {
      client.invalidate('/items');
    });
    await waitFor(() => expect(client.fetchingKeys()).toEqual([]));
    await flush();
    expect(counter.renders).toBe(before);
  });
});

describe('useInfiniteQuery focus and reconnect refetching across renders', () => {
  it('new options of the same meaning re-arm nothing; a switch turned off is let go', async () => {
    itemsApi();
    const client = testClient();
    const { rerender } = renderHook(
      ({ options }) => readAll(useInfiniteQuery<Page, number | null>('/items', options)),
      {
        wrapper: wrapperFor(client),
        initialProps: {
          options: { ...feedOptions } as UseInfiniteQueryOptions<Page, number | null>,
        },
      },
    );
    await flush();
    expect(environmentListenerCount()).toBe(2);
    // The real window methods, counted: a re-arm lets go of the last listener, then listens again.
    const added = vi.spyOn(window, 'addEventListener');
    const removed = vi.spyOn(window, 'removeEventListener');
    try {
      // Inline options: a new object at each render, the defaults spelled out or left out.
      for (const options of [
        { ...feedOptions },
        { ...feedOptions, refetchOnWindowFocus: true, refetchOnReconnect: true },
        { ...feedOptions, refetchOnWindowFocus: undefined },
      ]) {
        rerender({ options });
        await flush();
      }
      expect(added).not.toHaveBeenCalled();
      expect(removed).not.toHaveBeenCalled();
      expect(environmentListenerCount()).toBe(2);
      rerender({ options: { ...feedOptions, refetchOnWindowFocus: false } });
      await flush();
      expect(environmentListenerCount()).toBe(1);
    } finally {
      added.mockRestore();
      removed.mockRestore();
    }
  });
});
