import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, expect } from 'vitest';
import { type RedisServer, startRedis } from '../../../scripts/redis-server.mjs';
import { type App, createApp, createEventHub, type EventHub, HubPublishError } from '../src/index';
import { type RedisStreamsOptions, redisStreams } from '../src/redis/index';
import { type SseClient, sse, start } from './helpers';

/** A fresh stream key, so tests sharing one redis-server never see each other's events. */
export const streamKey = (): string => `test:${randomUUID()}`;

/**
 * Stream ids sorted as Redis orders them: by time, then sequence, both as numbers (as strings
 * `…-99` sorts after `…-182`, and a longer id is no newer: `T-10` is older than `T+1-0`).
 */
export function inStreamOrder(ids: readonly string[]): string[] {
  const parts = (id: string): number[] => id.split('-').map(Number);
  return [...ids].sort((x, y) => {
    const [xt, xs] = parts(x);
    const [yt, ys] = parts(y);
    return xt! - yt! || xs! - ys!;
  });
}

/**
 * For one test file: a redis-server started before its tests and disposed after, and app
 * instances (an app with its own hub on a Redis stream) closed, with their clients, after each
 * test.
 */
export function redisInstances() {
  let redis: RedisServer;
  beforeAll(async () => {
    redis = await startRedis();
  });
  afterAll(async () => {
    await redis?.dispose();
  });
  const apps: App[] = [];
  const hubs: EventHub[] = [];
  const clients: SseClient[] = [];
  afterEach(async () => {
    for (const c of clients.splice(0)) c.close();
    await Promise.all(hubs.splice(0).map((h) => h.close()));
    await Promise.all(apps.splice(0).map((a) => a.close()));
  });

  /**
   * An app on 127.0.0.1:0 whose hub is on `stream` (of `url`, the file's redis-server by
   * default): `GET /events?topics=a,b` connects a client; `connect` opens one.
   */
  async function instance(stream: string, options: RedisStreamsOptions = {}) {
    const app = createApp();
    const hub = createEventHub({
      store: redisStreams({ url: redis.url, stream, ...options }),
    });
    apps.push(app);
    hubs.push(hub);
    app.get('/events', (ctx) => {
      const topics = ctx.query('topics');
      return hub.connect(ctx, { topics: topics ? topics.split(',') : [] });
    });
    const { port } = await start(app);
    await hub.ready;
    const connect = async (headers: Record<string, string> = {}, query = '') => {
      const client = await sse(port, `/events${query}`, headers);
      clients.push(client);
      return client;
    };
    return { app, hub, port, connect };
  }

  return {
    /** The file's redis-server (started in beforeAll). */
    get redis(): RedisServer {
      return redis;
    },
    instance,
    /** Tracks a client, closed after the test. */
    track(client: SseClient): SseClient {
      clients.push(client);
      return client;
    },
    /** Tracks an app and its hub, closed after the test. */
    trackApp(app: App, hub: EventHub): void {
      apps.push(app);
      hubs.push(hub);
    },
  };
}

/**
 * Publishes once the hub's Redis connection is back and resolves with the id. Until then a
 * publish is refused at once (HubPublishError), and the reader may see the restarted server
 * before the writer does. `tries`: attempts, 5 ms apart.
 */
export async function publishWhenUp(hub: EventHub, data: string, tries = 1000): Promise<string> {
  for (let i = 0; ; i++) {
    const id = await hub.publish('n', data).then(
      (id) => id,
      (e: unknown) => {
        expect(e).toBeInstanceOf(HubPublishError);
        return null;
      },
    );
    if (id !== null) return id;
    expect(i).toBeLessThan(tries);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/**
 * Kills the blocked `XREAD` connection of the store whose client was named `name` (its reader, a
 * duplicate, carries the name too): the store's reader falls behind until its backoff ends.
 * `unblock`: wakes it instead (`CLIENT UNBLOCK`), as if its XREAD waited for nothing.
 */
export async function killReader(url: string, name: string, unblock = false): Promise<void> {
  const direct = new Redis(url);
  try {
    const list = (await direct.client('LIST')) as string;
    const reader = list
      .split('\n')
      .find((line) => line.includes(`name=${name}`) && line.includes('cmd=xread'));
    expect(reader).toBeDefined();
    const id = /id=(\d+)/.exec(reader!)![1]!;
    if (unblock) expect(await direct.client('UNBLOCK', id)).toBe(1);
    else await direct.client('KILL', 'ID', id);
  } finally {
    direct.disconnect();
  }
}
