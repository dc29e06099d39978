import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { createEventHub, HUB_RESET_EVENT, HubPublishError } from '../src/index';
import { type RedisStreamsOptions, redisStreams } from '../src/redis/index';
import { until } from './helpers';
import {
  appClient,
  streamKey as key,
  killReader,
  publishWhenUp,
  redisInstances,
  startRedis,
} from './redis-helpers';

// Audit of the Redis Streams store: timing and failure edges, each through the public API
// against a real redis-server.

const live = redisInstances();
/** An instance on `url` (the file's server, or one a test stops and restarts), errors quiet. */
const instance = (url: string, stream: string, options: RedisStreamsOptions = {}) =>
  live.instance(stream, { url, onError: () => {}, ...options });

describe('redisStreams audit: Redis lost its data', () => {
  it('an event published after recovery, before a slower instance resynced, still reaches its clients', async () => {
    const server = await startRedis({ persistent: false });
    try {
      const stream = key();
      const fast = await instance(server.url, stream, {
        reconnect: { initialDelay: 10, maxDelay: 20 },
      });
      // Its reader retries only every 600 ms: the other instance publishes before it is back.
      const slow = await instance(server.url, stream, {
        reconnect: { initialDelay: 600, maxDelay: 600 },
      });
      const client = await slow.connect();
      await until(() => slow.hub.size === 1);
      await fast.hub.publish('n', 'before');
      await client.waitFor(1);
      await server.stop();
      await server.start();
      const after = await publishWhenUp(fast.hub, 'after');
      await until(() => client.events.some((e) => e.data === 'after'), 1500);
      const names = client.events.map((e) => e.event ?? e.data);
      // Events in between may be lost: the client is told (reset) before it gets what follows.
      expect(names).toEqual(['n', HUB_RESET_EVENT, 'n']);
      expect(client.events[2]).toMatchObject({ id: after, data: 'after' });
    } finally {
      await server.dispose();
    }
  }, 30_000);
});

describe('redisStreams audit: replay and reading', () => {
  it('a burst trimmed past the reader is a keel:reset, never a silent gap', async () => {
    const stream = key();
    // MAXLEN ~ 1 keeps about one node (100 entries): a burst of 3,000 outruns the reader.
    const a = await instance(live.redis.url, stream, { maxLen: 1 });
    const client = await a.connect();
    await until(() => a.hub.size === 1);
    const ids = await Promise.all(Array.from({ length: 3000 }, (_, i) => a.hub.publish('n', i)));
    await until(() => a.hub.lastId === ids[2999]);
    await until(() => client.events.at(-1)?.id === ids[2999]);
    const seen = client.events;
    let expected = 0;
    for (const e of seen) {
      if (e.event === HUB_RESET_EVENT) {
        expected = -1; // anything may follow a reset
        continue;
      }
      const n = Number(e.data);
      if (expected !== -1) expect(n).toBe(expected);
      expected = n + 1;
    }
  }, 30_000);

  it('replays more than a page of missed entries from Redis, of its topics only', async () => {
    const stream = key();
    const a = await instance(live.redis.url, stream, { bufferSize: 0 });
    const first = await a.connect({}, '?topics=odd');
    await until(() => a.hub.size === 1);
    const start = await a.hub.publish('n', 'start');
    await first.waitFor(1);
    first.close();
    await until(() => a.hub.size === 0);
    for (let i = 0; i < 1500; i++) {
      await a.hub.publish('n', String(i), i % 2 ? { topic: 'odd' } : { topic: 'even' });
    }
    const end = await a.hub.publish('n', 'end');
    await until(() => a.hub.lastId === end);
    const back = await a.connect({ 'last-event-id': start }, '?topics=odd');
    await back.waitFor(751);
    const odd = Array.from({ length: 750 }, (_, i) => String(2 * i + 1));
    expect(back.events.map((e) => e.data)).toEqual([...odd, 'end']);
  }, 30_000);
});

