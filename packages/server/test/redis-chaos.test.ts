// Chaos against a real redis-server under the Redis Streams hub: a hung server (SIGSTOP), a
// stream flushed and refilled with ids behind the clients', trimming past a far-behind client,
// a very large event, odd topic names, and two instances publishing at once.
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { createApp, createEventHub, HUB_RESET_EVENT, HubPublishError } from '../src/index';
import { type RedisStreamsOptions, redisStreams } from '../src/redis/index';
import { type SseClient, sse, start, until } from './helpers';
import {
  appClient,
  streamKey as key,
  killReader,
  redisInstances,
  startRedis,
} from './redis-helpers';

const live = redisInstances();
const quiet = { onError: () => {}, reconnect: { initialDelay: 10, maxDelay: 50 } };
const instance = (stream: string, options: RedisStreamsOptions = {}) =>
  live.instance(stream, { ...quiet, ...options });

describe('redisStreams chaos: a hung Redis (SIGSTOP, then SIGCONT)', () => {
  it('publishes and replays fail typed within commandTimeout; clients stay; all resumes after SIGCONT', async () => {
    const server = await startRedis();
    const pid = server.pid()!;
    let stopped = false;
    try {
      const stream = key();
      const a = await live.instance(stream, {
        url: server.url,
        ...quiet,
        commandTimeout: 200,
        bufferSize: 0,
      });
      const client = await a.connect();
      await until(() => a.hub.size === 1);
      const first = await a.hub.publish('n', 'zero');
      await a.hub.publish('n', 'one');
      await client.waitFor(2);

      process.kill(pid, 'SIGSTOP');
      stopped = true;
      const error = await a.hub.publish('n', 'hung').catch((e: unknown) => e);
      expect(error).toBeInstanceOf(HubPublishError);
      expect(String((error as HubPublishError).cause)).toContain(server.url);
      // A client reconnecting meanwhile is ended (it retries), not left waiting on Redis.
      const back = await a.connect({ 'last-event-id': first });
      await back.ended;
      expect(back.events).toEqual([]);
      expect(a.hub.size).toBe(1); // the connected client stays

      process.kill(pid, 'SIGCONT');
      stopped = false;
      let after: string | null = null;
      for (let i = 0; i < 500 && after === null; i++) {
        after = await a.hub.publish('n', 'after').catch(() => null);
        if (after === null) await new Promise((r) => setTimeout(r, 10));
      }
      expect(after).not.toBeNull();
      await until(() => client.events.some((e) => e.id === after), 5000);
      // 'hung' may have been stored once Redis ran again (a timed-out command is not withdrawn:
      // the ambiguous case the README names); nothing is lost, and no reset.
      const data = client.events.map((e) => e.data).filter((d) => d !== 'hung');
      expect(data).toEqual(['zero', 'one', 'after']);
      expect(client.events.some((e) => e.event === HUB_RESET_EVENT)).toBe(false);
    } finally {
      if (stopped) process.kill(pid, 'SIGCONT');
      await server.dispose();
    }
  }, 30_000);
});

describe('redisStreams chaos: closing a hub on a hung Redis', () => {
  it('hub.close() settles and ends its clients, instead of waiting for Redis for ever', async () => {
    const server = await startRedis();
    const pid = server.pid()!;
    let stopped = false;
    try {
      const app = createApp();
      const hub = createEventHub({
        store: redisStreams({ url: server.url, stream: key(), ...quiet, commandTimeout: 200 }),
      });
      live.trackApp(app, hub);
      app.get('/events', (ctx) => hub.connect(ctx));
      const { port } = await start(app);
      await hub.ready;
      const client = live.track(await sse(port, '/events'));
      await until(() => hub.size === 1);
      process.kill(pid, 'SIGSTOP');
      stopped = true;
      const outcome = await Promise.race([
        hub.close().then(() => 'closed'),
        new Promise((r) => setTimeout(() => r('still closing after 20 s'), 20_000)),
      ]);
      expect(outcome).toBe('closed');
      await client.ended;
      expect(hub.size).toBe(0);
      // A hub made while Redis hangs: it cannot open; closing it settles `ready` too.
      const late = createEventHub({
        store: redisStreams({ url: server.url, stream: key(), ...quiet, commandTimeout: 200 }),
      });
      await new Promise((r) => setTimeout(r, 100));
      const closing = await Promise.race([
        Promise.all([late.close(), late.ready.catch(() => {})]).then(() => 'closed'),
        new Promise((r) => setTimeout(() => r('still pending after 20 s'), 20_000)),
      ]);
      expect(closing).toBe('closed');
      await expect(late.publish('n', 'x')).rejects.toBeInstanceOf(HubPublishError);
    } finally {
      if (stopped) process.kill(pid, 'SIGCONT');
      await server.dispose();
    }
  }, 30_000);
});

