import { act, renderHook, waitFor } from '@testing-library/react';
import { HttpResponse, http } from 'msw';
import { useState } from 'react';
import { describe, expect, it, vi } from 'vitest';
import { FakeClock } from '../../core/test/helpers';
import {
  keepPreviousData,
  queryOptions,
  useQueries,
  useQuery,
  useSuspenseQuery,
} from '../src/index';
import { environmentListenerCount } from '../src/internal/environment';
import { QueryObserver } from '../src/query/observer';
import { syntheticResponse } from '../src/query/state';
import { storeFor } from '../src/query/store';
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

interface User {
  id: number;
  name: string;
}

function usersApi() {
  const requests: string[] = [];
  server.use(
    http.get(`${API}/users/:id`, ({ params }) => {
      requests.push(String(params.id));
      return HttpResponse.json({ id: Number(params.id), name: `user ${params.id}` });
    }),
  );
  return requests;
}

const userQuery = (id: number) => queryOptions<User>(`/users/${id}`);

/** One row per id, each keeping the previous data while it loads; rerender({ ids }) changes them. */
function renderUserRows(client: ReturnType<typeof testClient>, ids: number[]) {
  return renderHook(
    ({ ids }: { ids: number[] }) =>
      useQueries(
        ids.map((id) => queryOptions<User>(`/users/${id}`, { placeholderData: keepPreviousData })),
      ).map(readAll),
    { wrapper: wrapperFor(client), initialProps: { ids } },
  );
}

describe('queryOptions', () => {
  it('names a query once: useQuery reads it, options add to its own', async () => {
    usersApi();
    const client = testClient();
    const { result } = renderHook(
      () => ({
        user: readAll(useQuery(userQuery(1))),
        name: readAll(useQuery(userQuery(1), { select: (u) => u.name })),
      }),
      { wrapper: wrapperFor(client) },
    );
    await waitFor(() => expect(result.current.name.data).toBe('user 1'));
    expect(result.current.user.data).toEqual({ id: 1, name: 'user 1' });
  });

  it('an option given as undefined leaves the definition its own (undefined means not set)', async () => {
    const seen: string[] = [];
    server.use(
      http.get(`${API}/search`, ({ request }) => {
        seen.push(new URL(request.url).search);
        return HttpResponse.json([]);
      }),
    );
    const client = testClient();
    const search = queryOptions<unknown[]>('/search', { params: { q: 'keel' } });
    const maybe: { q: string } | undefined = undefined;
    const { result } = renderHook(() => useQuery(search, { params: maybe }), {
      wrapper: wrapperFor(client),
    });
    await waitFor(() => expect(result.current.data).toEqual([]));
    expect(seen).toEqual(['?q=keel']);
  });

  it('is frozen, and its url must be a string', () => {
    const q = queryOptions('/x', { params: { a: 1 } });
    expect(Object.isFrozen(q)).toBe(true);
    expect(q).toEqual({ url: '/x', options: { params: { a: 1 } }, request: { params: { a: 1 } } });
    expect(() => queryOptions(5 as never)).toThrow(
      'keel: queryOptions `url` must be a string, got 5',
    );
  });
});

