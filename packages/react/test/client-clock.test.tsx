/**
 * The hooks' own timers (the suspense grace period and check-in) run on the client's injected
 * clock, as every core timer does: a fake clock given to `createClient` drives them.
 */
import { act, render, screen } from '@testing-library/react';
import { HttpResponse, http } from 'msw';
import { Suspense } from 'react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { FakeClock } from '../../core/test/helpers';
import { ClientProvider, QueryErrorBoundary, useQuery, useSuspenseQuery } from '../src/index';
import { storeFor } from '../src/query/store';
import { API, debugOf, deferred, flush, mswServer, testClient, until, wrapperFor } from './helpers';

const server = mswServer();

function Reader() {
  const { data } = useSuspenseQuery<string>('/clocked');
  return <p>{data}</p>;
}

function Tree() {
  return (
    <QueryErrorBoundary fallback={({ error }) => <p>failed: {(error as Error).name}</p>}>
      <Suspense fallback={<p>loading</p>}>
        <Reader />
      </Suspense>
    </QueryErrorBoundary>
  );
}

describe("suspense timers on the client's clock", () => {
  // React reports every error a boundary catches on the console: expected here.
  beforeEach(() => {
    vi.spyOn(console, 'error').mockImplementation(() => {});
  });
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('the grace period of an error thrown to a boundary ends when the client clock says so', async () => {
    server.use(http.get(`${API}/clocked`, () => HttpResponse.json({}, { status: 500 })));
    const clock = new FakeClock();
    const client = testClient({ clock });
    render(<Tree />, { wrapper: wrapperFor(client) });
    await until(() => screen.queryByText('failed: HttpError') !== null);
    // The entry keeps the error for the grace period (1 s of the client's clock), then goes.
    expect(storeFor(client).size).toBe(1);
    await act(() => clock.advance(999));
    await flush();
    expect(storeFor(client).size).toBe(1);
    await act(() => clock.advance(1));
    await flush();
    expect(storeFor(client).size).toBe(0);
    expect(debugOf(client)).toMatchObject({ subscriptions: 0, flights: 0 });
  });

  it('a hanging read whose boundary went away is cancelled after the check-in and grace on the client clock', async () => {
    let arrived = false;
    let aborted = false;
    server.use(
      http.get(`${API}/clocked`, ({ request }) => {
        arrived = true;
        request.signal.addEventListener('abort', () => {
          aborted = true;
        });
        return new Promise<Response>(() => {});
      }),
    );
    const clock = new FakeClock();
    // No request timeout: only the hooks' timers are on the clock.
    const client = testClient({ clock, timeout: 0 });
    const { unmount } = render(<Tree />, { wrapper: wrapperFor(client) });
    await until(() => arrived);
    expect(screen.getByText('loading')).toBeTruthy();
    unmount();
    await flush();
    expect(storeFor(client).size).toBe(1);
    await act(() => clock.advance(5000));
    await flush();
    await act(() => clock.advance(1000));
    await flush();
    expect(storeFor(client).size).toBe(0);
    await until(() => aborted);
    expect(debugOf(client)).toMatchObject({ subscriptions: 0, flights: 0 });
  });
});

function Ticking({ url, interval, enabled = true }: TickProps) {
  const { data } = useQuery<string[]>(url, { refetchInterval: interval, enabled });
  return <p data-testid="ticks">{data?.join(',') ?? '-'}</p>;
}
interface TickProps {
  url: string;
  interval: number | false;
  enabled?: boolean;
}

