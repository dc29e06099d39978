/**
 * Refetches against an open circuit: an explicit `refetch()` consults the breaker once (one
 * `circuit-rejected`, its CircuitOpenError shown); the automatic ones (interval, focus,
 * reconnect) are dropped silently, as the core drops its own refetches (spec: circuit rule 6).
 */
import { type Client, isCircuitOpenError } from '@keel/core';
import { act, renderHook, waitFor } from '@testing-library/react';
import { HttpResponse, http } from 'msw';
import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../core/test/helpers';
import { type QueryResult, useInfiniteQuery, useQuery } from '../src/index';
import { API, flush, mswServer, readAll, testClient, wrapperFor } from './helpers';

const server = mswServer();

/** GET /c answers `['c', n]` (n counts the reads); with `?fail` it answers 500. */
function endpoint() {
  const state = { reads: 0 };
  server.use(
    http.get(`${API}/c`, ({ request }) => {
      if (new URL(request.url).searchParams.has('fail')) {
        return HttpResponse.json({}, { status: 500 });
      }
      state.reads++;
      return HttpResponse.json(['c', state.reads]);
    }),
  );
  return state;
}

/** A client whose first failure of an endpoint opens its circuit for a minute. */
function breakerClient(): { client: Client; rejected: unknown[] } {
  const client = testClient({ circuitBreaker: { failureThreshold: 1, resetTimeout: 60_000 } });
  const rejected: unknown[] = [];
  client.on('circuit-rejected', (e) => rejected.push(e));
  return { client, rejected };
}

async function openCircuit(client: Client, rejected: unknown[]): Promise<void> {
  await expect(client.request('GET', '/c', { params: { fail: 1 } })).rejects.toThrow();
  expect(client.circuitBreaker().status('GET', '/c').state).toBe('open');
  rejected.length = 0;
}

describe('refetch() against an open circuit', () => {
  it('is one rejection: one circuit-rejected, counted once by intelligence, its error shown', async () => {
    const api = endpoint();
    const { client, rejected } = breakerClient();
    const { result } = renderHook(() => readAll(useQuery<unknown[]>('/c')), {
      wrapper: wrapperFor(client),
    });
    await waitFor(() => expect(result.current.data).toEqual(['c', 1]));
    await openCircuit(client, rejected);
    const before = client.intelligence().endpoint('GET', '/c')!.circuitRejected;
    let settled: QueryResult<unknown[]> | undefined;
    await act(async () => {
      settled = await result.current.refetch();
    });
    expect(isCircuitOpenError(settled!.error)).toBe(true);
    expect(settled!.data).toEqual(['c', 1]);
    expect(rejected).toHaveLength(1);
    expect(client.intelligence().endpoint('GET', '/c')!.circuitRejected).toBe(before + 1);
    expect(api.reads).toBe(1);
  });

  it('a query whose reads cannot be joined (a stream) sends one request, not two', async () => {
    const api = endpoint();
    const client = testClient();
    const { result } = renderHook(
      () => readAll(useQuery<ReadableStream>('/c', { responseType: 'stream', cache: false })),
      { wrapper: wrapperFor(client) },
    );
    await waitFor(() => expect(result.current.isSuccess).toBe(true));
    expect(api.reads).toBe(1);
    await act(async () => {
      await result.current.refetch();
    });
    await flush();
    expect(api.reads).toBe(2);
  });
});

describe('focus and reconnect against an open circuit', () => {
  for (const [signal, event] of [
    ['focus', 'focus'],
    ['reconnect', 'online'],
  ] as const) {
    it(`a ${signal} over stale data is dropped silently (no circuit-rejected, the data and no error stay), as an interval tick is`, async () => {
      const api = endpoint();
      const { client, rejected } = breakerClient();
      const { result } = renderHook(
        () => readAll(useQuery<unknown[]>('/c', { cache: { ttl: 1 } })),
        { wrapper: wrapperFor(client) },
      );
      await waitFor(() => expect(result.current.data).toEqual(['c', 1]));
      await openCircuit(client, rejected);
      await new Promise((r) => setTimeout(r, 5));
      for (let i = 0; i < 3; i++) {
        await act(async () => {
          window.dispatchEvent(new Event(event));
        });
        await flush();
      }
      expect(rejected).toEqual([]);
      expect(result.current).toMatchObject({ status: 'success', error: null, isFetching: false });
      expect(result.current.data).toEqual(['c', 1]);
      expect(api.reads).toBe(1);
    });
  }

  it('useInfiniteQuery: a focus over stale pages is dropped silently too', async () => {
    const api = endpoint();
    const { client, rejected } = breakerClient();
    const { result } = renderHook(
      () =>
        readAll(
          useInfiniteQuery<unknown[], number>('/c', {
            initialPageParam: 1,
            getNextPageParam: () => null,
            cache: { ttl: 1 },
          }),
        ),
      { wrapper: wrapperFor(client) },
    );
    await waitFor(() => expect(result.current.data?.pages).toEqual([['c', 1]]));
    await openCircuit(client, rejected);
    await new Promise((r) => setTimeout(r, 5));
    await act(async () => {
      window.dispatchEvent(new Event('focus'));
    });
    await flush();
    expect(rejected).toEqual([]);
    expect(result.current).toMatchObject({ status: 'success', error: null });
    expect(api.reads).toBe(1);
  });

  it('a focus over fresh data reads nothing; over stale data with the circuit closed it reads once', async () => {
    const api = endpoint();
    const clock = new FakeClock();
    const client = testClient({ clock });
    const { result } = renderHook(
      () => readAll(useQuery<unknown[]>('/c', { cache: { ttl: 1000 } })),
      {
        wrapper: wrapperFor(client),
      },
    );
    await waitFor(() => expect(result.current.data).toEqual(['c', 1]));
    await clock.advance(999);
    await act(async () => {
      window.dispatchEvent(new Event('focus'));
    });
    await flush();
    expect(api.reads).toBe(1);
    await clock.advance(1);
    await act(async () => {
      window.dispatchEvent(new Event('focus'));
    });
    await waitFor(() => expect(result.current.data).toEqual(['c', 2]));
    expect(api.reads).toBe(2);
  });

  it('a focus, a reconnect or refetch() while an uncached read (cache: false) is in flight joins it: one request', async () => {
    let reads = 0;
    let answer: () => void = () => {};
    server.use(
      http.get(`${API}/slow`, async () => {
        reads++;
        await new Promise<void>((resolve) => {
          answer = resolve;
        });
        return HttpResponse.json(['slow']);
      }),
    );
    const client = testClient();
    const { result } = renderHook(() => readAll(useQuery<string[]>('/slow', { cache: false })), {
      wrapper: wrapperFor(client),
    });
    await waitFor(() => expect(reads).toBe(1));
    await act(async () => {
      window.dispatchEvent(new Event('focus'));
      window.dispatchEvent(new Event('online'));
    });
    await flush();
    expect(reads).toBe(1);
    // refetch() joins the read in flight too, as the README says.
    let refetched: Promise<unknown> | undefined;
    act(() => {
      refetched = result.current.refetch();
    });
    await flush();
    expect(reads).toBe(1);
    answer();
    await act(async () => {
      await refetched;
    });
    await waitFor(() => expect(result.current.data).toEqual(['slow']));
    expect(reads).toBe(1);
  });
});