describe('redisStreams audit: closing releases everything', () => {
  async function connectionsTo(url: string): Promise<number> {
    const direct = new Redis(url);
    try {
      const list = (await direct.client('LIST')) as string;
      return list.trim().split('\n').length - 1; // without this one
    } finally {
      direct.disconnect();
    }
  }

  it('hub.close() leaves no connection open on Redis, also mid-replay and mid-backoff', async () => {
    const server = await startRedis();
    try {
      const stream = key();
      const a = await instance(server.url, stream, { bufferSize: 0 });
      const first = await a.connect();
      await until(() => a.hub.size === 1);
      const id = await a.hub.publish('n', 1);
      await first.waitFor(1);
      await a.hub.publish('n', 2);
      // A replay from Redis is in flight when the hub closes.
      await a.connect({ 'last-event-id': id });
      expect(await connectionsTo(server.url)).toBe(2);
      await a.hub.close();
      await new Promise((r) => setTimeout(r, 50));
      expect(await connectionsTo(server.url)).toBe(0);

      // A hub whose Redis is away (its reader backing off) closes too, and ready settles.
      const b = createEventHub({
        store: redisStreams({ url: server.url, stream, onError: () => {} }),
      });
      await b.ready;
      await server.stop();
      await new Promise((r) => setTimeout(r, 100));
      const before = process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
      await b.close();
      await new Promise((r) => setTimeout(r, 50));
      const after = process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
      expect(after).toBeLessThanOrEqual(before);
      await server.start();
      await new Promise((r) => setTimeout(r, 300));
      expect(await connectionsTo(server.url)).toBe(0);
    } finally {
      await server.dispose();
    }
  }, 30_000);

  it('a hub that never reached Redis closes: ready settles, nothing keeps reconnecting', async () => {
    const server = await startRedis();
    const url = server.url;
    await server.stop();
    try {
      const errors: unknown[] = [];
      const hub = createEventHub({
        store: redisStreams({ url, stream: key(), onError: (e) => errors.push(e) }),
      });
      await until(() => errors.length > 0);
      await hub.close();
      await hub.ready; // resolves (closed before open), never rejects unhandled
      const count = errors.length;
      await server.start();
      await new Promise((r) => setTimeout(r, 300));
      expect(await connectionsTo(url)).toBe(0);
      expect(errors.length).toBe(count);
    } finally {
      await server.dispose();
    }
  }, 30_000);
});

describe('redisStreams audit: Redis stops answering', () => {
  async function pidOf(url: string): Promise<number> {
    const direct = new Redis(url);
    try {
      const info = (await direct.info('server')) as string;
      return Number(/process_id:(\d+)/.exec(info)![1]);
    } finally {
      direct.disconnect();
    }
  }

  it('a publish to a Redis that hangs (no answer, no reset) rejects instead of waiting for ever', async () => {
    const server = await startRedis();
    const pid = await pidOf(server.url);
    try {
      const a = await instance(server.url, key(), { commandTimeout: 200 });
      await a.hub.publish('n', 'up');
      process.kill(pid, 'SIGSTOP');
      const outcome = await Promise.race([
        a.hub.publish('n', 'hung').then(
          () => 'resolved',
          (e: unknown) => (e instanceof HubPublishError ? 'HubPublishError' : String(e)),
        ),
        new Promise((r) => setTimeout(() => r('still pending after 20 s'), 20_000)),
      ]);
      expect(outcome).toBe('HubPublishError');
      expect(() => redisStreams({ commandTimeout: 0 })).toThrow(
        'keel: `commandTimeout` must be an integer in 1-2147483647 number of ms, got 0',
      );
    } finally {
      process.kill(pid, 'SIGCONT');
      await server.dispose();
    }
  }, 40_000);
});

