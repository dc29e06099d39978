import { act, render, renderHook, screen, waitFor } from '@testing-library/react';
import { HttpResponse, http } from 'msw';
import { Component, type ReactNode, Suspense, useState } from 'react';
import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../core/test/helpers';
import { ClientProvider, useMutation, useQuery, useSuspenseQuery } from '../src/index';
import { environmentListenerCount } from '../src/internal/environment';
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

/** Nothing left on the client: interest, listeners, flights, entries, environment listeners. */
function expectNothingHeld(client: ReturnType<typeof testClient>, othersMounted = false) {
  expect(debugOf(client)).toMatchObject({ subscriptions: 0, listeners: 0, flights: 0 });
  expect(storeFor(client).size).toBe(0);
  // Focus and online listeners are global: only when no other component is mounted.
  if (!othersMounted) expect(environmentListenerCount()).toBe(0);
}

describe('useQuery, adversarially', () => {
  it('unmount during a retry backoff: the retry is never sent and no timer is left', async () => {
    let gets = 0;
    server.use(
      http.get(`${API}/flaky`, () => {
        gets++;
        return HttpResponse.json({ message: 'down' }, { status: 503 });
      }),
    );
    const clock = new FakeClock();
    const client = testClient({ clock, retry: { attempts: 3, baseDelay: 1000, jitter: false } });
    const { unmount } = renderHook(() => readAll(useQuery('/flaky')), {
      wrapper: wrapperFor(client),
    });
    await waitFor(() => expect(gets).toBe(1));
    await waitFor(() => expect(clock.live).toBeGreaterThan(0));
    unmount();
    await flush();
    expect(clock.live).toBe(0);
    await clock.advance(60_000);
    expect(gets).toBe(1);
    expectNothingHeld(client);
  });

  it('enabled toggled many times in one burst: one read at the end, nothing left when it ends disabled', async () => {
    let gets = 0;
    server.use(
      http.get(`${API}/x`, () => {
        gets++;
        return HttpResponse.json({ n: gets });
      }),
    );
    const client = testClient();
    const { result, rerender, unmount } = renderHook(
      ({ enabled }) => readAll(useQuery<{ n: number }>('/x', { enabled })),
      { wrapper: wrapperFor(client), initialProps: { enabled: false } },
    );
    for (let i = 0; i < 41; i++) rerender({ enabled: i % 2 === 0 });
    await waitFor(() => expect(result.current.data).toEqual({ n: 1 }));
    expect(gets).toBe(1);
    rerender({ enabled: false });
    await flush();
    expect(result.current).toMatchObject({ data: { n: 1 }, isFetching: false });
    unmount();
    await flush();
    expectNothingHeld(client);
  });

  it('a select that throws: error status, last good selection kept, recovers with a new select', async () => {
    server.use(http.get(`${API}/n`, () => HttpResponse.json([1, 2, 3])));
    const client = testClient();
    const good = (d: number[]) => d.length;
    const bad = (_: number[]): number => {
      throw new Error('select broke');
    };
    const { result, rerender } = renderHook(
      ({ select }) => readAll(useQuery<number[], number>('/n', { select })),
      { wrapper: wrapperFor(client), initialProps: { select: good } },
    );
    await waitFor(() => expect(result.current.data).toBe(3));
    rerender({ select: bad });
    expect(result.current).toMatchObject({ status: 'error', data: 3 });
    expect((result.current.error as Error).message).toBe('select broke');
    rerender({ select: good });
    expect(result.current).toMatchObject({ status: 'success', data: 3, error: null });
  });

  it('the key changes while a mutation that wrote the old key runs: the new key is not held', async () => {
    const post = deferred();
    server.use(
      http.get(`${API}/items/:id`, ({ params }) => HttpResponse.json({ id: Number(params.id) })),
      http.post(`${API}/items/:id`, async () => {
        await post.promise;
        return HttpResponse.json({ ok: true });
      }),
    );
    const client = testClient();
    const { result, rerender } = renderHook(
      ({ id }) => ({
        item: readAll(useQuery<{ id: number; opt?: boolean }>(`/items/${id}`)),
        save: readAll(
          useMutation('POST', `/items/${id}`, {
            onMutate: (_, { setQueryData }) => setQueryData(`/items/${id}`, { id, opt: true }),
          }),
        ),
      }),
      { wrapper: wrapperFor(client), initialProps: { id: 1 } },
    );
    await waitFor(() => expect(result.current.item.data).toEqual({ id: 1 }));
    act(() => result.current.save.mutate(undefined));
    await waitFor(() => expect(result.current.item.data).toEqual({ id: 1, opt: true }));
    rerender({ id: 2 });
    await waitFor(() => expect(result.current.item.data).toEqual({ id: 2 }));
    rerender({ id: 1 });
    expect(result.current.item.data).toEqual({ id: 1, opt: true });
    post.resolve();
    await waitFor(() => expect(result.current.item.data).toEqual({ id: 1 }));
  });
});

