import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { createApp, createEventHub, HUB_RESET_EVENT, HubPublishError } from '../src/index';
import { redisStreams } from '../src/redis/index';
import { sse, start, until } from './helpers';
import { streamKey as key, publishWhenUp, redisInstances, startRedis } from './redis-helpers';

const live = redisInstances();
const { instance } = live;
const STREAM_ID = /^\d+-\d+$/;

describe('redisStreams store', () => {
  it('delivers what one instance publishes to the clients of every instance, with stream ids', async () => {
    const stream = key();
    const a = await instance(stream);
    const b = await instance(stream);
    const onA = await a.connect();
    const onB = await b.connect();
    await until(() => a.hub.size === 1 && b.hub.size === 1);
    const ids: string[] = [];
    for (let i = 0; i < 50; i++) ids.push(await (i % 2 ? b : a).hub.publish('n', { i }));
    await onA.waitFor(50);
    await onB.waitFor(50);
    expect(ids.every((id) => STREAM_ID.test(id))).toBe(true);
    for (const client of [onA, onB]) {
      expect(client.events.map((e) => e.id)).toEqual(ids);
      expect(client.events.map((e) => JSON.parse(e.data).i)).toEqual([...Array(50).keys()]);
    }
    expect(a.hub.lastId).toBe(ids[49]);
    expect(a.hub.metrics.published + b.hub.metrics.published).toBe(50);
    const direct = new Redis(live.redis.url);
    expect((await direct.xrange(stream, '-', '+')).map(([id]) => id)).toEqual(ids);
    direct.disconnect();
  });

  for (const bufferSize of [100, 0]) {
    it(`a client moving to another instance with Last-Event-ID gets exactly what it missed (bufferSize ${bufferSize})`, async () => {
      const stream = key();
      const a = await instance(stream);
      const b = await instance(stream, { bufferSize });
      const first = await a.connect();
      await until(() => a.hub.size === 1);
      for (let i = 0; i < 5; i++) await a.hub.publish('n', i);
      await first.waitFor(5);
      first.close();
      await until(() => a.hub.size === 0);
      for (let i = 5; i < 12; i++) await (i % 2 ? a : b).hub.publish('n', i);
      await until(() => b.hub.metrics.clients === 0 && b.hub.lastId === a.hub.lastId);
      const moved = await b.connect({ 'last-event-id': first.events[4]!.id! });
      await moved.waitFor(7);
      await b.hub.publish('n', 12);
      await moved.waitFor(8);
      const seen = [...first.events, ...moved.events];
      expect(seen.map((e) => Number(e.data))).toEqual([...Array(13).keys()]);
      expect(seen.some((e) => e.event === HUB_RESET_EVENT)).toBe(false);
    });
  }

  it('answers ids that are not in the stream with keel:reset at the current id', async () => {
    const stream = key();
    const a = await instance(stream, { maxLen: 1, bufferSize: 0 });
    const ids: string[] = [];
    // MAXLEN ~ trims whole nodes (100 entries each): after 300 the first ones are gone.
    for (let i = 0; i < 300; i++) ids.push(await a.hub.publish('n', i));
    await until(() => a.hub.lastId === ids[299]);
    for (const lastEventId of [ids[0]!, 'garbage', '1-0', '99999999999999-0', '5']) {
      const client = await a.connect({ 'last-event-id': lastEventId });
      await client.waitFor(1);
      expect(client.events[0]).toEqual({
        id: ids[299],
        event: HUB_RESET_EVENT,
        data: JSON.stringify({ lastEventId }),
      });
    }
    expect(a.hub.metrics.resets).toBe(5);
  });

  it('replay respects topics, and a replay over the buffer cap is a reset', async () => {
    const stream = key();
    const a = await instance(stream, { bufferSize: 0 });
    const first = await a.connect({}, '?topics=t1');
    await until(() => a.hub.size === 1);
    await a.hub.publish('n', 'start');
    await first.waitFor(1);
    first.close();
    await a.hub.publish('n', 'for t1', { topic: 't1' });
    await a.hub.publish('n', 'for t2', { topic: 't2' });
    const all = await a.hub.publish('n', 'all');
    await until(() => a.hub.metrics.clients === 0 && a.hub.lastId === all);
    const t1 = await a.connect({ 'last-event-id': first.events[0]!.id! }, '?topics=t1');
    await t1.waitFor(2);
    expect(t1.events.map((e) => e.data)).toEqual(['for t1', 'all']);
    const t2 = await a.connect({ 'last-event-id': first.events[0]!.id! }, '?topics=t2');
    await t2.waitFor(2);
    expect(t2.events.map((e) => e.data)).toEqual(['for t2', 'all']);
    // More than sse.maxBufferedBytes (1 MiB) missed.
    let big = '';
    for (let i = 0; i < 3; i++) big = await a.hub.publish('big', 'x'.repeat(400 * 1024));
    await until(() => a.hub.lastId === big); // delivered here: the replay reaches it
    const behind = await a.connect({ 'last-event-id': first.events[0]!.id! });
    await behind.waitFor(1);
    expect(behind.events[0]).toMatchObject({ event: HUB_RESET_EVENT, id: a.hub.lastId });
  });

  it('a client passed in is used and left open; bad options throw', async () => {
    const client = new Redis(live.redis.url, { enableOfflineQueue: false, lazyConnect: true });
    await client.connect();
    const hub = createEventHub({ store: redisStreams({ client, stream: key() }) });
    await hub.ready;
    expect(await hub.publish('n', 1)).toMatch(STREAM_ID);
    await hub.close();
    expect(client.status).toBe('ready');
    expect(await client.ping()).toBe('PONG');
    client.disconnect();
    expect(() => redisStreams({ maxLen: 0 })).toThrow(
      /`maxLen` must be a positive integer number of entries, got 0/,
    );
    expect(() => redisStreams({ stream: '' })).toThrow(RangeError);
    expect(() => redisStreams({ client: {} as never })).toThrow(/ioredis/);
    expect(() => redisStreams({ reconnect: { initialDelay: 100, maxDelay: 10 } })).toThrow(
      RangeError,
    );
  });
});