describe('useQueries', () => {
  it('reads a list whose length changes; results follow the list order', async () => {
    const requests = usersApi();
    const client = testClient();
    let setIds!: (ids: number[]) => void;
    const { result } = renderHook(
      () => {
        const [ids, set] = useState([1, 2]);
        setIds = set;
        return useQueries(ids.map(userQuery)).map((r) => readAll(r));
      },
      { wrapper: wrapperFor(client) },
    );
    expect(result.current.map((r) => r.status)).toEqual(['pending', 'pending']);
    await waitFor(() =>
      expect(result.current.map((r) => r.data?.name)).toEqual(['user 1', 'user 2']),
    );
    act(() => setIds([3, 1, 2]));
    await waitFor(() =>
      expect(result.current.map((r) => r.data?.name)).toEqual(['user 3', 'user 1', 'user 2']),
    );
    act(() => setIds([2]));
    expect(result.current.map((r) => r.data?.name)).toEqual(['user 2']);
    expect(requests.sort()).toEqual(['1', '2', '3']);
    await flush();
    // Keys no longer in the list are released.
    expect(debugOf(client).subscriptions).toBe(1);
  });

  it('shares entries with other hooks: one request per key', async () => {
    const requests = usersApi();
    const client = testClient();
    const { result } = renderHook(
      () => ({
        list: useQueries([userQuery(7), userQuery(7)]).map((r) => readAll(r)),
        one: readAll(useQuery(userQuery(7))),
      }),
      { wrapper: wrapperFor(client) },
    );
    await waitFor(() => expect(result.current.one.isSuccess).toBe(true));
    expect(result.current.list.every((r) => r.data?.id === 7)).toBe(true);
    expect(requests).toEqual(['7']);
  });

  it('a render with nothing changed makes no arrays, and the results array is the same', async () => {
    let version = 0;
    server.use(
      http.get(`${API}/users/:id`, ({ params }) =>
        HttpResponse.json({ id: Number(params.id), name: `user ${params.id} v${version}` }),
      ),
    );
    const client = testClient();
    const queries = [userQuery(1), userQuery(2), userQuery(3)];
    let renders = 0;
    const { result, rerender } = renderHook(
      () => {
        renders++;
        const results = useQueries(queries);
        // Read in render: the fields this component re-renders for.
        for (const r of results) void r.data;
        return results;
      },
      { wrapper: wrapperFor(client) },
    );
    await waitFor(() =>
      expect(result.current.map((r) => r.data?.name)).toEqual([
        'user 1 v0',
        'user 2 v0',
        'user 3 v0',
      ]),
    );
    const settled = result.current;
    const rendersBefore = renders;
    // The array methods the hook could make its per-render arrays with, counted over 3 renders
    // (the counts are read before any assertion, which may call them too).
    const spies = (['map', 'filter', 'slice', 'every', 'concat'] as const).map((name) =>
      vi.spyOn(Array.prototype, name),
    );
    rerender();
    rerender();
    rerender();
    const calls: number[] = [];
    for (const spy of spies) calls.push(spy.mock.calls.length);
    for (const spy of spies) spy.mockRestore();
    expect(calls).toEqual([0, 0, 0, 0, 0]);
    expect(renders).toBe(rendersBefore + 3);
    expect(result.current).toBe(settled);
    // A change of one query: a new array, with the others' results as they were.
    version = 1;
    await act(() => client.invalidate('/users/2'));
    await waitFor(() => expect(result.current[1]!.data?.name).toBe('user 2 v1'));
    expect(result.current).not.toBe(settled);
    expect(result.current[0]).toBe(settled[0]);
    expect(result.current[2]).toBe(settled[2]);
    const changed = result.current;
    rerender();
    expect(result.current).toBe(changed);
    // A shorter list of the same queries: the results of the positions kept.
    const shorter = result.current.slice(0, 2);
    queries.pop();
    rerender();
    expect(result.current).toEqual(shorter);
    expect(result.current[0]).toBe(shorter[0]);
  });

  it('keepPreviousData goes by key: a list that slides shows no row the data of another', async () => {
    const gate = deferred();
    server.use(
      http.get(`${API}/users/:id`, async ({ params }) => {
        if (params.id === '3') await gate.promise;
        return HttpResponse.json({ id: Number(params.id), name: `user ${params.id}` });
      }),
    );
    const client = testClient();
    const { result, rerender } = renderUserRows(client, [1, 2]);
    await waitFor(() => expect(result.current.map((r) => r.data?.id)).toEqual([1, 2]));
    // User 2 moves up and 3 (still loading) comes in: the row of 2 keeps its own data, and 3
    // shows the data of the user that left (1), not that of 2, which is still on screen.
    rerender({ ids: [2, 3] });
    expect(result.current.map((r) => [r.data?.id, r.isPlaceholderData])).toEqual([
      [2, false],
      [1, true],
    ]);
    gate.resolve();
    await waitFor(() => expect(result.current.map((r) => r.data?.id)).toEqual([2, 3]));
    // Reordered: each row still its own key's data.
    rerender({ ids: [3, 2] });
    expect(result.current.map((r) => r.data?.id)).toEqual([3, 2]);
  });

  it('a batch of k updates derives each updated row once, not every row per update', async () => {
    usersApi();
    const client = testClient();
    const n = 40;
    const ids = Array.from({ length: n }, (_, i) => i + 1);
    const queries = ids.map(userQuery);
    let renders = 0;
    const { result } = renderHook(
      () => {
        renders++;
        return useQueries(queries).map(readAll);
      },
      { wrapper: wrapperFor(client) },
    );
    await waitFor(() => expect(result.current.every((r) => r.isSuccess)).toBe(true));
    const before = renders;
    // Reads of a row's state: one per row a snapshot or a render derives.
    const reads = vi.spyOn(storeFor(client), 'peek');
    await act(async () => {
      for (const id of ids) {
        const spec = client.resolve('GET', `/users/${id}`);
        client.setCached(spec, syntheticResponse({ id, name: `renamed ${id}` }));
      }
      await flush();
    });
    expect(result.current.map((r) => r.data?.name)).toEqual(ids.map((id) => `renamed ${id}`));
    // One render for the batch, which reads each row (n); the k notifications read their own
    // row only (k = n), where each read every row before (n * k).
    expect(renders - before).toBe(1);
    expect(reads.mock.calls.length).toBeLessThanOrEqual(3 * n);
  });

  it('rows that reorder, grow and shrink: each changed row resolved once, nothing refetched', async () => {
    const requests = usersApi();
    const client = testClient();
    const { result, rerender } = renderUserRows(client, [1, 2, 3]);
    await waitFor(() => expect(result.current.map((r) => r.data?.id)).toEqual([1, 2, 3]));
    // Resolving a URL is the work of giving an observer a query: counted per render.
    const resolves = vi.spyOn(client, 'resolve');
    const setQuery = vi.spyOn(QueryObserver.prototype, 'setQuery');
    try {
      const step = async (ids: number[]) => {
        resolves.mockClear();
        rerender({ ids });
        // Each row's definition is new (made in render): resolved once, moved or not.
        expect(resolves).toHaveBeenCalledTimes(ids.length);
        // Each row its own key's data, or (loading) a placeholder or nothing.
        expect(
          result.current.every((r, i) => r.isPlaceholderData || (r.data?.id ?? ids[i]) === ids[i]),
        ).toBe(true);
        await flush();
      };
      await step([3, 1, 2]);
      await step([3, 1, 2]);
      await step([2, 3, 1, 4]);
      await step([4, 1]);
      await step([1, 2, 3, 4]);
      expect(setQuery).not.toHaveBeenCalled();
    } finally {
      resolves.mockRestore();
      setQuery.mockRestore();
    }
    await waitFor(() => expect(result.current.every((r) => r.isSuccess)).toBe(true));
    // Moving rows refetched nothing: one request per key, ever.
    expect([...requests].sort()).toEqual(['1', '2', '3', '4']);
    expect(debugOf(client).subscriptions).toBe(4);
  });

  it('a render refused for a bad option (after a row moved) leaves the next render matched right', async () => {
    usersApi();
    const client = testClient();
    const bad = { refetchInterval: -1 };
    const { result, rerender } = renderHook(
      ({ ids, broken }: { ids: number[]; broken: number }) =>
        useQueries(
          ids.map((id) => queryOptions<User>(`/users/${id}`, id === broken ? bad : undefined)),
        ).map(readAll),
      { wrapper: wrapperFor(client), initialProps: { ids: [1, 2, 3, 4], broken: 0 } },
    );
    await waitFor(() => expect(result.current.map((r) => r.data?.id)).toEqual([1, 2, 3, 4]));
    // Row 2 moves to user 5, then row 3's options are refused: the render throws.
    const errors = vi.spyOn(console, 'error').mockImplementation(() => {});
    expect(() => rerender({ ids: [1, 2, 5, 4], broken: 4 })).toThrow(RangeError);
    errors.mockRestore();
    rerender({ ids: [1], broken: 0 });
    expect(result.current.map((r) => r.data?.id)).toEqual([1]);
    rerender({ ids: [2, 1], broken: 0 });
    expect(result.current.map((r) => [r.data?.id, r.isPlaceholderData])).toEqual([
      [2, false],
      [1, false],
    ]);
  });

  it('an empty list is fine; a non-array is a TypeError', () => {
    const client = testClient();
    const { result } = renderHook(() => useQueries([]), { wrapper: wrapperFor(client) });
    expect(result.current).toEqual([]);
    expect(() =>
      renderHook(() => useQueries('x' as never), { wrapper: wrapperFor(client) }),
    ).toThrow('keel: useQueries `queries` must be an array, got "x"');
  });

  it('a disabled row whose key changes follows its new key: cache writes to it show, with no request', async () => {
    const requests = usersApi();
    const client = testClient();
    let setId!: (id: number) => void;
    const { result } = renderHook(
      () => {
        const [id, set] = useState(1);
        setId = set;
        return useQueries([queryOptions<User>(`/users/${id}`, { enabled: false })]).map((r) =>
          readAll(r),
        );
      },
      { wrapper: wrapperFor(client) },
    );
    const write = (id: number, name: string) =>
      act(() =>
        client.setCached(
          client.resolve('GET', `/users/${id}`),
          syntheticResponse({ id, name }, undefined),
        ),
      );
    write(1, 'one');
    await waitFor(() => expect(result.current[0]!.data?.name).toBe('one'));
    act(() => setId(2));
    expect(result.current[0]!.data).toBeUndefined();
    write(2, 'two');
    await waitFor(() => expect(result.current[0]!.data?.name).toBe('two'));
    // The old key is no longer followed: its writes show nothing.
    write(1, 'one again');
    await flush();
    expect(result.current[0]!.data?.name).toBe('two');
    expect(requests).toEqual([]);
    expect(debugOf(client).subscriptions).toBe(0);
  });
});

