import { createClient } from '@keel/core';
import { act } from '@testing-library/react';
import { hydrateRoot } from 'react-dom/client';
import { renderToString } from 'react-dom/server';
import { expect, it, vi } from 'vitest';
import { ClientProvider, useQuery } from '../src/index';
import { debugOf, flush } from './helpers';

interface Todo {
  id: number;
  title: string;
}

const INITIAL: Todo[] = [{ id: 1, title: 'server' }];

function List() {
  const { data, isFetching } = useQuery<Todo[]>('/todos', { initialData: INITIAL });
  return (
    <p>
      {data?.map((t) => t.title).join(',')}
      {isFetching ? ' (fetching)' : ''}
    </p>
  );
}

it('hydrates server HTML rendered with initialData: no mismatch, no request', async () => {
  const serverFetch = vi.fn(() => Promise.reject(new Error('no network')));
  const html = renderToString(
    <ClientProvider client={createClient({ baseURL: 'http://api.test', fetch: serverFetch })}>
      <List />
    </ClientProvider>,
  );
  expect(html).toBe('<p>server</p>');

  const browserFetch = vi.fn(() => Promise.reject(new Error('no network')));
  const client = createClient({ baseURL: 'http://api.test', fetch: browserFetch });
  const container = document.createElement('div');
  container.innerHTML = html;
  const errors = vi.spyOn(console, 'error').mockImplementation(() => {});
  const recoverable: unknown[] = [];
  let root!: ReturnType<typeof hydrateRoot>;
  try {
    await act(async () => {
      root = hydrateRoot(
        container,
        <ClientProvider client={client}>
          <List />
        </ClientProvider>,
        { onRecoverableError: (err) => recoverable.push(err) },
      );
    });
    await flush();
  } finally {
    errors.mockRestore();
  }
  expect(recoverable).toEqual([]);
  expect(errors).not.toHaveBeenCalled();
  expect(container.innerHTML).toBe('<p>server</p>');
  // initialData went into the cache (fresh), so mounting made no request.
  expect(serverFetch).not.toHaveBeenCalled();
  expect(browserFetch).not.toHaveBeenCalled();
  expect(client.getCached(client.resolve('GET', '/todos').key)?.data).toBe(INITIAL);
  act(() => root.unmount());
  await flush();
  expect(debugOf(client).subscriptions).toBe(0);
});