describe("refetchInterval on the client's clock", () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  /** GET `url` answers the number of reads so far. */
  function counted(url: string) {
    const state = { gets: 0 };
    server.use(http.get(`${API}${url}`, () => HttpResponse.json([String(++state.gets)])));
    return state;
  }

  it('ticks when the client clock says so, not on the global timers, and stops on unmount', async () => {
    const api = counted('/ticks');
    const clock = new FakeClock();
    const client = testClient({ clock, timeout: 0 });
    const globalIntervals = vi.spyOn(globalThis, 'setInterval');
    const { unmount } = render(<Ticking url="/ticks" interval={60_000} />, {
      wrapper: wrapperFor(client),
    });
    await until(() => screen.getByTestId('ticks').textContent === '1');
    expect(clock.pendingDelays()).toEqual([60_000]);
    await act(() => clock.advance(59_999));
    expect(api.gets).toBe(1);
    await act(() => clock.advance(1));
    await until(() => screen.getByTestId('ticks').textContent === '2');
    // Every period, not once.
    await act(() => clock.advance(60_000));
    await until(() => screen.getByTestId('ticks').textContent === '3');
    expect(clock.pendingDelays()).toEqual([60_000]);
    expect(globalIntervals).not.toHaveBeenCalled();
    unmount();
    await flush();
    expect(clock.live).toBe(0);
    await act(() => clock.advance(600_000));
    expect(api.gets).toBe(3);
  });

  it('disabling the query or turning the interval off clears its timer; turning it on arms one', async () => {
    const api = counted('/ticks-off');
    const clock = new FakeClock();
    const client = testClient({ clock, timeout: 0 });
    const { rerender } = render(<Ticking url="/ticks-off" interval={1000} />, {
      wrapper: wrapperFor(client),
    });
    await until(() => screen.getByTestId('ticks').textContent === '1');
    expect(clock.live).toBe(1);
    rerender(<Ticking url="/ticks-off" interval={1000} enabled={false} />);
    await flush();
    expect(clock.live).toBe(0);
    rerender(<Ticking url="/ticks-off" interval={false} />);
    await flush();
    expect(clock.live).toBe(0);
    await act(() => clock.advance(10_000));
    expect(api.gets).toBe(1);
    rerender(<Ticking url="/ticks-off" interval={500} />);
    await flush();
    expect(clock.pendingDelays()).toEqual([500]);
    await act(() => clock.advance(500));
    await until(() => screen.getByTestId('ticks').textContent === '2');
  });

  it('a new client from the provider moves the interval to its clock; the old clock keeps no timer', async () => {
    const api = counted('/ticks-swap');
    const first = new FakeClock();
    const second = new FakeClock();
    const a = testClient({ clock: first, timeout: 0 });
    const b = testClient({ clock: second, timeout: 0 });
    const tree = (client: typeof a) => (
      <ClientProvider client={client}>
        <Ticking url="/ticks-swap" interval={1000} />
      </ClientProvider>
    );
    const { rerender, unmount } = render(tree(a));
    await until(() => screen.getByTestId('ticks').textContent === '1');
    expect(first.live).toBe(1);
    rerender(tree(b));
    await until(() => screen.getByTestId('ticks').textContent === '2');
    expect(first.live).toBe(0);
    expect(second.pendingDelays()).toEqual([1000]);
    await act(() => first.advance(10_000));
    expect(api.gets).toBe(2);
    await act(() => second.advance(1000));
    await until(() => screen.getByTestId('ticks').textContent === '3');
    unmount();
    await flush();
    expect(second.live).toBe(0);
  });

  it('unmounting while the read of a tick is in flight leaves no timer, entry or flight', async () => {
    const gate = deferred();
    let gets = 0;
    server.use(
      http.get(`${API}/ticks-slow`, async () => {
        if (++gets > 1) await gate.promise;
        return HttpResponse.json([String(gets)]);
      }),
    );
    const clock = new FakeClock();
    const client = testClient({ clock, timeout: 0 });
    const { unmount } = render(<Ticking url="/ticks-slow" interval={1000} />, {
      wrapper: wrapperFor(client),
    });
    await until(() => screen.getByTestId('ticks').textContent === '1');
    await act(() => clock.advance(1000));
    await until(() => gets === 2);
    unmount();
    await flush();
    expect(clock.live).toBe(0);
    expect(storeFor(client).size).toBe(0);
    // The tick's read is the core's refetch (no consumer of the hook's to cancel): it settles.
    gate.resolve();
    await flush();
    expect(debugOf(client)).toMatchObject({ subscriptions: 0, flights: 0 });
  });

  it('the longest interval (2147483647 ms) is armed as is on the clock; one past it is refused', async () => {
    counted('/ticks-max');
    const clock = new FakeClock();
    const client = testClient({ clock, timeout: 0 });
    render(<Ticking url="/ticks-max" interval={2 ** 31 - 1} />, { wrapper: wrapperFor(client) });
    await until(() => screen.getByTestId('ticks').textContent === '1');
    expect(clock.pendingDelays()).toEqual([2 ** 31 - 1]);
    vi.spyOn(console, 'error').mockImplementation(() => {});
    expect(() =>
      render(<Ticking url="/ticks-max" interval={2 ** 31} />, { wrapper: wrapperFor(client) }),
    ).toThrow(RangeError);
    await flush();
    // The refused render armed nothing.
    expect(clock.pendingDelays()).toEqual([2 ** 31 - 1]);
  });
});
