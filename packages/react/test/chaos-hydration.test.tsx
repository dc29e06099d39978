import { act, render, screen, waitFor } from '@testing-library/react';
import { HttpResponse, http } from 'msw';
import { expect, it } from 'vitest';
import { FakeClock } from '../../core/test/helpers';
import { HydrationBoundary, useQuery } from '../src/index';
import { API, mswServer, testClient, wrapperFor } from './helpers';

const server = mswServer();

/** What the server rendered into the page: dehydrated at once (age 0), fresh for a minute. */
const PAGE_STATE = JSON.stringify({
  keel: 1,
  entries: [
    {
      key: 'GET /todos',
      tags: [],
      age: 0,
      ttl: 60_000,
      response: { data: ['server'], status: 200, statusText: 'OK', headers: [] },
    },
  ],
});

function Todos() {
  const { data } = useQuery<string[]>('/todos');
  return <p data-testid="todos">{data?.join(',') ?? '-'}</p>;
}

function Page({ n }: { n: number }) {
  // A new user's way: the state parsed from the page at each render (a new object, same content).
  return (
    <HydrationBoundary state={JSON.parse(PAGE_STATE)}>
      <Todos />
      <p>{n}</p>
    </HydrationBoundary>
  );
}

it('the same dehydrated state handed again (a new object) does not put the server data back over a newer read', async () => {
  server.use(http.get(`${API}/todos`, () => HttpResponse.json(['fresh'])));
  const clock = new FakeClock();
  const client = testClient({ clock });
  const { rerender } = render(<Page n={1} />, { wrapper: wrapperFor(client) });
  expect(screen.getByTestId('todos').textContent).toBe('server');
  await clock.advance(1000);
  await act(async () => {
    client.invalidate('/todos');
  });
  await waitFor(() => expect(screen.getByTestId('todos').textContent).toBe('fresh'));
  await clock.advance(1000);
  rerender(<Page n={2} />);
  await act(async () => {});
  expect(screen.getByTestId('todos').textContent).toBe('fresh');
});
