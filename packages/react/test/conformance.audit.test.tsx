/**
 * Conformance audit of @keel/react against issues #7, #12 and #13, adversarial cases: rapid key
 * changes with answers arriving out of order, StrictMode double mounts of every hook, suspense
 * with key changes and boundary resets, a server restarted under a live event stream. Black box:
 * public exports only, real loopback servers.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type Client, createClient } from '@keel/core';
import { type App, createApp, createEventHub, type EventHub } from '@keel/server';
import { act, render, screen, waitFor } from '@testing-library/react';
import { StrictMode, Suspense, useState } from 'react';
import { afterEach, describe, expect, it, onTestFinished, vi } from 'vitest';
import {
  keepPreviousData,
  QueryErrorBoundary,
  queryOptions,
  type ServerEventsOptions,
  sourceHeaders,
  useClient,
  useInfiniteQuery,
  useMutation,
  useQueries,
  useQuery,
  useServerEvents,
  useSuspenseQuery,
} from '../src/index';
import { flush, ManualClock, wrapperFor } from './helpers';

// ── a plain node:http API whose answers the test releases one by one ─────────────────────

interface Pending {
  url: string;
  res: ServerResponse;
  aborted: boolean;
}

interface Api {
  base: string;
  /** Every request, in arrival order. */
  hits: Pending[];
  /** Answers the first unanswered request of `url` with `body`. */
  answer(url: string, body: unknown, status?: number): void;
}

const servers: Server[] = [];
const apps: { app: App; http: Server }[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
  const closing = apps.map(({ app }) => app.close());
  for (const { http } of apps.splice(0)) http.closeAllConnections();
  await Promise.all(closing);
});

async function gatedApi(): Promise<Api> {
  const hits: Pending[] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const hit: Pending = { url: req.url!, res, aborted: false };
    res.on('close', () => {
      if (!res.writableEnded) hit.aborted = true;
    });
    hits.push(hit);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  servers.push(server);
  return {
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    hits,
    answer(url, body, status = 200) {
      const hit = hits.find((h) => h.url === url && !h.res.writableEnded && !h.aborted);
      if (hit === undefined) throw new Error(`no unanswered request of ${url}`);
      hit.res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    },
  };
}

/** React logs every error a boundary catches: expected in the tests that throw to one. */
function quietBoundaries(): void {
  const spy = vi.spyOn(console, 'error').mockImplementation(() => {});
  onTestFinished(() => spy.mockRestore());
}

function clientOf(base: string): Client {
  return createClient({ baseURL: base, retry: { attempts: 1 } });
}

// ── rapid key changes ──────────────────────────────────────────────────────────────────────

function Item({ id, keep, seen }: { id: number; keep?: boolean; seen: string[] }) {
  const { data, isPlaceholderData } = useQuery<{ id: number }>(
    `/items/${id}`,
    keep ? { placeholderData: keepPreviousData } : undefined,
  );
  const shown = data === undefined ? '-' : `${data.id}${isPlaceholderData ? '*' : ''}`;
  seen.push(`${id}:${shown}`);
  return <p data-testid="item">{shown}</p>;
}

const item = () => screen.getByTestId('item').textContent;

