import { CircuitOpenError, HttpError, TimeoutError } from '@keel/core';
import { act, render, renderHook, screen, waitFor } from '@testing-library/react';
import { delay, HttpResponse, http } from 'msw';
import { StrictMode, Suspense } from 'react';
import { describe, expect, it, onTestFinished, vi } from 'vitest';
import { FakeClock } from '../../core/test/helpers';
import { keepPreviousData, queryOptions, useQuery } from '../src/index';
import { storeFor } from '../src/query/store';
import {
  API,
  debugOf,
  deferred,
  mswServer,
  readAll,
  type Todo,
  testClient,
  todoApi,
  until,
  wrapperFor,
} from './helpers';

const server = mswServer();

function Titles({ url = '/todos' }: { url?: string }) {
  const { data, status, isFetching, isLoading } = useQuery<Todo[]>(url);
  return (
    <p data-testid="list">
      {status}|{isLoading ? 'loading' : ''}|{isFetching ? 'fetching' : 'idle'}|
      {data?.map((t) => t.title).join(',')}
    </p>
  );
}
const text = () => screen.getByTestId('list').textContent;

function SuspendedList() {
  const { data } = useQuery<Todo[]>('/todos', { suspense: true });
  return <p data-testid="list">{data!.map((t) => t.title).join(',')}</p>;
}

