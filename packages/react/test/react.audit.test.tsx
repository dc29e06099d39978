/**
 * Audit of @keel/react edges the other files leave open (useInfiniteQuery, useServerEvents,
 * ClientProvider), written from the README and issue 12.
 */
import { act, renderHook, waitFor } from '@testing-library/react';
import { HttpResponse, http } from 'msw';
import { describe, expect, it } from 'vitest';
import { useInfiniteQuery, useServerEvents } from '../src/index';
import { API, ManualClock, mswServer, readAll, testClient, wrapperFor } from './helpers';

const server = mswServer();

describe('useInfiniteQuery: a paramsFor that throws', () => {
  it('for the next page is the query error and fetchNextPage() settles; it does not throw into the caller', async () => {
    server.use(
      http.get(`${API}/feed`, ({ request }) => {
        const page = Number(new URL(request.url).searchParams.get('page'));
        return HttpResponse.json({ page, next: page + 1 });
      }),
    );
    const client = testClient();
    const bad = new Error('no params for page 2');
    const { result } = renderHook(
      () =>
        readAll(
          useInfiniteQuery<{ page: number; next: number }, number>('/feed', {
            initialPageParam: 1,
            getNextPageParam: (last) => last.next,
            paramsFor: (page) => {
              if (page === 2) throw bad;
              return { page };
            },
          }),
        ),
      { wrapper: wrapperFor(client) },
    );
    await waitFor(() => expect(result.current.data?.pages).toHaveLength(1));
    let outcome: unknown = 'pending';
    await act(async () => {
      try {
        await result.current.fetchNextPage();
        outcome = 'settled';
      } catch (error) {
        outcome = error;
      }
    });
    expect(outcome).toBe('settled');
    await waitFor(() => expect(result.current.error).toBe(bad));
    expect(result.current.status).toBe('error');
    expect(result.current.data?.pages).toEqual([{ page: 1, next: 2 }]);
  });
});

describe("useServerEvents on the client's clock", () => {
  it('without a clock option, the reconnect timer runs on the clock the client was made with', async () => {
    let connects = 0;
    server.use(
      http.get(`${API}/stream`, () => {
        connects++;
        return new HttpResponse(null, { status: 503 });
      }),
    );
    const clock = new ManualClock();
    // No request timeout: the reconnect is the only timer on the clock.
    const client = testClient({ clock, timeout: 0 });
    const { result, unmount } = renderHook(
      () => useServerEvents('/stream', {}, { reconnect: { initialDelay: 500, jitter: false } }),
      { wrapper: wrapperFor(client) },
    );
    await waitFor(() => expect(clock.delays).toEqual([500]));
    expect(connects).toBe(1);
    expect(result.current.status).toBe('connecting');
    act(() => {
      clock.runNext();
    });
    await waitFor(() => expect(connects).toBe(2));
    unmount();
  });
});
