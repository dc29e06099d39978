import { request } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { appStats } from '../src/app';
import {
  type App,
  createApp,
  createEventHub,
  type EventHubOptions,
  HUB_INVALIDATE_EVENT,
  HUB_RESET_EVENT,
  HubPublishError,
  type HubStore,
  isHttpException,
  isHubPublishError,
  memoryStore,
  type SlowClientInfo,
  type StoredEvent,
  type StoreSink,
} from '../src/index';
import { ManualClock, sse, start, until } from './helpers';

const apps: App[] = [];
afterEach(async () => {
  await Promise.all(apps.splice(0).map((a) => a.close()));
});

function setup(
  bufferSize = 5,
  sseOptions: { maxBufferedBytes?: number } = {},
  hubOptions: EventHubOptions = {},
) {
  const clock = new ManualClock();
  const app = createApp({ clock, sse: sseOptions });
  apps.push(app);
  const hub = createEventHub({ bufferSize, ...hubOptions });
  app.get('/events', (ctx) => {
    const topics = ctx.query('topics');
    return hub.connect(ctx, { topics: topics ? topics.split(',') : [] });
  });
  app.post('/publish', async (ctx) => {
    const id = await hub.publish('update', ctx.body);
    return ctx.json({ id });
  });
  return { app, hub, clock };
}

/** The sequence number of an in-memory id (`<epoch>-<n>`). */
const seq = (id: string | undefined) => Number(id?.split('-')[1]);
const seqs = (events: { id?: string }[]) => events.map((e) => seq(e.id));

