// Issue #13: the event hub, in memory and on Redis Streams (a real redis-server from
// redis-helpers.ts), topics, Last-Event-ID replay, keel:reset, invalidation on the wire.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  createApp,
  createEventHub,
  type EventHub,
  HUB_INVALIDATE_EVENT,
  HUB_RESET_EVENT,
  isHubPublishError,
  SOURCE_HEADER,
} from '../../src/index';
import { redisStreams } from '../../src/redis/index';
import { type RedisServer, startRedis } from '../redis-helpers';
import { call, openSse, type SseClient, serve, ticks } from './helpers';

const hubs: EventHub[] = [];
const clients: SseClient[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) c.close();
  await Promise.all(hubs.splice(0).map((h) => h.close()));
});

async function instance(hub: EventHub) {
  hubs.push(hub);
  const app = createApp({ sse: { heartbeatMs: 0 } });
  app.get('/events', (ctx) => {
    const topics = ctx.query('topics');
    return hub.connect(ctx, { topics: topics ? topics.split(',') : [] });
  });
  app.post('/todos', async (ctx) => {
    await hub.invalidate('/todos', { source: ctx });
    return ctx.status(201).json({});
  });
  await hub.ready;
  const port = await serve(app);
  const connect = async (query = '', headers: Record<string, string> = {}) => {
    const c = await openSse(port, `/events${query}`, headers);
    clients.push(c);
    return c;
  };
  return { app, hub, port, connect };
}

describe('issue #13, in-memory store', () => {
  it('ids carry an epoch; a reconnect with Last-Event-ID gets exactly the missed events', async () => {
    const { hub, connect } = await instance(createEventHub());
    const a = await connect();
    const id1 = await hub.publish('e', { n: 1 });
    await a.waitFor(1);
    expect(a.events[0]).toMatchObject({ event: 'e', id: id1 });
    expect(id1).toMatch(/^.+-1$/);
    a.close();
    await hub.publish('e', { n: 2 });
    await hub.publish('e', { n: 3 });
    const b = await connect('', { 'last-event-id': id1 });
    const got = await b.waitFor(2);
    expect(got.map((e) => JSON.parse(e.data).n)).toEqual([2, 3]);
  });

  it('a foreign or pre-restart Last-Event-ID gets keel:reset (data echoes the id), then live events', async () => {
    const { hub, connect } = await instance(createEventHub());
    await hub.publish('e', 1);
    const c = await connect('', { 'last-event-id': 'otherepoch-5' });
    const [reset] = await c.waitFor(1);
    expect(reset?.event).toBe(HUB_RESET_EVENT);
    expect(JSON.parse(reset?.data ?? '')).toEqual({ lastEventId: 'otherepoch-5' });
    await hub.publish('e', 2);
    expect((await c.waitFor(2))[1]?.data).toBe('2');
  });

  it('a replay larger than the client buffer cap sends keel:reset rather than dropping the client', async () => {
    const hub = createEventHub({ bufferSize: 1000 });
    hubs.push(hub);
    const app = createApp({ sse: { heartbeatMs: 0, maxBufferedBytes: 10_000 } });
    app.get('/events', (ctx) => hub.connect(ctx));
    const port = await serve(app);
    const first = await hub.publish('e', 'x');
    for (let i = 0; i < 50; i++) await hub.publish('e', 'y'.repeat(1000));
    const c = await openSse(port, '/events', { 'last-event-id': first });
    clients.push(c);
    const [reset] = await c.waitFor(1);
    expect(reset?.event).toBe(HUB_RESET_EVENT);
    await hub.publish('e', 'live');
    expect((await c.waitFor(2))[1]?.data).toBe('live');
  });

  it('a burst published in one tick does not drop fast clients', async () => {
    const slow: unknown[] = [];
    const hub = createEventHub({ onSlowClient: (info) => slow.push(info) });
    hubs.push(hub);
    const app = createApp({ sse: { heartbeatMs: 0 } }); // 1 MiB cap: the burst is 0.6 MiB
    app.get('/events', (ctx) => hub.connect(ctx));
    const port = await serve(app);
    const c = await openSse(port, '/events');
    clients.push(c);
    await ticks();
    const chunk = 'z'.repeat(6000);
    await Promise.all(Array.from({ length: 100 }, () => hub.publish('e', chunk)));
    await c.waitFor(100);
    expect(slow).toEqual([]);
    expect(hub.metrics.slowDrops).toBe(0);
  });

  it('topics: a client gets its topics and untopiced broadcasts, nothing else; replay respects topics', async () => {
    const { hub, connect } = await instance(createEventHub());
    const red = await connect('?topics=team:red');
    const start = await hub.publish('all', 0);
    await hub.publish('t', 'blue', { topic: 'team:blue' });
    await hub.publish('t', 'red', { topic: 'team:red' });
    await hub.publish('all', 1);
    const got = await red.waitFor(3);
    expect(got.map((e) => e.data)).toEqual(['0', 'red', '1']);
    const again = await connect('?topics=team:red', { 'last-event-id': start });
    expect((await again.waitFor(2)).map((e) => e.data)).toEqual(['red', '1']);
  });

  it('hub.invalidate(target, {topic}) publishes keel:invalidate with {"target": ...}; the source comes from the request header', async () => {
    const { hub, port, connect } = await instance(createEventHub());
    const c = await connect();
    await hub.invalidate(['todos', 'stats']);
    expect(
      await call(port, {
        method: 'POST',
        path: '/todos',
        headers: { [SOURCE_HEADER]: 'tab_1' },
      }).then((r) => r.status),
    ).toBe(201);
    const [tags, path] = await c.waitFor(2);
    expect(tags?.event).toBe(HUB_INVALIDATE_EVENT);
    expect(JSON.parse(tags?.data ?? '')).toEqual({ target: ['todos', 'stats'] });
    expect(JSON.parse(path?.data ?? '')).toEqual({ target: '/todos', source: 'tab_1' });
    expect(() => hub.invalidate(5 as unknown as string)).toThrow(TypeError);
  });
});

