// Issue #7 (API and "How it must work" / "Tests" bullets) and issue #13 (invalidation on the
// wire, echo suppression) against a real @keel/server on loopback. Only @keel/react's and
// @keel/core's public exports are used.
import { type Client, createClient, HttpError, inspect, isHttpError } from '@keel/core';
import { act, render, screen, waitFor } from '@testing-library/react';
import { type ReactNode, StrictMode } from 'react';
import { describe, expect, it, vi } from 'vitest';
import {
  ClientProvider,
  type MutationResult,
  queryOptions,
  type ServerEventHandlers,
  type ServerEventsOptions,
  sourceHeaders,
  type UseMutationOptions,
  useClient,
  useMutation,
  useQuery,
  useServerEvents,
} from '../../src/index';
import { liveServer, ManualClock, type Todo } from './live-server';

type Add = MutationResult<Todo, { title: string }>;
const todosQuery = queryOptions<Todo[]>('/todos');

const wrap = (client: Client) =>
  // biome-ignore lint/correctness/noComponentHookFactories: one wrapper per test render, never re-created
  function Wrapper({ children }: { children: ReactNode }) {
    return <ClientProvider client={client}>{children}</ClientProvider>;
  };

function TodoList() {
  const { data, status, isLoading } = useQuery<Todo[]>('/todos');
  return (
    <p data-testid="list">
      {status}:{String(isLoading)}:{data?.map((t) => t.title).join(',') ?? ''}
    </p>
  );
}

function ShowClient({ sink }: { sink: (c: Client) => void }) {
  sink(useClient());
  return null;
}

function Off() {
  const a = useQuery<Todo[]>(null);
  const b = useQuery<Todo[]>('/todos', { enabled: false });
  return (
    <p data-testid="off">
      {a.status},{b.status},{String(b.isFetching)}
    </p>
  );
}

function DataOnly({ onRender }: { onRender: () => void }) {
  const { data } = useQuery<Todo[]>('/todos');
  onRender();
  return <p data-testid="d">{data?.length ?? '-'}</p>;
}

function One({ sink }: { sink: (error: unknown) => void }) {
  const q = useQuery<Todo>('/todos/99');
  sink(q.error);
  return <p data-testid="one">{q.status}</p>;
}

function Count() {
  const q = useQuery<Todo[], number>('/todos', {
    select: (todos) => todos.length,
    initialData: [{ id: 9, title: 'seed' }],
  });
  return <p data-testid="n">{q.data}</p>;
}

function Reader() {
  useQuery(todosQuery);
  return null;
}

function Two({ both }: { both: boolean }) {
  return (
    <>
      <TodoList />
      {both ? <TodoList /> : null}
    </>
  );
}

function Mutator({
  sink,
  options,
}: {
  sink: (m: Add) => void;
  options?: UseMutationOptions<Todo, { title: string }>;
}) {
  const m = useMutation<Todo, { title: string }>('POST', '/todos', options);
  sink(m);
  return <p data-testid="m">{m.status}</p>;
}

function EchoMutator({ sink }: { sink: (m: Add) => void }) {
  // Cross-origin from jsdom's page: the README says to add the header by hand there.
  const m = useMutation<Todo, { title: string }>('POST', '/todos', {
    headers: sourceHeaders(useClient()),
  });
  sink(m);
  return null;
}

function Listener({
  id,
  handlers,
  options,
}: {
  id: string;
  handlers?: ServerEventHandlers;
  options?: ServerEventsOptions;
}) {
  const s = useServerEvents('/events', handlers, options);
  return <p data-testid={id}>{s.status}</p>;
}

function OneTodo() {
  const one = useQuery<Todo>('/todos/1');
  return <p data-testid="one">{one.data?.title}</p>;
}

describe('issue #7: ClientProvider / useClient', () => {
  it("useClient() returns the provider's client and throws outside a provider", async () => {
    const client = createClient({ baseURL: 'http://127.0.0.1:9' });
    let got: Client | undefined;
    render(<ShowClient sink={(c) => (got = c)} />, { wrapper: wrap(client) });
    expect(got).toBe(client);
    const quiet = vi.spyOn(console, 'error').mockImplementation(() => {}); // React logs the throw
    try {
      expect(() => render(<ShowClient sink={() => {}} />)).toThrow();
    } finally {
      quiet.mockRestore();
    }
  });
});

