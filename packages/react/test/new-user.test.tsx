/**
 * What a new user does first with the hooks, against the README's contract: StrictMode, keys
 * changed while their reads are in flight, `enabled` toggled mid-read, unmount during a
 * mutation, an inline `select`, invalidation while suspended, `clearCache()` mid-read.
 */
import { act, fireEvent, render, screen } from '@testing-library/react';
import { HttpResponse, http } from 'msw';
import { StrictMode, Suspense, useState } from 'react';
import { hydrateRoot } from 'react-dom/client';
import { renderToString } from 'react-dom/server';
import { describe, expect, it, vi } from 'vitest';
import { FakeClock } from '../../core/test/helpers';
import {
  ClientProvider,
  keepPreviousData,
  useInfiniteQuery,
  useMutation,
  useQuery,
  useSuspenseQuery,
} from '../src/index';
import {
  API,
  consoleErrors,
  debugOf,
  deferred,
  flush,
  mswServer,
  testClient,
  until,
  wrapperFor,
} from './helpers';

const server = mswServer();

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

/** POST /todos answers `{ id: n }` for its n-th request once `gates[n - 1]` (if any) resolves. */
function todosApi(gates: { promise: Promise<void> }[]) {
  const state = { posts: 0 };
  server.use(
    http.post(`${API}/todos`, async () => {
      const n = ++state.posts;
      await gates[n - 1]?.promise;
      return HttpResponse.json({ id: n }, { status: 201 });
    }),
  );
  return state;
}

// Handles the tests drive the mounted components with.
let setItemId: (id: string) => void = () => {};
let setEnabled: (on: boolean) => void = () => {};
let refetchItem: () => Promise<unknown> = async () => {};
let rerenderParent: () => void = () => {};
let setFeedName: (name: string) => void = () => {};
let fetchNextFeedPage: () => Promise<void> = async () => {};

type Item = { id: string };

/** /items/:id of its own id state; `seen` logs `id:data:isPlaceholderData` per render. */
function SwitchingItem({ seen, keepPrevious }: { seen: string[]; keepPrevious?: boolean }) {
  const [id, set] = useState('a');
  setItemId = set;
  const { data, isPlaceholderData } = useQuery<Item>(
    `/items/${id}`,
    keepPrevious ? { placeholderData: keepPreviousData } : undefined,
  );
  seen.push(`${id}:${data?.id ?? '-'}:${isPlaceholderData}`);
  return <p data-testid="item">{`${data?.id ?? '-'}:${isPlaceholderData}`}</p>;
}

/** /items/a, enabled by its own state. */
function ToggledItem({ initiallyEnabled = true }: { initiallyEnabled?: boolean }) {
  const [enabled, set] = useState(initiallyEnabled);
  setEnabled = set;
  const { data, isFetching, status, refetch } = useQuery<Item>('/items/a', { enabled });
  refetchItem = refetch;
  return <p data-testid="item">{`${status}:${isFetching}:${data?.id ?? '-'}`}</p>;
}

function IntervalItem() {
  const { data } = useQuery<Item>('/items/a', { refetchInterval: 1000 });
  return <p data-testid="item">{data?.id ?? '-'}</p>;
}

function SuspendedItem() {
  const { data } = useSuspenseQuery<Item>('/items/a');
  return <p data-testid="item">{data.id}</p>;
}

interface AddProps {
  hook?: { onSuccess?: () => void; onSettled?: () => void };
  onCall?: () => void;
  /** Given: `mutateAsync`, its promise handed over; otherwise `mutate`. */
  onPromise?: (settled: Promise<{ id: number }>) => void;
}

/** POST /todos from a button; shows `status:data.id`. */
function Add({ hook, onCall, onPromise }: AddProps) {
  const add = useMutation<{ id: number }, string>('POST', '/todos', hook);
  const go = () => {
    if (onPromise) onPromise(add.mutateAsync('x', { onSuccess: onCall }));
    else add.mutate('x', { onSuccess: onCall });
  };
  return (
    <>
      <button type="button" onClick={go}>
        go
      </button>
      <button type="button" onClick={() => add.reset()}>
        reset
      </button>
      <p data-testid="state">{`${add.status}:${add.data?.id ?? '-'}`}</p>
    </>
  );
}

