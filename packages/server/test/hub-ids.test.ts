// The id space of a hub stream belongs to the hub. An app's own events on it (ctx.sseEvent,
// stream.send, sseInterval) carry no `id:`, so the client's Last-Event-ID is always a hub id
// and a reconnect resumes exactly; a Last-Event-ID the hub cannot interpret (foreign, garbage,
// huge, an app counter) is answered with keel:reset at the current id, never a wrong replay.
import { describe, expect, it } from 'vitest';
import {
  type App,
  createEventHub,
  type EventHub,
  HUB_RESET_EVENT,
  type SseStream,
} from '../src/index';
import { guardProcess } from './adversarial/harness';
import { type SseMessage, sse, start, trackApps, until } from './helpers';
import { streamKey as key, redisInstances } from './redis-helpers';

guardProcess();
const make = trackApps();
const live = redisInstances();

/** The Last-Event-ID an EventSource would send: the last `id:` field it saw. */
const lastEventId = (events: SseMessage[]) => events.filter((e) => e.id !== undefined).at(-1)?.id;

function hubApp(app: App, hub: EventHub) {
  const streams: SseStream[] = [];
  app.get('/events', (ctx) => {
    const stream = hub.connect(ctx);
    streams.push(stream);
    ctx.sseEvent('hello', { welcome: true }); // the app's own event, on the hub's stream
    return stream;
  });
  app.get('/tick', (ctx) => {
    hub.connect(ctx);
    return ctx.sseInterval(() => 'tick', 60_000);
  });
  return streams;
}

describe('app events on a hub stream', () => {
  it('carry no id: a reconnect with the id the client holds resumes exactly', async () => {
    const app = make();
    const hub = createEventHub();
    const streams = hubApp(app, hub);
    const { port } = await start(app);
    const first = await sse(port, '/events');
    await until(() => hub.size === 1);
    const e1 = await hub.publish('n', 'one');
    await first.waitFor(2);
    // The app's own event after the hub's: on an EventSource it would set Last-Event-ID.
    expect(streams[0]!.send('note', 'app')).toBe(true);
    const tick = await sse(port, '/tick');
    await tick.waitFor(1);
    await first.waitFor(3);
    expect(first.events).toEqual([
      { event: 'hello', data: '{"welcome":true}' },
      { id: e1, event: 'n', data: 'one' },
      { event: 'note', data: 'app' },
    ]);
    expect(tick.events).toEqual([{ data: 'tick' }]);
    expect(streams[0]!.lastId).toBe(0);
    first.close();
    tick.close();
    await until(() => hub.size === 0);
    const e2 = await hub.publish('n', 'two');
    const back = await sse(port, '/events', { 'last-event-id': lastEventId(first.events)! });
    await back.waitFor(2);
    // The in-memory replay is written within hub.connect, before the handler's own event.
    expect(back.events).toEqual([
      { id: e2, event: 'n', data: 'two' },
      { event: 'hello', data: '{"welcome":true}' },
    ]);
    expect(hub.metrics.resets).toBe(0);
  });
});

const FOREIGN = [
  ['an app counter', '1'],
  ['garbage', 'not an id at all'],
  ['a huge number', '9'.repeat(400)],
  ['a huge stream-like id', `${'9'.repeat(30)}-0`],
  ['a far-future stream id', '999999999999999-999999999999999'],
  ['another hub epoch', 'deadbeef-1'],
  ['an 8 KiB id', 'x'.repeat(8192)],
  ['a stream id with a sign', '-1-0'],
  ['latin-1 bytes', 'caf\u00e9-1'],
] as const;

describe('a Last-Event-ID the hub cannot interpret', () => {
  for (const store of ['memory', 'redis'] as const) {
    it.each(FOREIGN)(
      `${store}: %s is keel:reset at the current id, then live events`,
      async (_, id) => {
        let hub: EventHub;
        let port: number;
        if (store === 'memory') {
          const app = make();
          hub = createEventHub();
          app.get('/events', (ctx) => hub.connect(ctx));
          port = (await start(app)).port;
        } else {
          ({ hub, port } = await live.instance(key()));
        }
        const current = await hub.publish('n', 'before');
        await until(() => hub.lastId === current);
        const client = live.track(await sse(port, '/events', { 'last-event-id': id }));
        await client.waitFor(1);
        expect(client.events[0]).toEqual({
          id: current,
          event: HUB_RESET_EVENT,
          // A value past 256 characters is echoed cut: its first 255 and an ellipsis.
          data: JSON.stringify({
            lastEventId: id.length > 256 ? `${id.slice(0, 255)}\u2026` : id,
          }),
        });
        const next = await hub.publish('n', 'after');
        await client.waitFor(2);
        expect(client.events[1]).toEqual({ id: next, event: 'n', data: 'after' });
      },
    );
  }
});
