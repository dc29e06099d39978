// A reconnect storm: each client reconnecting with an old `Last-Event-ID` that the store must
// read (Redis: XRANGE, up to `sse.maxBufferedBytes` of events and a page of entries) held that
// much at once, and every one ran at once: N clients, N replays in flight, N x 1 MiB held and N
// XRANGEs on Redis. The hub now runs at most `maxConcurrentReplays` store replays at a time; the
// others wait in a FIFO queue (a client that leaves is dropped from it at once, a failed replay
// frees its slot, `hub.close()` leaves nothing waiting). Counted in replays in flight, never in
// time.
import { afterEach, describe, expect, it } from 'vitest';
import { createApp, createEventHub, type EventHub, type HubStore, memoryStore } from '../src/index';
import { redisStreams } from '../src/redis/index';
import { guardProcess, within } from './adversarial/harness';
import { type SseClient, sse, trackApps, until } from './helpers';
import { heldReplays, hubApp } from './hub-fixture';
import { holdingProxy, streamKey as key, redisInstances } from './redis-helpers';

guardProcess();
const make = trackApps();
const live = redisInstances();
/** Clients of the memory-store tests, closed after each test. */
const opened: SseClient[] = [];
afterEach(() => {
  for (const client of opened.splice(0)) client.close();
});

/** The store's replays still pending (an answer not yet handed back), and their peak. */
function inFlight(inner: HubStore) {
  const count = { now: 0, peak: 0, calls: 0 };
  const store: HubStore = {
    open: (target) => inner.open(target),
    append: (event, data, topic) => inner.append(event, data, topic),
    replayAtOnce: inner.replayAtOnce?.bind(inner),
    replay(request) {
      count.calls++;
      const answer = inner.replay(request);
      if (!(answer instanceof Promise)) return answer;
      count.now++;
      count.peak = Math.max(count.peak, count.now);
      return answer.finally(() => {
        count.now--;
      });
    },
    close: () => inner.close(),
  };
  return { store, count };
}

/**
 * A hub (`bufferSize` recent events, `maxConcurrentReplays`) on the file's redis-server through a
 * proxy that can hold the answers to its replays (`proxy.hold()`), its replays in flight counted;
 * `ids`: the 20 events published and delivered first. The caller closes the proxy.
 */
async function proxiedHub(bufferSize: number, maxConcurrentReplays: number | undefined) {
  const proxy = await holdingProxy(live.redis.url, 'others');
  const app = createApp();
  const { store, count } = inFlight(
    redisStreams({ url: proxy.url, stream: key(), bufferSize, commandTimeout: 60_000 }),
  );
  const { hub, port } = await hubApp(app, store, { maxConcurrentReplays });
  live.trackApp(app, hub);
  await hub.ready;
  const ids: string[] = [];
  for (let i = 0; i < 20; i++) ids.push(await hub.publish('n', `e${i}`));
  await until(() => hub.lastId === ids.at(-1));
  return { proxy, hub, port, count, ids };
}

describe('redis: 200 clients reconnecting at once with an old id', () => {
  async function storm(maxConcurrentReplays: number | undefined, cap: number) {
    // No instance buffer: every replay reads the stream (XRANGE).
    const { proxy, hub, port, count, ids } = await proxiedHub(0, maxConcurrentReplays);
    try {
      // Redis's answers to the replays held until every client is attached: the replays the
      // hub started are all in flight at once.
      proxy.hold();
      const clients = await Promise.all(
        Array.from({ length: 200 }, () => sse(port, '/events', { 'last-event-id': ids[0]! })),
      );
      for (const client of clients) live.track(client);
      await until(() => hub.size === 200);
      expect(count.now).toBe(cap);
      expect(hub.metrics).toMatchObject({ replaying: cap, replaysQueued: 200 - cap });
      proxy.release();
      await Promise.all(clients.map((c) => c.waitFor(19)));
      // Each one exactly what it missed, in order.
      for (const client of clients) {
        expect(client.events.map((e) => e.id)).toEqual(ids.slice(1));
      }
      expect(count.calls).toBe(200);
      expect(count.now).toBe(0);
      expect(count.peak).toBe(cap);
      expect(hub.metrics).toMatchObject({ replaying: 0, replaysQueued: 0, replayFailures: 0 });
      // Live delivery goes on for all of them.
      const next = await hub.publish('n', 'live');
      await Promise.all(clients.map((c) => c.waitFor(20)));
      for (const client of clients) expect(client.events[19]!.id).toBe(next);
    } finally {
      await proxy.close();
    }
  }

  it('at most 16 store replays in flight by default', { timeout: 30_000 }, async () => {
    await storm(undefined, 16);
  });

  it('at most maxConcurrentReplays', { timeout: 30_000 }, async () => {
    await storm(3, 3);
  });
});

