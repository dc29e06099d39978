import { type Clock, createClient } from '@keel/core';
import { render, screen, waitFor } from '@testing-library/react';
import { expect, it } from 'vitest';
import { useQuery } from '../src/index';
import { API, debugOf, flush, mswServer, type Todo, todoApi, wrapperFor } from './helpers';

const server = mswServer();

function Titles() {
  const { data } = useQuery<Todo[]>('/todos');
  return <p data-testid="list">{data?.map((t) => t.title).join(',') ?? '-'}</p>;
}

/** The client's time, moved by the test; timers are the real ones (none is used here). */
function movableClock(): Clock & { now(): number; advance(ms: number): void } {
  let now = 1_000_000;
  return {
    now: () => now,
    advance: (ms: number) => {
      now += ms;
    },
    setTimeout: (fn: () => void, ms: number) => setTimeout(fn, ms),
    clearTimeout: (handle: unknown) => clearTimeout(handle as ReturnType<typeof setTimeout>),
  };
}

it("an unused entry is dropped after the core's gcTime once no component reads it", async () => {
  const api = todoApi(['a']);
  server.use(...api.handlers);
  const clock = movableClock();
  const client = createClient({
    baseURL: API,
    clock,
    retry: false,
    cache: { ttl: 1_000, gcTime: 5_000 },
  });
  const key = client.resolve('GET', '/todos').key;
  const first = render(<Titles />, { wrapper: wrapperFor(client) });
  await waitFor(() => expect(screen.getByTestId('list').textContent).toBe('a'));

  // Read by a mounted component: kept however old it is (served stale, refetched on focus).
  clock.advance(60_000);
  expect(client.getCached(key)).toBeDefined();

  first.unmount();
  await flush();
  expect(debugOf(client).subscriptions).toBe(0);
  // Unread from now on: gcTime counts from the last reader leaving.
  clock.advance(4_999);
  expect(client.getCached(key)).toBeDefined();
  clock.advance(2);
  expect(client.getCached(key)).toBeUndefined();
  expect(debugOf(client).cacheSize).toBe(0);

  // Mounting again reads again.
  render(<Titles />, { wrapper: wrapperFor(client) });
  await waitFor(() => expect(screen.getByTestId('list').textContent).toBe('a'));
  expect(api.state.gets).toBe(2);
});
