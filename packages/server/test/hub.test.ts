import { request } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { appStats } from '../src/app';
import { type App, createApp, createEventHub, HUB_RESET_EVENT } from '../src/index';
import { ManualClock, sse, start, until } from './helpers';

const apps: App[] = [];
afterEach(async () => {
  await Promise.all(apps.splice(0).map((a) => a.close()));
});

function setup(bufferSize = 5, sseOptions: { maxBufferedBytes?: number } = {}) {
  const clock = new ManualClock();
  const app = createApp({ clock, sse: sseOptions });
  apps.push(app);
  const hub = createEventHub({ bufferSize });
  app.get('/events', (ctx) => hub.connect(ctx));
  app.post('/publish', (ctx) => {
    const id = hub.publish('update', ctx.body);
    return ctx.json({ id });
  });
  return { app, hub, clock };
}

describe('event hub', () => {
  it('fans out published events with increasing ids to every client', async () => {
    const { app, hub } = setup();
    const { port } = await start(app);
    const a = await sse(port, '/events');
    const b = await sse(port, '/events');
    await until(() => hub.size === 2);
    expect((await app.inject({ method: 'POST', url: '/publish', body: { v: 1 } })).json()).toEqual({
      id: 1,
    });
    hub.publish('update', 'two\nlines');
    await a.waitFor(2);
    await b.waitFor(2);
    for (const client of [a, b]) {
      expect(client.events).toEqual([
        { id: '1', event: 'update', data: '{"v":1}' },
        { id: '2', event: 'update', data: 'two\nlines' },
      ]);
    }
    a.close();
    await until(() => hub.size === 1);
    b.close();
    await until(() => hub.size === 0 && appStats(app).inflight === 0);
    expect(hub.lastId).toBe(2);
  });

  it('replays missed events after a reconnect with Last-Event-ID', async () => {
    const { app, hub } = setup(5);
    const { port } = await start(app);
    const first = await sse(port, '/events');
    await until(() => hub.size === 1);
    hub.publish('update', 'e1');
    hub.publish('update', 'e2');
    await first.waitFor(2);
    first.close();
    await until(() => hub.size === 0);
    hub.publish('update', 'e3');
    hub.publish('update', 'e4');
    const again = await sse(port, '/events', { 'last-event-id': first.events.at(-1)!.id! });
    await again.waitFor(2);
    expect(again.events.map((e) => [e.id, e.data])).toEqual([
      ['3', 'e3'],
      ['4', 'e4'],
    ]);
    hub.publish('update', 'e5');
    await again.waitFor(3);
    expect(again.events[2]).toEqual({ id: '5', event: 'update', data: 'e5' });
    // Up to date: nothing replayed.
    const current = await sse(port, '/events', { 'last-event-id': '5' });
    await until(() => hub.size === 2);
    hub.publish('update', 'e6');
    await current.waitFor(1);
    expect(current.events.map((e) => e.id)).toEqual(['6']);
    again.close();
    current.close();
  });

  it('keeps a bounded buffer and signals a gap with keel:reset', async () => {
    const { app, hub } = setup(3);
    const { port } = await start(app);
    for (let i = 1; i <= 10; i++) hub.publish('update', i);
    const late = await sse(port, '/events', { 'last-event-id': '2' });
    await late.waitFor(4);
    expect(late.events[0]?.event).toBe(HUB_RESET_EVENT);
    expect(JSON.parse(late.events[0]!.data)).toEqual({ lastEventId: '2' });
    expect(late.events.slice(1).map((e) => e.id)).toEqual(['8', '9', '10']);
    // An id from the future (e.g. before a server restart) or garbage: reset too.
    const future = await sse(port, '/events', { 'last-event-id': '999' });
    await future.waitFor(4);
    expect(future.events[0]?.event).toBe(HUB_RESET_EVENT);
    const garbage = await sse(port, '/events', { 'last-event-id': 'abc' });
    await garbage.waitFor(4);
    expect(garbage.events[0]?.event).toBe(HUB_RESET_EVENT);
    // Exactly at the buffer edge: no reset.
    const edge = await sse(port, '/events', { 'last-event-id': '7' });
    await edge.waitFor(3);
    expect(edge.events.map((e) => e.id)).toEqual(['8', '9', '10']);
    for (const c of [late, future, garbage, edge]) c.close();
  });

  it('close() ends every stream and refuses later clients', async () => {
    const { app, hub } = setup();
    const { port } = await start(app);
    const a = await sse(port, '/events');
    await until(() => hub.size === 1);
    hub.close();
    await a.ended;
    expect(hub.size).toBe(0);
    const b = await sse(port, '/events');
    await b.ended;
    expect(hub.size).toBe(0);
    await until(() => appStats(app).inflight === 0);
  });

  it('rejects bad event names without consuming an id, and bad options', () => {
    const hub = createEventHub();
    expect(() => hub.publish('a\nb', 1)).toThrow(TypeError);
    expect(hub.publish('ok', 1)).toBe(1);
    expect(() => createEventHub({ bufferSize: -1 })).toThrow(RangeError);
  });

  it('disconnects a client that stops reading once its queue passes the cap', async () => {
    const { app, hub, clock } = setup(10, { maxBufferedBytes: 256 * 1024 });
    const { port } = await start(app);
    const fast = await sse(port, '/events');
    // A client that never reads: its socket buffers fill, then the server's queue grows.
    const slowReq = request({ host: '127.0.0.1', port, path: '/events', agent: false });
    slowReq.on('response', (res) => res.pause());
    slowReq.on('error', () => {});
    slowReq.end();
    await until(() => hub.size === 2);
    const payload = 'x'.repeat(64 * 1024);
    for (let i = 0; i < 400 && hub.size === 2; i++) {
      hub.publish('update', payload);
      await new Promise((r) => setImmediate(r));
    }
    await until(() => hub.size === 1);
    expect(fast.events.length).toBeGreaterThan(0);
    fast.close();
    slowReq.destroy();
    await until(() => appStats(app).inflight === 0);
    expect(clock.active).toBe(0);
  }, 30_000);
});
