import { type Client, createClient, type DehydratedState, dehydrate, hydrate } from '@keel/core';
import { act, render, screen, waitFor } from '@testing-library/react';
import { HttpResponse, http } from 'msw';
import { Suspense, startTransition, use, useState, useSyncExternalStore } from 'react';
import { hydrateRoot } from 'react-dom/client';
import { renderToString } from 'react-dom/server';
import { describe, expect, it, onTestFinished, vi } from 'vitest';
import { ClientProvider, HydrationBoundary, useQuery, useSuspenseQuery } from '../src/index';
import { consoleErrors, debugOf, deferred, flush, ManualClock, mswServer, until } from './helpers';

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

/** A dehydrated state holding `data` for `GET /a`, stored `age` ms ago (a read finds it fresh for 30 s). */
function stateOf(data: string, age: number, key = 'GET /a'): DehydratedState {
  return {
    keel: 1,
    entries: [
      {
        key,
        tags: [],
        age,
        ttl: 600_000,
        response: { data, status: 200, statusText: 'OK', headers: [] },
      },
    ],
  };
}

function Shown({ url = '/a' }: { url?: string }) {
  const { data } = useQuery<string>(url);
  return <p data-testid={`shown${url}`}>{data ?? '-'}</p>;
}

/** Reads `GET /a` through the core's own subscribe, as an app's store binding would. */
function RawReader({ client }: { client: Client }) {
  const { key } = client.resolve('GET', '/a');
  const data = useSyncExternalStore(
    (changed) => client.subscribe(key, changed),
    () => client.getCached<string>(key)?.data,
  );
  return <p data-testid="raw">{data ?? '-'}</p>;
}

function Wait({ until }: { until: Promise<void> }): null {
  use(until);
  return null;
}

let goNext: () => void = () => {};
/** Shows `/a`; `goNext()` renders, in a transition, `next` hydrated over `/b` and `<Wait>`. */
function Navigation({ next, gate }: { next: DehydratedState; gate: Promise<void> }) {
  const [page, setPage] = useState<'first' | 'next'>('first');
  goNext = () => startTransition(() => setPage('next'));
  return (
    <>
      <Shown />
      <Suspense fallback={<p>wait</p>}>
        {page === 'first' ? null : (
          <HydrationBoundary state={next}>
            <Wait until={gate} />
            <Shown url="/b" />
          </HydrationBoundary>
        )}
      </Suspense>
    </>
  );
}

describe('HydrationBoundary over data the page already shows', () => {
  it('newer data for a key already cached is written after the commit: no other component is updated during render', async () => {
    const client = createClient({ baseURL: '/api' });
    hydrate(client, stateOf('old', 10_000));
    const errors = vi.spyOn(console, 'error').mockImplementation(() => {});
    onTestFinished(() => errors.mockRestore());
    const tree = (state: DehydratedState | null) => (
      <ClientProvider client={client}>
        <RawReader client={client} />
        <Shown />
        <HydrationBoundary state={state}>
          <Shown />
        </HydrationBoundary>
      </ClientProvider>
    );
    const { rerender } = render(tree(null));
    expect(screen.getByTestId('raw').textContent).toBe('old');
    rerender(tree(stateOf('new', 0)));
    await flush();
    expect(errors).not.toHaveBeenCalled();
    expect(screen.getByTestId('raw').textContent).toBe('new');
    expect(screen.getAllByTestId('shown/a').map((p) => p.textContent)).toEqual(['new', 'new']);
  });

  it('a transition not committed yet does not change what the page shows; new keys are hydrated at render', async () => {
    const client = createClient({ baseURL: '/api' });
    hydrate(client, stateOf('old', 10_000));
    const gate = deferred();
    const next: DehydratedState = {
      keel: 1,
      entries: [...stateOf('new', 0).entries, ...stateOf('added', 0, 'GET /b').entries],
    };
    render(
      <ClientProvider client={client}>
        <Navigation next={next} gate={gate.promise} />
      </ClientProvider>,
    );
    await act(async () => goNext());
    await flush();
    // The transition waits (suspended, nothing committed): the page keeps its data...
    expect(screen.queryByTestId('shown/b')).toBeNull();
    expect(screen.getByTestId('shown/a').textContent).toBe('old');
    expect(client.getCached(client.resolve('GET', '/a').key)?.data).toBe('old');
    // ...while a key nothing showed is hydrated already, for the next page to render.
    expect(client.getCached(client.resolve('GET', '/b').key)?.data).toBe('added');
    await act(async () => gate.resolve());
    await until(() => screen.queryByTestId('shown/b') !== null);
    expect(screen.getByTestId('shown/b').textContent).toBe('added');
    await until(() => screen.getByTestId('shown/a').textContent === 'new');
  });

  it('a key a component subscribes to with nothing cached yet is written after the commit too', async () => {
    // TanStack Query's rule: a query the cache knows (an observer made it) is existing, data or
    // not. Written at render, the subscriber would be updated while the boundary renders.
    const client = createClient({ baseURL: '/api' });
    const errors = vi.spyOn(console, 'error').mockImplementation(() => {});
    onTestFinished(() => errors.mockRestore());
    const tree = (state: DehydratedState | null) => (
      <ClientProvider client={client}>
        <RawReader client={client} />
        <HydrationBoundary state={state}>
          <p>page</p>
        </HydrationBoundary>
      </ClientProvider>
    );
    const { rerender } = render(tree(null));
    expect(screen.getByTestId('raw').textContent).toBe('-');
    rerender(tree(stateOf('new', 0)));
    await flush();
    expect(errors).not.toHaveBeenCalled();
    expect(screen.getByTestId('raw').textContent).toBe('new');
  });

  it('a state older than what the cache holds is ignored, at render and after the commit', async () => {
    const client = createClient({ baseURL: '/api' });
    hydrate(client, stateOf('newer', 0));
    render(
      <ClientProvider client={client}>
        <Shown />
        <HydrationBoundary state={stateOf('older', 10_000)}>
          <Shown />
        </HydrationBoundary>
      </ClientProvider>,
    );
    await flush();
    expect(screen.getAllByTestId('shown/a').map((p) => p.textContent)).toEqual(['newer', 'newer']);
    expect(client.getCached(client.resolve('GET', '/a').key)?.data).toBe('newer');
  });

  it('a bad state is a TypeError at render, naming the field, and writes nothing', () => {
    const client = createClient({ baseURL: '/api' });
    vi.spyOn(console, 'error').mockImplementation(() => {});
    onTestFinished(() => {
      vi.restoreAllMocks();
    });
    const bad = { keel: 1, entries: [stateOf('x', 0, 'GET /b').entries[0], { key: 1 }] };
    expect(() =>
      render(
        <ClientProvider client={client}>
          <HydrationBoundary state={bad as unknown as DehydratedState}>
            <Shown url="/b" />
          </HydrationBoundary>
        </ClientProvider>,
      ),
    ).toThrow(new TypeError('keel: `state.entries[1].key` must be a string, got 1'));
    expect(client.getCached(client.resolve('GET', '/b').key)).toBeUndefined();
  });
});