describe('redisStreams audit: options', () => {
  it('refuses reconnect delays a timer cannot hold (they would fire at once, a tight retry loop)', () => {
    for (const reconnect of [{ maxDelay: 2 ** 31 }, { initialDelay: 2 ** 31, maxDelay: 2 ** 31 }]) {
      expect(() => redisStreams({ reconnect })).toThrow(RangeError);
    }
    expect(() => redisStreams({ reconnect: { maxDelay: 2 ** 31 } })).toThrow(
      'keel: `reconnect.maxDelay` must be an integer in 1-2147483647 number of ms, got 2147483648',
    );
    expect(() => redisStreams({ reconnect: { maxDelay: 2 ** 31 - 1 } })).not.toThrow();
    // null is not "the defaults".
    expect(() => redisStreams({ reconnect: null as never })).toThrow(
      'keel: `reconnect` must be an object, got null',
    );
  });

  it('a url that is not a string is a TypeError (ioredis would take a number as a port)', () => {
    for (const url of [6379, { host: 'x' }, null]) {
      expect(() => redisStreams({ url: url as never })).toThrow(TypeError);
    }
    expect(() => redisStreams({ url: 6379 as never })).toThrow(
      'keel: `url` must be a Redis URL string (redis://host:port/db), got 6379',
    );
  });

  it('an empty url, or one of another scheme, is a RangeError (ioredis tried 127.0.0.1:6379, or a socket path)', () => {
    // Before: `REDIS_URL= node app` connected to the default Redis, and an http:// URL failed
    // later with `connect ENOENT //127.0.0.1:6379`.
    for (const url of ['', '  ', 'http://127.0.0.1:6379', 'https://redis.example.com']) {
      expect(() => redisStreams({ url })).toThrow(
        new RangeError(
          `keel: \`url\` must be a redis:// or rediss:// URL, got ${JSON.stringify(url)}`,
        ),
      );
    }
    // One slash, or none before it: ioredis read `redis:/u:pw@host` as the socket path
    // `/u:pw@host` (and `//h:1/2`, on older ioredis, as host h with the socket path `/2`),
    // failing only at connect time, far from the option. Refused at once, the password hidden.
    for (const [url, got] of [
      ['redis:/127.0.0.1:6379', '"redis:/127.0.0.1:6379"'],
      ['redis:/u:pw@127.0.0.1:6379', '"redis:/u:***@127.0.0.1:6379"'],
      ['REDISS:/h:6380', '"REDISS:/h:6380"'],
      ['http:/h', '"http:/h"'],
      ['//127.0.0.1:6379', '"//127.0.0.1:6379"'],
      ['//u:pw@h:1/2', '"//u:***@h:1/2"'],
      ['///tmp/r.sock', '"///tmp/r.sock"'],
    ]) {
      expect(() => redisStreams({ url }), url).toThrow(
        new RangeError(`keel: \`url\` must be a redis:// or rediss:// URL, got ${got}`),
      );
    }
    // What ioredis takes besides: a host:port (a Docker service named redis too), a socket path.
    for (const url of [
      'redis://127.0.0.1:1',
      'rediss://h:6380/2',
      'REDIS://h',
      'redis:///2',
      '127.0.0.1:1',
      'redis:6379',
      'localhost:6379/1',
      '/tmp/r.sock',
      '/tmp/r.sock?db=2',
    ]) {
      expect(() => redisStreams({ url }).close(), url).not.toThrow();
    }
  });

  // ioredis reads `/abc` as db NaN and SELECTs it at every connect; the refusal of that SELECT
  // (ERR value is not an integer, or keel's gate) was a rejection nothing caught: the process
  // ended. `/1.5` silently selected db 1.
  it('a url whose db is no number is a RangeError, the password hidden', () => {
    for (const [url, got] of [
      ['redis://127.0.0.1:1/abc', '"redis://127.0.0.1:1/abc"'],
      ['redis://u:pw@h:1/x1', '"redis://u:***@h:1/x1"'],
      ['rediss://h/%20', '"rediss://h/%20"'],
      ['redis://h/1.5', '"redis://h/1.5"'],
      ['redis://h?db=two', '"redis://h?db=two"'],
      ['localhost:6379/db', '"localhost:6379/db"'],
      // ioredis takes the last of repeated `db`s, and reads `?db=` on a socket path too.
      ['redis://h/?db=1&db=abc', '"redis://h/?db=1&db=abc"'],
      ['/tmp/r.sock?db=abc', '"/tmp/r.sock?db=abc"'],
    ]) {
      expect(() => redisStreams({ url }), url).toThrow(
        new RangeError(
          `keel: \`url\` must be a Redis URL whose db (its path, or ?db=) is a number, got ${got}`,
        ),
      );
    }
    for (const url of ['redis://h/', 'redis://h/0', 'redis://h?db=3', 'redis://h/15#x']) {
      expect(() => redisStreams({ url }).close(), url).not.toThrow();
    }
  });

  it('a huge bufferSize is allocated as used: the store opens and delivers; past the array limit it is a RangeError', async () => {
    const a = await instance(live.redis.url, key(), { bufferSize: 2 ** 32 - 1 });
    const client = await a.connect();
    await until(() => a.hub.size === 1);
    const id = await a.hub.publish('n', 'x');
    await client.waitFor(1);
    expect(client.events[0]).toMatchObject({ id, data: 'x' });
    for (const make of [
      () => redisStreams({ bufferSize: 2 ** 32 }),
      () => createEventHub({ bufferSize: 2 ** 32 }),
    ]) {
      expect(make).toThrow(
        'keel: `bufferSize` must be an integer in 0-4294967295 number of events, got 4294967296',
      );
    }
  });
});

