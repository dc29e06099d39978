import { act, render, screen, waitFor } from '@testing-library/react';
import { HttpResponse, http } from 'msw';
import { Suspense, useDeferredValue, useState, useTransition } from 'react';
import { describe, expect, it } from 'vitest';
import { ClientProvider, useClient, useMutation, useQuery, useSuspenseQuery } from '../src/index';
import { API, debugOf, deferred, flush, mswServer, testClient, wrapperFor } from './helpers';

const msw = mswServer();

/** Setters the components hand out, so a test can drive them. */
const drive: {
  flip?: (on: boolean) => void;
  go?: (id: number) => void;
  set?: (id: number) => void;
  send?: () => void;
} = {};

function Toggled() {
  const [on, setOn] = useState(true);
  drive.flip = setOn;
  const q = useQuery<{ n: number }>('/e', { enabled: on });
  return <p data-testid="q">{`${q.status}:${q.data?.n ?? '-'}:${q.isFetching}`}</p>;
}

function Item({ id }: { id: number }) {
  const { data } = useSuspenseQuery<{ id: number }>(`/k/${id}`);
  return <p data-testid="item">{data.id}</p>;
}

function TransitionPage() {
  const [id, setId] = useState(1);
  const [pending, start] = useTransition();
  drive.go = (next) => start(() => setId(next));
  return (
    <>
      <p data-testid="pending">{String(pending)}</p>
      <Suspense fallback={<p data-testid="fallback">…</p>}>
        <Item id={id} />
      </Suspense>
    </>
  );
}

function DeferredPage() {
  const [id, setId] = useState(1);
  drive.set = setId;
  const deferredId = useDeferredValue(id);
  const q = useQuery<{ id: number }>(`/d/${deferredId}`);
  return <p data-testid="d">{q.data?.id ?? '-'}</p>;
}

function List() {
  const { data } = useSuspenseQuery<{ n: number }>('/list');
  return <p data-testid="list">{data.n}</p>;
}

function Adder() {
  const client = useClient();
  const m = useMutation('POST', '/list', { onSuccess: () => client.invalidate('/list') });
  drive.send = () => m.mutate();
  return <p data-testid="m">{m.status}</p>;
}

function Who() {
  const q = useQuery<{ who: string }>('/c');
  return <p data-testid="c">{q.data?.who ?? '-'}</p>;
}

function Shown() {
  const q = useQuery<{ ok: number }>('/o');
  return <p data-testid="o">{`${q.status}:${q.data?.ok ?? '-'}`}</p>;
}