describe('redisStreams chaos: a stream flushed and refilled with ids behind the clients', () => {
  it('a reader waiting after an id the new stream has not reached resets its clients and delivers', async () => {
    const server = await startRedis();
    const direct = new Redis(server.url);
    try {
      const stream = key();
      const a = await live.instance(stream, { url: server.url, ...quiet });
      const client = await a.connect();
      await until(() => a.hub.size === 1);
      // An entry from a Redis whose clock was an hour ahead (or restored from one).
      const ahead = `${Date.now() + 3_600_000}-0`;
      await direct.xadd(stream, ahead, 'e', 'n', 'd', 'ahead');
      await client.waitFor(1);
      expect(client.events[0]!.id).toBe(ahead);
      await direct.flushall();
      // The new stream's ids start from Redis's clock again, behind the reader's last id. Added
      // by another writer (an instance's own publish wakes its reader at once: redis-flush).
      const now = (await direct.xadd(stream, '*', 'e', 'n', 'd', 'now')) as string;
      expect(now < ahead).toBe(true);
      await until(() => client.events.some((e) => e.event === HUB_RESET_EVENT), 8000);
      const later = await a.hub.publish('n', 'later');
      await until(() => client.events.some((e) => e.id === later), 3000);
      const names = client.events.map((e) => (e.event === HUB_RESET_EVENT ? 'reset' : e.data));
      expect(names.slice(0, 2)).toEqual(['ahead', 'reset']);
      expect(names.at(-1)).toBe('later');
      // A client coming back with the id from before the flush is reset, not left waiting.
      const back = await a.connect({ 'last-event-id': ahead });
      await back.waitFor(1);
      expect(back.events[0]).toMatchObject({ event: HUB_RESET_EVENT, id: a.hub.lastId });
    } finally {
      direct.disconnect();
      await server.dispose();
    }
  }, 30_000);
});

describe('redisStreams chaos: a stream flushed and refilled while the reader was down', () => {
  it('the clients are reset at the newest entry, so one moving with that id is replayed, not reset again', async () => {
    const server = await startRedis();
    const direct = new Redis(server.url);
    const named = appClient(server.url, 'chaos-back');
    try {
      await named.connect();
      const stream = key();
      const a = await live.instance(stream, {
        url: server.url,
        client: named,
        onError: () => {},
        reconnect: { initialDelay: 300, maxDelay: 300 },
      });
      const client = await a.connect();
      await until(() => a.hub.size === 1);
      const ahead = `${Date.now() + 3_600_000}-0`;
      await direct.xadd(stream, ahead, 'e', 'n', 'd', 'ahead');
      await client.waitFor(1);
      // The reader is down while the stream is flushed and refilled behind its last id: its
      // resync finds the last entry gone and nothing after it.
      await killReader(server.url, 'chaos-back');
      await direct.flushall();
      const now = (await direct.xadd(stream, '*', 'e', 'n', 'd', 'now')) as string;
      await until(() => client.events.some((e) => e.event === HUB_RESET_EVENT), 3000);
      const reset = client.events.find((e) => e.event === HUB_RESET_EVENT)!;
      expect(reset.id).toBe(now);
      const later = await a.hub.publish('n', 'later');
      await until(() => client.events.some((e) => e.id === later), 3000);
      const moved = await a.connect({ 'last-event-id': reset.id! });
      await moved.waitFor(1);
      expect(moved.events).toEqual([{ id: later, event: 'n', data: 'later' }]);
    } finally {
      named.disconnect();
      direct.disconnect();
      await server.dispose();
    }
  }, 30_000);
});

/**
 * Connects as an EventSource does: a stream ended before its first event is opened again with the
 * same Last-Event-ID. Its replay asks Redis on the instance's command connection, which
 * reconnects after a restart on its own backoff, maybe after the reader that delivered the
 * resets: meanwhile the replay fails and the hub ends the client to retry (it has no event to
 * give it). Bounded: past `attempts`, or a stream open without an event for waitFor's bound, fails.
 */