describe('redisStreams store while Redis is unreachable', () => {
  it('publish rejects with HubPublishError, clients stay, nothing published after recovery is lost', async () => {
    const server = await startRedis({ persistent: true });
    try {
      const stream = key();
      const make = async () => {
        const app = createApp();
        const errors: unknown[] = [];
        const hub = createEventHub({
          store: redisStreams({
            url: server.url,
            stream,
            reconnect: { initialDelay: 20, maxDelay: 200 },
            onError: (e) => errors.push(e),
          }),
        });
        live.trackApp(app, hub);
        app.get('/events', (ctx) => hub.connect(ctx));
        const { port } = await start(app);
        await hub.ready;
        return { hub, port, errors };
      };
      const a = await make();
      const b = await make();
      const onA = await sse(a.port, '/events');
      const onB = await sse(b.port, '/events');
      live.track(onA);
      live.track(onB);
      await until(() => a.hub.size === 1 && b.hub.size === 1);
      await a.hub.publish('n', 'before');
      await onB.waitFor(1);

      await server.stop();
      const error = await a.hub.publish('n', 'during').catch((e: unknown) => e);
      expect(error).toBeInstanceOf(HubPublishError);
      expect(error).toMatchObject({ reason: 'store', status: 503, event: 'n' });
      await until(() => b.errors.length > 0);
      expect(a.hub.size + b.hub.size).toBe(2); // nobody was disconnected

      await server.start();
      // Publish as soon as each instance's connection is back: until then it refuses.
      await publishWhenUp(a.hub, 'after');
      await publishWhenUp(b.hub, 'after 2');
      await onA.waitFor(3);
      await onB.waitFor(3);
      for (const client of [onA, onB]) {
        expect(client.events.map((e) => e.data)).toEqual(['before', 'after', 'after 2']);
      }
    } finally {
      await server.dispose();
    }
  }, 30_000);

  it('Redis restarted without its data: clients get keel:reset, then live events', async () => {
    const server = await startRedis({ persistent: false });
    try {
      const stream = key();
      const app = createApp();
      const hub = createEventHub({
        store: redisStreams({
          url: server.url,
          stream,
          reconnect: { initialDelay: 20, maxDelay: 200 },
          onError: () => {},
        }),
      });
      live.trackApp(app, hub);
      app.get('/events', (ctx) => hub.connect(ctx));
      const { port } = await start(app);
      await hub.ready;
      const client = await sse(port, '/events');
      live.track(client);
      await until(() => hub.size === 1);
      await hub.publish('n', 'one');
      await client.waitFor(1);
      await server.stop();
      await server.start();
      await client.waitFor(2);
      expect(hub.metrics.resets).toBe(1);
      expect(client.events[1]).toEqual({
        id: '0-0',
        event: HUB_RESET_EVENT,
        data: JSON.stringify({ lastEventId: null }),
      });
      await publishWhenUp(hub, 'two');
      await client.waitFor(3);
      expect(client.events[2]!.data).toBe('two');
    } finally {
      await server.dispose();
    }
  }, 30_000);
});
