// Issue #7 option bullets: refetchInterval (on the client's injected clock), placeholderData /
// keepPreviousData while the key changes, the `(vars) => url` form of useMutation, extra
// `invalidate` targets, suspense; against a real @keel/server on loopback.
import { type Client, createClient, isTimeoutError } from '@keel/core';
import { act, render, screen, waitFor } from '@testing-library/react';
import { type ReactNode, Suspense } from 'react';
import { describe, expect, it } from 'vitest';
import {
  ClientProvider,
  keepPreviousData,
  type MutationResult,
  useMutation,
  useQuery,
} from '../../src/index';
import { liveServer, ManualClock, type Todo } from './live-server';

const wrap = (client: Client) =>
  // biome-ignore lint/correctness/noComponentHookFactories: one wrapper per test render, never re-created
  function Wrapper({ children }: { children: ReactNode }) {
    return <ClientProvider client={client}>{children}</ClientProvider>;
  };

function Polled() {
  const { data } = useQuery<Todo[]>('/todos', { refetchInterval: 5000 });
  return <p data-testid="p">{data?.map((t) => t.title).join(',')}</p>;
}

function ById({ id }: { id: number }) {
  const q = useQuery<Todo>(`/todos/${id}`, { placeholderData: keepPreviousData });
  return (
    <p data-testid="by">
      {q.data?.title}:{String(q.isPlaceholderData)}
    </p>
  );
}

function List() {
  const { data } = useQuery<Todo[]>('/todos');
  return <p data-testid="list">{data?.map((t) => t.title).join(',')}</p>;
}

type Remove = MutationResult<unknown, number>;
function Remover({ sink }: { sink: (m: Remove) => void }) {
  sink(
    useMutation<unknown, number>('POST', (id) => `/todos?remove=${id}`, {
      invalidate: '/todos',
      body: () => ({ title: 'added-by-url-fn' }),
    }),
  );
  return null;
}

function Timed({ sink }: { sink: (e: unknown) => void }) {
  const q = useQuery<Todo[]>('/todos', { timeout: 1000, retry: false });
  sink(q.error);
  return <p data-testid="t">{q.status}</p>;
}

function SuspenseList() {
  const { data } = useQuery<Todo[]>('/todos', { suspense: true });
  return <p data-testid="s">{data?.length}</p>;
}

describe('issue #7 useQuery options', () => {
  it('refetchInterval refetches every n ms on the client clock while mounted', async () => {
    const { base, state } = await liveServer();
    const clock = new ManualClock();
    const client = createClient({ baseURL: base, clock });
    const view = render(<Polled />, { wrapper: wrap(client) });
    await waitFor(() => expect(screen.getByTestId('p').textContent).toBe('a,b'));
    expect(state.gets).toBe(1);
    state.todos = [{ id: 5, title: 'e' }];
    act(() => clock.advance(4999));
    await act(async () => {
      await new Promise((r) => setTimeout(r, 20));
    });
    expect(state.gets).toBe(1);
    act(() => clock.advance(1));
    await waitFor(() => expect(screen.getByTestId('p').textContent).toBe('e'));
    expect(state.gets).toBe(2);
    view.unmount();
    await act(async () => {
      await new Promise((r) => setTimeout(r, 10));
    });
    act(() => clock.advance(50_000));
    await act(async () => {
      await new Promise((r) => setTimeout(r, 20));
    });
    expect(state.gets).toBe(2);
  });

  it('placeholderData: keepPreviousData keeps the previous data while the key changes', async () => {
    const { base, state } = await liveServer();
    let release!: () => void;
    const client = createClient({ baseURL: base });
    const view = render(<ById id={1} />, { wrapper: wrap(client) });
    await waitFor(() => expect(screen.getByTestId('by').textContent).toBe('a:false'));
    state.hold = new Promise<void>((r) => {
      release = r;
    });
    // The server holds /todos/2: the previous page stays on screen as a placeholder.
    view.rerender(<ById id={2} />);
    await waitFor(() => expect(state.byId).toBe(2));
    expect(screen.getByTestId('by').textContent).toBe('a:true');
    release();
    await waitFor(() => expect(screen.getByTestId('by').textContent).toBe('b:false'));
  });

  it('suspense: true suspends until the data is there', async () => {
    const { base } = await liveServer();
    const client = createClient({ baseURL: base });
    render(
      <Suspense fallback={<p data-testid="s">loading</p>}>
        <SuspenseList />
      </Suspense>,
      { wrapper: wrap(client) },
    );
    expect(screen.getByTestId('s').textContent).toBe('loading');
    await waitFor(() => expect(screen.getByTestId('s').textContent).toBe('2'));
  });
});

describe('issue #7 "Errors from the core reach error typed" / issue #11', () => {
  it('a request over its timeout (on the client clock) is a TimeoutError in `error`', async () => {
    const { base, state } = await liveServer();
    let release!: () => void;
    state.hold = new Promise<void>((r) => {
      release = r;
    });
    const clock = new ManualClock();
    const client = createClient({ baseURL: base, clock });
    let error: unknown;
    render(<Timed sink={(e) => (error = e)} />, { wrapper: wrap(client) });
    await waitFor(() => expect(state.gets).toBe(1));
    act(() => clock.advance(1000));
    await waitFor(() => expect(screen.getByTestId('t').textContent).toBe('error'));
    expect(isTimeoutError(error)).toBe(true);
    expect(state.gets).toBe(1);
    release();
  });
});

describe('issue #7 useMutation', () => {
  it('url as (vars) => url, and extra invalidate targets refetch the mounted list', async () => {
    const { base, state } = await liveServer();
    const client = createClient({ baseURL: base });
    let remove!: Remove;
    render(
      <>
        <List />
        <Remover sink={(m) => (remove = m)} />
      </>,
      { wrapper: wrap(client) },
    );
    await waitFor(() => expect(screen.getByTestId('list').textContent).toBe('a,b'));
    await act(async () => {
      await remove.mutateAsync(7);
    });
    expect(state.posts.at(-1)).toBe('/todos?remove=7');
    await waitFor(() => expect(screen.getByTestId('list').textContent).toBe('a,b,added-by-url-fn'));
  });
});