async function reconnect(
  target: { connect(headers?: Record<string, string>): Promise<SseClient> },
  headers: Record<string, string>,
  attempts = 100,
): Promise<SseClient> {
  for (let attempt = 1; ; attempt++) {
    const client = await target.connect(headers);
    await Promise.race([client.waitFor(1), client.ended]);
    if (client.events.length > 0) return client;
    client.close();
    if (attempt === attempts) throw new Error(`ended without an event ${attempts} times`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('redisStreams chaos: Redis restarted empty under connected clients', () => {
  it('every client is reset once; ids from before, now ahead of the new stream, are reset; nothing new is lost', async () => {
    const server = await startRedis({ persistent: false });
    try {
      const stream = key();
      const a = await live.instance(stream, { url: server.url, ...quiet });
      const b = await live.instance(stream, { url: server.url, ...quiet, bufferSize: 0 });
      const onA = await a.connect();
      const onB = await b.connect();
      const away = await a.connect();
      await until(() => a.hub.size === 2 && b.hub.size === 1);
      let last = '';
      for (let i = 0; i < 5; i++) last = await a.hub.publish('n', String(i));
      await Promise.all([onA.waitFor(5), onB.waitFor(5), away.waitFor(5)]);
      away.close();
      await server.stop();
      await server.start(); // a new, empty process on the same port
      await until(() => [onA, onB].every((c) => c.events.length === 6), 3000);
      for (const client of [onA, onB]) {
        expect(client.events[5]).toMatchObject({ event: HUB_RESET_EVENT, id: '0-0' });
      }
      // Back with an id the new stream has not reached: reset, on either instance, before and
      // after the new stream has entries.
      for (const target of [a, b]) {
        const back = await reconnect(target, { 'last-event-id': last });
        expect(back.events[0]).toMatchObject({ event: HUB_RESET_EVENT });
        back.close();
      }
      let fresh: string | null = null;
      for (let i = 0; i < 500 && fresh === null; i++) {
        fresh = await b.hub.publish('n', 'fresh').catch(() => null);
        if (fresh === null) await new Promise((r) => setTimeout(r, 10));
      }
      await until(() => [onA, onB].every((c) => c.events.length === 7), 3000);
      for (const client of [onA, onB]) expect(client.events[6]).toMatchObject({ id: fresh });
      for (const target of [a, b]) {
        const back = await reconnect(target, { 'last-event-id': last });
        expect(back.events[0]).toMatchObject({ event: HUB_RESET_EVENT, id: fresh });
        back.close();
      }
      expect(onA.events.filter((e) => e.event === HUB_RESET_EVENT)).toHaveLength(1);
      expect(onB.events.filter((e) => e.event === HUB_RESET_EVENT)).toHaveLength(1);
    } finally {
      await server.dispose();
    }
  }, 30_000);
});

describe('redisStreams chaos: trimming, size, topics, concurrency', () => {
  it('a client far behind the trimmed stream gets keel:reset at the current id, then live events', async () => {
    const stream = key();
    const a = await instance(stream, { maxLen: 10, bufferSize: 5 });
    const first = await a.hub.publish('n', '0');
    let newest = first;
    for (let i = 1; i < 300; i++) newest = await a.hub.publish('n', String(i));
    await until(() => a.hub.lastId === newest);
    const back = await a.connect({ 'last-event-id': first });
    await back.waitFor(1);
    expect(back.events[0]).toEqual({
      id: newest,
      event: HUB_RESET_EVENT,
      data: JSON.stringify({ lastEventId: first }),
    });
    const next = await a.hub.publish('n', 'next');
    await back.waitFor(2);
    expect(back.events[1]).toEqual({ id: next, event: 'n', data: 'next' });
  }, 30_000);

  it('a very large event reaches every instance intact and is replayed intact', async () => {
    const stream = key();
    const big = async () => {
      const app = createApp({ sse: { maxBufferedBytes: 16 * 1024 * 1024 } });
      const hub = createEventHub({
        store: redisStreams({ url: live.redis.url, stream, bufferSize: 0, ...quiet }),
      });
      live.trackApp(app, hub);
      app.get('/events', (ctx) => hub.connect(ctx));
      const { port } = await start(app);
      await hub.ready;
      return { hub, port };
    };
    const [a, b] = [await big(), await big()];
    const onB = live.track(await sse(b.port, '/events'));
    await until(() => b.hub.size === 1);
    const before = await a.hub.publish('n', 'small');
    // 4 MiB of JSON with line breaks in its strings and multi-byte characters.
    const payload = { text: 'ü\n€'.repeat(700_000), n: 1 };
    const id = await a.hub.publish('big', payload);
    await until(() => onB.events.some((e) => e.id === id), 5000);
    expect(JSON.parse(onB.events.find((e) => e.id === id)!.data)).toEqual(payload);
    const replayed = live.track(await sse(a.port, '/events', { 'last-event-id': before }));
    await replayed.waitFor(1);
    expect(replayed.events[0]!.id).toBe(id);
    expect(JSON.parse(replayed.events[0]!.data)).toEqual(payload);
  }, 30_000);

  it('an event larger than a client can ever queue: keel:reset at its id instead, the client stays', async () => {
    const stream = key();
    const a = await instance(stream);
    const b = await instance(stream);
    // The default cap: 1 MiB queued per client, 2 MiB written in one turn.
    const onA = await a.connect();
    const onB = await b.connect();
    await until(() => a.hub.size === 1 && b.hub.size === 1);
    const huge = await a.hub.publish('huge', 'x'.repeat(3 * 1024 * 1024));
    const next = await b.hub.publish('n', 'next');
    for (const [name, client, hub] of [
      ['A', onA, a.hub],
      ['B', onB, b.hub],
    ] as const) {
      await client.waitFor(2);
      expect(client.events, name).toEqual([
        { id: huge, event: HUB_RESET_EVENT, data: JSON.stringify({ lastEventId: null }) },
        { id: next, event: 'n', data: 'next' },
      ]);
      expect(hub.size, name).toBe(1);
      expect(hub.metrics.slowDrops, name).toBe(0);
    }
  }, 30_000);

  it('odd topic names are kept exactly; one Redis cannot store is refused, not lost', async () => {
    const stream = key();
    const a = await instance(stream);
    const b = await instance(stream);
    const topics = ['a b', 'x\ny', 'ü€😀', 'team:*', '{json}', '"quoted"', 't'.repeat(4096)];
    const clients: SseClient[] = [];
    for (const topic of topics) {
      clients.push(await b.connect({}, `?topics=${encodeURIComponent(topic)}`));
    }
    await until(() => b.hub.size === topics.length);
    for (const [i, topic] of topics.entries()) await a.hub.publish('n', String(i), { topic });
    for (const [i, client] of clients.entries()) {
      await client.waitFor(1);
      expect(client.events.map((e) => e.data)).toEqual([String(i)]);
    }
    // A lone surrogate has no UTF-8 form: Redis would store another topic, and its clients
    // would never get the event. Refused at once (as for connect: the same check).
    expect(() => a.hub.publish('n', 'x', { topic: 'bad\uD800' })).toThrow(RangeError);
    expect(() => a.hub.publish('n', 'x', { topic: 'bad\uD800' })).toThrow(
      'keel: `topic` must be a non-empty string of well-formed Unicode (no lone surrogate), got "bad\\ud800"',
    );
    expect(() => a.hub.invalidate('/x', { topic: '\uDC00' })).toThrow(RangeError);
    // So is an event name with one: the frame would carry U+FFFD, and a listener for the name
    // published would never fire.
    expect(() => a.hub.publish('bad\uD800', 'x')).toThrow(
      'keel: `event` must be an SSE event name of well-formed Unicode (no lone surrogate), got "bad\\ud800"',
    );
  }, 30_000);

  it('two instances publishing at once: every client sees one order, each publisher its own order', async () => {
    const stream = key();
    const a = await instance(stream);
    const b = await instance(stream);
    const onA = await a.connect({}, '?topics=t');
    const onB = await b.connect({}, '?topics=t');
    await until(() => a.hub.size === 1 && b.hub.size === 1);
    const n = 200;
    const run = (hub: typeof a.hub, who: string) =>
      Promise.all(
        Array.from({ length: n }, (_, i) => hub.publish('n', `${who}${i}`, { topic: 't' })),
      );
    await Promise.all([run(a.hub, 'a'), run(b.hub, 'b')]);
    await onA.waitFor(2 * n);
    await onB.waitFor(2 * n);
    expect(onA.events.map((e) => e.id)).toEqual(onB.events.map((e) => e.id));
    const direct = new Redis(live.redis.url);
    const stored = ((await direct.xrange(stream, '-', '+')) as [string, string[]][]).map(
      ([id]) => id,
    );
    direct.disconnect();
    expect(onA.events.map((e) => e.id)).toEqual(stored);
    for (const who of ['a', 'b']) {
      const mine = onA.events.map((e) => e.data).filter((d) => d.startsWith(who));
      expect(mine).toEqual(Array.from({ length: n }, (_, i) => `${who}${i}`));
    }
  }, 30_000);

  it('a Redis user refused INFO and CONFIG still opens and delivers (restarts then go by the lost entry)', async () => {
    const admin = new Redis(live.redis.url);
    await admin.call(
      'ACL',
      'SETUSER',
      'noinfo',
      'on',
      '>pw',
      '~*',
      '&*',
      '+@all',
      '-info',
      '-config',
    );
    admin.disconnect();
    const stream = key();
    const url = live.redis.url.replace('//', '//noinfo:pw@');
    const a = await instance(stream, { url });
    const client = await a.connect();
    await until(() => a.hub.size === 1);
    const id = await a.hub.publish('n', 'x');
    await client.waitFor(1);
    expect(client.events).toEqual([{ id, event: 'n', data: 'x' }]);
  }, 30_000);
});