class Boundary extends Component<{ children: ReactNode }, { error: unknown }> {
  override state = { error: null as unknown };
  static getDerivedStateFromError(error: unknown) {
    return { error };
  }
  override render() {
    return this.state.error ? (
      <p data-testid="boom">{String(this.state.error)}</p>
    ) : (
      this.props.children
    );
  }
}

function Item({ id }: { id: number }) {
  const { data } = useSuspenseQuery<{ id: number }>(`/s/${id}`);
  return <p data-testid="item">{data.id}</p>;
}

let hidePage: () => void = () => {};
function HidablePage() {
  const [shown, setShown] = useState(true);
  hidePage = () => setShown(false);
  return shown ? (
    <Suspense fallback={<p data-testid="fallback">…</p>}>
      <Item id={1} />
    </Suspense>
  ) : null;
}

describe('useSuspenseQuery, adversarially', () => {
  it('unmounted during its suspended read: the read is cancelled and nothing is left', async () => {
    const aborted: string[] = [];
    server.use(
      http.get(`${API}/s/:id`, ({ request, params }) => {
        request.signal.addEventListener('abort', () => aborted.push(String(params.id)));
        return new Promise(() => {});
      }),
    );
    const clock = new FakeClock();
    const client = testClient({ clock });
    render(<HidablePage />, { wrapper: wrapperFor(client) });
    await waitFor(() => expect(debugOf(client).flights).toBe(1));
    act(() => hidePage());
    await clock.advance(10_000);
    await flush();
    await waitFor(() => expect(aborted).toEqual(['1']));
    expect(clock.live).toBe(0);
    expectNothingHeld(client);
  });

  it('key changes while suspended: the first read is released, the second key renders', async () => {
    const gates = new Map<string, ReturnType<typeof deferred<void>>>();
    server.use(
      http.get(`${API}/s/:id`, async ({ params }) => {
        const id = String(params.id);
        const gate = deferred();
        gates.set(id, gate);
        await gate.promise;
        return HttpResponse.json({ id: Number(id) });
      }),
    );
    const clock = new FakeClock();
    const client = testClient({ clock });
    const { rerender, unmount } = render(
      <Boundary>
        <Suspense fallback={<p data-testid="fallback">…</p>}>
          <Item id={1} />
        </Suspense>
      </Boundary>,
      { wrapper: wrapperFor(client) },
    );
    await waitFor(() => expect(gates.has('1')).toBe(true));
    rerender(
      <Boundary>
        <Suspense fallback={<p data-testid="fallback">…</p>}>
          <Item id={2} />
        </Suspense>
      </Boundary>,
    );
    await waitFor(() => expect(gates.has('2')).toBe(true));
    gates.get('2')!.resolve();
    await waitFor(() => expect(screen.getByTestId('item').textContent).toBe('2'));
    gates.get('1')!.resolve();
    await clock.advance(10_000);
    await flush();
    expect(screen.getByTestId('item').textContent).toBe('2');
    expect(storeFor(client).size).toBe(1);
    unmount();
    await flush();
    expect(clock.live).toBe(0);
    expectNothingHeld(client);
  });

  it('the provider swaps clients while suspended: the old client releases its read, the new one renders', async () => {
    const aborted: string[] = [];
    server.use(
      http.get(`${API}/s/:id`, ({ request }) => {
        if (request.headers.get('x-which') === 'old') {
          request.signal.addEventListener('abort', () => aborted.push('old'));
          return new Promise<never>(() => {});
        }
        return HttpResponse.json({ id: 7 });
      }),
    );
    const oldClock = new FakeClock();
    const old = testClient({ clock: oldClock, headers: { 'x-which': 'old' } });
    const next = testClient();
    const tree = (
      <Suspense fallback={<p data-testid="fallback">…</p>}>
        <Item id={7} />
      </Suspense>
    );
    const { rerender, unmount } = render(tree, { wrapper: wrapperFor(old) });
    await waitFor(() => expect(debugOf(old).flights).toBe(1));
    rerender(<ClientProvider client={next}>{tree}</ClientProvider>);
    await waitFor(() => expect(screen.getByTestId('item').textContent).toBe('7'));
    await oldClock.advance(10_000);
    await flush();
    await waitFor(() => expect(aborted).toEqual(['old']));
    expect(oldClock.live).toBe(0);
    expectNothingHeld(old, true);
    unmount();
    await flush();
    expectNothingHeld(next);
  });
});
