import { act, fireEvent, render, screen, waitFor } from '@testing-library/react';
import { HttpResponse, http } from 'msw';
import { StrictMode, Suspense, useState } from 'react';
import { describe, expect, it, vi } from 'vitest';
import { FakeClock } from '../../core/test/helpers';
import {
  ClientProvider,
  keepPreviousData,
  QueryErrorBoundary,
  useMutation,
  useQuery,
  useSuspenseQuery,
} from '../src/index';
import { storeFor } from '../src/query/store';
import {
  API,
  consoleErrors,
  debugOf,
  deferred,
  flush,
  mswServer,
  testClient,
  wrapperFor,
} from './helpers';

const server = mswServer();

function Counter() {
  const { data } = useQuery<{ n: number }>('/item', { refetchInterval: 60_000 });
  return <p data-testid="n">{data?.n ?? '-'}</p>;
}

/** What Item rendered as data (not placeholder): `${id}:${data.id}`. */
const seen: string[] = [];
let setId: (id: number) => void = () => {};
function Item() {
  const [id, set] = useState(1);
  setId = set;
  const { data, isPlaceholderData } = useQuery<{ id: number }>(`/items/${id}`, {
    placeholderData: keepPreviousData,
  });
  if (data !== undefined && !isPlaceholderData) seen.push(`${id}:${data.id}`);
  return (
    <p data-testid="item">
      {data === undefined ? '-' : `${data.id}${isPlaceholderData ? '?' : ''}`}
    </p>
  );
}

function Me() {
  const { data } = useSuspenseQuery<{ name: string }>('/me');
  return <p>{data.name}</p>;
}

const mutationCallbacks = { onSuccess: vi.fn(), perCall: vi.fn() };
function Adder() {
  const add = useMutation<string, string>('POST', '/todos', {
    onSuccess: mutationCallbacks.onSuccess,
  });
  return (
    <button type="button" onClick={() => add.mutate('b', { onSuccess: mutationCallbacks.perCall })}>
      add
    </button>
  );
}
function List() {
  const { data } = useQuery<string[]>('/todos');
  return <p data-testid="list">{data?.join(',') ?? '-'}</p>;
}
function Page() {
  const [adding, setAdding] = useState(true);
  return (
    <>
      <List />
      {adding ? <Adder /> : null}
      <button type="button" onClick={() => setAdding(false)}>
        close
      </button>
    </>
  );
}

function X({ id }: { id: string }) {
  const { data } = useQuery<string>('/x');
  return <p data-testid={id}>{data ?? '-'}</p>;
}

function OptimisticAdder() {
  const add = useMutation<string, string>('POST', '/todos', {
    onMutate: (title, { setQueryData }) => {
      setQueryData<string[]>('/todos', (list = []) => [...list, title]);
    },
  });
  return (
    <button type="button" onClick={() => add.mutate('b')}>
      add
    </button>
  );
}
function OptimisticPage() {
  const [adding, setAdding] = useState(true);
  return (
    <>
      <List />
      {adding ? <OptimisticAdder /> : null}
      <button type="button" onClick={() => setAdding(false)}>
        close
      </button>
    </>
  );
}

let setOn: (on: boolean) => void = () => {};
function Ticking() {
  const [on, set] = useState(true);
  setOn = set;
  const { data } = useQuery<number>('/n', { enabled: on, refetchInterval: 1000 });
  return <p data-testid="n">{String(data)}</p>;
}

describe('StrictMode', () => {
  it('double mount: one request per key, and nothing held after unmount', async () => {
    let gets = 0;
    server.use(
      http.get(`${API}/item`, () => {
        gets++;
        return HttpResponse.json({ n: gets });
      }),
    );
    const client = testClient();
    const { unmount } = render(
      <StrictMode>
        <ClientProvider client={client}>
          <Counter />
          <Counter />
        </ClientProvider>
      </StrictMode>,
    );
    await waitFor(() =>
      expect(screen.getAllByTestId('n').map((p) => p.textContent)).toEqual(['1', '1']),
    );
    await flush();
    expect(gets).toBe(1);
    unmount();
    await flush();
    expect(debugOf(client)).toMatchObject({ subscriptions: 0, listeners: 0, flights: 0 });
    expect(storeFor(client).size).toBe(0);
  });
});

