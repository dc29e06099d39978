// @vitest-environment node
import { createClient, dehydrate } from '@keel/core';
import { Suspense } from 'react';
import { renderToString } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../core/test/helpers';
import {
  ClientProvider,
  HydrationBoundary,
  QueryErrorBoundary,
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
import { storeFor } from '../src/query/store';
import { channelCount } from '../src/server-events/channel';
import { debugOf } from './helpers';

function Everything() {
  const list = useQuery<string[]>('/todos', { refetchInterval: 1000 });
  const pages = useInfiniteQuery<{ next: number | null }>('/feed', {
    initialPageParam: 0,
    getNextPageParam: (last) => last.next,
  });
  const both = useQueries([queryOptions('/a'), queryOptions('/b', { refetchInterval: 500 })]);
  const fetching = useIsFetching();
  const mutating = useIsMutating();
  useMutation('POST', '/todos');
  const events = useServerEvents('/events', { invalidate: { changed: '/todos' } });
  return (
    <p>
      {`${list.status} ${pages.status} ${both.map((q) => q.status).join(',')} ${fetching} ${mutating} ${events.status}`}
    </p>
  );
}

function Me() {
  const { data } = useSuspenseQuery<{ name: string }>('/me');
  return <b>{data.name}</b>;
}

describe('server rendering with every hook', () => {
  it('starts no request, timer, subscription, connection or store entry', async () => {
    let fetched = 0;
    const clock = new FakeClock();
    const client = createClient({
      baseURL: 'http://api.test',
      clock,
      fetch: async () => {
        fetched++;
        return Response.json({ name: 'Ada' });
      },
    });
    const server = createClient({
      baseURL: 'http://internal.test',
      clock,
      fetch: async () => Response.json({ name: 'Ada' }),
    });
    await server.get('/me');
    const state = JSON.parse(JSON.stringify(dehydrate(server)));
    const html = renderToString(
      <ClientProvider client={client}>
        <HydrationBoundary state={state}>
          <QueryErrorBoundary fallback={() => <i>failed</i>}>
            <Suspense fallback={<i>wait</i>}>
              <Everything />
              <Me />
            </Suspense>
          </QueryErrorBoundary>
        </HydrationBoundary>
      </ClientProvider>,
    );
    expect(html).toContain('<b>Ada</b>');
    expect(html).toContain('pending pending pending,pending 0 0 connecting');
    await new Promise((r) => setTimeout(r, 0));
    expect(fetched).toBe(0);
    expect(clock.live).toBe(0);
    expect(debugOf(client)).toMatchObject({ subscriptions: 0, flights: 0 });
    expect(storeFor(client).size).toBe(0);
    expect(channelCount(client)).toBe(0);
  });
});
