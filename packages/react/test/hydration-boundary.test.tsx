import { createClient, type DehydratedState, dehydrate } from '@keel/core';
import { act, waitFor } from '@testing-library/react';
import { HttpResponse, http } from 'msw';
import { Suspense } from 'react';
import { hydrateRoot } from 'react-dom/client';
import { renderToString } from 'react-dom/server';
import { expect, it, vi } from 'vitest';
import { ClientProvider, HydrationBoundary, useQuery, useSuspenseQuery } from '../src/index';
import { debugOf, flush, mswServer } from './helpers';

const server = mswServer();

interface Todo {
  id: number;
  title: string;
}

function Page() {
  const { data } = useSuspenseQuery<Todo[]>('/todos');
  const { data: me, isFetching } = useQuery<{ name: string }>('/me', { params: { v: 2 } });
  return (
    <main>
      <ul>
        {data.map((t) => (
          <li key={t.id}>{t.title}</li>
        ))}
      </ul>
      <p>
        {me?.name}
        {isFetching ? ' (fetching)' : ''}
      </p>
    </main>
  );
}

const app = (client: ReturnType<typeof createClient>, state: DehydratedState | null) => (
  <ClientProvider client={client}>
    <HydrationBoundary state={state}>
      <Suspense fallback={<p>loading</p>}>
        <Page />
      </Suspense>
    </HydrationBoundary>
  </ClientProvider>
);

it('server data handed over: same markup, no request on hydration, later reads go to the page origin', async () => {
  const served: string[] = [];
  server.use(
    // The API as the server reaches it, on an internal address...
    http.get('http://internal.test:8080/api/todos', () => {
      served.push('server /todos');
      return HttpResponse.json([{ id: 1, title: 'from the server' }]);
    }),
    http.get('http://internal.test:8080/api/me', () => {
      served.push('server /me');
      return HttpResponse.json({ name: 'Ada' }, { headers: { 'x-user': '1' } });
    }),
    // ...and as the browser reaches it, through the page's origin.
    http.get(`${location.origin}/api/todos`, () => {
      served.push('browser /todos');
      return HttpResponse.json([{ id: 1, title: 'refetched' }]);
    }),
  );
  const serverClient = createClient({ baseURL: 'http://internal.test:8080/api' });
  await serverClient.get('/todos');
  await serverClient.get('/me', { params: { v: 2 } });
  const state = JSON.parse(JSON.stringify(dehydrate(serverClient))) as DehydratedState;
  const html = renderToString(app(serverClient, state));
  expect(html).toContain('<li>from the server</li>');
  expect(html).toContain('Ada');
  expect(served).toEqual(['server /todos', 'server /me']);

  const browser = createClient({ baseURL: '/api' });
  const container = document.createElement('div');
  container.innerHTML = html;
  const recoverable: unknown[] = [];
  const errors = vi.spyOn(console, 'error').mockImplementation(() => {});
  let root!: ReturnType<typeof hydrateRoot>;
  try {
    await act(async () => {
      root = hydrateRoot(container, app(browser, state), {
        onRecoverableError: (error) => recoverable.push(error),
      });
    });
    await flush();
  } finally {
    errors.mockRestore();
  }
  expect(recoverable).toEqual([]);
  expect(errors).not.toHaveBeenCalled();
  expect(container.innerHTML).toBe(html);
  // Zero requests on hydration: the browser's keys found the server's entries.
  expect(served).toEqual(['server /todos', 'server /me']);
  expect(
    browser
      .getCached(browser.resolve('GET', '/me', { params: { v: 2 } }).key)
      ?.headers.get('x-user'),
  ).toBe('1');

  // The hydrated entries carry the browser's spec: an invalidation refetches through /api.
  act(() => {
    browser.invalidate('/todos');
  });
  await waitFor(() => expect(container.textContent).toContain('refetched'));
  expect(served).toEqual(['server /todos', 'server /me', 'browser /todos']);
  act(() => root.unmount());
  await flush();
  expect(debugOf(browser).subscriptions).toBe(0);
});

it('no state (null) renders the children with nothing hydrated', () => {
  const client = createClient({ baseURL: '/api' });
  client.setCached(client.resolve('GET', '/todos'), {
    data: [{ id: 1, title: 'cached' }],
    status: 200,
    statusText: 'OK',
    headers: new Headers(),
  });
  client.setCached(client.resolve('GET', '/me', { params: { v: 2 } }), {
    data: { name: 'Bo' },
    status: 200,
    statusText: 'OK',
    headers: new Headers(),
  });
  const html = renderToString(app(client, null));
  expect(html).toContain('<li>cached</li>');
});