/** Two buttons, two calls of one mutation; `calls` logs which callbacks ran. */
function TwoCalls({ calls }: { calls: string[] }) {
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

type Todos = { id: number }[];

/** An inline select returning a new object each time; counts its renders. */
function Count({ counter }: { counter: { renders: number } }) {
  counter.renders++;
  const { data } = useQuery<Todos, { n: number }>('/todos', {
    select: (list) => ({ n: list.length }),
  });
  return <p data-testid="n">{data?.n ?? '-'}</p>;
}

/** The same select in another component: `seen` collects every `data` object it rendered. */
function Probe({ seen }: { seen: Set<unknown> }) {
  const { data } = useQuery<Todos, { n: number }>('/todos', {
    select: (list) => ({ n: list.length }),
  });
  if (data) seen.add(data);
  return null;
}

function Parent({ counter, seen }: { counter: { renders: number }; seen: Set<unknown> }) {
  const [, set] = useState(0);
  rerenderParent = () => set((n) => n + 1);
  return (
    <>
      <Count counter={counter} />
      <Probe seen={seen} />
    </>
  );
}

/** /feed/:name by cursor, one item per page. */
function Feed() {
  const [name, set] = useState('a');
  setFeedName = set;
  const feed = useInfiniteQuery<{ items: string[]; next: number }, number>(`/feed/${name}`, {
    initialPageParam: 0,
    paramsFor: (cursor) => ({ cursor }),
    getNextPageParam: (last) => last.next,
  });
  fetchNextFeedPage = feed.fetchNextPage;
  return <p data-testid="feed">{feed.data?.pages.flatMap((p) => p.items).join(',') ?? '-'}</p>;
}

/** Nothing cached on the server: an inline placeholder (a new array per call), selected. */
function Placeheld() {
  const { data, isPlaceholderData } = useQuery<string[], string>('/names', {
    placeholderData: () => ['…'],
    select: (names) => names.join(' '),
  });
  return <p>{`${data}${isPlaceholderData ? ' (placeholder)' : ''}`}</p>;
}

const text = (id: string) => screen.getByTestId(id).textContent;

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
    render(<SwitchingItem seen={seen} />, { wrapper: wrapperFor(client) });
    await until(() => api.requests.includes('a'));
    act(() => setItemId('b'));
    await until(() => api.requests.includes('b'));
    act(() => setItemId('a'));
    await flush();
    // B answers first: nothing renders it under A.
    b.resolve();
    await flush();
    expect(text('item')).toBe('-:false');
    a.resolve();
    await until(() => text('item') === 'a:false');
    expect(seen.filter((s) => !s.startsWith('a:') && !s.startsWith('b:'))).toEqual([]);
    expect(seen.filter((s) => s.startsWith('a:')).every((s) => /^a:(a|-):false$/.test(s))).toBe(
      true,
    );
    expect(errors).not.toHaveBeenCalled();
  });

  it('keepPreviousData across A -> B -> A: A’s own data is shown as data, never marked placeholder', async () => {
    const api = itemsApi();
    const client = testClient();
    const seen: string[] = [];
    render(<SwitchingItem seen={seen} keepPrevious />, { wrapper: wrapperFor(client) });
    await until(() => text('item') === 'a:false');
    const gate = deferred();
    api.gates.set('b', gate.promise);
    act(() => setItemId('b'));
    expect(text('item')).toBe('a:true');
    act(() => setItemId('a'));
    expect(text('item')).toBe('a:false');
    gate.resolve();
    await flush();
    await flush();
    expect(text('item')).toBe('a:false');
    // Under B, only A's data as a placeholder; under A, never a placeholder.
    expect(seen.filter((s) => s.startsWith('b:')).every((s) => s === 'b:a:true')).toBe(true);
    expect(seen.filter((s) => s.startsWith('a:')).every((s) => s.endsWith(':false'))).toBe(true);
  });

  it('enabled turned off mid-read then on again: the data shows, nothing is stuck fetching', async () => {
    const api = itemsApi();
    const gate = deferred();
    api.gates.set('a', gate.promise);
    const client = testClient();
    render(<ToggledItem />, { wrapper: wrapperFor(client) });
    await until(() => api.requests.length === 1);
    expect(text('item')).toBe('pending:true:-');
    act(() => setEnabled(false));
    await flush();
    expect(text('item')).toBe('pending:false:-');
    act(() => setEnabled(true));
    await flush();
    expect(text('item')).toBe('pending:true:-');
    gate.resolve();
    api.gates.delete('a');
    await until(() => text('item') === 'success:false:a');
    await flush();
    expect(debugOf(client)).toMatchObject({ flights: 0 });
  });

  it('a disabled query fetched by refetch(), then enabled: one read, the data stays', async () => {
    const api = itemsApi();
    const client = testClient();
    render(<ToggledItem initiallyEnabled={false} />, { wrapper: wrapperFor(client) });
    await flush();
    expect(api.requests).toEqual([]);
    await act(async () => {
      await refetchItem();
    });
    expect(text('item')).toBe('success:false:a');
    act(() => setEnabled(true));
    await flush();
    expect(text('item')).toBe('success:false:a');
    // Fresh in the cache: enabling reads it from there.
    expect(api.requests).toEqual(['a']);
  });

  it('StrictMode: one read per mount and one per interval tick, nothing left after unmount', async () => {
    const api = itemsApi();
    const clock = new FakeClock();
    const client = testClient({ clock, timeout: 0, cache: { ttl: 0 } });
    const { unmount } = render(
      <StrictMode>
        <IntervalItem />
      </StrictMode>,
      { wrapper: wrapperFor(client) },
    );
    await until(() => text('item') === 'a');
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

  it('StrictMode: a mutation in flight across the double mount settles into the state once', async () => {
    const errors = consoleErrors();
    const gate = deferred();
    const api = todosApi([gate]);
    const client = testClient();
    const hookSuccess = vi.fn();
    const callSuccess = vi.fn();
    render(
      <StrictMode>
        <Add hook={{ onSuccess: hookSuccess }} onCall={callSuccess} />
      </StrictMode>,
      { wrapper: wrapperFor(client) },
    );
    fireEvent.click(screen.getByText('go'));
    await flush();
    expect(text('state')).toBe('pending:-');
    gate.resolve();
    await until(() => text('state') === 'success:1');
    expect(api.posts).toBe(1);
    expect(hookSuccess).toHaveBeenCalledTimes(1);
    expect(callSuccess).toHaveBeenCalledTimes(1);
    expect(errors).not.toHaveBeenCalled();
  });

  it('unmounted during a mutation: the hook’s onSuccess runs, the call’s does not, no warning', async () => {
    const errors = consoleErrors();
    const gate = deferred();
    todosApi([gate]);
    const client = testClient();
    const onSuccess = vi.fn();
    const onSettled = vi.fn();
    const callSuccess = vi.fn();
    let settled: Promise<unknown> | undefined;
    const { unmount } = render(
      <Add
        hook={{ onSuccess, onSettled }}
        onCall={callSuccess}
        onPromise={(p) => {
          settled = p;
        }}
      />,
      { wrapper: wrapperFor(client) },
    );
    fireEvent.click(screen.getByText('go'));
    await flush();
    unmount();
    gate.resolve();
    await expect(settled).resolves.toEqual({ id: 1 });
    await flush();
    expect(onSuccess).toHaveBeenCalledTimes(1);
    expect(onSettled).toHaveBeenCalledTimes(1);
    expect(callSuccess).not.toHaveBeenCalled();
    expect(errors).not.toHaveBeenCalled();
  });

  it('two quick mutate calls: only the latest writes the state and gets its call callbacks', async () => {
    const gates = [deferred(), deferred()];
    const api = todosApi(gates);
    const client = testClient();
    const calls: string[] = [];
    render(<TwoCalls calls={calls} />, { wrapper: wrapperFor(client) });
    fireEvent.click(screen.getByText('one'));
    fireEvent.click(screen.getByText('two'));
    await until(() => api.posts === 2);
    // The second answers first, the first later: the state stays the second's.
    gates[1]!.resolve();
    await until(() => text('state') === 'success:2:2');
    gates[0]!.resolve();
    await until(() => calls.length === 3);
    await flush();
    expect(text('state')).toBe('success:2:2');
    expect(calls.sort()).toEqual(['call 2', 'hook 1', 'hook 2']);
  });

  it('reset() while a mutation is in flight: it stays idle when that mutation settles', async () => {
    const gate = deferred();
    todosApi([gate]);
    const client = testClient();
    const onSuccess = vi.fn();
    render(<Add hook={{ onSuccess }} />, { wrapper: wrapperFor(client) });
    fireEvent.click(screen.getByText('go'));
    await until(() => text('state') === 'pending:-');
    fireEvent.click(screen.getByText('reset'));
    await flush();
    expect(text('state')).toBe('idle:-');
    gate.resolve();
    await until(() => onSuccess.mock.calls.length === 1);
    await flush();
    expect(text('state')).toBe('idle:-');
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
    const counter = { renders: 0 };
    const seen = new Set<unknown>();
    render(<Parent counter={counter} seen={seen} />, { wrapper: wrapperFor(client) });
    await until(() => text('n') === '2');
    const settled = counter.renders;
    // Parent re-renders give a new select function: data keeps its identity.
    act(() => rerenderParent());
    act(() => rerenderParent());
    expect(seen.size).toBe(1);
    act(() => {
      client.invalidate('/todos');
    });
    await until(() => gets === 2);
    await flush();
    // Two parent renders, none for the equal refetch.
    expect(counter.renders).toBe(settled + 2);
    expect(seen.size).toBe(1);
  });

  it('invalidated while suspended on its first read: it renders the data, no hang, nothing left', async () => {
    const api = itemsApi();
    const first = deferred();
    api.gates.set('a', first.promise);
    const client = testClient();
    const { unmount } = render(
      <Suspense fallback={<p>loading</p>}>
        <SuspendedItem />
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

  it('an infinite list whose URL changes while its next page is in flight: that page never joins the new list', async () => {
    const gates = new Map<string, Promise<void>>();
    const requests: string[] = [];
    server.use(
      http.get(`${API}/feed/:name`, async ({ params, request }) => {
        const cursor = Number(new URL(request.url).searchParams.get('cursor') ?? 0);
        const page = `${params.name}${cursor}`;
        requests.push(page);
        await gates.get(page);
        return HttpResponse.json({ items: [page], next: cursor + 1 });
      }),
    );
    const client = testClient();
    render(<Feed />, { wrapper: wrapperFor(client) });
    await until(() => text('feed') === 'a0');
    const gate = deferred();
    gates.set('a1', gate.promise);
    act(() => {
      void fetchNextFeedPage();
    });
    await until(() => requests.includes('a1'));
    act(() => setFeedName('b'));
    await until(() => text('feed') === 'b0');
    gate.resolve();
    await flush();
    await flush();
    expect(text('feed')).toBe('b0');
    act(() => setFeedName('a'));
    await flush();
    // Back on A: its first page (and the second only if it landed for A), never B's.
    expect(['a0', 'a0,a1']).toContain(text('feed'));
  });

  it('client.clearCache() during the first load (a logout): the query reads again, never stuck blank', async () => {
    const api = itemsApi();
    const gate = deferred();
    api.gates.set('a', gate.promise);
    const client = testClient();
    const { unmount } = render(<ToggledItem />, { wrapper: wrapperFor(client) });
    await until(() => api.requests.length === 1);
    act(() => client.clearCache());
    api.gates.delete('a');
    gate.resolve();
    // The answer from before the clear is not stored: a read after it is.
    await until(() => text('item') === 'success:false:a');
    expect(api.requests).toEqual(['a', 'a']);
    unmount();
    await flush();
    expect(debugOf(client)).toMatchObject({ flights: 0, subscriptions: 0 });
  });

  it('hydration of a query the server had no data for: the inline placeholder matches, then the data shows', async () => {
    server.use(http.get(`${API}/names`, () => HttpResponse.json(['ada', 'bo'])));
    const html = renderToString(
      <ClientProvider client={testClient()}>
        <Placeheld />
      </ClientProvider>,
    );
    expect(html).toBe('<p>… (placeholder)</p>');
    const container = document.createElement('div');
    container.innerHTML = html;
    const errors = consoleErrors();
    const recoverable: unknown[] = [];
    const client = testClient();
    let root!: ReturnType<typeof hydrateRoot>;
    await act(async () => {
      root = hydrateRoot(
        container,
        <ClientProvider client={client}>
          <Placeheld />
        </ClientProvider>,
        { onRecoverableError: (error) => recoverable.push(error) },
      );
    });
    await until(() => container.textContent === 'ada bo');
    expect(recoverable).toEqual([]);
    expect(errors).not.toHaveBeenCalled();
    act(() => root.unmount());
    await flush();
    expect(debugOf(client)).toMatchObject({ flights: 0, subscriptions: 0 });
  });
});
