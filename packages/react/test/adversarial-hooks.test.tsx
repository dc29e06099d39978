import { createClient } from '@keel/core';
import { act, render, renderHook, waitFor } from '@testing-library/react';
import { HttpResponse, http } from 'msw';
import { type ReactNode, StrictMode } from 'react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  queryOptions,
  useInfiniteQuery,
  useMutation,
  useQueries,
  useQuery,
  useServerEvents,
} from '../src/index';
import { environmentListenerCount } from '../src/internal/environment';
import { channelCount } from '../src/server-events/channel';
import {
  API,
  actEnvironment,
  debugOf,
  deferred,
  flush,
  mswServer,
  readAll,
  testClient,
  wrapperFor,
} from './helpers';

const server = mswServer();

// React warns about an update outside act only in an act environment.
actEnvironment(true);

/** console.error calls (React's act and state warnings go there), checked after each test. */
const errors = vi.spyOn(console, 'error');
afterEach(() => {
  const calls = errors.mock.calls.map((args) => String(args[0]));
  errors.mockClear();
  expect(calls).toEqual([]);
});

/**
 * GET /items/:id answering `{ id }`, each request held until `release(id)` (or at once when not
 * gated); records every request and whether its signal was aborted.
 */
function itemsApi(gated: boolean) {
  const requests: string[] = [];
  const aborted: string[] = [];
  const gates = new Map<string, ReturnType<typeof deferred<void>>>();
  const gateOf = (id: string) => {
    let gate = gates.get(id);
    if (gate === undefined) gates.set(id, (gate = deferred()));
    return gate;
  };
  server.use(
    http.get(`${API}/items/:id`, async ({ params, request }) => {
      const id = String(params.id);
      requests.push(id);
      request.signal.addEventListener('abort', () => aborted.push(id));
      if (gated) await gateOf(id).promise;
      return HttpResponse.json({ id });
    }),
  );
  return { requests, aborted, release: (id: string) => gateOf(id).resolve() };
}

describe('a query key that changes every render', () => {
  it('renders batched in one commit: one request, for the last key only', async () => {
    const api = itemsApi(false);
    const client = testClient();
    const { result, rerender } = renderHook(
      ({ id }: { id: number }) => readAll(useQuery<{ id: string }>(`/items/${id}`)),
      { wrapper: wrapperFor(client), initialProps: { id: 0 } },
    );
    await waitFor(() => expect(result.current.data).toEqual({ id: '0' }));
    act(() => {
      for (let id = 1; id <= 5; id++) rerender({ id });
    });
    await waitFor(() => expect(result.current.data).toEqual({ id: '5' }));
    expect(api.requests).toEqual(['0', '5']);
  });

  it('each render committed: the older reads are cancelled and none of their answers shows', async () => {
    const api = itemsApi(true);
    const client = testClient();
    const seen: unknown[] = [];
    const { result, rerender } = renderHook(
      ({ id }: { id: number }) => {
        const r = readAll(useQuery<{ id: string }>(`/items/${id}`));
        seen.push(r.data?.id);
        return r;
      },
      { wrapper: wrapperFor(client), initialProps: { id: 0 } },
    );
    await flush();
    for (let id = 1; id <= 4; id++) {
      rerender({ id });
      await flush();
    }
    // Every key committed sent its read; all but the last were cancelled as the key moved on.
    await waitFor(() => expect(api.requests).toEqual(['0', '1', '2', '3', '4']));
    await waitFor(() => expect(api.aborted.sort()).toEqual(['0', '1', '2', '3']));
    // The old answers arrive late (newest first), then the last key's.
    for (const id of ['3', '2', '1', '0']) api.release(id);
    await flush();
    expect(result.current.isPending).toBe(true);
    api.release('4');
    await waitFor(() => expect(result.current.data).toEqual({ id: '4' }));
    expect(result.current.isFetching).toBe(false);
    // No render ever showed the data of another key.
    expect(seen.filter((id) => id !== undefined && id !== '4')).toEqual([]);
    expect(api.requests).toHaveLength(5);
    expect(debugOf(client).inflight).toBe(0);
  });
});

describe('unmount while a read is in flight', () => {
  it.each([
    ['useQuery', () => readAll(useQuery('/items/1'))],
    ['useQueries', () => useQueries([queryOptions('/items/1')]).map(readAll)],
    [
      'useInfiniteQuery',
      () =>
        readAll(
          useInfiniteQuery('/items/1', {
            initialPageParam: 1,
            getNextPageParam: () => null,
          }),
        ),
    ],
  ])('%s leaves no subscription, listener or read behind, and no act warning', async (_, hook) => {
    const api = itemsApi(true);
    const client = testClient();
    const { unmount } = renderHook(hook as () => unknown, { wrapper: wrapperFor(client) });
    await waitFor(() => expect(api.requests).toEqual(['1']));
    expect(debugOf(client).subscriptions).toBe(1);
    unmount();
    // Released a microtask later (a StrictMode remount keeps the entry), the read cancelled.
    await flush();
    expect(debugOf(client).subscriptions).toBe(0);
    expect(debugOf(client).listeners).toBe(0);
    await waitFor(() => expect(api.aborted).toEqual(['1']));
    // The answer comes after the unmount, outside act: a state update would warn (checked
    // after each test).
    api.release('1');
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(debugOf(client)).toMatchObject({ subscriptions: 0, listeners: 0, inflight: 0 });
    expect(environmentListenerCount()).toBe(0);
  });
});

