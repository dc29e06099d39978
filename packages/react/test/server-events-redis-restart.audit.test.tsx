/**
 * Audit (issue #13, "Redis restarted mid-stream"), as a tab sees it: useServerEvents on an
 * instance whose hub is on a real redis-server that restarts. With its data kept (AOF) nothing is
 * lost and no refetch is needed; without it, the hub's keel:reset makes the tab refetch, and the
 * server's invalidations published after recovery reach it.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createClient } from '@keel/core';
import { type App, createApp, createEventHub, type EventHub, HubPublishError } from '@keel/server';
import { render, screen, waitFor } from '@testing-library/react';
import { afterEach, describe, expect, it } from 'vitest';
import { type RedisServer, startRedis } from '../../../scripts/redis-server.mjs';
import { redisStreams } from '../../server/src/redis/index';
import { useQuery, useServerEvents } from '../src/index';
import { wrapperFor } from './helpers';

const opened: { app: App; hub: EventHub; http: Server; redis: RedisServer }[] = [];
afterEach(async () => {
  for (const { app, hub, http, redis } of opened.splice(0)) {
    const closing = app.close();
    http.closeAllConnections();
    await closing;
    await hub.close();
    await redis.dispose();
  }
});

/** Publishes (hub.invalidate) once the hub's Redis connection is back. */
async function invalidateWhenUp(hub: EventHub, target: string): Promise<void> {
  for (let i = 0; i < 2000; i++) {
    const ok = await hub.invalidate(target).then(
      () => true,
      (e: unknown) => {
        expect(e).toBeInstanceOf(HubPublishError);
        return false;
      },
    );
    if (ok) return;
    await new Promise((r) => setTimeout(r, 5));
  }
  throw new Error('Redis did not come back');
}

function Tab() {
  const { data } = useQuery<string[]>('/api/todos');
  const { status } = useServerEvents('/api/events');
  return (
    <>
      <p data-testid="list">{data?.join(',') ?? '-'}</p>
      <p data-testid="status">{status}</p>
    </>
  );
}

async function setup(persistent: boolean) {
  const redis = await startRedis({ persistent });
  const db = { todos: ['a'], gets: 0 };
  const app = createApp();
  const hub = createEventHub({
    store: redisStreams({
      url: redis.url,
      stream: `audit:${Math.random().toString(36).slice(2)}`,
      reconnect: { initialDelay: 20, maxDelay: 200 },
      onError: () => {},
    }),
  });
  app.get('/api/todos', (ctx) => {
    db.gets++;
    return ctx.json(db.todos);
  });
  app.get('/api/events', (ctx) => hub.connect(ctx));
  await hub.ready;
  const http = await app.listen(0, '127.0.0.1');
  opened.push({ app, hub, http, redis });
  const client = createClient({
    baseURL: `http://127.0.0.1:${(http.address() as AddressInfo).port}`,
    retry: { attempts: 1 },
  });
  render(<Tab />, { wrapper: wrapperFor(client) });
  await waitFor(() => expect(hub.size).toBe(1));
  await waitFor(() => expect(screen.getByTestId('list').textContent).toBe('a'));
  return { redis, db, hub };
}

const list = () => screen.getByTestId('list').textContent;

describe('useServerEvents while Redis restarts', () => {
  it('without its data: the tab gets keel:reset and refetches, then live invalidations again', async () => {
    const { redis, db, hub } = await setup(false);
    db.todos = ['a', 'b'];
    await hub.invalidate('/api/todos');
    await waitFor(() => expect(list()).toBe('a,b'));
    const gets = db.gets;
    await redis.stop();
    db.todos = ['a', 'b', 'c']; // changed while Redis was down: no event could say so
    await redis.start();
    // The hub's reader finds its last entry gone: keel:reset, and the tab reads the list again.
    await waitFor(() => expect(list()).toBe('a,b,c'), { timeout: 5000 });
    expect(db.gets).toBe(gets + 1);
    expect(screen.getByTestId('status').textContent).toBe('open');
    db.todos = ['a', 'b', 'c', 'd'];
    await invalidateWhenUp(hub, '/api/todos');
    await waitFor(() => expect(list()).toBe('a,b,c,d'), { timeout: 5000 });
  }, 30_000);

  it('with its data kept: the connection stays open, and an invalidation after recovery arrives', async () => {
    const { redis, db, hub } = await setup(true);
    db.todos = ['a', 'b'];
    await hub.invalidate('/api/todos');
    await waitFor(() => expect(list()).toBe('a,b'));
    const gets = db.gets;
    await redis.stop();
    await redis.start();
    db.todos = ['a', 'b', 'c'];
    await invalidateWhenUp(hub, '/api/todos');
    await waitFor(() => expect(list()).toBe('a,b,c'), { timeout: 5000 });
    // One read for the one invalidation: no reset, the stream never closed.
    expect(db.gets).toBe(gets + 1);
    expect(screen.getByTestId('status').textContent).toBe('open');
  }, 30_000);
});