describe('rapid key changes', () => {
  it.each([false, true])(
    'answers arriving in reverse order never show another key (keepPreviousData %s)',
    async (keep) => {
      const api = await gatedApi();
      const client = clientOf(api.base);
      const seen: string[] = [];
      const { rerender } = render(<Item id={1} keep={keep} seen={seen} />, {
        wrapper: wrapperFor(client),
      });
      await waitFor(() => expect(api.hits).toHaveLength(1));
      rerender(<Item id={2} keep={keep} seen={seen} />);
      rerender(<Item id={3} keep={keep} seen={seen} />);
      await waitFor(() => expect(api.hits.map((h) => h.url)).toContain('/items/3'));
      await flush();
      // Key 3 answers first; the older keys' answers come after it (if their reads survived).
      api.answer('/items/3', { id: 3 });
      await waitFor(() => expect(item()).toBe('3'));
      for (const old of [2, 1]) {
        const hit = api.hits.find((h) => h.url === `/items/${old}`);
        if (hit && !hit.aborted && !hit.res.writableEnded) api.answer(`/items/${old}`, { id: old });
      }
      await flush();
      await flush();
      expect(item()).toBe('3');
      // Once key 3 was asked for, nothing but "pending" or key 3's data was rendered for it.
      const forThree = seen.filter((s) => s.startsWith('3:'));
      expect(forThree.every((s) => s === '3:-' || s === '3:3')).toBe(true);
      expect(forThree.at(-1)).toBe('3:3');
    },
  );

  it('keepPreviousData across a quick A -> B -> C keeps showing A (flagged) until C answers', async () => {
    const api = await gatedApi();
    const client = clientOf(api.base);
    const seen: string[] = [];
    const { rerender } = render(<Item id={1} keep seen={seen} />, {
      wrapper: wrapperFor(client),
    });
    await waitFor(() => expect(api.hits).toHaveLength(1));
    api.answer('/items/1', { id: 1 });
    await waitFor(() => expect(item()).toBe('1'));
    rerender(<Item id={2} keep seen={seen} />);
    expect(item()).toBe('1*');
    rerender(<Item id={3} keep seen={seen} />);
    expect(item()).toBe('1*');
    await waitFor(() => expect(api.hits.map((h) => h.url)).toContain('/items/3'));
    // B's late answer (if its read survived) must not replace A's placeholder with B.
    const two = api.hits.find((h) => h.url === '/items/2');
    if (two && !two.aborted) api.answer('/items/2', { id: 2 });
    await flush();
    await flush();
    expect(item()).toBe('1*');
    api.answer('/items/3', { id: 3 });
    await waitFor(() => expect(item()).toBe('3'));
  });

  it("A -> B -> A while A is still loading ends on A with its data, and B's read is cancelled", async () => {
    const api = await gatedApi();
    const client = clientOf(api.base);
    const seen: string[] = [];
    const { rerender } = render(<Item id={1} seen={seen} />, { wrapper: wrapperFor(client) });
    await waitFor(() => expect(api.hits).toHaveLength(1));
    rerender(<Item id={2} seen={seen} />);
    await waitFor(() => expect(api.hits.map((h) => h.url)).toContain('/items/2'));
    rerender(<Item id={1} seen={seen} />);
    await flush();
    await flush();
    await waitFor(() => expect(api.hits.find((h) => h.url === '/items/2')?.aborted).toBe(true));
    // Whichever read of A is still open answers.
    api.answer('/items/1', { id: 1 });
    await waitFor(() => expect(item()).toBe('1'));
  });
});

// ── StrictMode ─────────────────────────────────────────────────────────────────────────────

function Form({ calls }: { calls: string[] }) {
  const m = useMutation<{ ok: boolean }, { t: string }>('POST', '/things', {
    onSuccess: () => calls.push('hook'),
  });
  return (
    <>
      <button
        type="button"
        onClick={() => m.mutate({ t: 'x' }, { onSuccess: () => calls.push('call') })}
      >
        go
      </button>
      <p data-testid="m">{m.status}</p>
    </>
  );
}

describe('StrictMode', () => {
  it("useMutation: mutate's own callbacks run and the state reaches success", async () => {
    const api = await gatedApi();
    const client = clientOf(api.base);
    const calls: string[] = [];
    render(
      <StrictMode>
        <Form calls={calls} />
      </StrictMode>,
      { wrapper: wrapperFor(client) },
    );
    act(() => screen.getByRole('button').click());
    await waitFor(() => expect(api.hits).toHaveLength(1));
    expect(screen.getByTestId('m').textContent).toBe('pending');
    api.answer('/things', { ok: true });
    await waitFor(() => expect(screen.getByTestId('m').textContent).toBe('success'));
    expect(calls).toEqual(['hook', 'call']);
  });
});

// ── suspense with key changes ──────────────────────────────────────────────────────────────

function SuspenseItem({ id }: { id: number }) {
  const { data } = useSuspenseQuery<{ id: number }>(`/items/${id}`);
  return <p data-testid="item">{data.id}</p>;
}

