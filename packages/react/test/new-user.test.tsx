/**
 * What a new user does first with the hooks, against the README's contract: StrictMode, keys
 * changed while their reads are in flight, `enabled` toggled mid-read, unmount during a
 * mutation, an inline `select`, invalidation while suspended.
 */
import { act, fireEvent, render, screen } from '@testing-library/react';
import { HttpResponse, http } from 'msw';
import { StrictMode, Suspense, useState } from 'react';
import { describe, expect, it, onTestFinished, vi } from 'vitest';
import { FakeClock } from '../../core/test/helpers';
import {
  keepPreviousData,
  useInfiniteQuery,
  useMutation,
  useQuery,
  useSuspenseQuery,
} from '../src/index';
import { API, debugOf, deferred, flush, mswServer, testClient, until, wrapperFor } from './helpers';

const server = mswServer();

/** React's warnings (console.error) during the test; restored after it. */
function consoleErrors() {
  const spy = vi.spyOn(console, 'error').mockImplementation(() => {});
  onTestFinished(() => spy.mockRestore());
  return spy;
}

/** GET /items/:id answers `{ id }`, each id's requests waiting for its gate while one is set. */
function itemsApi() {
  const gates = new Map<string, Promise<void>>();
  const requests: string[] = [];
  server.use(
    http.get(`${API}/items/:id`, async ({ params }) => {
      const id = String(params.id);
      requests.push(id);
      await gates.get(id);
      return HttpResponse.json({ id });
    }),
  );
  return { gates, requests };
}