describe('hooks, adversarially', () => {
  it('enabled flips off and on while its read is in flight: one request, its answer shown, not stuck pending', async () => {
    const gate = deferred();
    let gets = 0;
    msw.use(
      http.get(`${API}/e`, async () => {
        gets++;
        await gate.promise;
        return HttpResponse.json({ n: gets });
      }),
    );
    const client = testClient();
    render(<Toggled />, { wrapper: wrapperFor(client) });
    await waitFor(() => expect(gets).toBe(1));
    for (let i = 0; i < 5; i++) {
      act(() => drive.flip!(false));
      act(() => drive.flip!(true));
    }
    // The flips join the read in flight: no new request per flip.
    expect(gets).toBe(1);
    gate.resolve();
    await waitFor(() => expect(screen.getByTestId('q').textContent).toMatch(/^success:\d:false$/));
    await flush();
    expect(debugOf(client).flights).toBe(0);
  });

  it('useTransition key changes: the committed key renders, the abandoned ones are released', async () => {
    msw.use(http.get(`${API}/k/:id`, ({ params }) => HttpResponse.json({ id: Number(params.id) })));
    const client = testClient();
    const { unmount } = render(<TransitionPage />, { wrapper: wrapperFor(client) });
    await waitFor(() => expect(screen.getByTestId('item').textContent).toBe('1'));
    act(() => {
      for (let i = 2; i <= 6; i++) drive.go!(i);
    });
    await waitFor(() => expect(screen.getByTestId('item').textContent).toBe('6'));
    expect(screen.getByTestId('pending').textContent).toBe('false');
    unmount();
    await flush();
    expect(debugOf(client)).toMatchObject({ subscriptions: 0, listeners: 0, flights: 0 });
  });

  it('useDeferredValue keys: the deferred key settles on the last one', async () => {
    msw.use(http.get(`${API}/d/:id`, ({ params }) => HttpResponse.json({ id: Number(params.id) })));
    const client = testClient();
    const { unmount } = render(<DeferredPage />, { wrapper: wrapperFor(client) });
    await waitFor(() => expect(screen.getByTestId('d').textContent).toBe('1'));
    for (let i = 2; i <= 8; i++) act(() => drive.set!(i));
    await waitFor(() => expect(screen.getByTestId('d').textContent).toBe('8'));
    unmount();
    await flush();
    expect(debugOf(client)).toMatchObject({ subscriptions: 0, listeners: 0, flights: 0 });
  });

  it("a mutation's onSuccess invalidates the query suspended next to it: the read started before the change is never shown", async () => {
    let gets = 0;
    const gates: ReturnType<typeof deferred<void>>[] = [];
    msw.use(
      http.get(`${API}/list`, async () => {
        const n = ++gets;
        const gate = deferred();
        gates.push(gate);
        await gate.promise;
        return HttpResponse.json({ n });
      }),
      http.post(`${API}/list`, () => HttpResponse.json({ ok: true })),
    );
    const client = testClient();
    const { unmount } = render(
      <>
        <Adder />
        <Suspense fallback={<p data-testid="fallback">…</p>}>
          <List />
        </Suspense>
      </>,
      { wrapper: wrapperFor(client) },
    );
    await waitFor(() => expect(gets).toBe(1));
    act(() => drive.send!());
    await waitFor(() => expect(screen.getByTestId('m').textContent).toBe('success'));
    // The read made before the mutation answers: stale, it must not end the suspense.
    gates[0]!.resolve();
    await flush();
    await flush();
    expect(screen.queryByTestId('list')?.textContent).not.toBe('1');
    await waitFor(() => {
      for (const g of gates) g.resolve();
      expect(screen.getByTestId('list').textContent).toBe(String(gets));
    });
    expect(gets).toBeGreaterThan(1);
    unmount();
    await flush();
    expect(debugOf(client)).toMatchObject({ subscriptions: 0, listeners: 0, flights: 0 });
  });

  it('a new client instance under the same provider, each render: the hook follows, nothing left on the old ones', async () => {
    msw.use(
      http.get(`${API}/c`, ({ request }) =>
        HttpResponse.json({ who: request.headers.get('x-who') }),
      ),
    );
    const clients = [1, 2, 3].map((i) => testClient({ headers: { 'x-who': String(i) } }));
    const { rerender, unmount } = render(
      <ClientProvider client={clients[0]!}>
        <Who />
      </ClientProvider>,
    );
    await waitFor(() => expect(screen.getByTestId('c').textContent).toBe('1'));
    rerender(
      <ClientProvider client={clients[1]!}>
        <Who />
      </ClientProvider>,
    );
    rerender(
      <ClientProvider client={clients[2]!}>
        <Who />
      </ClientProvider>,
    );
    await waitFor(() => expect(screen.getByTestId('c').textContent).toBe('3'));
    await flush();
    for (const c of clients.slice(0, 2))
      expect(debugOf(c)).toMatchObject({ subscriptions: 0, listeners: 0, flights: 0 });
    unmount();
  });

  it('a query that failed while offline reads again when the page is back online', async () => {
    let down = true;
    let gets = 0;
    msw.use(
      http.get(`${API}/o`, () => {
        gets++;
        return down ? HttpResponse.error() : HttpResponse.json({ ok: 1 });
      }),
    );
    const client = testClient();
    render(<Shown />, { wrapper: wrapperFor(client) });
    await waitFor(() => expect(screen.getByTestId('o').textContent).toBe('error:-'));
    expect(gets).toBe(1);
    down = false;
    act(() => {
      window.dispatchEvent(new Event('online'));
    });
    await waitFor(() => expect(screen.getByTestId('o').textContent).toBe('success:1'));
    expect(gets).toBe(2);
  });
});
