import { randomUUID } from 'node:crypto';
import { type AddressInfo, createConnection, createServer, type Socket } from 'node:net';
import { Redis, type RedisOptions } from 'ioredis';
import { afterAll, afterEach, beforeAll, expect } from 'vitest';
import { type RedisServer, startRedis as startServer } from '../../../scripts/redis-server.mjs';
import { type App, createApp, createEventHub, type EventHub, HubPublishError } from '../src/index';
import {
  isRedisStoreError,
  type RedisStoreError,
  type RedisStreamsOptions,
  redisStreams,
} from '../src/redis/index';
import { within } from './adversarial/harness';
import { type SseClient, sse, start } from './helpers';

export type { RedisServer };

/** How a test's redis-server is started (see {@link startRedis}). */
export interface RedisSetup {
  /** `--cluster-enabled yes`: a cluster node that serves no slot until one is assigned. */
  cluster?: boolean;
  /** redis-server settings for every start of it (`{ databases: 4 }`). */
  config?: Record<string, string | number>;
  /** The append-only file on (fsync always): its data survives a restart. */
  persistent?: boolean;
}

/**
 * A real redis-server on a free loopback port, in a temp dir of its own (a cluster node's
 * nodes.conf too) that its `dispose()` removes, and nothing else: `cluster` and `config` are
 * its arguments from its first start (no restart to apply them), and for every restart.
 */
export function startRedis({ cluster, config = {}, persistent }: RedisSetup = {}) {
  const args = cluster ? ['--cluster-enabled', 'yes'] : [];
  for (const [name, value] of Object.entries(config)) args.push(`--${name}`, String(value));
  return startServer({ persistent, args });
}

/**
 * An admin connection as a Redis user of its own (`admin`, all allowed), made on `url` as the
 * default user: for tests that turn the default user off or give it a password.
 */
export async function adminUser(url: string): Promise<Redis> {
  const setup = new Redis(url);
  try {
    await setup.call('ACL', 'SETUSER', 'admin', 'on', '>admin', '~*', '&*', '+@all');
  } finally {
    setup.disconnect();
  }
  return new Redis(url.replace('//', '//admin:admin@'));
}

/**
 * For one test file: a redis-server (see {@link startRedis}) started before its tests, with an
 * admin connection, both closed after them.
 */
export function redisServer(setup: RedisSetup = {}) {
  let redis: RedisServer;
  let admin: Redis;
  beforeAll(async () => {
    redis = await startRedis(setup);
    admin = new Redis(redis.url);
  });
  afterAll(async () => {
    admin?.disconnect();
    await redis?.dispose();
  });
  return {
    get redis(): RedisServer {
      return redis;
    },
    /** A connection to it for the test's own commands (db 0). */
    get admin(): Redis {
      return admin;
    },
  };
}

/** What {@link failedOpen} saw. */
export interface FailedOpen {
  /** What `hub.ready` rejected with (checked to be a RedisStoreError). */
  error: RedisStoreError;
  /** The hub, closed unless `close: false` was given. */
  hub: EventHub;
  /** The store's onError calls (checked to be none). */
  errors: unknown[];
  /** The process warnings while it ran, up to its close. */
  warnings: string[];
}

/**
 * Opens a hub on `options` (a fresh stream, a short backoff, onError recorded unless given) that
 * must fail to open, and checks what every such failure shares: `hub.ready` rejects (within 3 s)
 * with a RedisStoreError, a publish rejects with a HubPublishError whose `cause` it is, and
 * onError gets nothing, then or in the next 100 ms (not retried). `close: false` leaves the hub
 * open (closed by the caller).
 */
export async function failedOpen(
  options: RedisStreamsOptions,
  { close = true }: { close?: boolean } = {},
): Promise<FailedOpen> {
  const errors: unknown[] = [];
  const warnings: string[] = [];
  const onWarning = (w: Error): void => void warnings.push(String(w));
  process.on('warning', onWarning);
  try {
    const hub = createEventHub({
      store: redisStreams({
        stream: streamKey(),
        onError: (e) => void errors.push(e),
        reconnect: { initialDelay: 5, maxDelay: 10 },
        ...options,
      }),
    });
    const error = await within(
      hub.ready.then(
        () => null,
        (e: unknown) => e,
      ),
      3000,
      'hub.ready',
    );
    expect(isRedisStoreError(error), String(error)).toBe(true);
    const publish = await hub.publish('n', 'x').then(
      () => null,
      (e: unknown) => e,
    );
    expect(publish).toBeInstanceOf(HubPublishError);
    expect((publish as HubPublishError).cause).toBe(error);
    // `hub.ready` says it, and only it: not the raw refusal of each connection or attempt before
    // the open gave up, and nothing more comes (not retried).
    expect(errors.map(String)).toEqual([]);
    await new Promise((r) => setTimeout(r, 100));
    expect(errors.map(String)).toEqual([]);
    if (close) await hub.close();
    return { error: error as RedisStoreError, hub, errors, warnings };
  } finally {
    process.off('warning', onWarning);
  }
}

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
 * For one test file: a redis-server (see {@link startRedis}) started before its tests and disposed after, and app
 * instances (an app with its own hub on a Redis stream) closed, with their clients, after each
 * test.
 */