describe('a new user’s first hour', () => {
  it('key A -> B -> A while A is in flight: A shows A’s data, B’s never shows under A', async () => {
    const errors = consoleErrors();
    const api = itemsApi();
    const a = deferred();
    const b = deferred();
    api.gates.set('a', a.promise);
    api.gates.set('b', b.promise);
    const client = testClient();
    const seen: string[] = [];
    let setId!: (id: string) => void;
    function Item() {
      const [id, set] = useState('a');
      setId = set;
      const { data } = useQuery<{ id: string }>(`/items/${id}`);
      if (data) seen.push(`${id}:${data.id}`);
      return <p data-testid="item">{data ? data.id : '-'}</p>;
    }
    render(<Item />, { wrapper: wrapperFor(client) });
    await until(() => api.requests.includes('a'));
    act(() => setId('b'));
    await until(() => api.requests.includes('b'));
    act(() => setId('a'));
    await flush();
    // B answers first: nothing renders it under A.
    b.resolve();
    await flush();
    expect(screen.getByTestId('item').textContent).toBe('-');
    a.resolve();
    await until(() => screen.getByTestId('item').textContent === 'a');
    expect(seen.every((s) => s === 'a:a')).toBe(true);
    expect(errors).not.toHaveBeenCalled();
  });

  it('enabled turned off mid-read then on again: the data shows, nothing is stuck fetching', async () => {
    const api = itemsApi();
    const gate = deferred();
    api.gates.set('a', gate.promise);
    const client = testClient();
    let setEnabled!: (on: boolean) => void;
    function Item() {
      const [enabled, set] = useState(true);
      setEnabled = set;
      const { data, isFetching, status } = useQuery<{ id: string }>('/items/a', { enabled });
      return <p data-testid="item">{`${status}:${isFetching}:${data?.id ?? '-'}`}</p>;
    }
    render(<Item />, { wrapper: wrapperFor(client) });
    await until(() => api.requests.length === 1);
    expect(screen.getByTestId('item').textContent).toBe('pending:true:-');
    act(() => setEnabled(false));
    await flush();
    expect(screen.getByTestId('item').textContent).toBe('pending:false:-');
    act(() => setEnabled(true));
    await flush();
    expect(screen.getByTestId('item').textContent).toBe('pending:true:-');
    gate.resolve();
    api.gates.delete('a');
    await until(() => screen.getByTestId('item').textContent === 'success:false:a');
    await flush();
    expect(debugOf(client)).toMatchObject({ flights: 0 });
  });

  it('StrictMode: a mutation in flight across the double mount settles into the state once', async () => {
    const errors = consoleErrors();
    const gate = deferred();
    let posts = 0;
    server.use(
      http.post(`${API}/todos`, async () => {
        posts++;
        await gate.promise;
        return HttpResponse.json({ id: 1 }, { status: 201 });
      }),
    );
    const client = testClient();
    const hookSuccess = vi.fn();
    const callSuccess = vi.fn();
    function Add() {
      const add = useMutation<{ id: number }, { title: string }>('POST', '/todos', {
        onSuccess: hookSuccess,
      });
      return (
        <button
          type="button"
          onClick={() => add.mutate({ title: 'x' }, { onSuccess: callSuccess })}
        >
          {`${add.status}:${add.data?.id ?? '-'}`}
        </button>
      );
    }
    render(
      <StrictMode>
        <Add />
      </StrictMode>,
      { wrapper: wrapperFor(client) },
    );
    fireEvent.click(screen.getByRole('button'));
    await flush();
    expect(screen.getByRole('button').textContent).toBe('pending:-');
    gate.resolve();
    await until(() => screen.getByRole('button').textContent === 'success:1');
    expect(posts).toBe(1);
    expect(hookSuccess).toHaveBeenCalledTimes(1);
    expect(callSuccess).toHaveBeenCalledTimes(1);
    expect(errors).not.toHaveBeenCalled();
  });

  it('unmounted during a mutation: the hook’s onSuccess runs, the call’s does not, no warning', async () => {
    const errors = consoleErrors();
    const gate = deferred();
    server.use(
      http.post(`${API}/todos`, async () => {
        await gate.promise;
        return HttpResponse.json({ id: 1 }, { status: 201 });
      }),
    );
    const client = testClient();
    const hookSuccess = vi.fn();
    const hookSettled = vi.fn();
    const callSuccess = vi.fn();
    let settled: Promise<unknown> | undefined;
    function Add() {
      const add = useMutation<{ id: number }, { title: string }>('POST', '/todos', {
        onSuccess: hookSuccess,
        onSettled: hookSettled,
      });
      return (
        <button
          type="button"
          onClick={() => {
            settled = add.mutateAsync({ title: 'x' }, { onSuccess: callSuccess });
          }}
        >
          {add.status}
        </button>
      );
    }
    const { unmount } = render(<Add />, { wrapper: wrapperFor(client) });
    fireEvent.click(screen.getByRole('button'));
    await flush();
    unmount();
    gate.resolve();
    await expect(settled).resolves.toEqual({ id: 1 });
    await flush();
    expect(hookSuccess).toHaveBeenCalledTimes(1);
    expect(hookSettled).toHaveBeenCalledTimes(1);
    expect(callSuccess).not.toHaveBeenCalled();
    expect(errors).not.toHaveBeenCalled();
  });

  it('an inline select returning a new object each time: stable renders, equal refetch renders nothing', async () => {
    let gets = 0;
    server.use(
      http.get(`${API}/todos`, () => {
        gets++;
        return HttpResponse.json([{ id: 1 }, { id: 2 }]);
      }),
    );
    const client = testClient();
    let renders = 0;
    let parent!: () => void;
    function Count() {
      renders++;
      const { data } = useQuery<{ id: number }[], { n: number }>('/todos', {
        select: (list) => ({ n: list.length }),
      });
      return <p data-testid="n">{data?.n ?? '-'}</p>;
    }
    const seenData = new Set<unknown>();
    function Probe() {
      const { data } = useQuery<{ id: number }[], { n: number }>('/todos', {
        select: (list) => ({ n: list.length }),
      });
      if (data) seenData.add(data);
      return null;
    }
    function Parent() {
      const [, set] = useState(0);
      parent = () => set((n) => n + 1);
      return (
        <>
          <Count />
          <Probe />
        </>
      );
    }
    render(<Parent />, { wrapper: wrapperFor(client) });
    await until(() => screen.getByTestId('n').textContent === '2');
    const settled = renders;
    // A parent re-render with a new select function: data keeps its identity.
    act(() => parent());
    act(() => parent());
    expect(seenData.size).toBe(1);
    act(() => {
      client.invalidate('/todos');
    });
    await until(() => gets === 2);
    await flush();
    // Two parent renders, none for the equal refetch.
    expect(renders).toBe(settled + 2);
    expect(seenData.size).toBe(1);
  });

  it('invalidated while suspended on its first read: it renders the data, no hang, nothing left', async () => {
    const api = itemsApi();
    const first = deferred();
    api.gates.set('a', first.promise);
    const client = testClient();
    function Item() {
      const { data } = useSuspenseQuery<{ id: string }>('/items/a');
      return <p data-testid="item">{data.id}</p>;
    }
    const { unmount } = render(
      <Suspense fallback={<p>loading</p>}>
        <Item />
      </Suspense>,
      { wrapper: wrapperFor(client) },
    );
    await until(() => api.requests.length === 1);
    expect(screen.getByText('loading')).toBeTruthy();
    act(() => {
      client.invalidate('/items');
    });
    await flush();
    api.gates.delete('a');
    first.resolve();
    await until(() => screen.queryByTestId('item')?.textContent === 'a');
    expect(api.requests.length).toBeLessThanOrEqual(2);
    unmount();
    await flush();
    await flush();
    expect(debugOf(client)).toMatchObject({ flights: 0, subscriptions: 0 });
  });

  it('StrictMode: one read per mount and one per interval tick, nothing left after unmount', async () => {
    const api = itemsApi();
    const clock = new FakeClock();
    const client = testClient({ clock, timeout: 0, cache: { ttl: 0 } });
    function Item() {
      const { data } = useQuery<{ id: string }>('/items/a', { refetchInterval: 1000 });
      return <p data-testid="item">{data?.id ?? '-'}</p>;
    }
    const { unmount } = render(
      <StrictMode>
        <Item />
      </StrictMode>,
      { wrapper: wrapperFor(client) },
    );
    await until(() => screen.getByTestId('item').textContent === 'a');
    expect(api.requests).toEqual(['a']);
    await act(() => clock.advance(1000));
    await until(() => api.requests.length === 2);
    await flush();
    expect(api.requests.length).toBe(2);
    unmount();
    await flush();
    expect(clock.live).toBe(0);
    expect(debugOf(client)).toMatchObject({ flights: 0, subscriptions: 0 });
  });

  it('two quick mutate calls: only the latest writes the state and gets its call callbacks', async () => {
    const gates = [deferred(), deferred()];
    let n = 0;
    server.use(
      http.post(`${API}/todos`, async () => {
        const i = n++;
        await gates[i]!.promise;
        return HttpResponse.json({ id: i + 1 }, { status: 201 });
      }),
    );
    const client = testClient();
    const calls: string[] = [];
    function Add() {
      const add = useMutation<{ id: number }, string>('POST', '/todos', {
        onSuccess: (data) => calls.push(`hook ${data.id}`),
      });
      return (
        <>
          <button
            type="button"
            onClick={() => add.mutate('1', { onSuccess: () => calls.push('call 1') })}
          >
            one
          </button>
          <button
            type="button"
            onClick={() => add.mutate('2', { onSuccess: () => calls.push('call 2') })}
          >
            two
          </button>
          <p data-testid="state">{`${add.status}:${add.data?.id ?? '-'}:${add.variables ?? '-'}`}</p>
        </>
      );
    }
    render(<Add />, { wrapper: wrapperFor(client) });
    fireEvent.click(screen.getByText('one'));
    fireEvent.click(screen.getByText('two'));
    await until(() => n === 2);
    // The second answers first, the first later: the state stays the second's.
    gates[1]!.resolve();
    await until(() => screen.getByTestId('state').textContent === 'success:2:2');
    gates[0]!.resolve();
    await until(() => calls.length === 3);
    await flush();
    expect(screen.getByTestId('state').textContent).toBe('success:2:2');
    expect(calls.sort()).toEqual(['call 2', 'hook 1', 'hook 2']);
  });

  it('reset() while a mutation is in flight: it stays idle when that mutation settles', async () => {
    const gate = deferred();
    server.use(
      http.post(`${API}/todos`, async () => {
        await gate.promise;
        return HttpResponse.json({ id: 1 }, { status: 201 });
      }),
    );
    const client = testClient();
    const hookSuccess = vi.fn();
    function Add() {
      const add = useMutation<{ id: number }, string>('POST', '/todos', { onSuccess: hookSuccess });
      return (
        <>
          <button type="button" onClick={() => add.mutate('x')}>
            go
          </button>
          <button type="button" onClick={() => add.reset()}>
            reset
          </button>
          <p data-testid="state">{add.status}</p>
        </>
      );
    }
    render(<Add />, { wrapper: wrapperFor(client) });
    fireEvent.click(screen.getByText('go'));
    await until(() => screen.getByTestId('state').textContent === 'pending');
    fireEvent.click(screen.getByText('reset'));
    await flush();
    expect(screen.getByTestId('state').textContent).toBe('idle');
    gate.resolve();
    await until(() => hookSuccess.mock.calls.length === 1);
    await flush();
    expect(screen.getByTestId('state').textContent).toBe('idle');
  });

  it('keepPreviousData across A -> B -> A: A’s own data is shown as data, never marked placeholder', async () => {
    const api = itemsApi();
    const client = testClient();
    let setId!: (id: string) => void;
    const seen: string[] = [];
    function Item() {
      const [id, set] = useState('a');
      setId = set;
      const { data, isPlaceholderData } = useQuery<{ id: string }>(`/items/${id}`, {
        placeholderData: keepPreviousData,
      });
      seen.push(`${id}:${data?.id ?? '-'}:${isPlaceholderData}`);
      return <p data-testid="item">{`${data?.id ?? '-'}:${isPlaceholderData}`}</p>;
    }
    render(<Item />, { wrapper: wrapperFor(client) });
    await until(() => screen.getByTestId('item').textContent === 'a:false');
    const gate = deferred();
    api.gates.set('b', gate.promise);
    act(() => setId('b'));
    expect(screen.getByTestId('item').textContent).toBe('a:true');
    act(() => setId('a'));
    expect(screen.getByTestId('item').textContent).toBe('a:false');
    gate.resolve();
    await flush();
    await flush();
    expect(screen.getByTestId('item').textContent).toBe('a:false');
    // Under B, only A's data as a placeholder; under A, never a placeholder.
    expect(seen.filter((s) => s.startsWith('b:')).every((s) => s === 'b:a:true')).toBe(true);
    expect(seen.filter((s) => s.startsWith('a:')).every((s) => s.endsWith(':false'))).toBe(true);
  });

  it('a disabled query fetched by refetch(), then enabled: one read, the data stays', async () => {
    const api = itemsApi();
    const client = testClient();
    let setEnabled!: (on: boolean) => void;
    let refetch!: () => Promise<unknown>;
    function Item() {
      const [enabled, set] = useState(false);
      setEnabled = set;
      const q = useQuery<{ id: string }>('/items/a', { enabled });
      refetch = q.refetch;
      return <p data-testid="item">{`${q.status}:${q.data?.id ?? '-'}`}</p>;
    }
    render(<Item />, { wrapper: wrapperFor(client) });
    await flush();
    expect(api.requests).toEqual([]);
    await act(async () => {
      await refetch();
    });
    expect(screen.getByTestId('item').textContent).toBe('success:a');
    act(() => setEnabled(true));
    await flush();
    expect(screen.getByTestId('item').textContent).toBe('success:a');
    // Fresh in the cache: enabling reads it from there.
    expect(api.requests).toEqual(['a']);
  });

  it('an infinite list whose URL changes while its next page is in flight: that page never joins the new list', async () => {
    const gates = new Map<string, Promise<void>>();
    const requests: string[] = [];
    server.use(
      http.get(`${API}/feed/:name`, async ({ params, request }) => {
        const name = String(params.name);
        const cursor = Number(new URL(request.url).searchParams.get('cursor') ?? 0);
        requests.push(`${name}${cursor}`);
        await gates.get(`${name}${cursor}`);
        return HttpResponse.json({ items: [`${name}${cursor}`], next: cursor + 1 });
      }),
    );
    const client = testClient();
    let setName!: (name: string) => void;
    let next!: () => Promise<void>;
    function Feed() {
      const [name, set] = useState('a');
      setName = set;
      const feed = useInfiniteQuery<{ items: string[]; next: number }, number>(`/feed/${name}`, {
        initialPageParam: 0,
        paramsFor: (cursor) => ({ cursor }),
        getNextPageParam: (last) => last.next,
      });
      next = feed.fetchNextPage;
      return <p data-testid="feed">{feed.data?.pages.flatMap((p) => p.items).join(',') ?? '-'}</p>;
    }
    render(<Feed />, { wrapper: wrapperFor(client) });
    await until(() => screen.getByTestId('feed').textContent === 'a0');
    const gate = deferred();
    gates.set('a1', gate.promise);
    act(() => {
      void next();
    });
    await until(() => requests.includes('a1'));
    act(() => setName('b'));
    await until(() => screen.getByTestId('feed').textContent === 'b0');
    gate.resolve();
    await flush();
    await flush();
    expect(screen.getByTestId('feed').textContent).toBe('b0');
    act(() => setName('a'));
    await flush();
    // Back on A: its first page (and the second only if it landed for A), never B's.
    expect(['a0', 'a0,a1']).toContain(screen.getByTestId('feed').textContent);
  });

  it('client.clearCache() during the first load (a logout): the query reads again, never stuck blank', async () => {
    const api = itemsApi();
    const gate = deferred();
    api.gates.set('a', gate.promise);
    const client = testClient();
    function Item() {
      const { data, isFetching, status } = useQuery<{ id: string }>('/items/a');
      return <p data-testid="item">{`${status}:${isFetching}:${data?.id ?? '-'}`}</p>;
    }
    const { unmount } = render(<Item />, { wrapper: wrapperFor(client) });
    await until(() => api.requests.length === 1);
    act(() => client.clearCache());
    api.gates.delete('a');
    gate.resolve();
    // The answer from before the clear is not stored: a read after it is.
    await until(() => screen.getByTestId('item').textContent === 'success:false:a');
    expect(api.requests).toEqual(['a', 'a']);
    unmount();
    await flush();
    expect(debugOf(client)).toMatchObject({ flights: 0, subscriptions: 0 });
  });
});
