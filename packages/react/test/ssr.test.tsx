// @vitest-environment node
import { createClient, isKeelError } from '@keel/core';
import { type ReactNode, Suspense } from 'react';
import { renderToString } from 'react-dom/server';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  ClientProvider,
  isNoServerDataError,
  NoServerDataError,
  useMutation,
  useQuery,
  useServerEvents,
  useSuspenseQuery,
} from '../src/index';

interface Todo {
  id: number;
  title: string;
}

function List() {
  const { data, status } = useQuery<Todo[]>('/todos', {
    initialData: [{ id: 1, title: 'from initialData' }],
  });
  const { data: user } = useQuery<{ name: string }>('/me');
  useMutation('POST', '/todos');
  const events = useServerEvents('/events', { invalidate: { changed: '/todos' } });
  return (
    <main>
      <p>{status}</p>
      <ul>
        {data?.map((t) => (
          <li key={t.id}>{t.title}</li>
        ))}
      </ul>
      <p>{user?.name ?? 'no user'}</p>
      <p>{events.status}</p>
    </main>
  );
}

function Pending() {
  const { status, isLoading } = useQuery('/nothing');
  return <p>{`${status}:${isLoading}`}</p>;
}

function Modern() {
  const { data } = useSuspenseQuery<{ name: string }>('/me');
  return <p>{data.name}</p>;
}
function Legacy() {
  const { data } = useQuery<{ name: string }>('/me', { suspense: true });
  return <p>{data!.name}</p>;
}

/** Any access to `window` or `document` throws while the trap is set. */
function trapBrowserGlobals(): () => void {
  const names = ['window', 'document'] as const;
  for (const name of names) {
    Object.defineProperty(globalThis, name, {
      configurable: true,
      get() {
        throw new Error(`${name} was touched during server rendering`);
      },
    });
  }
  return () => {
    for (const name of names) delete (globalThis as Record<string, unknown>)[name];
  };
}

afterEach(() => {
  vi.unstubAllGlobals();
});

describe('server rendering', () => {
  it('renders initialData and a pre-filled client without fetching or touching window', () => {
    const fetchImpl = vi.fn(() => Promise.reject(new Error('no network on the server')));
    const globalFetch = vi.fn(() => Promise.reject(new Error('no network on the server')));
    vi.stubGlobal('fetch', globalFetch);
    const client = createClient({ baseURL: 'http://api.test', fetch: fetchImpl });
    client.setCached(client.resolve('GET', '/me'), {
      data: { name: 'Ada' },
      status: 200,
      statusText: 'OK',
      headers: new Headers(),
    });
    const untrap = trapBrowserGlobals();
    let html: string;
    try {
      html = renderToString(
        <ClientProvider client={client}>
          <List />
        </ClientProvider>,
      );
    } finally {
      untrap();
    }
    expect(html).toContain('<p>success</p>');
    expect(html).toContain('<li>from initialData</li>');
    expect(html).toContain('<p>Ada</p>');
    expect(html).toContain('<p>connecting</p>');
    expect(fetchImpl).not.toHaveBeenCalled();
    expect(globalFetch).not.toHaveBeenCalled();
    // Rendering registered nothing: no interest, no listeners, nothing cached by the render.
    const debug = (client as unknown as { debug: Record<string, number> }).debug;
    expect(debug).toMatchObject({ subscriptions: 0, listeners: 0, flights: 0, cacheSize: 1 });
  });

  it('renders pending (loading) for a key with nothing cached, still without fetching', () => {
    const fetchImpl = vi.fn(() => Promise.reject(new Error('no network on the server')));
    const client = createClient({ baseURL: 'http://api.test', fetch: fetchImpl });
    const html = renderToString(
      <ClientProvider client={client}>
        <Pending />
      </ClientProvider>,
    );
    expect(html).toBe('<p>pending:true</p>');
    expect(fetchImpl).not.toHaveBeenCalled();
  });

  describe('a suspense query', () => {
    /** Renders `query` in a Suspense boundary, with the client's fetch counted. */
    function renderSuspended(query: ReactNode, prefill?: { name: string }) {
      const fetchImpl = vi.fn(() => Promise.reject(new Error('no network on the server')));
      const client = createClient({ baseURL: 'http://api.test', fetch: fetchImpl });
      if (prefill) {
        client.setCached(client.resolve('GET', '/me'), {
          data: prefill,
          status: 200,
          statusText: 'OK',
          headers: new Headers(),
        });
      }
      const html = renderToString(
        <ClientProvider client={client}>
          <Suspense fallback={<p>loading</p>}>{query}</Suspense>
        </ClientProvider>,
      );
      return { html, fetchImpl, client };
    }

    it.each([
      ['useSuspenseQuery', Modern],
      ['useQuery({ suspense: true })', Legacy],
    ])('%s with nothing cached: no request; the boundary is left to the browser', (_, Query) => {
      const { html, fetchImpl, client } = renderSuspended(<Query />);
      expect(html).toContain('<p>loading</p>');
      // React marks the boundary for client rendering (the `<!--$!-->` marker).
      expect(html).toContain('<!--$!-->');
      expect(fetchImpl).not.toHaveBeenCalled();
      const debug = (client as unknown as { debug: Record<string, number> }).debug;
      expect(debug).toMatchObject({ flights: 0, subscriptions: 0, listeners: 0 });
    });

    it('with the data cached: rendered on the server, no request', () => {
      const { html, fetchImpl } = renderSuspended(<Modern />, { name: 'Ada' });
      expect(html).toBe('<!--$--><p>Ada</p><!--/$-->');
      expect(fetchImpl).not.toHaveBeenCalled();
    });

    it('NoServerDataError names the key and the fix', () => {
      const error = new NoServerDataError('GET /me');
      expect(error.key).toBe('GET /me');
      expect(error.name).toBe('NoServerDataError');
      expect(error.message).toMatch(/prefetch it before rendering/);
      expect(isNoServerDataError(error)).toBe(true);
      expect(isKeelError(error)).toBe(true);
      expect(isNoServerDataError({ name: 'NoServerDataError', key: 'GET /me' })).toBe(false);
      expect(
        isNoServerDataError(Object.assign(new Error('x'), { name: 'NoServerDataError' })),
      ).toBe(false);
    });
  });
});