export function redisInstances(setup: RedisSetup = {}) {
  let redis: RedisServer;
  beforeAll(async () => {
    redis = await startRedis(setup);
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
 * An app's ioredis client for a store's `client` option, named `name` (its reader, a duplicate,
 * carries the name: {@link killReader} finds it) with no offline queue (a publish rejects while
 * Redis is away, as the store's own connection does); `lazyConnect`: the test connects it.
 */
export function appClient(url: string, name: string, options: RedisOptions = {}): Redis {
  return new Redis(url, {
    connectionName: name,
    enableOfflineQueue: false,
    lazyConnect: true,
    ...options,
  });
}

/**
 * Resolves once `client` (an app's ioredis client, given to a store as `client`) is ready again,
 * at once if it is; rejects after `ms` naming it and its status. After an outage a hub on it
 * answers a `Last-Event-ID` from Redis with that client: until it has reconnected the replay
 * fails and the hub ends the stream with no event (for the EventSource to retry), which a test
 * that reconnects at once takes for a missing event. Its reader (a duplicate) is back earlier
 * or later on its own schedule, so `hub.lastId` having moved on says nothing of it.
 */
export function whenReady(client: Redis, ms = 10_000): Promise<void> {
  if (client.status === 'ready') return Promise.resolve();
  return new Promise((resolve, reject) => {
    const ready = (): void => {
      clearTimeout(timer);
      resolve();
    };
    const timer = setTimeout(() => {
      client.off('ready', ready);
      const name = client.options.connectionName ?? '(unnamed)';
      reject(
        new Error(`the Redis client ${name} was not ready within ${ms} ms (${client.status})`),
      );
    }, ms);
    client.once('ready', ready);
  });
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

/**
 * Which connections a {@link holdingProxy} holds Redis's answers to: `reader` those that sent an
 * `XREAD` (a store's reader: it falls behind the others); `others` those that never did (a
 * store's publishing connection, which replays: every replay sent stays in flight); `first` the
 * first connection made (an app's client, connected before its store).
 */
export type HeldConnections = 'reader' | 'others' | 'first';

/**
 * A TCP proxy on 127.0.0.1:0 to the Redis at `target` that can hold back what Redis sends to
 * the `held` connections: `hold()` keeps it, `release()` lets it through (in order), for as long
 * as the test wants. `close()` destroys every connection and stops it.
 */
export async function holdingProxy(target: string, held: HeldConnections) {
  const { hostname, port } = new URL(target);
  const sockets = new Set<Socket>();
  const released: (() => void)[] = [];
  let holding = false;
  let accepted = 0;
  const server = createServer((socket) => {
    const upstream = createConnection(Number(port), hostname);
    const first = accepted++ === 0;
    let reader = false;
    for (const s of [socket, upstream]) {
      sockets.add(s);
      s.on('error', () => {});
      s.on('close', () => {
        sockets.delete(s);
        socket.destroy();
        upstream.destroy();
      });
    }
    socket.on('data', (chunk: Buffer) => {
      if (/xread/i.test(chunk.toString('latin1'))) reader = true;
      upstream.write(chunk);
    });
    const isHeld = (): boolean => (held === 'first' ? first : held === 'reader' ? reader : !reader);
    upstream.on('data', (chunk: Buffer) => {
      if (holding && isHeld()) released.push(() => socket.write(chunk));
      else socket.write(chunk);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port: at } = server.address() as AddressInfo;
  return {
    url: `redis://127.0.0.1:${at}`,
    hold(): void {
      holding = true;
    },
    release(): void {
      holding = false;
      for (const write of released.splice(0)) write();
    },
    async close(): Promise<void> {
      for (const s of sockets) s.destroy();
      await new Promise((r) => server.close(r));
    },
  };
}