describe('issue #13: hub.invalidate with a topic', () => {
  it('reaches the clients of that topic only', async () => {
    const { hub, connect } = await instance(createEventHub());
    const red = await connect('?topics=team:red');
    const blue = await connect('?topics=team:blue');
    await hub.invalidate('/todos', { topic: 'team:red' });
    await hub.publish('fence', 1);
    const [inv] = await red.waitFor(2);
    expect(inv?.event).toBe(HUB_INVALIDATE_EVENT);
    expect(JSON.parse(inv?.data ?? '')).toEqual({ target: '/todos' });
    expect((await blue.waitFor(1)).map((e) => e.event)).toEqual(['fence']);
  });
});

describe('issue #13, Redis Streams store (real redis-server)', () => {
  let redis: RedisServer;
  beforeAll(async () => {
    redis = await startRedis();
  }, 30_000);
  afterAll(async () => {
    await redis?.dispose();
  });
  const stream = () => `bb:${Math.random().toString(36).slice(2)}`;

  it('a client on instance B receives what instance A publishes; the SSE id is the stream id', async () => {
    const key = stream();
    const A = await instance(
      createEventHub({ store: redisStreams({ url: redis.url, stream: key }) }),
    );
    const B = await instance(
      createEventHub({ store: redisStreams({ url: redis.url, stream: key }) }),
    );
    const onB = await B.connect();
    const id = await A.hub.publish('todo-added', { id: 1 });
    expect(id).toMatch(/^\d+-\d+$/);
    const [ev] = await onB.waitFor(1);
    expect(ev).toEqual({ event: 'todo-added', data: '{"id":1}', id });
  });

  it('a client moved from A to B with its Last-Event-ID ends with a gap-free id sequence', async () => {
    const key = stream();
    const A = await instance(
      createEventHub({ store: redisStreams({ url: redis.url, stream: key }) }),
    );
    const B = await instance(
      createEventHub({ store: redisStreams({ url: redis.url, stream: key }) }),
    );
    const onA = await A.connect();
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push(await A.hub.publish('e', i));
    await onA.waitFor(3);
    onA.close();
    for (let i = 3; i < 6; i++) ids.push(await B.hub.publish('e', i));
    const onB = await B.connect('', { 'last-event-id': ids[2] ?? '' });
    const got = await onB.waitFor(3);
    expect([...onA.events, ...got].map((e) => e.id)).toEqual(ids);
    expect(got.map((e) => e.data)).toEqual(['3', '4', '5']);
  });

  it('an id that is not of this stream gets keel:reset', async () => {
    const A = await instance(
      createEventHub({ store: redisStreams({ url: redis.url, stream: stream() }) }),
    );
    await A.hub.publish('e', 1);
    const c = await A.connect('', { 'last-event-id': 'garbage' });
    expect((await c.waitFor(1))[0]?.event).toBe(HUB_RESET_EVENT);
  });

  it('Redis down: publish rejects with a typed error, clients stay connected, and what is published after recovery is delivered', async () => {
    const own = await startRedis();
    try {
      const A = await instance(
        createEventHub({
          store: redisStreams({
            url: own.url,
            stream: stream(),
            reconnect: { initialDelay: 20, maxDelay: 100 },
          }),
        }),
      );
      const c = await A.connect();
      await A.hub.publish('e', 'before');
      await c.waitFor(1);
      await own.stop();
      let err: unknown;
      for (let i = 0; i < 50 && err === undefined; i++) {
        try {
          await A.hub.publish('e', 'lost');
          await new Promise((r) => setTimeout(r, 20));
        } catch (e) {
          err = e;
        }
      }
      expect(isHubPublishError(err)).toBe(true);
      expect((err as { status: number }).status).toBe(503);
      await own.start();
      let delivered = false;
      for (let i = 0; i < 200 && !delivered; i++) {
        try {
          await A.hub.publish('e', 'after');
          delivered = true;
        } catch {
          await new Promise((r) => setTimeout(r, 25));
        }
      }
      expect(delivered).toBe(true);
      // Redis restarted without its data (no persistence): README says clients get keel:reset
      // (lastEventId null), then the entries after it.
      const events = await c.waitFor(3);
      expect(events.map((e) => e.event)).toEqual(['e', HUB_RESET_EVENT, 'e']);
      expect(events.map((e) => e.data)).toContain('after');
      expect(events.map((e) => e.data)).not.toContain('lost');
    } finally {
      for (const c of clients.splice(0)) c.close();
      await Promise.all(hubs.splice(0).map((h) => h.close()));
      await own.dispose();
    }
  }, 30_000);
});