describe('redis: a replay the instance answers from its recent events', () => {
  it('takes no slot: answered at once while every slot waits on Redis', {
    timeout: 30_000,
  }, async () => {
    const { proxy, hub, port, count, ids } = await proxiedHub(5, 1);
    try {
      // The one slot: a replay from before the instance's recent events, its XRANGE held.
      proxy.hold();
      const slow = live.track(await sse(port, '/events', { 'last-event-id': ids[0]! }));
      await until(() => hub.size === 1);
      expect(hub.metrics).toMatchObject({ replaying: 1, replaysQueued: 0 });
      // Its id among the instance's recent events: answered from memory, not queued.
      const recent = live.track(await sse(port, '/events', { 'last-event-id': ids[16]! }));
      await within(recent.waitFor(3), 5000, 'the recent replay');
      expect(recent.events.map((e) => e.id)).toEqual(ids.slice(17));
      // The slow one still waits on Redis: the recent one did not wait for its slot.
      expect(hub.metrics).toMatchObject({ replaying: 1, replaysQueued: 0 });
      expect(slow.events).toEqual([]);
      proxy.release();
      await slow.waitFor(19);
      expect(slow.events.map((e) => e.id)).toEqual(ids.slice(1));
      // Live delivery goes on for both, nothing twice, nothing missed.
      const next = await hub.publish('n', 'live');
      await Promise.all([slow.waitFor(20), recent.waitFor(4)]);
      expect(recent.events.map((e) => e.id)).toEqual([...ids.slice(17), next]);
      expect(slow.events.map((e) => e.id)).toEqual([...ids.slice(1), next]);
      expect(count.peak).toBe(1);
    } finally {
      await proxy.close();
    }
  });
});