describe('issue #7: useQuery', () => {
  it('loading -> success: status pending with isLoading, then success with the data', async () => {
    const { base } = await liveServer();
    const client = createClient({ baseURL: base });
    render(<TodoList />, { wrapper: wrap(client) });
    expect(screen.getByTestId('list').textContent).toBe('pending:true:');
    await waitFor(() => expect(screen.getByTestId('list').textContent).toBe('success:false:a,b'));
  });

  it('a null URL or enabled:false means no request', async () => {
    const { base, state } = await liveServer();
    const client = createClient({ baseURL: base });
    render(<Off />, { wrapper: wrap(client) });
    await act(async () => {
      await new Promise((r) => setTimeout(r, 20));
    });
    expect(screen.getByTestId('off').textContent).toBe('pending,pending,false');
    expect(state.gets).toBe(0);
  });

  it('identical queries mounted together make one request; StrictMode double mounting adds none', async () => {
    const { base, state } = await liveServer();
    const client = createClient({ baseURL: base });
    render(
      <StrictMode>
        <TodoList />
        <TodoList />
        <TodoList />
      </StrictMode>,
      { wrapper: wrap(client) },
    );
    await waitFor(() =>
      expect(screen.getAllByTestId('list').map((n) => n.textContent)).toEqual([
        'success:false:a,b',
        'success:false:a,b',
        'success:false:a,b',
      ]),
    );
    expect(state.gets).toBe(1);
  });

  it('invalidate refetches a mounted query; it re-renders with the revalidated data', async () => {
    const { base, state } = await liveServer();
    const client = createClient({ baseURL: base });
    render(<TodoList />, { wrapper: wrap(client) });
    await waitFor(() => expect(screen.getByTestId('list').textContent).toBe('success:false:a,b'));
    state.todos = [...state.todos, { id: 3, title: 'c' }];
    await act(async () => {
      client.invalidate('/todos');
    });
    await waitFor(() => expect(screen.getByTestId('list').textContent).toBe('success:false:a,b,c'));
    expect(state.gets).toBe(2);
  });

  it('render counts: an equal refetch does not re-render a component that reads only data', async () => {
    const { base, state } = await liveServer();
    const client = createClient({ baseURL: base });
    let renders = 0;
    render(<DataOnly onRender={() => renders++} />, { wrapper: wrap(client) });
    await waitFor(() => expect(screen.getByTestId('d').textContent).toBe('2'));
    const settled = renders;
    await act(async () => {
      client.invalidate('/todos');
    });
    await waitFor(() => expect(state.gets).toBe(2));
    await act(async () => {
      await new Promise((r) => setTimeout(r, 30));
    });
    expect(renders).toBe(settled);
  });

  it('cancellation on unmount aborts a request no other consumer needs', async () => {
    const { base, state } = await liveServer();
    let release!: () => void;
    state.hold = new Promise<void>((r) => {
      release = r;
    });
    const client = createClient({ baseURL: base });
    const view = render(<TodoList />, { wrapper: wrap(client) });
    await waitFor(() => expect(state.gets).toBe(1));
    view.unmount();
    await waitFor(() => expect(state.abandoned).toBe(1));
    release();
  });

  it('an unmount does not abort a request another mounted consumer still needs', async () => {
    const { base, state } = await liveServer();
    let release!: () => void;
    state.hold = new Promise<void>((r) => {
      release = r;
    });
    const client = createClient({ baseURL: base });
    const view = render(<Two both />, { wrapper: wrap(client) });
    await waitFor(() => expect(state.gets).toBe(1));
    view.rerender(<Two both={false} />);
    await act(async () => {
      await new Promise((r) => setTimeout(r, 20));
    });
    release();
    await waitFor(() => expect(screen.getByTestId('list').textContent).toBe('success:false:a,b'));
    expect(state.abandoned).toBe(0);
    expect(state.gets).toBe(1);
  });

  it('errors from the core reach `error` typed (HttpError with status)', async () => {
    const { base } = await liveServer();
    const client = createClient({ baseURL: base });
    let seen: unknown;
    render(<One sink={(e) => (seen = e)} />, { wrapper: wrap(client) });
    await waitFor(() => expect(screen.getByTestId('one').textContent).toBe('error'));
    expect(isHttpError(seen)).toBe(true);
    expect(seen).toBeInstanceOf(HttpError);
    expect((seen as HttpError).status).toBe(404);
  });

  it('select and initialData (issue #7 options)', async () => {
    const { base, state } = await liveServer();
    const client = createClient({ baseURL: base });
    render(<Count />, { wrapper: wrap(client) });
    expect(screen.getByTestId('n').textContent).toBe('1');
    await act(async () => {
      await new Promise((r) => setTimeout(r, 20));
    });
    // initialData is fresh for the cache ttl: no request follows (README).
    expect(state.gets).toBe(0);
  });

  it('unmount releases interest: no subscriber left after 10,000 mount/unmount cycles', async () => {
    const { base } = await liveServer();
    const client = createClient({ baseURL: base });
    const first = render(<Reader />, { wrapper: wrap(client) });
    await waitFor(() => expect(inspect(client).cache()[0]?.response.data).toBeDefined());
    first.unmount();
    for (let i = 0; i < 10_000; i++) {
      const r = render(<Reader />, { wrapper: wrap(client) });
      r.unmount();
    }
    await act(async () => {
      await new Promise((r) => setTimeout(r, 10));
    });
    const entries = inspect(client).cache();
    expect(entries.map((e) => e.subscribers)).toEqual([0]);
    expect(inspect(client).flights()).toEqual([]);
  }, 120_000);
});