describe('event hub (in-memory store)', () => {
  it('fans out published events with increasing ids to every client', async () => {
    const { app, hub } = setup();
    const { port } = await start(app);
    const a = await sse(port, '/events');
    const b = await sse(port, '/events');
    await until(() => hub.size === 2);
    const { id } = (
      await app.inject({ method: 'POST', url: '/publish', body: { v: 1 } })
    ).json() as { id: string };
    expect(id).toMatch(/^[0-9a-f]{8}-1$/);
    expect(await hub.publish('update', 'two\nlines')).toBe(id.replace(/-1$/, '-2'));
    await a.waitFor(2);
    await b.waitFor(2);
    for (const client of [a, b]) {
      expect(client.events).toEqual([
        { id, event: 'update', data: '{"v":1}' },
        { id: id.replace(/-1$/, '-2'), event: 'update', data: 'two\nlines' },
      ]);
    }
    a.close();
    await until(() => hub.size === 1);
    b.close();
    await until(() => hub.size === 0 && appStats(app).inflight === 0);
    expect(seq(hub.lastId)).toBe(2);
    expect(hub.metrics).toEqual({
      clients: 0,
      published: 2,
      delivered: 4,
      resets: 0,
      slowDrops: 0,
      replayFailures: 0,
      replaying: 0,
      replaysQueued: 0,
    });
  });

  it('replays missed events after a reconnect with Last-Event-ID', async () => {
    const { app, hub } = setup(5);
    const { port } = await start(app);
    const first = await sse(port, '/events');
    await until(() => hub.size === 1);
    await hub.publish('update', 'e1');
    await hub.publish('update', 'e2');
    await first.waitFor(2);
    first.close();
    await until(() => hub.size === 0);
    await hub.publish('update', 'e3');
    await hub.publish('update', 'e4');
    const again = await sse(port, '/events', { 'last-event-id': first.events.at(-1)!.id! });
    await again.waitFor(2);
    expect(again.events.map((e) => [seq(e.id), e.data])).toEqual([
      [3, 'e3'],
      [4, 'e4'],
    ]);
    await hub.publish('update', 'e5');
    await again.waitFor(3);
    expect(again.events[2]).toMatchObject({ event: 'update', data: 'e5' });
    // Up to date: nothing replayed.
    const current = await sse(port, '/events', { 'last-event-id': hub.lastId });
    await until(() => hub.size === 2);
    await hub.publish('update', 'e6');
    await current.waitFor(1);
    expect(seqs(current.events)).toEqual([6]);
    again.close();
    current.close();
  });

  it('answers an id older than the buffer, foreign or garbage with keel:reset at the current id', async () => {
    const { app, hub } = setup(3);
    const { port } = await start(app);
    const ids: string[] = [];
    for (let i = 1; i <= 10; i++) ids.push(await hub.publish('update', i));
    const late = await sse(port, '/events', { 'last-event-id': ids[1]! });
    await late.waitFor(1);
    expect(late.events[0]).toEqual({
      id: ids[9],
      event: HUB_RESET_EVENT,
      data: JSON.stringify({ lastEventId: ids[1] }),
    });
    // Nothing follows the reset: the client refetches, then live events follow.
    await hub.publish('update', 11);
    await late.waitFor(2);
    expect(seqs(late.events)).toEqual([10, 11]);
    // A plain number (the old id format), garbage, or an id from the future.
    for (const id of ['8', 'abc', ids[9]!.replace(/-10$/, '-99')]) {
      const client = await sse(port, '/events', { 'last-event-id': id });
      await client.waitFor(1);
      expect(client.events[0]).toMatchObject({ event: HUB_RESET_EVENT, id: hub.lastId });
      client.close();
    }
    // Exactly at the buffer edge: no reset.
    const edge = await sse(port, '/events', { 'last-event-id': ids[7]! });
    await edge.waitFor(3);
    expect(seqs(edge.events)).toEqual([9, 10, 11]);
    for (const c of [late, edge]) c.close();
    expect(hub.metrics.resets).toBe(4);
  });

  it('a restarted process (a new hub) answers the previous ids with keel:reset', async () => {
    const { app, hub } = setup(100);
    const { port } = await start(app);
    const before = await sse(port, '/events');
    await until(() => hub.size === 1);
    await hub.publish('update', 'a');
    await hub.publish('update', 'b');
    await before.waitFor(2);
    before.close();
    // The restarted process: a fresh hub whose counter has moved past the old client's id.
    const { app: app2, hub: hub2 } = setup(100);
    for (let i = 0; i < 5; i++) await hub2.publish('update', `new ${i}`);
    const { port: port2 } = await start(app2);
    const after = await sse(port2, '/events', { 'last-event-id': before.events[1]!.id! });
    await after.waitFor(1);
    expect(after.events[0]).toMatchObject({ event: HUB_RESET_EVENT, id: hub2.lastId });
    expect(after.events).toHaveLength(1);
    after.close();
  });

  it('a replay larger than the client buffer cap sends keel:reset and keeps the client', async () => {
    const { app, hub } = setup(100, { maxBufferedBytes: 64 * 1024 });
    const { port } = await start(app);
    const first = await sse(port, '/events');
    await until(() => hub.size === 1);
    await hub.publish('update', 'small');
    await first.waitFor(1);
    first.close();
    await until(() => hub.size === 0);
    const big = 'x'.repeat(16 * 1024);
    for (let i = 0; i < 8; i++) await hub.publish('update', big); // 128 KiB missed
    const again = await sse(port, '/events', { 'last-event-id': first.events[0]!.id! });
    await again.waitFor(1);
    expect(again.events[0]).toMatchObject({ event: HUB_RESET_EVENT, id: hub.lastId });
    await until(() => hub.size === 1);
    await hub.publish('update', 'live');
    await again.waitFor(2);
    expect(again.events[1]!.data).toBe('live');
    expect(hub.metrics.slowDrops).toBe(0);
    again.close();
  });

  it('a burst published in one tick does not drop clients that read', async () => {
    const { app, hub } = setup(30, { maxBufferedBytes: 256 * 1024 });
    const { port } = await start(app);
    const clients = [await sse(port, '/events'), await sse(port, '/events')];
    await until(() => hub.size === 2);
    const payload = 'x'.repeat(16 * 1024);
    // 480 KiB written to each client before Node's next tick uncorks the sockets: over the cap,
    // within the twice-the-cap a single turn may queue.
    for (let i = 0; i < 30; i++) void hub.publish('update', payload);
    for (const client of clients) await client.waitFor(30);
    expect(hub.size).toBe(2);
    expect(hub.metrics.slowDrops).toBe(0);
    for (const client of clients) client.close();
  });

  it('drops a client that stops reading, counts it and reports it', async () => {
    const slow: SlowClientInfo[] = [];
    const { app, hub, clock } = setup(
      10,
      { maxBufferedBytes: 256 * 1024 },
      { onSlowClient: (info) => slow.push(info) },
    );
    const { port } = await start(app);
    const fast = await sse(port, '/events');
    // A client that never reads: its socket buffers fill, then the server's queue grows.
    const slowReq = request({
      host: '127.0.0.1',
      port,
      path: '/events?topics=team-1',
      headers: { 'x-request-id': 'slow-one' },
      agent: false,
    });
    slowReq.on('response', (res) => res.pause());
    slowReq.on('error', () => {});
    slowReq.end();
    await until(() => hub.size === 2);
    const payload = 'x'.repeat(64 * 1024);
    for (let i = 0; i < 400 && hub.size === 2; i++) {
      await hub.publish('update', payload);
      await new Promise((r) => setImmediate(r));
    }
    await until(() => hub.size === 1);
    expect(fast.events.length).toBeGreaterThan(0);
    expect(hub.metrics.slowDrops).toBe(1);
    expect(slow).toEqual([{ requestId: 'slow-one', topics: ['team-1'] }]);
    fast.close();
    slowReq.destroy();
    await until(() => appStats(app).inflight === 0);
    expect(clock.active).toBe(0);
  }, 30_000);

  it('close() ends every stream, refuses later clients, and publishes reject', async () => {
    const { app, hub } = setup();
    const { port } = await start(app);
    const a = await sse(port, '/events');
    await until(() => hub.size === 1);
    await hub.close();
    await a.ended;
    expect(hub.size).toBe(0);
    const b = await sse(port, '/events');
    await b.ended;
    expect(hub.size).toBe(0);
    const error = await hub.publish('update', 1).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(HubPublishError);
    expect(isHubPublishError(error)).toBe(true);
    expect(isHttpException(error)).toBe(true);
    expect(error).toMatchObject({ status: 503, reason: 'closed', event: 'update' });
    await until(() => appStats(app).inflight === 0);
  });

  it('rejects bad event names, topics and options at once, without consuming an id', async () => {
    const hub = createEventHub();
    expect(() => hub.publish('a\nb', 1)).toThrow(RangeError);
    expect(() => hub.publish(42 as never, 1)).toThrow(/`event` must be an SSE event name, got 42/);
    expect(() => hub.publish('keel:reset', 1)).toThrow(/not starting with "keel:"/);
    expect(() => hub.publish('x', 1, { topic: '' })).toThrow(/`topic` must be a non-empty/);
    expect(() => hub.publish('x', 1, { topic: 7 as never })).toThrow(TypeError);
    expect(seq(await hub.publish('ok', 1))).toBe(1);
    expect(() => createEventHub({ bufferSize: -1 })).toThrow(RangeError);
    expect(() => memoryStore({ bufferSize: 1.5 })).toThrow(/`bufferSize` must be/);
    expect(() => createEventHub({ onSlowClient: 'x' as never })).toThrow(TypeError);
  });
});