describe('useQuery', () => {
  it('with a queryOptions definition: given options win over its own, one given as undefined keeps its own', async () => {
    const seen: string[] = [];
    server.use(
      http.get(`${API}/todos`, ({ request }) => {
        seen.push(new URL(request.url).search);
        return HttpResponse.json([{ id: 1, title: 'a' }]);
      }),
    );
    const todos = queryOptions<Todo[]>('/todos', { params: { page: 2 }, enabled: false });
    const { result } = renderHook(() => useQuery(todos, { enabled: true, params: undefined }), {
      wrapper: wrapperFor(testClient()),
    });
    await until(() => result.current.isSuccess);
    expect(seen).toEqual(['?page=2']);
    expect(result.current.data).toEqual([{ id: 1, title: 'a' }]);
  });

  it("a queryOptions definition's `request` prefetches it with the client: the hook's own options left out, the page then reads it without a request", async () => {
    const seen: string[] = [];
    server.use(
      http.get(`${API}/todos`, ({ request }) => {
        seen.push(new URL(request.url).search);
        return HttpResponse.json([{ id: 1, title: 'a' }]);
      }),
    );
    const todos = queryOptions<Todo[], number>('/todos', {
      params: { page: 2 },
      select: (list) => list.length,
      refetchOnWindowFocus: false,
      placeholderData: keepPreviousData,
    });
    expect(todos.request).toEqual({ params: { page: 2 } });
    expect(Object.isFrozen(todos.request)).toBe(true);
    expect(queryOptions('/todos').request).toBeUndefined();
    expect(queryOptions('/todos', { enabled: false }).request).toBeUndefined();
    const client = testClient();
    // Before: a RangeError naming `select` (the core takes no hook option).
    const prefetched = await client.get<Todo[]>(todos.url, todos.request);
    expect(prefetched.data).toEqual([{ id: 1, title: 'a' }]);
    const { result } = renderHook(() => useQuery(todos), { wrapper: wrapperFor(client) });
    expect(result.current.data).toBe(1);
    expect(seen).toEqual(['?page=2']);
  });

  it('goes loading -> success, then refetches and re-renders on invalidate', async () => {
    const api = todoApi(['a', 'b']);
    server.use(...api.handlers);
    const client = testClient();
    render(<Titles />, { wrapper: wrapperFor(client) });
    expect(text()).toBe('pending|loading|fetching|');
    await waitFor(() => expect(text()).toBe('success||idle|a,b'));
    expect(api.state.gets).toBe(1);

    api.state.todos = [...api.state.todos, { id: 3, title: 'c' }];
    const gate = deferred();
    api.state.gate = gate.promise;
    act(() => {
      client.invalidate('/todos');
    });
    // The old data stays on screen while the refetch runs.
    await waitFor(() => expect(text()).toBe('success||fetching|a,b'));
    gate.resolve();
    await waitFor(() => expect(text()).toBe('success||idle|a,b,c'));
    expect(api.state.gets).toBe(2);
  });

  it('makes one request for identical queries mounted together', async () => {
    const api = todoApi();
    server.use(...api.handlers);
    const client = testClient();
    render(
      <>
        <Titles />
        <Titles />
        <Titles url="/todos?" />
      </>,
      { wrapper: wrapperFor(client) },
    );
    await waitFor(() =>
      expect(screen.getAllByTestId('list').map((e) => e.textContent)).toEqual([
        'success||idle|a,b',
        'success||idle|a,b',
        'success||idle|a,b',
      ]),
    );
    expect(api.state.gets).toBe(1);
    // A later mount is a fresh cache hit: still one request.
    render(<Titles />, { wrapper: wrapperFor(client) });
    await waitFor(() => expect(screen.getAllByTestId('list')).toHaveLength(4));
    expect(api.state.gets).toBe(1);
  });

  it('makes no extra request under StrictMode and balances interest', async () => {
    const api = todoApi();
    server.use(...api.handlers);
    const client = testClient();
    const { unmount } = render(
      <StrictMode>
        <Titles />
      </StrictMode>,
      { wrapper: wrapperFor(client) },
    );
    await waitFor(() => expect(text()).toBe('success||idle|a,b'));
    expect(api.state.gets).toBe(1);
    expect(debugOf(client).subscriptions).toBe(1);
    unmount();
    await act(async () => {});
    expect(debugOf(client).subscriptions).toBe(0);
    expect(storeFor(client).size).toBe(0);
  });

  it('reports HttpError, TimeoutError and CircuitOpenError typed', async () => {
    server.use(
      http.get(`${API}/missing`, () => HttpResponse.json({ message: 'gone' }, { status: 404 })),
      http.get(`${API}/slow`, async () => {
        await delay('infinite');
        return HttpResponse.json([]);
      }),
      http.get(`${API}/broken`, () => new HttpResponse(null, { status: 503 })),
    );
    const client = testClient({ circuitBreaker: { failureThreshold: 1, resetTimeout: 60_000 } });
    const wrapper = wrapperFor(client);

    const missing = renderHook(() => readAll(useQuery('/missing')), { wrapper });
    await waitFor(() => expect(missing.result.current.status).toBe('error'));
    expect(missing.result.current.error).toBeInstanceOf(HttpError);
    expect((missing.result.current.error as HttpError).status).toBe(404);
    expect(missing.result.current.isError).toBe(true);
    expect(missing.result.current.data).toBeUndefined();

    const slow = renderHook(() => readAll(useQuery('/slow', { timeout: 10 })), { wrapper });
    await waitFor(() => expect(slow.result.current.error).toBeInstanceOf(TimeoutError));

    const first = renderHook(() => readAll(useQuery('/broken')), { wrapper });
    await waitFor(() => expect(first.result.current.error).toBeInstanceOf(HttpError));
    // The circuit of GET /broken is open now: the next read is refused without a request.
    const second = renderHook(() => readAll(useQuery('/broken', { params: { page: 2 } })), {
      wrapper,
    });
    await waitFor(() => expect(second.result.current.error).toBeInstanceOf(CircuitOpenError));
    expect((second.result.current.error as CircuitOpenError).endpoint).toBe('GET /broken');
  });

  it('cancels the request on unmount only when no other consumer needs it', async () => {
    const aborted: string[] = [];
    const gate = deferred();
    server.use(
      http.get(`${API}/item/:id`, async ({ request, params }) => {
        request.signal.addEventListener('abort', () => aborted.push(String(params.id)));
        await gate.promise;
        return HttpResponse.json({ id: params.id });
      }),
    );
    const client = testClient();
    const wrapper = wrapperFor(client);
    const a1 = renderHook(() => readAll(useQuery('/item/1')), { wrapper });
    const a2 = renderHook(() => readAll(useQuery('/item/1')), { wrapper });
    const b = renderHook(() => readAll(useQuery('/item/2')), { wrapper });
    const outside = client.get('/item/2'); // a consumer outside React
    await waitFor(() => expect(debugOf(client).flights).toBe(2));

    a1.unmount();
    await act(async () => {});
    expect(debugOf(client).flights).toBe(2); // a2 still needs /item/1
    a2.unmount();
    b.unmount();
    await act(async () => {});
    expect(debugOf(client).flights).toBe(1); // /item/2 lives on for `outside`
    await waitFor(() => expect(aborted).toEqual(['1']));
    gate.resolve();
    await expect(outside).resolves.toMatchObject({ data: { id: '2' } });
    expect(debugOf(client).subscriptions).toBe(0);
  });

  it('keeps fresher data when a superseded flight fails late', async () => {
    const first = deferred();
    let calls = 0;
    server.use(
      http.get(`${API}/race`, async () => {
        calls++;
        if (calls === 1) {
          await first.promise;
          return new HttpResponse(null, { status: 500 });
        }
        return HttpResponse.json({ v: 2 });
      }),
    );
    const client = testClient();
    const { result } = renderHook(() => readAll(useQuery<{ v: number }>('/race')), {
      wrapper: wrapperFor(client),
    });
    await waitFor(() => expect(calls).toBe(1));
    // Invalidation detaches the running flight and starts a new one for the mounted key.
    act(() => {
      client.invalidate('/race');
    });
    await waitFor(() => expect(result.current.data).toEqual({ v: 2 }));
    first.resolve();
    await waitFor(() => expect(debugOf(client).flights).toBe(0));
    expect(result.current.status).toBe('success');
    expect(result.current.error).toBeNull();
  });

  it('sends nothing for a null URL or enabled:false, and reads once enabled', async () => {
    const api = todoApi();
    server.use(...api.handlers);
    const client = testClient();
    const { result, rerender } = renderHook(
      ({ url, enabled }: { url: string | null; enabled: boolean }) =>
        readAll(useQuery<Todo[]>(url, { enabled })),
      { wrapper: wrapperFor(client), initialProps: { url: null as string | null, enabled: true } },
    );
    expect(result.current).toMatchObject({
      status: 'pending',
      isFetching: false,
      isLoading: false,
    });
    rerender({ url: '/todos', enabled: false });
    await act(async () => {});
    expect(result.current.isFetching).toBe(false);
    expect(api.state.gets).toBe(0);
    expect(debugOf(client).subscriptions).toBe(0);
    rerender({ url: '/todos', enabled: true });
    await waitFor(() => expect(result.current.data).toHaveLength(2));
    expect(api.state.gets).toBe(1);
  });

  it('reports an invalid URL as the error without a request', () => {
    const client = testClient({ baseURL: undefined });
    const { result } = renderHook(() => readAll(useQuery('http://[::1')), {
      wrapper: wrapperFor(client),
    });
    expect(result.current.status).toBe('error');
    expect(result.current.error).toBeInstanceOf(RangeError);
  });

  it('refetch() on a disabled query fetches by hand and renders the result', async () => {
    const api = todoApi();
    server.use(...api.handlers);
    const client = testClient();
    const { result } = renderHook(() => readAll(useQuery<Todo[]>('/todos', { enabled: false })), {
      wrapper: wrapperFor(client),
    });
    expect(api.state.gets).toBe(0);
    let settled: Awaited<ReturnType<typeof result.current.refetch>> | undefined;
    await act(async () => {
      settled = await result.current.refetch();
    });
    expect(settled?.data).toHaveLength(2);
    expect(result.current.data).toHaveLength(2);
    expect(api.state.gets).toBe(1);
  });

  it('refetch() reads from the network over fresh data', async () => {
    const api = todoApi();
    server.use(...api.handlers);
    const client = testClient();
    const { result } = renderHook(() => readAll(useQuery<Todo[]>('/todos')), {
      wrapper: wrapperFor(client),
    });
    await waitFor(() => expect(result.current.isSuccess).toBe(true));
    api.state.todos = [];
    await act(async () => {
      const r = await result.current.refetch();
      expect(r.data).toEqual([]);
    });
    expect(result.current.data).toEqual([]);
    expect(api.state.gets).toBe(2);
  });

  it('applies select with structural sharing', async () => {
    const api = todoApi(['a', 'b']);
    server.use(...api.handlers);
    const client = testClient();
    const { result } = renderHook(
      () =>
        readAll(
          useQuery<Todo[], string[]>('/todos', { select: (list) => list.map((t) => t.title) }),
        ),
      { wrapper: wrapperFor(client) },
    );
    await waitFor(() => expect(result.current.data).toEqual(['a', 'b']));
    const before = result.current.data;
    await act(async () => {
      await result.current.refetch();
    });
    expect(result.current.data).toBe(before);
    expect(result.current.response?.data).toHaveLength(2);
  });

  it('renders initialData without a request while it is fresh', async () => {
    const api = todoApi();
    server.use(...api.handlers);
    const client = testClient();
    const initial = [{ id: 9, title: 'seed' }];
    const { result } = renderHook(
      () => readAll(useQuery<Todo[]>('/todos', { initialData: initial })),
      {
        wrapper: wrapperFor(client),
      },
    );
    expect(result.current.data).toBe(initial);
    expect(result.current.status).toBe('success');
    await act(async () => {});
    expect(api.state.gets).toBe(0);
    // Written with its spec, so invalidation can refetch it.
    act(() => {
      client.invalidate('/todos');
    });
    await waitFor(() => expect(result.current.data).toHaveLength(2));
    expect(api.state.gets).toBe(1);
  });

  it('keeps the previous data while the key changes (placeholderData)', async () => {
    const gates = new Map<string, ReturnType<typeof deferred<void>>>();
    server.use(
      http.get(`${API}/page/:n`, async ({ params }) => {
        const gate = gates.get(String(params.n));
        if (gate) await gate.promise;
        return HttpResponse.json({ page: Number(params.n) });
      }),
    );
    const client = testClient();
    const { result, rerender } = renderHook(
      ({ n }: { n: number }) =>
        readAll(useQuery<{ page: number }>(`/page/${n}`, { placeholderData: keepPreviousData })),
      { wrapper: wrapperFor(client), initialProps: { n: 1 } },
    );
    expect(result.current).toMatchObject({ status: 'pending', data: undefined });
    await waitFor(() => expect(result.current.data).toEqual({ page: 1 }));
    const gate = deferred();
    gates.set('2', gate);
    rerender({ n: 2 });
    expect(result.current).toMatchObject({
      data: { page: 1 },
      isPlaceholderData: true,
      status: 'success',
      isFetching: true,
    });
    gate.resolve();
    await waitFor(() => expect(result.current.data).toEqual({ page: 2 }));
    expect(result.current.isPlaceholderData).toBe(false);
  });

  it('refetches on an interval while mounted', async () => {
    const api = todoApi();
    server.use(...api.handlers);
    // The interval runs on the client's clock.
    const clock = new FakeClock();
    const client = testClient({ clock, timeout: 0 });
    const { result, unmount } = renderHook(
      () => readAll(useQuery<Todo[]>('/todos', { refetchInterval: 1000 })),
      { wrapper: wrapperFor(client) },
    );
    await until(() => result.current.isSuccess);
    expect(api.state.gets).toBe(1);
    await act(() => clock.advance(999));
    expect(api.state.gets).toBe(1);
    await act(() => clock.advance(1));
    await until(() => api.state.gets === 2 && !result.current.isFetching);
    unmount();
    await act(() => clock.advance(5000));
    expect(api.state.gets).toBe(2);
    expect(clock.live).toBe(0);
  });

  it('revalidates stale data on window focus, not fresh data', async () => {
    const api = todoApi();
    server.use(...api.handlers);
    const fresh = testClient();
    const a = renderHook(() => readAll(useQuery<Todo[]>('/todos')), { wrapper: wrapperFor(fresh) });
    await waitFor(() => expect(a.result.current.isSuccess).toBe(true));
    act(() => {
      window.dispatchEvent(new Event('focus'));
    });
    await act(async () => {});
    expect(api.state.gets).toBe(1);

    const stale = testClient({ cache: { ttl: 0 } });
    const b = renderHook(() => readAll(useQuery<Todo[]>('/todos')), { wrapper: wrapperFor(stale) });
    await waitFor(() => expect(b.result.current.isSuccess).toBe(true));
    expect(api.state.gets).toBe(2);
    act(() => {
      window.dispatchEvent(new Event('focus'));
    });
    await waitFor(() => expect(api.state.gets).toBe(3));
    act(() => {
      window.dispatchEvent(new Event('online'));
    });
    await waitFor(() => expect(api.state.gets).toBe(4));
  });

  it('suspends until data arrives', async () => {
    const api = todoApi(['s']);
    server.use(...api.handlers);
    const client = testClient();
    render(
      <Suspense fallback={<p>loading…</p>}>
        <SuspendedList />
      </Suspense>,
      { wrapper: wrapperFor(client) },
    );
    expect(screen.getByText('loading…')).toBeTruthy();
    await waitFor(() => expect(text()).toBe('s'));
    expect(api.state.gets).toBe(1);
  });
});