function KeyedPage() {
  const [id, setId] = useState(1);
  return (
    <>
      <button type="button" onClick={() => setId(2)}>
        next
      </button>
      <QueryErrorBoundary
        resetKeys={[id]}
        fallback={({ error }) => (
          <p data-testid="item">failed {(error as { status?: number }).status}</p>
        )}
      >
        <Suspense fallback={<p data-testid="item">loading</p>}>
          <SuspenseItem id={id} />
        </Suspense>
      </QueryErrorBoundary>
    </>
  );
}

describe('suspense and key changes', () => {
  it("a key changed while the first still suspends shows the new key's data, never the old", async () => {
    const api = await gatedApi();
    const client = clientOf(api.base);
    const { rerender } = render(
      <Suspense fallback={<p data-testid="item">loading</p>}>
        <SuspenseItem id={1} />
      </Suspense>,
      { wrapper: wrapperFor(client) },
    );
    await waitFor(() => expect(api.hits).toHaveLength(1));
    rerender(
      <Suspense fallback={<p data-testid="item">loading</p>}>
        <SuspenseItem id={2} />
      </Suspense>,
    );
    await waitFor(() => expect(api.hits.map((h) => h.url)).toContain('/items/2'));
    const one = api.hits.find((h) => h.url === '/items/1')!;
    if (!one.aborted) api.answer('/items/1', { id: 1 });
    await flush();
    expect(item()).toBe('loading');
    api.answer('/items/2', { id: 2 });
    await waitFor(() => expect(item()).toBe('2'));
  });

  it('an error boundary whose resetKeys name the key reads the new key after a failure', async () => {
    quietBoundaries();
    const api = await gatedApi();
    const client = clientOf(api.base);
    render(<KeyedPage />, { wrapper: wrapperFor(client) });
    await waitFor(() => expect(api.hits).toHaveLength(1));
    api.answer('/items/1', { message: 'gone' }, 404);
    await waitFor(() => expect(item()).toBe('failed 404'));
    act(() => screen.getByRole('button').click());
    await waitFor(() => expect(api.hits.map((h) => h.url)).toContain('/items/2'));
    api.answer('/items/2', { id: 2 });
    await waitFor(() => expect(item()).toBe('2'));
    // The failed key was not hammered meanwhile.
    expect(api.hits.filter((h) => h.url === '/items/1')).toHaveLength(1);
  });
});

// ── server-sent events across a server restart ────────────────────────────────────────────

interface LiveServer {
  app: App;
  hub: EventHub;
  http: Server;
  connects: (string | undefined)[];
}

/** A @keel/server app with a fresh in-memory hub, on `port` (0: any). */
async function liveServer(
  db: { todos: string[]; gets: number },
  port = 0,
  connects: (string | undefined)[] = [],
): Promise<LiveServer> {
  const app = createApp();
  const hub = createEventHub();
  app.get('/api/todos', (ctx) => {
    db.gets++;
    return ctx.json(db.todos);
  });
  app.get('/api/events', (ctx) => {
    connects.push(ctx.header('last-event-id'));
    return hub.connect(ctx);
  });
  await hub.ready;
  const http = await app.listen(port, '127.0.0.1');
  const live = { app, hub, http, connects };
  apps.push({ app, http });
  return live;
}

async function stop(live: LiveServer): Promise<void> {
  const i = apps.findIndex((a) => a.app === live.app);
  if (i >= 0) apps.splice(i, 1);
  const closing = live.app.close();
  live.http.closeAllConnections();
  await closing;
  await live.hub.close();
}

function RestartTab({ clock }: { clock: ManualClock }) {
  const { data } = useQuery<string[]>('/api/todos');
  // No handler code: the server's hub.invalidate drives it.
  const { status } = useServerEvents('/api/events', undefined, {
    clock,
    reconnect: { initialDelay: 100, jitter: false },
  });
  return (
    <>
      <p data-testid="list">{data?.join(',') ?? '-'}</p>
      <p data-testid="status">{status}</p>
    </>
  );
}

