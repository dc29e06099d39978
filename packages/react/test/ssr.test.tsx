// @vitest-environment node
import { createClient } from '@keel/core';
import { renderToString } from 'react-dom/server';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ClientProvider, useMutation, useQuery, useServerEvents } from '../src/index';

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
});