describe('the replay queue', () => {
  async function setup(maxConcurrentReplays: number) {
    const app = make();
    const { store, calls } = heldReplays(memoryStore({ bufferSize: 100 }));
    const { hub, port } = await hubApp(app, store, { maxConcurrentReplays });
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push(await hub.publish('n', `e${i}`));
    const connect = async (after: string): Promise<SseClient> => {
      const client = await sse(port, '/events', { 'last-event-id': after });
      opened.push(client);
      return client;
    };
    return { app, hub, calls, ids, connect };
  }

  /** Waits until the hub attached `n` clients (their requests reached `connect`). */
  const attached = (hub: EventHub, n: number) => until(() => hub.size === n);

  it('runs the waiting replays in the order their clients came, as slots free', async () => {
    const { hub, calls, ids, connect } = await setup(1);
    const a = await connect(ids[0]!);
    await attached(hub, 1);
    const b = await connect(ids[1]!);
    await attached(hub, 2);
    const c = await connect(ids[2]!);
    await attached(hub, 3);
    expect(calls.map((x) => x.request.after)).toEqual([ids[0]]);
    expect(hub.metrics).toMatchObject({ replaying: 1, replaysQueued: 2 });
    calls[0]!.settle();
    await a.waitFor(4);
    expect(calls.map((x) => x.request.after)).toEqual([ids[0], ids[1]]);
    expect(hub.metrics).toMatchObject({ replaying: 1, replaysQueued: 1 });
    calls[1]!.settle();
    await b.waitFor(3);
    calls[2]!.settle();
    await c.waitFor(2);
    expect(calls.map((x) => x.request.after)).toEqual([ids[0], ids[1], ids[2]]);
    expect(c.events.map((e) => e.id)).toEqual(ids.slice(3));
    expect(hub.metrics).toMatchObject({ replaying: 0, replaysQueued: 0 });
  });

  it('a waiting client that leaves is dropped from the queue at once, never replayed', async () => {
    const { hub, calls, ids, connect } = await setup(1);
    const a = await connect(ids[0]!);
    await attached(hub, 1);
    const b = await connect(ids[1]!);
    await attached(hub, 2);
    const c = await connect(ids[2]!);
    await attached(hub, 3);
    b.close();
    await until(() => hub.metrics.replaysQueued === 1);
    expect(hub.size).toBe(2);
    calls[0]!.settle();
    await a.waitFor(4);
    // The slot went to c, not to the client that left.
    expect(calls.map((x) => x.request.after)).toEqual([ids[0], ids[2]]);
    calls[1]!.settle();
    await c.waitFor(2);
    expect(hub.metrics).toMatchObject({ replaying: 0, replaysQueued: 0 });
  });

  it('a replay that fails frees its slot: the next client is replayed', async () => {
    const { hub, calls, ids, connect } = await setup(1);
    const warnings: string[] = [];
    const onWarning = (w: Error): void => void warnings.push(String(w));
    process.on('warning', onWarning);
    try {
      const a = await connect(ids[0]!);
      await attached(hub, 1);
      const b = await connect(ids[1]!);
      await attached(hub, 2);
      calls[0]!.settle(new Error('store down'));
      await a.ended;
      await until(() => calls.length === 2);
      expect(hub.metrics).toMatchObject({ replayFailures: 1, replaying: 1, replaysQueued: 0 });
      calls[1]!.settle();
      await b.waitFor(3);
      expect(b.events.map((e) => e.id)).toEqual(ids.slice(2));
      expect(hub.metrics).toMatchObject({ replaying: 0, replaysQueued: 0 });
      await until(() => warnings.length === 1);
      expect(warnings[0]).toContain('store down');
    } finally {
      process.off('warning', onWarning);
    }
  });

  it('hub.close() ends the waiting clients at once; nothing runs after it', async () => {
    const { hub, calls, ids, connect } = await setup(1);
    await connect(ids[0]!);
    await attached(hub, 1);
    const b = await connect(ids[1]!);
    await attached(hub, 2);
    await hub.close();
    await b.ended;
    expect(hub.metrics).toMatchObject({ clients: 0, replaysQueued: 0 });
    // The replay in flight answers after the close: its slot is freed, no queued one starts.
    calls[0]!.settle();
    await until(() => hub.metrics.replaying === 0);
    expect(calls).toHaveLength(1);
  });

  it('a client whose held live events overflow while it waits gets keel:reset, no replay', async () => {
    const app = make({ sse: { maxBufferedBytes: 4096 } });
    const { store, calls } = heldReplays(memoryStore({ bufferSize: 100 }));
    const { hub, port } = await hubApp(app, store, { maxConcurrentReplays: 1 });
    const first = await hub.publish('n', 'x');
    await hub.publish('n', 'x');
    opened.push(await sse(port, '/events', { 'last-event-id': first }));
    await attached(hub, 1);
    const b = await sse(port, '/events', { 'last-event-id': first });
    opened.push(b);
    await attached(hub, 2);
    // More than b's cap published while it waits.
    for (let i = 0; i < 10; i++) await hub.publish('n', 'y'.repeat(1000));
    calls[0]!.settle();
    await b.waitFor(1);
    expect(b.events[0]).toMatchObject({
      event: 'keel:reset',
      id: hub.lastId,
      data: JSON.stringify({ lastEventId: first }),
    });
    expect(calls).toHaveLength(1);
    expect(hub.metrics).toMatchObject({ replaying: 0, replaysQueued: 0 });
  });
});

describe('store.replayAtOnce', () => {
  it('is a function when given', () => {
    const store = { ...memoryStore(), replayAtOnce: 'yes' } as unknown as HubStore;
    expect(() => createEventHub({ store })).toThrow(TypeError);
    expect(() => createEventHub({ store })).toThrow(/store\.replayAtOnce/);
  });
});

describe('maxConcurrentReplays', () => {
  it('is a positive integer', () => {
    expect(() => createEventHub({ maxConcurrentReplays: 0 })).toThrow(RangeError);
    expect(() => createEventHub({ maxConcurrentReplays: 1.5 })).toThrow(RangeError);
    expect(() => createEventHub({ maxConcurrentReplays: '4' as unknown as number })).toThrow(
      /maxConcurrentReplays/,
    );
  });
});