describe('rapid key changes', () => {
  it('responses landing in reverse order never show another key as this key', async () => {
    const gates = new Map<string, ReturnType<typeof deferred<void>>>();
    server.use(
      http.get(`${API}/items/:id`, async ({ params }) => {
        const gate = deferred();
        gates.set(String(params.id), gate);
        await gate.promise;
        return HttpResponse.json({ id: Number(params.id) });
      }),
    );
    const client = testClient();
    seen.length = 0;
    render(<Item />, { wrapper: wrapperFor(client) });
    await waitFor(() => expect(gates.has('1')).toBe(true));
    gates.get('1')!.resolve();
    await waitFor(() => expect(screen.getByTestId('item').textContent).toBe('1'));
    for (const id of [2, 3, 4]) {
      act(() => setId(id));
      await waitFor(() => expect(gates.has(String(id))).toBe(true));
    }
    // The newest first, then the older ones (those still running: the others were cancelled).
    gates.get('4')!.resolve();
    await waitFor(() => expect(screen.getByTestId('item').textContent).toBe('4'));
    gates.get('3')!.resolve();
    gates.get('2')!.resolve();
    await flush();
    await flush();
    expect(screen.getByTestId('item').textContent).toBe('4');
    expect(seen.every((s) => s.split(':')[0] === s.split(':')[1])).toBe(true);
    // Back to an older key: its own data, never the newest key's.
    act(() => setId(2));
    await waitFor(() => expect(gates.size).toBeGreaterThan(0));
    await flush();
    for (const gate of gates.values()) gate.resolve();
    await waitFor(() => expect(screen.getByTestId('item').textContent).toBe('2'));
    expect(seen.every((s) => s.split(':')[0] === s.split(':')[1])).toBe(true);
  });
});

describe('suspense', () => {
  it('an error, then the boundary reset: read again once, and the data renders', async () => {
    let gets = 0;
    server.use(
      http.get(`${API}/me`, () => {
        gets++;
        return gets === 1
          ? HttpResponse.json({ message: 'down' }, { status: 500 })
          : HttpResponse.json({ name: 'Ada' });
      }),
    );
    consoleErrors();
    const client = testClient();
    render(
      <QueryErrorBoundary
        fallback={({ error, reset }) => (
          <button type="button" onClick={reset}>
            {(error as Error).message.slice(0, 20)}
          </button>
        )}
      >
        <Suspense fallback={<p>loading</p>}>
          <Me />
        </Suspense>
      </QueryErrorBoundary>,
      { wrapper: wrapperFor(client) },
    );
    const retry = await screen.findByRole('button');
    await flush();
    expect(gets).toBe(1);
    fireEvent.click(retry);
    await screen.findByText('Ada');
    await flush();
    expect(gets).toBe(2);
  });
});

describe('suspense, failing again', () => {
  it('a reset whose read fails again shows the boundary again (one request per reset, no loop), and a later reset recovers', async () => {
    let gets = 0;
    server.use(
      http.get(`${API}/me`, () => {
        gets++;
        return gets <= 2
          ? HttpResponse.json({ message: `down ${gets}` }, { status: 500 })
          : HttpResponse.json({ name: 'Ada' });
      }),
    );
    consoleErrors();
    const client = testClient();
    render(
      <QueryErrorBoundary
        fallback={({ error, reset }) => (
          <button type="button" onClick={reset}>
            {`failed ${(error as { data?: { message?: string } }).data?.message}`}
          </button>
        )}
      >
        <Suspense fallback={<p>loading</p>}>
          <Me />
        </Suspense>
      </QueryErrorBoundary>,
      { wrapper: wrapperFor(client) },
    );
    fireEvent.click(await screen.findByText('failed down 1'));
    fireEvent.click(await screen.findByText('failed down 2'));
    await screen.findByText('Ada');
    await flush();
    expect(gets).toBe(3);
  });
});