describe('issue #7: useMutation', () => {
  it('status idle -> pending -> success; a mutation invalidating a list refetches it', async () => {
    const { base } = await liveServer();
    const client = createClient({ baseURL: base });
    let add!: Add;
    render(
      <>
        <TodoList />
        <Mutator sink={(m) => (add = m)} />
      </>,
      { wrapper: wrap(client) },
    );
    await waitFor(() => expect(screen.getByTestId('list').textContent).toBe('success:false:a,b'));
    expect(screen.getByTestId('m').textContent).toBe('idle');
    let result: Todo | undefined;
    await act(async () => {
      result = await add.mutateAsync({ title: 'c' });
    });
    expect(result).toEqual({ id: 3, title: 'c' });
    await waitFor(() => expect(screen.getByTestId('m').textContent).toBe('success'));
    await waitFor(() => expect(screen.getByTestId('list').textContent).toBe('success:false:a,b,c'));
  });

  it('optimistic update (onMutate) is rolled back on error; onError / onSettled run', async () => {
    const { base, state } = await liveServer();
    state.failPosts = true;
    const client = createClient({ baseURL: base });
    const calls: string[] = [];
    let add!: Add;
    let release!: () => void;
    const options: UseMutationOptions<Todo, { title: string }> = {
      onMutate: async (vars, { cancelReads, setQueryData }) => {
        cancelReads('/todos');
        setQueryData(todosQuery, (list = []) => [...list, { id: -1, title: vars.title }]);
        calls.push('onMutate');
        await new Promise<void>((r) => {
          release = r;
        });
      },
      onError: (err) => {
        calls.push(`onError:${isHttpError(err) ? err.status : '?'}`);
      },
      onSettled: () => {
        calls.push('onSettled');
      },
    };
    render(
      <>
        <TodoList />
        <Mutator sink={(m) => (add = m)} options={options} />
      </>,
      { wrapper: wrap(client) },
    );
    await waitFor(() => expect(screen.getByTestId('list').textContent).toBe('success:false:a,b'));
    act(() => add.mutate({ title: 'opt' }));
    await waitFor(() =>
      expect(screen.getByTestId('list').textContent).toBe('success:false:a,b,opt'),
    );
    await act(async () => release());
    await waitFor(() => expect(screen.getByTestId('m').textContent).toBe('error'));
    await waitFor(() => expect(screen.getByTestId('list').textContent).toBe('success:false:a,b'));
    expect(calls).toEqual(['onMutate', 'onError:500', 'onSettled']);
  });

  it('reset() returns to idle', async () => {
    const { base } = await liveServer();
    const client = createClient({ baseURL: base });
    let add!: Add;
    render(<Mutator sink={(m) => (add = m)} />, { wrapper: wrap(client) });
    await act(async () => {
      await add.mutateAsync({ title: 'z' });
    });
    await waitFor(() => expect(screen.getByTestId('m').textContent).toBe('success'));
    act(() => add.reset());
    await waitFor(() => expect(screen.getByTestId('m').textContent).toBe('idle'));
  });
});