describe('useServerEvents across a server restart', () => {
  it('reconnects with the old Last-Event-ID, gets keel:reset from the new process and refetches', async () => {
    const db = { todos: ['a'], gets: 0 };
    const connects: (string | undefined)[] = [];
    const first = await liveServer(db, 0, connects);
    const port = (first.http.address() as AddressInfo).port;
    const client = clientOf(`http://127.0.0.1:${port}`);
    const clock = new ManualClock();
    render(
      <StrictMode>
        <RestartTab clock={clock} />
      </StrictMode>,
      { wrapper: wrapperFor(client) },
    );
    const list = () => screen.getByTestId('list').textContent;
    await waitFor(() => expect(first.hub.size).toBe(1));
    await waitFor(() => expect(list()).toBe('a'));
    // StrictMode's double mount made one connection.
    expect(connects).toEqual([undefined]);
    db.todos = ['a', 'b'];
    await first.hub.invalidate('/api/todos');
    await waitFor(() => expect(list()).toBe('a,b'));
    const lastId = first.hub.lastId;

    // The process goes away; a new one (new hub, new epoch) takes the port. A change made while
    // the client was away is only known to the new process's data.
    await stop(first);
    await waitFor(() => expect(clock.timers.size).toBe(1));
    db.todos = ['a', 'b', 'c'];
    const second = await liveServer(db, port, connects);
    const getsBefore = db.gets;
    act(() => {
      clock.runNext();
    });
    await waitFor(() => expect(second.hub.size).toBe(1));
    expect(connects.at(-1)).toBe(String(lastId));
    // The old id is foreign to the new process: keel:reset, and the list is read again.
    await waitFor(() => expect(list()).toBe('a,b,c'));
    expect(db.gets).toBe(getsBefore + 1);
    expect(screen.getByTestId('status').textContent).toBe('open');
    // And live events of the new process arrive.
    db.todos = ['a', 'b', 'c', 'd'];
    await second.hub.invalidate('/api/todos');
    await waitFor(() => expect(list()).toBe('a,b,c,d'));
  });
});

// ── optimistic rollback when someone else wrote the key meanwhile ──────────────────────────