describe('useQuery option checks', () => {
  it('checks refetchInterval and select once per change of the options, not at every render', () => {
    const client = testClient();
    let intervalReads = 0;
    let selectReads = 0;
    // One options object kept across renders (a module constant, or memoized), counting reads.
    const options = {
      enabled: false,
      get refetchInterval() {
        intervalReads++;
        return 1000;
      },
      get select() {
        selectReads++;
        return undefined;
      },
    };
    const { rerender, unmount } = renderHook(() => useQuery<Todo[]>('/todos', options), {
      wrapper: wrapperFor(client),
    });
    const interval = intervalReads;
    const select = selectReads;
    for (let i = 0; i < 5; i++) rerender();
    // The options did not change and there is no data: nothing reads the interval or select
    // again (the view is not derived again for a render with nothing new).
    expect(intervalReads).toBe(interval);
    expect(selectReads).toBe(select);
    unmount();
  });

  it('select never runs for a disabled key with nothing cached; it runs once when data is there', () => {
    const client = testClient();
    const select = vi.fn((todos: Todo[]) => todos.length);
    const options = { enabled: false, select };
    const { result, rerender, unmount } = renderHook(
      () => useQuery<Todo[], number>('/todos', options),
      { wrapper: wrapperFor(client) },
    );
    for (let i = 0; i < 5; i++) rerender();
    // As in TanStack Query: select runs only when there is data (or placeholder data).
    expect(select).not.toHaveBeenCalled();
    expect(result.current.data).toBeUndefined();
    act(() => {
      client.setCached(client.resolve('GET', '/todos'), {
        data: [{ id: 1, title: 'a' }],
        status: 200,
        statusText: 'OK',
        headers: new Headers(),
      });
    });
    // A disabled query follows no changes: the next render shows the write.
    rerender();
    for (let i = 0; i < 3; i++) rerender();
    expect(result.current.data).toBe(1);
    expect(select).toHaveBeenCalledTimes(1);
    unmount();
  });

  it('a placeholderData function of a disabled key with nothing cached runs once, not per render', () => {
    const client = testClient();
    const placeholderData = vi.fn(() => [] as Todo[]);
    const options = { enabled: false, placeholderData };
    const { result, rerender, unmount } = renderHook(() => useQuery<Todo[]>('/todos', options), {
      wrapper: wrapperFor(client),
    });
    for (let i = 0; i < 5; i++) rerender();
    expect(result.current.isPlaceholderData).toBe(true);
    expect(placeholderData).toHaveBeenCalledTimes(1);
    unmount();
  });

  it('a bad refetchInterval or select is refused on the render that brings it, and again on the next', () => {
    const client = testClient();
    const logged = vi.spyOn(console, 'error').mockImplementation(() => {});
    onTestFinished(() => logged.mockRestore());
    const good = { enabled: false, refetchInterval: 1000 };
    for (const [bad, error] of [
      [
        { enabled: false, refetchInterval: '1000' },
        new TypeError(
          'keel: `refetchInterval` must be a positive number of ms, at most 2147483647, or false, got "1000"',
        ),
      ],
      [
        { enabled: false, refetchInterval: 0 },
        new RangeError(
          'keel: `refetchInterval` must be a positive number of ms, at most 2147483647, or false, got 0',
        ),
      ],
      [{ enabled: false, select: 5 }, new TypeError('keel: `select` must be a function, got 5')],
    ] as const) {
      let options: object = good;
      const { rerender, unmount } = renderHook(
        () => useQuery<Todo[]>('/todos', options as typeof good),
        { wrapper: wrapperFor(client) },
      );
      rerender();
      options = bad;
      expect(() => rerender()).toThrow(error);
      // The same object again: still refused (the failed render changed nothing).
      expect(() =>
        renderHook(() => useQuery<Todo[]>('/todos', bad as typeof good), {
          wrapper: wrapperFor(client),
        }),
      ).toThrow(error);
      unmount();
    }
  });
});