describe('issue #7 / #13: useServerEvents against a real event hub', () => {
  it('one shared connection per URL however many components use it; closed when the last unmounts', async () => {
    const { base, hub, state } = await liveServer();
    const client = createClient({ baseURL: base });
    const got: unknown[][] = [[], [], []];
    const view = render(
      <>
        <Listener id="s0" handlers={{ hello: (data) => got[0]?.push(data) }} />
        <Listener id="s1" handlers={{ hello: (data) => got[1]?.push(data) }} />
        <Listener id="s2" handlers={{ hello: (data) => got[2]?.push(data) }} />
      </>,
      { wrapper: wrap(client) },
    );
    await waitFor(() => expect(hub.size).toBe(1));
    await waitFor(() => expect(screen.getByTestId('s0').textContent).toBe('open'));
    await hub.publish('hello', { n: 1 });
    await waitFor(() => expect(got).toEqual([[{ n: 1 }], [{ n: 1 }], [{ n: 1 }]]));
    expect(state.connects).toHaveLength(1);
    view.unmount();
    await waitFor(() => expect(hub.size).toBe(0));
  });

  it('the declarative {invalidate: {event: target}} form calls client.invalidate', async () => {
    const { base, hub, state } = await liveServer();
    const client = createClient({ baseURL: base });
    render(
      <>
        <Listener id="s" handlers={{ invalidate: { 'todos-changed': '/todos' } }} />
        <TodoList />
      </>,
      { wrapper: wrap(client) },
    );
    await waitFor(() => expect(screen.getByTestId('list').textContent).toBe('success:false:a,b'));
    await waitFor(() => expect(hub.size).toBe(1));
    state.todos = [{ id: 7, title: 'z' }];
    await hub.publish('todos-changed', {});
    await waitFor(() => expect(screen.getByTestId('list').textContent).toBe('success:false:z'));
  });

  it('issue #13: hub.invalidate(target) -> every mounted query under it refetches, with no handler code', async () => {
    const { base, hub, state } = await liveServer();
    const client = createClient({ baseURL: base });
    render(
      <>
        <Listener id="s" />
        <TodoList />
        <OneTodo />
      </>,
      { wrapper: wrap(client) },
    );
    await waitFor(() => expect(screen.getByTestId('one').textContent).toBe('a'));
    await waitFor(() => expect(hub.size).toBe(1));
    state.todos = [
      { id: 1, title: 'A' },
      { id: 2, title: 'B' },
    ];
    await hub.invalidate('/todos');
    await waitFor(() => expect(screen.getByTestId('list').textContent).toBe('success:false:A,B'));
    await waitFor(() => expect(screen.getByTestId('one').textContent).toBe('A'));
  });

  it('issue #13: the tab that made the mutation does not refetch twice (its echo is recognised)', async () => {
    const { base, hub, state } = await liveServer();
    const client = createClient({ baseURL: base });
    const fences: unknown[] = [];
    let add!: Add;
    render(
      <>
        <Listener id="s" handlers={{ fence: (d) => fences.push(d) }} />
        <EchoMutator sink={(m) => (add = m)} />
        <TodoList />
      </>,
      { wrapper: wrap(client) },
    );
    await waitFor(() => expect(screen.getByTestId('list').textContent).toBe('success:false:a,b'));
    await waitFor(() => expect(hub.size).toBe(1));
    await act(async () => {
      await add.mutateAsync({ title: 'c' });
    });
    await waitFor(() => expect(screen.getByTestId('list').textContent).toBe('success:false:a,b,c'));
    expect(state.sources[0]).toMatch(/^[A-Za-z0-9_-]{1,64}$/);
    // An event published after the echo: once it arrived, the echo has been handled.
    await hub.publish('fence', 1);
    await waitFor(() => expect(fences).toEqual([1]));
    await act(async () => {
      await new Promise((r) => setTimeout(r, 20));
    });
    expect(state.gets).toBe(2); // the first load, and the mutation's own invalidation
  });

  it('reconnects with backoff and Last-Event-ID after the server drops the stream; the missed events are replayed', async () => {
    const { base, hub, state } = await liveServer();
    const clock = new ManualClock();
    const client = createClient({ baseURL: base });
    const got: unknown[] = [];
    render(
      <Listener
        id="s"
        handlers={{ tick: (d) => got.push(d) }}
        options={{ clock, reconnect: { initialDelay: 1000, maxDelay: 8000, jitter: false } }}
      />,
      { wrapper: wrap(client) },
    );
    await waitFor(() => expect(hub.size).toBe(1));
    const id1 = await hub.publish('tick', 1);
    await waitFor(() => expect(got).toEqual([1]));
    // The server drops the stream; an event is published while the client is away.
    state.streams[0]?.close();
    await waitFor(() => expect(hub.size).toBe(0));
    await hub.publish('tick', 2);
    await waitFor(() => expect(clock.timers.size).toBeGreaterThan(0));
    expect(state.connects).toHaveLength(1);
    act(() => clock.advance(999));
    expect(state.connects).toHaveLength(1);
    act(() => clock.advance(1));
    await waitFor(() => expect(state.connects).toHaveLength(2));
    expect(state.connects[1]).toBe(id1);
    await waitFor(() => expect(got).toEqual([1, 2]));
  });

  it('a keel:reset (a Last-Event-ID the hub cannot replay) invalidates every query of the client', async () => {
    const { base, hub, state } = await liveServer();
    const client = createClient({ baseURL: base });
    render(<TodoList />, { wrapper: wrap(client) });
    await waitFor(() => expect(screen.getByTestId('list').textContent).toBe('success:false:a,b'));
    render(<Listener id="s" options={{ headers: { 'last-event-id': 'foreign-1' } }} />, {
      wrapper: wrap(client),
    });
    await waitFor(() => expect(hub.size).toBe(1));
    await waitFor(() => expect(state.gets).toBe(2));
    expect(state.connects).toEqual(['foreign-1']);
  });
});
