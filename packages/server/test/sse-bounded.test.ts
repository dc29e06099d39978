import { request } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { appStats } from '../src/app';
import {
  createEventHub,
  HUB_RESET_EVENT,
  type HubStore,
  memoryStore,
  type ReplayResult,
  type SseStream,
} from '../src/index';
import { ManualClock, type SseClient, sse, start, trackApps, until } from './helpers';

// A stream's queue is bounded whatever the app does in one event-loop turn: what earlier turns
// left unsent may reach `sse.maxBufferedBytes`, and one turn may add at most as much again.

const app = trackApps();
const clients: SseClient[] = [];
afterEach(() => {
  for (const c of clients.splice(0)) c.close();
});

const CAP = 64 * 1024;

/** A client that never reads its event stream: the server's queue for it only grows. */
function stalled(port: number, path: string, headers: Record<string, string> = {}) {
  const req = request({ host: '127.0.0.1', port, path, headers, agent: false });
  req.on('response', (res) => res.pause());
  req.on('error', () => {});
  req.end();
  return () => req.destroy();
}

describe('SSE queue bounds', () => {
  it('many ctx.sseEvent calls in one synchronous turn stop at twice the cap: the client is dropped', async () => {
    const clock = new ManualClock();
    const a = app({ clock, sse: { maxBufferedBytes: CAP } });
    let stream!: SseStream;
    let most = 0;
    let sent = 0;
    a.get('/burst', (ctx) => {
      stream = ctx.sseStream();
      const payload = 'x'.repeat(1024);
      // 8 MiB in one turn: without a bound it all sits in this process until the next tick.
      for (let i = 0; i < 8 * 1024; i++) {
        most = Math.max(most, stream.bufferedBytes);
        if (!ctx.sseEvent('tick', payload)) break;
        sent++;
      }
      return stream;
    });
    const { port } = await start(a);
    const client = await sse(port, '/burst');
    clients.push(client);
    await client.ended;
    expect(stream.dropped).toBe(true);
    expect(stream.closed).toBe(true);
    expect(sent).toBeLessThan(8 * 1024);
    expect(most).toBeLessThanOrEqual(2 * CAP);
    await until(() => appStats(a).inflight === 0);
    expect(clock.active).toBe(0);
  });

  it('a client left over the cap with nothing more to write is dropped at the next check (heartbeats off)', async () => {
    // The cap was checked at the next write only (a heartbeat is one): with `heartbeatMs: 0` and
    // no more events, a client over it held its queue and its connection for ever. The queue is
    // checked every quarter of `sendTimeout` while it waits.
    const clock = new ManualClock();
    const a = app({ clock, sendTimeout: 1000, sse: { heartbeatMs: 0, maxBufferedBytes: CAP } });
    let stream!: SseStream;
    a.get('/quiet', (ctx) => {
      stream = ctx.sseStream();
      return stream;
    });
    const { port } = await start(a);
    const stop = stalled(port, '/quiet');
    await until(() => stream !== undefined);
    const payload = 'x'.repeat(4096);
    // One frame a turn until the kernel is full and the queue passes the cap; then silence.
    while (stream.bufferedBytes <= CAP && !stream.closed) {
      stream.send('fill', payload);
      await new Promise((r) => setImmediate(r));
    }
    expect(stream.closed).toBe(false);
    expect(stream.bufferedBytes).toBeGreaterThan(CAP);
    clock.tick(200);
    expect(stream.closed).toBe(false);
    clock.tick(100);
    expect(stream.dropped).toBe(true);
    await until(() => appStats(a).inflight === 0);
    expect(clock.active).toBe(0);
    stop();
  });

  it('an sseInterval stream whose client stopped reading is cut after sendTimeout without progress (heartbeats off)', async () => {
    // Its ticks are skipped while the socket is congested (16 KiB and more queued): no write
    // came to judge it, under the cap or not, so it held its queue and connection for ever.
    const clock = new ManualClock();
    const a = app({ clock, sendTimeout: 1000, sse: { heartbeatMs: 0 } });
    let stream!: SseStream;
    let ticks = 0;
    const payload = 'x'.repeat(4096);
    a.get('/ticks', (ctx) => {
      stream = ctx.sseStream();
      return ctx.sseInterval(() => {
        ticks++;
        return payload;
      }, 10);
    });
    const { port } = await start(a);
    const stop = stalled(port, '/ticks');
    await until(() => stream !== undefined);
    while (!stream.congested && !stream.closed) {
      clock.tick(10);
      await new Promise((r) => setImmediate(r));
    }
    expect(stream.closed).toBe(false);
    expect(stream.bufferedBytes).toBeLessThan(stream.maxBufferedBytes);
    const before = ticks;
    clock.tick(900);
    await new Promise((r) => setImmediate(r));
    expect(stream.closed).toBe(false);
    clock.tick(400);
    expect(stream.dropped).toBe(true);
    expect(ticks).toBe(before); // skipped while congested: the stall was never written to
    await until(() => appStats(a).inflight === 0);
    expect(clock.active).toBe(0);
    stop();
  });

  it('a burst up to twice the cap in one turn reaches a client that reads', async () => {
    const a = app({ sse: { maxBufferedBytes: CAP } });
    const hub = createEventHub({ bufferSize: 200 });
    a.get('/events', (ctx) => hub.connect(ctx));
    const { port } = await start(a);
    const client = await sse(port, '/events');
    clients.push(client);
    await until(() => hub.size === 1);
    const payload = 'x'.repeat(1024);
    // ~100 KiB written before Node's next tick uncorks the socket: over the cap, under twice it.
    for (let i = 0; i < 100; i++) void hub.publish('update', payload);
    await client.waitFor(100);
    expect(hub.metrics.slowDrops).toBe(0);
    expect(hub.size).toBe(1);
  });

  // Issue #13: "a burst published in one tick does not drop fast clients". Past twice the cap
  // in one turn a client that reads was dropped as slow (counted, onSlowClient told), though it
  // would have taken every byte once Node's tick ended.
  it('a hub burst past twice the cap in one turn reaches a client that reads, whole, and drops no one', async () => {
    const a = app({ sse: { maxBufferedBytes: CAP } });
    const slow: string[] = [];
    const hub = createEventHub({ bufferSize: 1000, onSlowClient: (c) => slow.push(c.requestId) });
    a.get('/events', (ctx) => hub.connect(ctx));
    const { port } = await start(a);
    const readers = [await sse(port, '/events'), await sse(port, '/events')];
    clients.push(...readers);
    await until(() => hub.size === 2);
    const payload = 'x'.repeat(1024);
    // ~160 KiB (2.5x the cap) before the tick ends: twice the cap queued, the rest held.
    for (let i = 0; i < 160; i++) void hub.publish('update', payload);
    for (const reader of readers) await reader.waitFor(160);
    for (const reader of readers) {
      expect(reader.events.map((e) => e.event)).toEqual(Array(160).fill('update'));
      expect(new Set(reader.events.map((e) => e.id)).size).toBe(160);
    }
    expect(hub.metrics.slowDrops).toBe(0);
    expect(slow).toEqual([]);
    expect(hub.size).toBe(2);
    // Live again afterwards.
    await hub.publish('update', 'after');
    for (const reader of readers) await reader.waitFor(161);
  });

  it('a burst too large to hold ends in keel:reset for a client that reads: it stays, not counted as slow', async () => {
    const a = app({ sse: { maxBufferedBytes: CAP } });
    const hub = createEventHub({ bufferSize: 1000 });
    a.get('/events', (ctx) => hub.connect(ctx));
    const { port } = await start(a);
    const reader = await sse(port, '/events');
    clients.push(reader);
    await until(() => hub.size === 1);
    const payload = 'x'.repeat(1024);
    // 6x the cap in one turn: twice queued, once held, the rest cannot be sent exactly.
    for (let i = 0; i < 6 * 64; i++) void hub.publish('update', payload);
    await until(() => reader.events.some((e) => e.event === HUB_RESET_EVENT));
    expect(hub.metrics.slowDrops).toBe(0);
    expect(hub.size).toBe(1);
    const reset = reader.events.find((e) => e.event === HUB_RESET_EVENT)!;
    expect(reset.id).toBe(hub.lastId);
    const seen = reader.events.length;
    await hub.publish('update', 'live');
    await reader.waitFor(seen + 1);
    expect(reader.events.at(-1)!.data).toBe('live');
  });

  it('a hub burst in one turn to a client that stopped reading drops it; it resumes with Last-Event-ID', async () => {
    const clock = new ManualClock();
    const a = app({ clock, sse: { maxBufferedBytes: CAP } });
    const hub = createEventHub({ bufferSize: 1000 });
    let stream!: SseStream;
    a.get('/events', (ctx) => {
      stream = hub.connect(ctx);
      return stream;
    });
    const { port } = await start(a);
    const reader = await sse(port, '/events');
    clients.push(reader);
    await until(() => hub.size === 1);
    await hub.publish('update', 'first');
    await reader.waitFor(1);
    const lastId = reader.events[0]!.id!;
    reader.close();
    await until(() => hub.size === 0);
    const stop = stalled(port, '/events', { 'last-event-id': lastId });
    await until(() => hub.size === 1);
    let most = 0;
    const payload = 'y'.repeat(4096);
    for (let i = 0; i < 256 && hub.size === 1; i++) {
      most = Math.max(most, stream.bufferedBytes);
      void hub.publish('update', payload);
    }
    // Held, not dropped, in the turn of the burst (a client that reads would take it all): the
    // queue's watch finds it never read and drops it as slow.
    await until(() => clock.active > 0);
    for (let i = 0; i < 8 && hub.size === 1; i++) {
      clock.tick(15_000);
      await new Promise((r) => setTimeout(r, 10));
    }
    expect(hub.size).toBe(0);
    expect(stream.dropped).toBe(true);
    expect(most).toBeLessThanOrEqual(2 * CAP);
    expect(hub.metrics.slowDrops).toBe(1);
    stop();
    // The EventSource comes back with the id it had: what it missed is over the cap, so it is
    // told to refetch (keel:reset at the current id), then gets live events.
    const again = await sse(port, '/events', { 'last-event-id': lastId });
    clients.push(again);
    await again.waitFor(1);
    expect(again.events[0]).toMatchObject({ event: HUB_RESET_EVENT, id: hub.lastId });
    await hub.publish('update', 'live');
    await again.waitFor(2);
    expect(again.events[1]!.data).toBe('live');
    again.close();
    await until(() => appStats(a).inflight === 0);
    expect(clock.active).toBe(0);
  });

  it('live events held during a slow replay are bounded: past the cap the client gets keel:reset', async () => {
    const a = app({ sse: { maxBufferedBytes: CAP } });
    const inner = memoryStore({ bufferSize: 1000 });
    let answer: ((result: ReplayResult) => void) | null = null;
    let asked: Parameters<HubStore['replay']>[0] | null = null;
    const store: HubStore = {
      open: (sink) => inner.open(sink),
      append: (event, data, topic) => inner.append(event, data, topic),
      replay: (req) => {
        asked = req;
        return new Promise((resolve) => (answer = resolve));
      },
      close: () => inner.close(),
    };
    const hub = createEventHub({ store });
    a.get('/events', (ctx) => hub.connect(ctx));
    const { port } = await start(a);
    const first = await hub.publish('update', 'before');
    await hub.publish('update', 'missed');
    const client = await sse(port, '/events', { 'last-event-id': first });
    clients.push(client);
    await until(() => answer !== null);
    // The replay is slow (a store round trip): 2 MiB of live events arrive meanwhile.
    const payload = 'z'.repeat(16 * 1024);
    for (let i = 0; i < 128; i++) await hub.publish('update', payload);
    answer!(inner.replay(asked!) as ReplayResult);
    await client.waitFor(1);
    expect(client.events[0]).toMatchObject({ event: HUB_RESET_EVENT, id: hub.lastId });
    expect(JSON.parse(client.events[0]!.data)).toEqual({ lastEventId: first });
    await hub.publish('update', 'live');
    await client.waitFor(2);
    expect(client.events.map((e) => e.data.slice(0, 4))).toEqual([
      JSON.stringify({ lastEventId: first }).slice(0, 4),
      'live',
    ]);
    expect(hub.size).toBe(1);
  });
});
