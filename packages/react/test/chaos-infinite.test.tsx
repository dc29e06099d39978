import { act, renderHook, waitFor } from '@testing-library/react';
import { HttpResponse, http } from 'msw';
import { expect, it } from 'vitest';
import { useInfiniteQuery } from '../src/index';
import { storeFor } from '../src/query/store';
import { API, debugOf, flush, mswServer, readAll, testClient, wrapperFor } from './helpers';

const server = mswServer();

interface Page {
  items: number[];
  next: number | null;
}

function pagesApi() {
  const requests: string[] = [];
  server.use(
    http.get(`${API}/items`, ({ request }) => {
      const cursor = Number(new URL(request.url).searchParams.get('cursor') ?? 0);
      requests.push(String(cursor));
      if (cursor === 6) return HttpResponse.json({ message: 'boom' }, { status: 500 });
      return HttpResponse.json({ items: [cursor, cursor + 1, cursor + 2], next: cursor + 3 });
    }),
  );
  return requests;
}

const options = {
  initialPageParam: 0,
  paramsFor: (cursor: number) => ({ cursor }),
  getNextPageParam: (last: Page) => last.next,
};

it('fetchNextPage called 10 times at once reads one page; a failed page keeps the others and can be read again; unmount leaves nothing', async () => {
  const requests = pagesApi();
  const client = testClient();
  const { result, unmount } = renderHook(
    () => readAll(useInfiniteQuery<Page, number>('/items', options)),
    { wrapper: wrapperFor(client) },
  );
  await waitFor(() => expect(result.current.data?.pages).toHaveLength(1));
  await act(async () => {
    await Promise.all(Array.from({ length: 10 }, () => result.current.fetchNextPage()));
  });
  await waitFor(() => expect(result.current.data?.pages).toHaveLength(2));
  expect(requests).toEqual(['0', '3']);
  await act(async () => {
    await result.current.fetchNextPage();
  });
  await waitFor(() => expect(result.current.status).toBe('error'));
  expect(result.current.data?.pages).toHaveLength(2);
  expect(requests).toEqual(['0', '3', '6']);
  await act(async () => {
    await result.current.fetchNextPage();
  });
  expect(requests).toEqual(['0', '3', '6', '6']);
  unmount();
  await flush();
  expect(debugOf(client)).toMatchObject({ subscriptions: 0, listeners: 0, flights: 0 });
  expect(storeFor(client).size).toBe(0);
  // After unmount: nothing is sent, nothing throws.
  await act(async () => {
    await result.current.fetchNextPage();
    await result.current.refetch();
  });
  expect(requests).toHaveLength(4);
});

it('an object initialPageParam written inline (a new object each render) keeps the list: the next page shows as fetching, lands, and a failed one keeps its error', async () => {
  const requests: string[] = [];
  server.use(
    http.get(`${API}/items`, ({ request }) => {
      const offset = Number(new URL(request.url).searchParams.get('offset'));
      requests.push(String(offset));
      if (offset === 6) return HttpResponse.json({ message: 'boom' }, { status: 500 });
      return HttpResponse.json({ items: [offset, offset + 1, offset + 2], next: offset + 3 });
    }),
  );
  const client = testClient();
  const { result } = renderHook(
    () =>
      readAll(
        useInfiniteQuery<Page, { offset: number }>('/items', {
          initialPageParam: { offset: 0 },
          paramsFor: ({ offset }) => ({ offset }),
          getNextPageParam: (last) => (last.next === null ? null : { offset: last.next }),
        }),
      ),
    { wrapper: wrapperFor(client) },
  );
  await waitFor(() => expect(result.current.data?.pages).toHaveLength(1));
  let next!: Promise<void>;
  act(() => {
    next = result.current.fetchNextPage();
  });
  expect(result.current.isFetchingNextPage).toBe(true);
  await act(async () => {
    await next;
  });
  await waitFor(() => expect(result.current.data?.pages).toHaveLength(2));
  expect(result.current.data?.pageParams).toEqual([{ offset: 0 }, { offset: 3 }]);
  await act(async () => {
    await result.current.fetchNextPage();
  });
  await waitFor(() => expect(result.current.status).toBe('error'));
  expect(result.current.data?.pages).toHaveLength(2);
  expect(requests).toEqual(['0', '3', '6']);
});

it('request headers given as a Headers object: a change of them starts the list over with the new headers', async () => {
  const tenants: string[] = [];
  server.use(
    http.get(`${API}/items`, ({ request }) => {
      const tenant = request.headers.get('x-tenant') ?? '';
      tenants.push(tenant);
      return HttpResponse.json({ items: [tenant], next: null });
    }),
  );
  const client = testClient();
  const { result, rerender } = renderHook(
    ({ tenant }: { tenant: string }) =>
      readAll(
        useInfiniteQuery<{ items: string[]; next: null }, number>('/items', {
          initialPageParam: 0,
          headers: new Headers({ 'x-tenant': tenant }),
          getNextPageParam: (last) => last.next,
        }),
      ),
    { wrapper: wrapperFor(client), initialProps: { tenant: 'a' } },
  );
  await waitFor(() => expect(result.current.data?.pages).toEqual([{ items: ['a'], next: null }]));
  rerender({ tenant: 'b' });
  await waitFor(() => expect(result.current.data?.pages).toEqual([{ items: ['b'], next: null }]));
  expect(tenants).toEqual(['a', 'b']);
});
