import { useQuery } from '@keel/react';
import { act, fireEvent, screen, waitFor, within } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { clientFor, loopback, manualClock, renderDevtools, settle, view } from './helpers';

interface Todo {
  id: number;
  title: string;
}

function Todos() {
  const { data } = useQuery<Todo[]>('/todos', { tags: ['todos'] });
  return <p data-testid="todos">{data?.map((t) => t.title).join(',') ?? '…'}</p>;
}

/** The row of a key in the Cache view's table. */
function row(url: string): HTMLElement {
  return within(view())
    .getByRole('button', { name: new RegExp(`${url.replace(/[?]/g, '\\$&')}$`) })
    .closest('tr')!;
}

afterEach(() => {
  vi.useRealTimers();
});

describe('Cache view', () => {
  it('shows a mounted query: fresh, one subscriber, its tags; selected, its data and headers', async () => {
    const server = await loopback(() => ({
      body: [{ id: 1, title: 'write the panel' }],
      headers: { 'x-request-id': 'r-1' },
    }));
    const client = clientFor(server);
    renderDevtools(client, {}, <Todos />);
    await waitFor(() => expect(screen.getByTestId('todos').textContent).toBe('write the panel'));
    await settle();

    const todos = row('/todos');
    expect(within(todos).getByText('fresh')).toBeTruthy();
    expect(todos.querySelectorAll('td')[3]!.textContent).toBe('1'); // subscribers
    expect(within(todos).getByText('todos')).toBeTruthy(); // its tag

    act(() => within(todos).getByRole('button').click());
    const detail = within(view()).getByRole('region', { name: 'Cache entry GET /todos' });
    // The data as a tree: the array, its object, and the values.
    expect(within(detail).getByText('Array(1)')).toBeTruthy();
    expect(within(detail).getByText('"write the panel"')).toBeTruthy();
    // The response headers.
    expect(within(detail).getByText('x-request-id')).toBeTruthy();
    expect(within(detail).getByText('r-1')).toBeTruthy();
    expect(within(detail).getByText('application/json')).toBeTruthy();
  });

  it('Invalidate refetches the mounted query; Refetch fetches again; Remove drops an entry', async () => {
    let title = 'first';
    const server = await loopback(({ path }) =>
      path === '/todos' ? { body: [{ id: 1, title }] } : { body: { path } },
    );
    const client = clientFor(server);
    renderDevtools(client, {}, <Todos />);
    await waitFor(() => expect(screen.getByTestId('todos').textContent).toBe('first'));
    await act(() => client.get('/unwatched'));
    await settle();
    expect(server.count('/todos')).toBe(1);

    title = 'second';
    act(() => within(row('/todos')).getByRole('button').click());
    act(() => within(view()).getByRole('button', { name: 'Invalidate' }).click());
    // The mounted query fetched it again and shows the new data; the panel shows the entry back.
    await waitFor(() => expect(screen.getByTestId('todos').textContent).toBe('second'));
    expect(server.count('/todos')).toBe(2);
    await waitFor(() => expect(within(view()).getByText('"second"')).toBeTruthy());

    title = 'third';
    act(() => within(view()).getByRole('button', { name: 'Refetch' }).click());
    await waitFor(() => expect(within(view()).getByText('"third"')).toBeTruthy());
    expect(server.count('/todos')).toBe(3);
    expect(screen.getByTestId('todos').textContent).toBe('third');

    // Remove drops an entry nobody watches: no request follows.
    act(() => within(row('/unwatched')).getByRole('button').click());
    act(() => within(view()).getByRole('button', { name: 'Remove' }).click());
    await settle();
    expect(within(view()).queryByRole('button', { name: /\/unwatched$/ })).toBeNull();
    expect(client.getCached('GET /unwatched')).toBeUndefined();
    expect(server.count('/unwatched')).toBe(1);
  });

  it('Remove drops the entry of a mounted query without a request; Invalidate is the one that refetches', async () => {
    let title = 'before';
    const server = await loopback(() => ({ body: [{ id: 1, title }] }));
    const client = clientFor(server);
    renderDevtools(client, {}, <Todos />);
    await waitFor(() => expect(screen.getByTestId('todos').textContent).toBe('before'));

    title = 'after';
    act(() => within(row('/todos')).getByRole('button').click());
    act(() => within(view()).getByRole('button', { name: 'Remove' }).click());
    await settle();
    // Gone from the cache and the panel; the query keeps what it shows, and nothing is fetched.
    expect(client.getCached('GET /todos')).toBeUndefined();
    expect(within(view()).queryByRole('button', { name: /\/todos$/ })).toBeNull();
    expect(screen.getByTestId('todos').textContent).toBe('before');
    expect(server.count('/todos')).toBe(1);
    // The next read of it goes to the server.
    await act(() => client.get('/todos'));
    expect(server.count('/todos')).toBe(2);
    await waitFor(() => expect(screen.getByTestId('todos').textContent).toBe('after'));
  });

  it('an entry goes stale as its ttl passes, and one written by hand cannot be refetched', async () => {
    // Only the client's clock moves: the view's tick is one of its timers.
    const clock = manualClock();
    const server = await loopback(() => ({ body: { ok: true } }));
    const client = clientFor(server, { cache: { ttl: 5000 }, clock });
    renderDevtools(client);
    await act(() => client.get('/short'));
    client.setCached('GET /by-hand', {
      data: 1,
      status: 200,
      statusText: 'OK',
      headers: new Headers(),
    });
    await settle();
    expect(within(row('/short')).getByText('fresh')).toBeTruthy();

    act(() => clock.advance(6000));
    expect(within(row('/short')).getByText('stale')).toBeTruthy();
    expect(row('/short').querySelectorAll('td')[2]!.textContent).toBe('6.0 s');

    act(() => within(row('/by-hand')).getByRole('button').click());
    const refetch = within(view()).getByRole('button', { name: 'Refetch' }) as HTMLButtonElement;
    expect(refetch.disabled).toBe(true);
  });

  it('filters by key or tag, and explains an empty cache', async () => {
    const server = await loopback(() => ({ body: [] }));
    const client = clientFor(server);
    renderDevtools(client);
    expect(within(view()).getByText('Nothing cached yet')).toBeTruthy();
    await act(() => client.get('/users', { tags: ['people'] }));
    await act(() => client.get('/orders'));
    await settle();
    fireEvent.change(within(view()).getByRole('searchbox', { name: 'Filter cache keys' }), {
      target: { value: 'people' },
    });
    expect(within(view()).getByRole('button', { name: /\/users$/ })).toBeTruthy();
    expect(within(view()).queryByRole('button', { name: /\/orders$/ })).toBeNull();
    expect(within(view()).getByText(/1 of 2 entries/)).toBeTruthy();
  });
});
