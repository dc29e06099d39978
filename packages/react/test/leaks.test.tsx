import { act } from '@testing-library/react';
import { delay, HttpResponse, http } from 'msw';
import { setupServer } from 'msw/node';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { FakeClock } from '../../core/test/helpers';
import { ClientProvider, useMutation, useQuery } from '../src/index';
import { environmentListenerCount } from '../src/internal/environment';
import { storeFor } from '../src/query/store';
import { API, debugOf, flush, testClient } from './helpers';

const aborted: string[] = [];
const server = setupServer(
  http.get(`${API}/slow/:id`, async ({ request, params }) => {
    request.signal.addEventListener('abort', () => aborted.push(String(params.id)));
    await delay('infinite');
    return HttpResponse.json({});
  }),
);
beforeAll(() => server.listen({ onUnhandledRequest: 'error' }));
afterAll(() => server.close());

function Item({ url, interval }: { url: string; interval: number | false }) {
  const { data } = useQuery<{ n: number }>(url, { refetchInterval: interval });
  useMutation('POST', '/items');
  return <span>{data?.n ?? '-'}</span>;
}

it('10,000 mount/unmount cycles leave no interest, listener, flight, timer or entry', async () => {
  // Every timer of the client and the hooks (refetchInterval included) runs on this clock.
  const clock = new FakeClock();
  const client = testClient({ clock });
  for (let i = 0; i < 50; i++) {
    client.setCached(client.resolve('GET', `/item/${i}`), {
      data: { n: i },
      status: 200,
      statusText: 'OK',
      headers: new Headers(),
    });
  }
  const container = document.createElement('div');
  const root = createRoot(container);
  let slow = 0;
  for (let i = 0; i < 10_000; i++) {
    // Every 100th cycle unmounts while its request is in flight (it must be aborted).
    const url = i % 100 === 99 ? `/slow/${slow++}` : `/item/${i % 50}`;
    const tree = (
      <ClientProvider client={client}>
        <Item url={url} interval={i % 2 === 0 ? 60_000 : false} />
      </ClientProvider>
    );
    await act(async () => {
      root.render(i % 10 === 0 ? <StrictMode>{tree}</StrictMode> : tree);
    });
    await act(async () => {
      root.render(null);
    });
  }
  await flush();
  // Half the cycles armed an interval (the StrictMode ones twice); none is left, nor any timer.
  expect(clock.history.filter((t) => t.ms === 60_000)).toHaveLength(6000);
  expect(clock.live).toBe(0);
  expect(container.textContent).toBe('');
  expect(debugOf(client)).toMatchObject({
    subscriptions: 0,
    listeners: 0,
    flights: 0,
    inflight: 0,
  });
  expect(storeFor(client).size).toBe(0);
  expect(environmentListenerCount()).toBe(0);
  await flush();
  expect(aborted).toHaveLength(slow);
  root.unmount();
}, 120_000);