describe('StrictMode', () => {
  const strict = (client: ReturnType<typeof testClient>) => {
    const Wrapper = wrapperFor(client);
    return ({ children }: { children?: ReactNode }) => (
      <StrictMode>
        <Wrapper>{children}</Wrapper>
      </StrictMode>
    );
  };

  it('useServerEvents mounted twice opens one stream, closed once unmounted', async () => {
    const { opened, client } = streamingClient();
    const { unmount } = render(<Events url="/events" />, { wrapper: strict(client) });
    await flush();
    expect(opened).toHaveLength(1);
    expect(channelCount(client)).toBe(1);
    unmount();
    await flush();
    expect(opened[0]!.signal.aborted).toBe(true);
    expect(channelCount(client)).toBe(0);
  });

  it('useQueries mounted twice sends one read per key', async () => {
    const api = itemsApi(false);
    const client = testClient();
    const { result } = renderHook(
      () => useQueries([queryOptions(`/items/1`), queryOptions(`/items/2`)]).map(readAll),
      { wrapper: strict(client) },
    );
    await waitFor(() => expect(result.current.every((r) => r.isSuccess)).toBe(true));
    await flush();
    expect(api.requests.sort()).toEqual(['1', '2']);
    expect(debugOf(client).subscriptions).toBe(2);
  });

  it('mounting twice (effects run, cleaned up, run again) sends one read', async () => {
    const api = itemsApi(false);
    const client = testClient();
    const { result } = renderHook(() => readAll(useQuery<{ id: string }>(`/items/1`)), {
      wrapper: strict(client),
    });
    await waitFor(() => expect(result.current.data).toEqual({ id: '1' }));
    await flush();
    expect(api.requests).toEqual(['1']);
    expect(debugOf(client).subscriptions).toBe(1);
  });
});

describe('useMutation after unmount', () => {
  it('a call after unmount sets no state and warns nothing; the request still settles', async () => {
    const posts: unknown[] = [];
    server.use(
      http.post(`${API}/todos`, async ({ request }) => {
        posts.push(await request.json());
        return HttpResponse.json({ id: 1 });
      }),
    );
    const client = testClient();
    const onSuccess = vi.fn();
    const renders = vi.fn();
    const { result, unmount } = renderHook(
      () => {
        const m = useMutation<{ id: number }, { title: string }>('POST', '/todos', { onSuccess });
        renders(m.status);
        return m;
      },
      { wrapper: wrapperFor(client) },
    );
    const { mutateAsync, mutate } = result.current;
    unmount();
    const before = renders.mock.calls.length;
    const mutateCallbacks = { onSuccess: vi.fn() };
    mutate({ title: 'a' }, mutateCallbacks);
    await expect(mutateAsync({ title: 'b' })).resolves.toEqual({ id: 1 });
    await flush();
    // Nothing rendered (the state of an unmounted component is not set), the call's own
    // callbacks did not run (TanStack's rule), the hook's options did.
    expect(renders.mock.calls.length).toBe(before);
    expect(mutateCallbacks.onSuccess).not.toHaveBeenCalled();
    expect(posts).toHaveLength(2);
    expect(onSuccess).toHaveBeenCalledTimes(2);
    expect(debugOf(client).inflight).toBe(0);
  });
});

/** A client whose fetch answers every request with an open event stream, recording each. */
function streamingClient() {
  const opened: { url: string; signal: AbortSignal }[] = [];
  const fetch = async (input: RequestInfo | URL, init?: RequestInit) => {
    const signal = init!.signal!;
    opened.push({ url: String(input), signal });
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode(': open\n\n'));
        signal.addEventListener('abort', () => controller.error(signal.reason));
      },
    });
    return new Response(body, { headers: { 'content-type': 'text/event-stream' } });
  };
  return { opened, client: createClient({ baseURL: API, fetch }) };
}

function Events({ url }: { url: string }) {
  useServerEvents(url);
  return null;
}

describe('useServerEvents with a URL that changes', () => {
  it('closes the old stream (its request is aborted) and opens the new one', async () => {
    const { opened, client } = streamingClient();
    const { rerender, unmount } = render(<Events url="/events/a" />, {
      wrapper: wrapperFor(client),
    });
    await waitFor(() => expect(opened).toHaveLength(1));
    rerender(<Events url="/events/b" />);
    await waitFor(() => expect(opened).toHaveLength(2));
    expect(opened.map((o) => new URL(o.url).pathname)).toEqual(['/events/a', '/events/b']);
    // Closed a microtask after its last user left (a StrictMode remount keeps it open).
    await flush();
    expect(opened[0]!.signal.aborted).toBe(true);
    expect(opened[1]!.signal.aborted).toBe(false);
    expect(channelCount(client)).toBe(1);
    unmount();
    await flush();
    expect(opened[1]!.signal.aborted).toBe(true);
    expect(channelCount(client)).toBe(0);
  });
});