describe('useSuspenseQuery with queryOptions', () => {
  it('reads the definition', async () => {
    usersApi();
    const client = testClient();
    await client.get('/users/4');
    const { result } = renderHook(() => useSuspenseQuery(userQuery(4)).data.name, {
      wrapper: wrapperFor(client),
    });
    expect(result.current).toBe('user 4');
  });
});

describe('focus, reconnect and interval refetching across renders', () => {
  it.each([
    ['useQuery', (options: object) => [useQuery('/users/1', options)]],
    ['useQueries', (options: object) => useQueries([queryOptions('/users/1', options)])],
  ])(
    '%s: new options of the same meaning re-arm nothing; a new interval re-arms',
    async (_, hook) => {
      usersApi();
      const clock = new FakeClock();
      const client = testClient({ clock });
      const { rerender } = renderHook(({ options }) => hook(options).map((r) => readAll(r)), {
        wrapper: wrapperFor(client),
        initialProps: { options: { refetchInterval: 1000 } as object },
      });
      await flush();
      const armed = () => clock.history.filter((t) => t.ms === 1000 || t.ms === 2000).length;
      expect(armed()).toBe(1);
      const cleared = clock.cleared;
      const listeners = environmentListenerCount();
      // Inline options: a new object at each render, the defaults spelled out or left out.
      for (const options of [
        { refetchInterval: 1000 },
        { refetchInterval: 1000, refetchOnWindowFocus: true, refetchOnReconnect: true },
        { refetchInterval: 1000, refetchOnWindowFocus: undefined },
      ]) {
        rerender({ options });
        await flush();
      }
      expect(armed()).toBe(1);
      expect(clock.cleared).toBe(cleared);
      expect(environmentListenerCount()).toBe(listeners);
      rerender({ options: { refetchInterval: 2000 } });
      await flush();
      expect(armed()).toBe(2);
      expect(clock.pendingDelays()).toContain(2000);
      expect(clock.pendingDelays()).not.toContain(1000);
    },
  );
});

describe('useQueries re-rendered with the same queries', () => {
  it('works out what it observes and arms once per change of the inputs, not per render', async () => {
    const version = 0;
    server.use(
      http.get(`${API}/users/:id`, ({ params }) =>
        HttpResponse.json({ id: Number(params.id), name: `user ${params.id} v${version}` }),
      ),
    );
    const client = testClient();
    const queries = [userQuery(1), userQuery(2), userQuery(3)];
    const { rerender } = renderHook(({ n }) => [n, useQueries(queries).map((r) => r.data)], {
      wrapper: wrapperFor(client),
      initialProps: { n: 0 },
    });
    await flush();
    // The real getters, counted: the keys observed and the switches armed are read from them.
    const inputs = vi.spyOn(QueryObserver.prototype, 'inputs', 'get');
    const active = vi.spyOn(QueryObserver.prototype, 'active', 'get');
    try {
      for (let n = 1; n <= 5; n++) rerender({ n });
      await flush();
      // Each render hands each query's inputs to commit (one read each), no more.
      expect(inputs.mock.calls.length).toBeLessThanOrEqual(5 * queries.length);
      expect(active).not.toHaveBeenCalled();
    } finally {
      inputs.mockRestore();
      active.mockRestore();
    }
  });
});