/** GET /todos answers the list at once; each POST /todos waits for the test's answer. */
async function todoServer(initial: string[]) {
  const db = { todos: [...initial], gets: 0 };
  const posts: ServerResponse[] = [];
  const server = createServer((req, res) => {
    if (req.method === 'GET') {
      db.gets++;
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(db.todos));
      return;
    }
    req.resume();
    posts.push(res);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  servers.push(server);
  const fail = (i: number) =>
    posts[i]!.writeHead(500, { 'content-type': 'application/json' }).end('{"message":"no"}');
  return { db, posts, fail, base: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

function OptimisticTodos({ onAdd }: { onAdd: (add: (title: string) => void) => void }) {
  const { data } = useQuery<string[]>('/todos');
  const add = useMutation<unknown, string>('POST', '/todos', {
    onMutate: (title, { setQueryData }) => {
      setQueryData<string[]>('/todos', (list = []) => [...list, title]);
    },
  });
  onAdd((title) => add.mutate(title));
  return <p data-testid="list">{data?.join(',') ?? '-'}</p>;
}

describe('optimistic rollback', () => {
  const list = () => screen.getByTestId('list').textContent;

  it('two overlapping optimistic adds that both fail leave neither row behind', async () => {
    const api = await todoServer(['a']);
    const client = clientOf(api.base);
    let add!: (title: string) => void;
    render(<OptimisticTodos onAdd={(fn) => (add = fn)} />, { wrapper: wrapperFor(client) });
    await waitFor(() => expect(list()).toBe('a'));
    act(() => add('x'));
    await waitFor(() => expect(api.posts).toHaveLength(1));
    act(() => add('y'));
    await waitFor(() => expect(api.posts).toHaveLength(2));
    expect(list()).toBe('a,x,y');
    api.fail(0);
    await flush();
    await flush();
    api.fail(1);
    // x's mutation failed first: y's rollback must not bring x back (it held "a,x" before y).
    await waitFor(() => expect(list()).toBe('a'));
    await flush();
    await flush();
    expect(list()).toBe('a');
  });

  it('a refetch that landed during the mutation is not replaced by the older list on failure', async () => {
    const api = await todoServer(['a']);
    const client = clientOf(api.base);
    let add!: (title: string) => void;
    render(<OptimisticTodos onAdd={(fn) => (add = fn)} />, { wrapper: wrapperFor(client) });
    await waitFor(() => expect(list()).toBe('a'));
    act(() => add('x'));
    await waitFor(() => expect(api.posts).toHaveLength(1));
    // Another tab added "c": a server event invalidated the list, which refetched.
    api.db.todos = ['a', 'c'];
    const gets = api.db.gets;
    act(() => client.invalidate('/todos'));
    await waitFor(() => expect(api.db.gets).toBe(gets + 1));
    await flush();
    await flush();
    // Held back while the mutation that wrote the list runs: its row does not flicker away.
    expect(list()).toBe('a,x');
    api.fail(0);
    // The snapshot taken before "x" ("a") is older than what the server said since.
    await waitFor(() => expect(list()).toBe('a,c'));
    await flush();
    await flush();
    expect(list()).toBe('a,c');
  });
});

function Stats({ options }: { options: ServerEventsOptions }) {
  // Kept fresh by the server's hub.invalidate('/api/stats'): no handler code.
  useServerEvents('/api/events', undefined, options);
  const { data } = useQuery<{ n: number }>('/api/stats');
  return <p data-testid="stats">{data?.n ?? '-'}</p>;
}

function Todos({ options }: { options: ServerEventsOptions }) {
  useServerEvents('/api/events', { invalidate: { 'todos-changed': '/api/todos' } }, options);
  const { data } = useQuery<string[]>('/api/todos');
  return <p data-testid="todos">{data?.join(',') ?? '-'}</p>;
}

describe('useServerEvents resync', () => {
  it('a keel:reset also refetches the queries the server invalidates, when a component names its own targets', async () => {
    const db = { todos: ['a'], gets: 0 };
    let stats = 1;
    const app = createApp();
    const hub = createEventHub({ bufferSize: 1 });
    app.get('/api/todos', (ctx) => ctx.json(db.todos));
    app.get('/api/stats', (ctx) => ctx.json({ n: stats }));
    const streams: { close(): void }[] = [];
    app.get('/api/events', (ctx) => {
      const stream = hub.connect(ctx);
      streams.push(stream);
      return stream;
    });
    const http = await app.listen(0, '127.0.0.1');
    apps.push({ app, http });
    const client = clientOf(`http://127.0.0.1:${(http.address() as AddressInfo).port}`);
    const clock = new ManualClock();
    const options = { clock, reconnect: { initialDelay: 100, jitter: false } };
    render(
      <>
        <Stats options={options} />
        <Todos options={options} />
      </>,
      { wrapper: wrapperFor(client) },
    );
    const text = (id: string) => screen.getByTestId(id).textContent;
    await waitFor(() => expect(hub.size).toBe(1));
    await waitFor(() => expect(text('stats')).toBe('1'));
    stats = 2;
    await hub.invalidate('/api/stats');
    await waitFor(() => expect(text('stats')).toBe('2'));
    // The stream drops; two invalidations are published meanwhile and the buffer keeps one.
    streams[0]!.close();
    await waitFor(() => expect(clock.timers.size).toBe(1));
    stats = 3;
    await hub.invalidate('/api/stats');
    await hub.publish('other', {});
    act(() => {
      clock.runNext();
    });
    // keel:reset: the lost event was the server's invalidation of /api/stats.
    await waitFor(() => expect(text('stats')).toBe('3'));
  });
});

// ── StrictMode, every hook: one request ───────────────────────────────────────────────────

function Both() {
  const feed = useInfiniteQuery<{ n: number }, number>('/feed', {
    initialPageParam: 0,
    paramsFor: (page) => ({ page }),
    getNextPageParam: () => null,
  });
  const [x, y] = useQueries([queryOptions<string>('/x'), queryOptions<string>('/y')]);
  return (
    <p data-testid="item">
      {feed.data?.pages[0]?.n ?? '-'}/{x.data ?? '-'}/{y.data ?? '-'}
    </p>
  );
}

describe('StrictMode double mount sends one request per key', () => {
  it('a suspense query that fails: one request, the boundary shows the HTTP error', async () => {
    quietBoundaries();
    const api = await gatedApi();
    const client = clientOf(api.base);
    render(
      <StrictMode>
        <QueryErrorBoundary
          fallback={({ error }) => (
            <p data-testid="item">failed {(error as { status?: number }).status}</p>
          )}
        >
          <Suspense fallback={<p data-testid="item">loading</p>}>
            <SuspenseItem id={7} />
          </Suspense>
        </QueryErrorBoundary>
      </StrictMode>,
      { wrapper: wrapperFor(client) },
    );
    await waitFor(() => expect(api.hits).toHaveLength(1));
    api.answer('/items/7', { message: 'boom' }, 500);
    await waitFor(() => expect(item()).toBe('failed 500'));
    await flush();
    await flush();
    expect(api.hits).toHaveLength(1);
  });

  it('useInfiniteQuery and useQueries', async () => {
    const api = await gatedApi();
    const client = clientOf(api.base);
    render(
      <StrictMode>
        <Both />
      </StrictMode>,
      { wrapper: wrapperFor(client) },
    );
    await waitFor(() => expect(api.hits).toHaveLength(3));
    await flush();
    api.answer('/feed?page=0', { n: 1 });
    api.answer('/x', 'x');
    api.answer('/y', 'y');
    await waitFor(() => expect(item()).toBe('1/x/y'));
    expect(api.hits.map((h) => h.url).sort()).toEqual(['/feed?page=0', '/x', '/y']);
  });
});

// ── the echo of this tab's own change ─────────────────────────────────────────────────────

function RemovingTab({ expose }: { expose: (remove: (id: number) => Promise<unknown>) => void }) {
  const client = useClient();
  const { data } = useQuery<{ id: number }[]>('/api/todos');
  useServerEvents('/api/events');
  // DELETE /api/todos/7 invalidates /api/todos/7, not the list; the server's event names the list.
  const remove = useMutation<unknown, number>('DELETE', (id) => `/api/todos/${id}`, {
    headers: sourceHeaders(client),
  });
  expose(remove.mutateAsync);
  return <p data-testid="list">{data?.map((t) => t.id).join(',') ?? '-'}</p>;
}

describe('the echo of a mutation', () => {
  it("is applied when the server invalidates more than the tab's own mutation did", async () => {
    const db = { todos: [{ id: 1 }, { id: 2 }], gets: 0 };
    const app = createApp();
    const hub = createEventHub();
    app.get('/api/todos', (ctx) => {
      db.gets++;
      return ctx.json(db.todos);
    });
    app.delete('/api/todos/:id', async (ctx) => {
      db.todos = db.todos.filter((t) => t.id !== Number(ctx.params.id));
      await hub.invalidate('/api/todos', { source: ctx });
      return ctx.status(204).send(null);
    });
    app.get('/api/events', (ctx) => hub.connect(ctx));
    const http = await app.listen(0, '127.0.0.1');
    apps.push({ app, http });
    const client = clientOf(`http://127.0.0.1:${(http.address() as AddressInfo).port}`);
    let remove!: (id: number) => Promise<unknown>;
    render(<RemovingTab expose={(fn) => (remove = fn)} />, { wrapper: wrapperFor(client) });
    const list = () => screen.getByTestId('list').textContent;
    await waitFor(() => expect(list()).toBe('1,2'));
    await waitFor(() => expect(hub.size).toBe(1));
    await act(() => remove(1));
    // The tab's own mutation did not touch the list: the server's invalidation must reach it.
    await waitFor(() => expect(list()).toBe('2'));
    // The first load and the echo's refetch: the mutation's own invalidation missed the list.
    expect(db.gets).toBe(2);
  });
});