describe('redisStreams audit: a throwing onError', () => {
  it('is reported as a warning; the reader goes on and delivers once Redis is back', async () => {
    const server = await startRedis();
    const warnings: unknown[] = [];
    const onWarning = (w: unknown) => warnings.push(w);
    const unhandled: unknown[] = [];
    const onUnhandled = (e: unknown) => unhandled.push(e);
    process.on('warning', onWarning);
    process.on('unhandledRejection', onUnhandled);
    try {
      const stream = key();
      let calls = 0;
      const a = await instance(server.url, stream, {
        reconnect: { initialDelay: 10, maxDelay: 50 },
        onError: () => {
          // Throws once (one warning in the output), from a connection's error event or the reader.
          if (calls++ === 0) throw new Error('onError failed');
        },
      });
      const client = await a.connect();
      await until(() => a.hub.size === 1);
      await server.stop();
      await until(() => calls > 2);
      await server.start();
      const id = await publishWhenUp(a.hub, 'after');
      await until(() => client.events.some((e) => e.id === id));
      expect(unhandled).toEqual([]);
      expect(warnings.some((w) => String(w).includes('onError failed'))).toBe(true);
      expect(() => redisStreams({ onError: 'log' as never })).toThrow(
        'keel: `onError` must be a function, got "log"',
      );
    } finally {
      process.off('warning', onWarning);
      process.off('unhandledRejection', onUnhandled);
      await server.dispose();
    }
  }, 30_000);
});

describe('redisStreams audit: Redis restored an older snapshot', () => {
  it('a client holding an id from before the loss gets keel:reset, never a replay with a gap', async () => {
    // Redis's default persistence (RDB): a restart restores the last snapshot, and entries
    // stored after it are gone.
    const server = await startRedis({ persistent: false });
    try {
      const stream = key();
      const a = await instance(server.url, stream, {
        reconnect: { initialDelay: 10, maxDelay: 50 },
      });
      const live = await a.connect();
      await until(() => a.hub.size === 1);
      const idA = await a.hub.publish('n', 'a');
      const idB = await a.hub.publish('n', 'b');
      const direct = new Redis(server.url);
      await direct.save();
      direct.disconnect();
      await a.hub.publish('n', 'c');
      const idD = await a.hub.publish('n', 'd');
      await live.waitFor(4);
      await server.stop(); // no save on shutdown: c and d are lost
      await server.start();
      await live.waitFor(5);
      expect(live.events[4]!.event).toBe(HUB_RESET_EVENT);
      const after = await publishWhenUp(a.hub, 'e');
      await live.waitFor(6);
      expect(live.events[5]).toMatchObject({ id: after, data: 'e' });
      // Clients that left before the loss come back with ids from before it.
      for (const lastEventId of [idA, idB, idD]) {
        const back = await a.connect({ 'last-event-id': lastEventId });
        await back.waitFor(1);
        expect(back.events[0]).toMatchObject({
          event: HUB_RESET_EVENT,
          data: JSON.stringify({ lastEventId }),
        });
      }
      // The reset's own id resumes exactly.
      const resumed = await a.connect({ 'last-event-id': live.events[4]!.id! });
      await resumed.waitFor(1);
      expect(resumed.events[0]).toMatchObject({ id: after, data: 'e' });
    } finally {
      await server.dispose();
    }
  }, 30_000);
});

describe('redisStreams audit: a client ahead of the instance it moves to', () => {
  it('gets neither a duplicate nor a reset, and nothing after its id is lost', async () => {
    const stream = key();
    const a = await instance(live.redis.url, stream);
    // B publishes through a named client; its reader (a duplicate) carries the name too.
    const named = appClient(live.redis.url, 'audit-b');
    await named.connect();
    const b = await instance(live.redis.url, stream, {
      client: named,
      reconnect: { initialDelay: 800, maxDelay: 800 },
    });
    try {
      const onA = await a.connect();
      await until(() => a.hub.size === 1);
      await a.hub.publish('n', 'x0');
      await until(() => b.hub.lastId === a.hub.lastId);
      // Kill B's blocked reader: it retries only in 800 ms, so B falls behind A.
      await killReader(live.redis.url, 'audit-b');
      await a.hub.publish('n', 'x1');
      const y = await a.hub.publish('n', 'x2');
      await onA.waitFor(3);
      expect(b.hub.lastId < y).toBe(true); // B has not read x1, x2 yet
      onA.close();
      const moved = await b.connect({ 'last-event-id': y });
      await until(() => b.hub.size === 1);
      const z = await a.hub.publish('n', 'x3');
      await until(() => moved.events.length > 0, 3000);
      await until(() => b.hub.lastId === z, 3000);
      await new Promise((r) => setTimeout(r, 20));
      expect(moved.events).toEqual([{ id: z, event: 'n', data: 'x3' }]);
    } finally {
      named.disconnect();
    }
  }, 30_000);
});