describe('topics', () => {
  it('a client gets broadcasts and the topics it was connected with, live and replayed', async () => {
    const { app, hub } = setup(100);
    const { port } = await start(app);
    const none = await sse(port, '/events');
    const team1 = await sse(port, '/events?topics=team-1');
    const both = await sse(port, '/events?topics=team-1,team-2');
    await until(() => hub.size === 3);
    await hub.publish('all', 'a');
    await hub.publish('t1', 'b', { topic: 'team-1' });
    await hub.publish('t2', 'c', { topic: 'team-2' });
    await hub.publish('t3', 'd', { topic: 'team-3' });
    await both.waitFor(3);
    await team1.waitFor(2);
    await none.waitFor(1);
    expect(none.events.map((e) => e.data)).toEqual(['a']);
    expect(team1.events.map((e) => e.data)).toEqual(['a', 'b']);
    expect(both.events.map((e) => e.data)).toEqual(['a', 'b', 'c']);

    // Replay: a team-2 client resuming from the first event gets only what it may see.
    const resumed = await sse(port, '/events?topics=team-2', {
      'last-event-id': none.events[0]!.id!,
    });
    await resumed.waitFor(1);
    await hub.publish('all', 'e');
    await resumed.waitFor(2);
    expect(resumed.events.map((e) => e.data)).toEqual(['c', 'e']);
    expect(() => hub.connect({} as never, { topics: 'team-1' as never })).toThrow(
      /`topics` must be an array of strings, got "team-1"/,
    );
    for (const c of [none, team1, both, resumed]) c.close();
    await until(() => hub.size === 0);
  });
});

