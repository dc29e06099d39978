import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createClient } from '@keel/core';
import { type App, createApp, createEventHub, type EventHub } from '@keel/server';
import { render, screen, waitFor } from '@testing-library/react';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { type RedisServer, startRedis } from '../../../scripts/redis-server.mjs';
import { redisStreams } from '../../server/src/redis/index';
import { type ServerEventsOptions, useQuery, useServerEvents } from '../src/index';
import { type Todo, wrapperFor } from './helpers';

// Audit: useServerEvents against two @keel/server instances sharing one real redis-server, as
// behind a load balancer: invalidation published on A reaches a tab on B, and a tab moved from
// B to A with its Last-Event-ID gets exactly what it missed.

let redis: RedisServer;
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  await redis?.dispose();
});

interface Instance {
  app: App;
  hub: EventHub;
  http: Server;
  base: string;
  closed: boolean;
}
const instances: Instance[] = [];
afterEach(async () => {
  for (const i of instances.splice(0)) {
    if (i.closed) continue;
    const closing = i.app.close();
    i.http.closeAllConnections();
    await closing;
    await i.hub.close();
  }
});

/** The shared "database" of one test, and the instances serving it. */
function cluster() {
  const db = { todos: [{ id: 1, title: 'a' }] as Todo[] };
  const stream = `audit:${Math.random().toString(36).slice(2)}`;
  const add = async (): Promise<Instance> => {
    const app = createApp();
    const hub = createEventHub({ store: redisStreams({ url: redis.url, stream }) });
    app.get('/api/todos', (ctx) => ctx.json(db.todos));
    app.post('/api/todos', async (ctx) => {
      const todo = { id: db.todos.length + 1, title: String((ctx.body as Todo).title) };
      db.todos = [...db.todos, todo];
      await hub.publish('todo-added', todo);
      await hub.invalidate('/api/todos', { source: ctx });
      return ctx.status(201).json(todo);
    });
    app.get('/api/events', (ctx) => hub.connect(ctx));
    await hub.ready;
    const http = await app.listen(0, '127.0.0.1');
    const instance: Instance = {
      app,
      hub,
      http,
      base: `http://127.0.0.1:${(http.address() as AddressInfo).port}`,
      closed: false,
    };
    instances.push(instance);
    return instance;
  };
  return { db, add };
}

function Tab({ events }: { events: { id: string | undefined; title: string }[] }) {
  const { data } = useQuery<Todo[]>('/api/todos');
  const { status } = useServerEvents(
    '/api/events',
    { 'todo-added': (todo: Todo, event) => events.push({ id: event.id, title: todo.title }) },
    {
      reconnect: { initialDelay: 100, jitter: false },
      fetch: balanced,
    },
  );
  return (
    <>
      <p data-testid="list">{data?.map((t) => t.title).join(',') ?? '-'}</p>
      <p data-testid="status">{status}</p>
    </>
  );
}
const route = { base: '' };
/** The load balancer: every request goes to whichever instance `route` names. */
const balanced: typeof fetch = (input, init) =>
  fetch(
    String(input instanceof Request ? input.url : input).replace(/^http:\/\/[^/]+/, route.base),
    init,
  );

const post = (base: string, title: string) =>
  fetch(`${base}/api/todos`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ title }),
  }).then((r) => r.status);

describe('useServerEvents on two instances sharing Redis (audit)', () => {
  it('a mutation through A refetches the tab on B; moved to A it gets what it missed, in order', async () => {
    const { add } = cluster();
    const a = await add();
    const b = await add();
    route.base = b.base;
    const client = createClient({ baseURL: b.base, retry: { attempts: 1 }, fetch: balanced });
    const events: { id: string | undefined; title: string }[] = [];
    render(<Tab events={events} />, { wrapper: wrapperFor(client) });
    const list = () => screen.getByTestId('list').textContent;
    await waitFor(() => expect(list()).toBe('a'));
    await waitFor(() => expect(b.hub.size).toBe(1));

    expect(await post(a.base, 'b')).toBe(201);
    await waitFor(() => expect(list()).toBe('a,b'));
    await waitFor(() => expect(events.map((e) => e.title)).toEqual(['b']));

    // B goes away; what A publishes meanwhile is replayed when the tab reconnects to A.
    route.base = a.base;
    b.closed = true;
    const closing = b.app.close();
    b.http.closeAllConnections();
    await closing;
    await b.hub.close();
    expect(await post(a.base, 'c')).toBe(201);
    expect(await post(a.base, 'd')).toBe(201);
    await waitFor(() => expect(events.map((e) => e.title)).toEqual(['b', 'c', 'd']));
    await waitFor(() => expect(list()).toBe('a,b,c,d'));
    const ids = events.map((e) => e.id!);
    expect(new Set(ids).size).toBe(3);
    expect([...ids].sort()).toEqual(ids);
    expect(await post(a.base, 'e')).toBe(201);
    await waitFor(() => expect(events.map((e) => e.title)).toEqual(['b', 'c', 'd', 'e']));
  }, 30_000);
});

function Stream({ options }: { options: ServerEventsOptions }) {
  return <p>{useServerEvents('/api/events', {}, options).status}</p>;
}

describe('useServerEvents options (audit)', () => {
  it('refuses options it would only trip over later, at a reconnect, naming them', () => {
    const client = createClient({ baseURL: 'http://127.0.0.1:9', retry: { attempts: 1 } });
    const spy = vi.spyOn(console, 'error').mockImplementation(() => {});
    try {
      for (const [options, message] of [
        [{ random: 5 }, 'keel: `random` must be a function, got 5'],
        [{ clock: {} }, 'keel: `clock.setTimeout` must be a function, got undefined'],
        [{ fetch: 'fetch' }, 'keel: `fetch` must be a function, got "fetch"'],
        [{ onError: 1 }, 'keel: `onError` must be a function, got 1'],
        [{ reconnect: null }, 'keel: `reconnect` must be an object, got null'],
        [{ clock: null }, 'keel: `clock` must be an object, got null'],
      ] as const) {
        expect(() =>
          render(<Stream options={options as never} />, { wrapper: wrapperFor(client) }),
        ).toThrow(message);
      }
    } finally {
      spy.mockRestore();
    }
  });
});
