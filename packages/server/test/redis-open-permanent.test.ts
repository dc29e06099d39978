// Errors at open that retrying cannot fix (a wrong password, a Redis user refused a command the
// store needs, a stream key holding another type): the store stops retrying, `hub.ready`
// rejects with a RedisStoreError naming the cause and what to change, publishes reject, and
// no connection or timer is left behind. A transient error (connection refused) still retries.
// Real redis-server.
import { createServer } from 'node:net';
import { Redis } from 'ioredis';
import { beforeAll, describe, expect, it } from 'vitest';
import { createEventHub } from '../src/index';
import { isRedisStoreError, RedisStoreError, redisStreams } from '../src/redis/index';
import { guardProcess, within } from './adversarial/harness';
import { failedOpen, streamKey as key, redisServer } from './redis-helpers';

guardProcess();
const server = redisServer();
beforeAll(async () => {
  const { admin } = server;
  await admin.call('ACL', 'SETUSER', 'keel', 'on', '>right', '~*', '&*', '+@all');
  await admin.call('ACL', 'SETUSER', 'noxread', 'on', '>pw', '~*', '&*', '+@all', '-xread');
  await admin.call('ACL', 'SETUSER', 'noxinfo', 'on', '>pw', '~*', '&*', '+@all', '-xinfo');
});

const as = (user: string): string => server.redis.url.replace('//', `//${user}@`);

/** The connections of Redis user `user` on the server, to see none is left. */
async function connections(user: string): Promise<number> {
  const list = (await server.admin.client('LIST')) as string;
  return list.split('\n').filter((line) => line.includes(` user=${user} `)).length;
}

async function settlesAt(user: string, count: number): Promise<void> {
  for (let i = 0; (await connections(user)) !== count; i++) {
    expect(i).toBeLessThan(200);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** See `failedOpen`; also: one warning, the hub's (its store failed to open), naming it. */
async function failsToOpen(url: string, stream: string, close = true) {
  const { error, warnings } = await failedOpen(
    { url, stream, reconnect: { initialDelay: 10, maxDelay: 20 } },
    { close },
  );
  // None of the store's.
  expect(warnings).toEqual([expect.stringMatching(/store failed to open/)]);
  expect(warnings[0]).toContain(error.message);
  return { error, warnings };
}

describe('redisStreams: an error at open that retrying cannot fix', () => {
  it('a wrong password (WRONGPASS): ready rejects naming it and the url, no retry', async () => {
    const { error, warnings } = await failsToOpen(as('keel:wrong'), key());
    expect(error).toBeInstanceOf(RedisStoreError);
    expect(isRedisStoreError(error)).toBe(true);
    expect(error.name).toBe('RedisStoreError');
    expect(error.code).toBe('WRONGPASS');
    expect(error.message).toMatch(/WRONGPASS/);
    expect(error.message).toMatch(/password/);
    expect(error.message).toContain('redis://keel:***@');
    expect(error.message).not.toContain('wrong');
    expect(warnings.map(String).join('\n')).toMatch(/WRONGPASS/);
  });

  it('a Redis user refused XREAD (NOPERM): ready rejects naming the command', async () => {
    const { error } = await failsToOpen(as('noxread:pw'), key());
    expect(error).toBeInstanceOf(RedisStoreError);
    expect(error.code).toBe('NOPERM');
    expect(error.message).toMatch(/NOPERM.*xread/i);
    expect(error.message).toMatch(/grant/);
  });

  it('a Redis user refused XINFO (NOPERM, inside MULTI): ready rejects naming the command', async () => {
    const { error } = await failsToOpen(as('noxinfo:pw'), key());
    expect(error.code).toBe('NOPERM');
    expect(error.message).toMatch(/NOPERM.*xinfo/i);
  });

  it('the stream key holds a string (WRONGTYPE): ready rejects naming the key', async () => {
    const stream = key();
    await server.admin.set(stream, 'not a stream');
    const { error } = await failsToOpen(server.redis.url, stream);
    expect(error.code).toBe('WRONGTYPE');
    expect(error.message).toContain(stream);
    expect(error.message).toMatch(/WRONGTYPE/);
    expect(error.message).toMatch(/`stream`/);
    expect(error.cause).toBeInstanceOf(Error);
  });

  it('leaves no connection of its own open on the server, and none of a `client` it was given', async () => {
    await server.admin.call('ACL', 'SETUSER', 'leak', 'on', '>pw', '~*', '&*', '+@all');
    const stream = key();
    await server.admin.set(stream, 'x');
    const { error } = await failsToOpen(as('leak:pw'), stream, false);
    expect(error.code).toBe('WRONGTYPE');
    await settlesAt('leak', 0);
    // An app's client stays open (it is the app's); the store's reader, a duplicate, is closed.
    const client = new Redis(as('leak:pw'), { lazyConnect: true, enableOfflineQueue: false });
    await client.connect();
    try {
      const hub = createEventHub({ store: redisStreams({ client, stream, onError: () => {} }) });
      await expect(within(hub.ready, 3000, 'ready')).rejects.toBeInstanceOf(RedisStoreError);
      await settlesAt('leak', 1);
      await new Promise((r) => setTimeout(r, 100));
      expect(await connections('leak')).toBe(1);
      expect(client.status).toBe('ready');
      await hub.close();
    } finally {
      client.disconnect();
    }
  });
});

describe('redisStreams: a transient error at open still retries', () => {
  it('connection refused: retried until Redis listens, then ready', async () => {
    // A port nothing listens on yet.
    const probe = createServer();
    await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
    const { port } = probe.address() as { port: number };
    await new Promise((r) => probe.close(r));
    const errors: unknown[] = [];
    const hub = createEventHub({
      store: redisStreams({
        url: `redis://127.0.0.1:${port}`,
        stream: key(),
        onError: (error) => void errors.push(error),
        reconnect: { initialDelay: 10, maxDelay: 20 },
      }),
    });
    let settled = false;
    hub.ready.then(
      () => (settled = true),
      () => (settled = true),
    );
    try {
      await new Promise((r) => setTimeout(r, 200));
      expect(errors.length).toBeGreaterThan(1);
      expect(settled).toBe(false);
    } finally {
      await hub.close();
    }
  });
});
