import type { AddressInfo } from 'node:net';
import { type Client, createClient } from '@keel/core';
import { createApp, createEventHub } from '@keel/server';
import { render, screen, waitFor } from '@testing-library/react';
import { StrictMode, Suspense } from 'react';
import { afterEach, expect, it } from 'vitest';
import { FakeClock } from '../../core/test/helpers';
import {
  ClientProvider,
  queryOptions,
  useInfiniteQuery,
  useIsFetching,
  useIsMutating,
  useMutation,
  useQueries,
  useQuery,
  useServerEvents,
  useSuspenseQuery,
} from '../src/index';
import { environmentListenerCount } from '../src/internal/environment';
import { storeFor } from '../src/query/store';
import { channelCount } from '../src/server-events/channel';
import { debugOf, flush } from './helpers';

/** Every hook, each holding what it holds while mounted: interest, listeners, timers, a stream. */
function EveryHook() {
  const query = useQuery<number[]>('/n', { refetchInterval: 60_000 });
  const suspended = useSuspenseQuery<number[]>('/n?s=1');
  const pages = useInfiniteQuery<number[], number>('/n', {
    initialPageParam: 0,
    getNextPageParam: () => null,
    paramsFor: (page) => ({ page }),
  });
  const list = useQueries([queryOptions<number[]>('/n?q=1'), queryOptions<number[]>('/n?q=2')]);
  useMutation('POST', '/n');
  const fetching = useIsFetching();
  const mutating = useIsMutating();
  const events = useServerEvents('/events');
  return (
    <p data-testid="all">
      {[
        query.data,
        suspended.data,
        pages.data?.pages.length,
        list.map((r) => r.data).join('|'),
        fetching,
        mutating,
        events.status,
      ].join(';')}
    </p>
  );
}

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

it('a ClientProvider handed another client leaves nothing on the first: interest, listener, stream, timer or entry', async () => {
  const app = createApp();
  const hub = createEventHub();
  app.get('/n', (ctx) => ctx.json([1]));
  app.get('/events', (ctx) => hub.connect(ctx));
  const http = await app.listen(0, '127.0.0.1');
  closers.push(() => {
    http.closeAllConnections();
    return app.close();
  });
  const baseURL = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
  const clocks = [new FakeClock(), new FakeClock()] as const;
  const [first, second] = clocks.map((clock) => createClient({ baseURL, clock, timeout: 0 }));
  const tree = (client: Client) => (
    <StrictMode>
      <ClientProvider client={client}>
        <Suspense fallback="…">
          <EveryHook />
        </Suspense>
      </ClientProvider>
    </StrictMode>
  );
  /** What a client holds for the hooks. */
  const held = (client: Client, clock: FakeClock) => ({
    ...debugOf(client),
    entries: storeFor(client).size,
    streams: channelCount(client),
    timers: clock.live,
  });
  const nothing = { subscriptions: 0, listeners: 0, flights: 0, entries: 0, streams: 0, timers: 0 };
  const shown = () => screen.getByTestId('all').textContent;

  const { rerender, unmount } = render(tree(first!));
  await waitFor(() => expect(shown()).toBe('1;1;1;1|1;0;0;open'));
  expect(held(first!, clocks[0])).toMatchObject({ subscriptions: 5, entries: 5, streams: 1 });

  // The first tree stays (hidden) until the second's suspending read is done; then it goes.
  rerender(tree(second!));
  await waitFor(() => expect(held(first!, clocks[0])).toMatchObject(nothing));
  await waitFor(() => expect(shown()).toBe('1;1;1;1|1;0;0;open'));
  expect(held(second!, clocks[1])).toMatchObject({ subscriptions: 5, entries: 5, streams: 1 });
  await waitFor(() => expect(hub.size).toBe(1));

  unmount();
  await flush();
  expect(held(second!, clocks[1])).toMatchObject(nothing);
  expect(environmentListenerCount()).toBe(0);
  await waitFor(() => expect(hub.size).toBe(0));
});
