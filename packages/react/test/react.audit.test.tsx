/**
 * Audit of @keel/react edges the other files leave open (useInfiniteQuery, useServerEvents,
 * ClientProvider), written from the README and issue 12.
 */
import { act, renderHook, waitFor } from '@testing-library/react';
import { HttpResponse, http } from 'msw';
import { describe, expect, it } from 'vitest';
import { useInfiniteQuery } from '../src/index';
import { API, mswServer, readAll, testClient, wrapperFor } from './helpers';

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