describe('HydrationBoundary: a state is as old as its entries were stored', () => {
  const T = Date.UTC(2026, 0, 1);

  it('a state made before the page last read the key does not replace what the page shows', async () => {
    // The server stored `/a` at T and rendered at T + 100; the browser client (kept across
    // navigations) read `/a` at T + 1000; the page with the state is rendered at T + 5000 (a
    // slow network, or HTML a CDN kept). By its age alone (100 ms) the state looks newer.
    server.use(http.get(`${location.origin}/api/a`, () => HttpResponse.json('read at T+1000')));
    const clock = new ManualClock();
    clock.time = T + 1000;
    const client = createClient({ baseURL: '/api', clock });
    await client.get('/a');
    clock.time = T + 5000;
    const state: DehydratedState = {
      keel: 1,
      entries: [{ ...stateOf('server, T', 100).entries[0]!, storedAt: T }],
    };
    render(
      <ClientProvider client={client}>
        <Shown />
        <HydrationBoundary state={state}>
          <Shown />
        </HydrationBoundary>
      </ClientProvider>,
    );
    await flush();
    expect(screen.getAllByTestId('shown/a').map((p) => p.textContent)).toEqual([
      'read at T+1000',
      'read at T+1000',
    ]);
  });

  it('a page a CDN kept for ten minutes hydrates as rendered (no mismatch), then reads the stale data again', async () => {
    // The server's clock and the browser's agree. The entry is older than ttl + gcTime (30 s +
    // 5 min): a state counted by its stored time alone would write nothing, and the browser's
    // first render (loading) would not match the server's markup (the data).
    let browserGets = 0;
    server.use(
      http.get(`${location.origin}/api/a`, () => {
        browserGets++;
        return HttpResponse.json('now');
      }),
    );
    const clock = new ManualClock();
    clock.time = T;
    const serverClient = createClient({
      baseURL: 'http://internal.test/api',
      clock,
      fetch: async () => Response.json('ten minutes ago'),
    });
    await serverClient.get('/a');
    const state = JSON.parse(JSON.stringify(dehydrate(serverClient))) as DehydratedState;
    const page = (client: Client) => (
      <ClientProvider client={client}>
        <HydrationBoundary state={state}>
          <Shown />
        </HydrationBoundary>
      </ClientProvider>
    );
    const html = renderToString(page(serverClient));
    expect(html).toContain('ten minutes ago');

    const browserClock = new ManualClock();
    browserClock.time = T + 600_000;
    const browser = createClient({ baseURL: '/api', clock: browserClock });
    const container = document.createElement('div');
    container.innerHTML = html;
    const recoverable: unknown[] = [];
    const errors = consoleErrors();
    await act(async () => {
      hydrateRoot(container, page(browser), {
        onRecoverableError: (error) => recoverable.push(error),
      });
    });
    expect(recoverable).toEqual([]);
    expect(errors).not.toHaveBeenCalled();
    // Stale: read again at mount, and the new data replaces the old.
    await waitFor(() => expect(container.textContent).toBe('now'));
    expect(browserGets).toBe(1);
  });
});
