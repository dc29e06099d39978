/**
 * The hooks' own timers (the suspense grace period and check-in) run on the client's injected
 * clock, as every core timer does: a fake clock given to `createClient` drives them.
 */
import { act, render, screen } from '@testing-library/react';
import { HttpResponse, http } from 'msw';
import { Suspense } from 'react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { FakeClock } from '../../core/test/helpers';
import { QueryErrorBoundary, useSuspenseQuery } from '../src/index';
import { storeFor } from '../src/query/store';
import { API, debugOf, flush, mswServer, testClient, until, wrapperFor } from './helpers';

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