describe('hub.invalidate', () => {
  it('publishes keel:invalidate with the target, the topic, and the source of the change', async () => {
    const { app, hub } = setup(100);
    app.post('/todos', async (ctx) => {
      await hub.invalidate('/todos', { source: ctx });
      return ctx.status(201).json({});
    });
    const { port } = await start(app);
    const all = await sse(port, '/events');
    const team = await sse(port, '/events?topics=team-1');
    await until(() => hub.size === 2);
    await app.inject({ method: 'POST', url: '/todos', headers: { 'x-keel-source': 'tab_1-a' } });
    await app.inject({ method: 'POST', url: '/todos', headers: { 'x-keel-source': 'bad id!' } });
    await hub.invalidate(['todo-list', 'stats'], { topic: 'team-1' });
    await hub.invalidate('/teams/1', { topic: 'team-1', source: 'job-7' });
    await team.waitFor(4);
    await all.waitFor(2);
    expect(all.events.map((e) => [e.event, JSON.parse(e.data)])).toEqual([
      [HUB_INVALIDATE_EVENT, { target: '/todos', source: 'tab_1-a' }],
      [HUB_INVALIDATE_EVENT, { target: '/todos' }],
    ]);
    expect(team.events.slice(2).map((e) => JSON.parse(e.data))).toEqual([
      { target: ['todo-list', 'stats'] },
      { target: '/teams/1', source: 'job-7' },
    ]);
    all.close();
    team.close();
  });

  it('rejects targets that cannot mean the same on the client, naming the option', () => {
    const hub = createEventHub();
    expect(() => hub.invalidate((() => true) as never)).toThrow(
      /`target` must be a path or an array of tags \(a predicate cannot be sent\), got a function/,
    );
    expect(() => hub.invalidate({ path: '/x' } as never)).toThrow(TypeError);
    expect(() => hub.invalidate(null as never)).toThrow(/got null/);
    expect(() => hub.invalidate(['a', 1] as never)).toThrow(
      /`target\[\]` must be a tag \(a string\), got 1/,
    );
    expect(() => hub.invalidate('/x', { source: 'has space' })).toThrow(RangeError);
    expect(() => hub.invalidate('/x', { source: 5 as never })).toThrow(TypeError);
    expect(hub.metrics.published).toBe(0);
  });
});

/**
 * A store of another instance's view: the in-memory store, with delivery to this hub held back
 * until `release()` (this instance's reader lags), and opening held until `open()`.
 */
function laggingStore() {
  const inner = memoryStore();
  let sink: StoreSink | null = null;
  const held: StoredEvent[] = [];
  let lagging = false;
  let openGate!: () => void;
  const gate = new Promise<void>((resolve) => {
    openGate = resolve;
  });
  const store: HubStore = {
    open(target) {
      sink = target;
      const head = inner.open({
        deliver: (event) => (lagging ? held.push(event) : sink?.deliver(event)),
        reset: (id) => sink?.reset(id),
      }) as string;
      return gate.then(() => head);
    },
    append: (event, data, topic) => inner.append(event, data, topic),
    replay(request) {
      if (seq(request.after) > seq(request.upTo)) {
        const through = seq(request.after);
        return { kind: 'ahead', has: (id) => seq(id) <= through };
      }
      return inner.replay(request);
    },
    close: () => inner.close(),
  };
  return {
    store,
    open: openGate,
    lag: () => {
      lagging = true;
    },
    release() {
      lagging = false;
      for (const event of held.splice(0)) sink?.deliver(event);
    },
  };
}

describe('a store that opens late or lags behind another instance', () => {
  it('a client connected before the store opened gets keel:reset at the opening id', async () => {
    const lagging = laggingStore();
    const { app, hub } = setup(100, {}, { store: lagging.store });
    const { port } = await start(app);
    const early = await sse(port, '/events');
    await until(() => hub.size === 1);
    expect(hub.lastId).toBe('');
    lagging.open();
    await hub.ready;
    await early.waitFor(1);
    expect(early.events[0]).toMatchObject({ event: HUB_RESET_EVENT, id: hub.lastId });
    await hub.publish('update', 'live');
    await early.waitFor(2);
    expect(early.events[1]!.data).toBe('live');
    early.close();
  });

  it('a client that already has events this hub has not delivered yet skips them', async () => {
    const lagging = laggingStore();
    lagging.open();
    const { app, hub } = setup(100, {}, { store: lagging.store });
    await hub.ready;
    const { port } = await start(app);
    const ids: string[] = [];
    for (let i = 1; i <= 3; i++) ids.push(await hub.publish('update', i));
    lagging.lag();
    for (let i = 4; i <= 6; i++) ids.push(await hub.publish('update', i));
    expect(hub.lastId).toBe(ids[2]);
    // It saw up to event 5 on a faster instance.
    const client = await sse(port, '/events', { 'last-event-id': ids[4]! });
    await until(() => hub.size === 1);
    lagging.release();
    await hub.publish('update', 7);
    await client.waitFor(2);
    expect(client.events.map((e) => e.data)).toEqual(['6', '7']);
    client.close();
  });
});
