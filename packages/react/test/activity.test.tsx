import { act, renderHook, waitFor } from '@testing-library/react';
import { HttpResponse, http } from 'msw';
import { describe, expect, it } from 'vitest';
import { useIsFetching, useIsMutating, useMutation, useQuery } from '../src/index';
import { API, debugOf, deferred, flush, mswServer, testClient, wrapperFor } from './helpers';

const server = mswServer();

/** Every GET answers its name once `gate` resolves. */
function gatedReads() {
  const gate = deferred();
  server.use(
    http.get(`${API}/:name`, async ({ params }) => {
      await gate.promise;
      return HttpResponse.json(params.name);
    }),
  );
  return gate;
}

describe('useIsFetching', () => {
  it('counts the reads in flight, all or by target; 0 when they end', async () => {
    const gate = gatedReads();
    const client = testClient();
    const { result } = renderHook(
      () => {
        useQuery('/a', { tags: ['letters'] });
        useQuery('/a');
        useQuery('/b');
        return {
          all: useIsFetching(),
          a: useIsFetching('/a'),
          tagged: useIsFetching(['letters']),
          none: useIsFetching((meta) => meta.key.includes('zzz')),
        };
      },
      { wrapper: wrapperFor(client) },
    );
    // `/a` with and without tags share nothing: the tags are not part of the key, so one flight.
    await waitFor(() => expect(result.current).toEqual({ all: 2, a: 1, tagged: 1, none: 0 }));
    gate.resolve();
    await waitFor(() => expect(result.current).toEqual({ all: 0, a: 0, tagged: 0, none: 0 }));
  });

  it('a first read cut off by invalidate({refetch: false}) stops counting at once', async () => {
    const gate = gatedReads();
    const client = testClient();
    const { result } = renderHook(() => useIsFetching('/a'), { wrapper: wrapperFor(client) });
    const read = client.get('/a');
    await waitFor(() => expect(result.current).toBe(1));
    act(() => {
      client.invalidate('/a', { refetch: false });
    });
    await waitFor(() => expect(result.current).toBe(0));
    expect(client.isFetching(client.resolve('GET', '/a').key)).toBe(false);
    gate.resolve();
    await read;
  });

  it('a bad target is a TypeError naming it; unmounting leaves no listener', async () => {
    const client = testClient();
    expect(() =>
      renderHook(() => useIsFetching(3 as never), { wrapper: wrapperFor(client) }),
    ).toThrow(/^keel: `target` must be a path string/);
    const { unmount } = renderHook(() => useIsFetching(), { wrapper: wrapperFor(client) });
    expect(debugOf(client).listeners).toBeGreaterThan(0);
    unmount();
    await flush();
    expect(debugOf(client).listeners).toBe(0);
  });
});

describe('useIsMutating', () => {
  it('counts running mutations from mutate() (onMutate included) until they settle', async () => {
    const gate = deferred();
    server.use(
      http.post(`${API}/todos`, async () => {
        await gate.promise;
        return HttpResponse.json({ id: 1 }, { status: 201 });
      }),
      http.post(`${API}/users`, () => HttpResponse.json({ id: 2 }, { status: 201 })),
    );
    const client = testClient();
    const onMutate = deferred();
    const { result } = renderHook(
      () => ({
        add: useMutation<unknown, { t: string }>('POST', '/todos', {
          tags: ['todo-writes'],
          onMutate: () => onMutate.promise,
        }),
        all: useIsMutating(),
        todos: useIsMutating('/todos'),
        tagged: useIsMutating(['todo-writes']),
        users: useIsMutating('/users'),
      }),
      { wrapper: wrapperFor(client) },
    );
    expect(result.current.all).toBe(0);
    act(() => result.current.add.mutate({ t: 'x' }));
    await waitFor(() =>
      expect(result.current).toMatchObject({ all: 1, todos: 1, tagged: 1, users: 0 }),
    );
    onMutate.resolve();
    gate.resolve();
    await waitFor(() => expect(result.current.add.isSuccess).toBe(true));
    await waitFor(() => expect(result.current.all).toBe(0));
  });
});