describe('a component unmounted while its mutation runs', () => {
  it('no React warning; the result still invalidates what it wrote, and the hook callbacks run', async () => {
    const gate = deferred();
    const todos = ['a'];
    let gets = 0;
    server.use(
      http.get(`${API}/todos`, () => {
        gets++;
        return HttpResponse.json([...todos]);
      }),
      http.post(`${API}/todos`, async () => {
        await gate.promise;
        todos.push('b');
        return HttpResponse.json('b', { status: 201 });
      }),
    );
    const errors = consoleErrors();
    const client = testClient();
    const { onSuccess, perCall } = mutationCallbacks;
    render(<Page />, { wrapper: wrapperFor(client) });
    await waitFor(() => expect(screen.getByTestId('list').textContent).toBe('a'));
    fireEvent.click(screen.getByText('add'));
    await flush();
    fireEvent.click(screen.getByText('close'));
    await flush();
    gate.resolve();
    await waitFor(() => expect(screen.getByTestId('list').textContent).toBe('a,b'));
    expect(gets).toBe(2);
    expect(onSuccess).toHaveBeenCalledTimes(1);
    expect(perCall).not.toHaveBeenCalled();
    expect(errors).not.toHaveBeenCalled();
  });
  it('an optimistic write whose adder unmounted is rolled back when the mutation fails, without a warning', async () => {
    const gate = deferred<void>();
    server.use(
      http.get(`${API}/todos`, () => HttpResponse.json(['a'])),
      http.post(`${API}/todos`, async () => {
        await gate.promise;
        return HttpResponse.json({}, { status: 500 });
      }),
    );
    const errors = consoleErrors();
    const client = testClient();
    render(<OptimisticPage />, { wrapper: wrapperFor(client) });
    await waitFor(() => expect(screen.getByTestId('list').textContent).toBe('a'));
    fireEvent.click(screen.getByText('add'));
    await waitFor(() => expect(screen.getByTestId('list').textContent).toBe('a,b'));
    fireEvent.click(screen.getByText('close'));
    await flush();
    gate.resolve();
    await waitFor(() => expect(screen.getByTestId('list').textContent).toBe('a'));
    expect(errors).not.toHaveBeenCalled();
  });
});

describe('enabled toggling', () => {
  it('off stops the interval (no timer left, nothing sent); on again re-arms one', async () => {
    let n = 0;
    server.use(http.get(`${API}/n`, () => HttpResponse.json(++n)));
    const clock = new FakeClock();
    const client = testClient({ clock });
    render(<Ticking />, { wrapper: wrapperFor(client) });
    await waitFor(() => expect(screen.getByTestId('n').textContent).toBe('1'));
    await act(() => clock.advance(1000));
    await waitFor(() => expect(screen.getByTestId('n').textContent).toBe('2'));
    act(() => setOn(false));
    await flush();
    expect(clock.live).toBe(0);
    await act(() => clock.advance(5000));
    await flush();
    expect(n).toBe(2);
    act(() => setOn(true));
    await flush();
    expect(clock.live).toBe(1);
    await act(() => clock.advance(1000));
    await waitFor(() => expect(n).toBe(3));
  });
});

describe('two ClientProviders with different clients side by side', () => {
  it('each reads, caches and invalidates on its own client', async () => {
    const served = { one: 0, two: 0 };
    server.use(
      http.get('http://one.test/x', () => HttpResponse.json(`one ${++served.one}`)),
      http.get('http://two.test/x', () => HttpResponse.json(`two ${++served.two}`)),
    );
    const one = testClient({ baseURL: 'http://one.test' });
    const two = testClient({ baseURL: 'http://two.test' });
    render(
      <>
        <ClientProvider client={one}>
          <X id="a" />
        </ClientProvider>
        <ClientProvider client={two}>
          <X id="b" />
          <ClientProvider client={one}>
            <X id="c" />
          </ClientProvider>
        </ClientProvider>
      </>,
    );
    await waitFor(() => expect(screen.getByTestId('b').textContent).toBe('two 1'));
    expect(screen.getByTestId('a').textContent).toBe('one 1');
    expect(screen.getByTestId('c').textContent).toBe('one 1');
    act(() => {
      two.invalidate('/x');
    });
    await waitFor(() => expect(screen.getByTestId('b').textContent).toBe('two 2'));
    await flush();
    expect(served).toEqual({ one: 1, two: 2 });
    expect(screen.getByTestId('a').textContent).toBe('one 1');
  });
});
