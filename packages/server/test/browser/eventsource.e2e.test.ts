import type { Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { type BrowserContext, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { launchChromium } from '../../../../scripts/chromium.mjs';
import { until } from '../../../../scripts/until.mjs';
import { type App, createApp, createEventHub, type EventHub } from '../../src/index';

// The server's event streams read by the browser's own EventSource (Debian's Chromium, driven by
// playwright-core), as most apps read them: named and unnamed events, ids, and a dropped
// connection that the browser reconnects by itself, with Last-Event-ID, the hub replaying what
// it missed exactly once and in order.

let app: App;
let hub: EventHub;
let server: Server;
let base: string;
let browser: { context: BrowserContext; close(): Promise<void> };
let context: BrowserContext;
let page: Page;
/** Open connections, to drop them as a network would. */
const sockets = new Set<Socket>();
/** Last-Event-ID of every /live request, in order (undefined for a first connect). */
const liveIds: (string | undefined)[] = [];
let intervalStreamsClosed = 0;

/** One EventSource's record in the page: what it received, and its opens and errors. */
interface Received {
  events: { type: string; data: string; id: string }[];
  opens: number;
  errors: number;
  state: number;
}

/** Opens `new EventSource(url)` in the page, listening for `names` (and `message`) as `key`. */
function openSource(key: string, url: string, names: string[]): Promise<void> {
  return page.evaluate(
    ([key, url, names]) => {
      const all = ((window as unknown as { sources?: Record<string, unknown> }).sources ??= {});
      const rec = { events: [] as unknown[], opens: 0, errors: 0, state: 0 };
      const source = new EventSource(url);
      const push = (e: Event) => {
        const m = e as MessageEvent<string>;
        rec.events.push({ type: m.type, data: m.data, id: m.lastEventId });
      };
      for (const name of ['message', ...names]) source.addEventListener(name, push);
      source.onopen = () => {
        rec.opens++;
      };
      source.onerror = () => {
        rec.errors++;
      };
      all[key] = { rec, source };
    },
    [key, url, names] as const,
  );
}

/** What the EventSource opened as `key` has received so far. */
function received(key: string): Promise<Received> {
  return page.evaluate((key) => {
    const entry = (
      window as unknown as {
        sources: Record<string, { rec: Received; source: EventSource }>;
      }
    ).sources[key]!;
    return { ...entry.rec, state: entry.source.readyState };
  }, key);
}

function closeSource(key: string): Promise<void> {
  return page.evaluate((key) => {
    (window as unknown as { sources: Record<string, { source: EventSource }> }).sources[
      key
    ]!.source.close();
  }, key);
}

beforeAll(async () => {
  app = createApp();
  hub = createEventHub();
  app.get('/', (ctx) =>
    ctx
      .status(200)
      .send('<!doctype html><title>keel events</title><p>EventSource against @keel/server</p>'),
  );
  app.get('/live', (ctx) => {
    liveIds.push(ctx.header('last-event-id'));
    return hub.connect(ctx);
  });
  app.get('/named', (ctx) => {
    ctx.sseEvent('greeting', { hello: 'world' });
    ctx.sseEvent('greeting', 'line one\nline two');
    return ctx.sseEvent('farewell', { bye: true });
  });
  app.get('/ticks', (ctx) => {
    ctx.sseStream().onClose(() => {
      intervalStreamsClosed++;
    });
    let n = 0;
    return ctx.sseInterval(() => ({ n: ++n }), 20);
  });
  await hub.ready;
  server = await app.listen(0, '127.0.0.1');
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  browser = await launchChromium(chromium);
  context = browser.context;
  page = await context.newPage();
  await page.goto(`${base}/`);
});

afterAll(async () => {
  await browser?.close();
  await hub?.close();
  await app?.close({ timeoutMs: 1000 });
});

describe("the browser's EventSource", () => {
  test('named events with JSON and multi-line data, and the stream ids', async () => {
    await openSource('named', '/named', ['greeting', 'farewell']);
    await until(async () => (await received('named')).events.length === 3, 'three events');
    const { events, opens } = await received('named');
    expect(opens).toBe(1);
    expect(events).toEqual([
      { type: 'greeting', data: '{"hello":"world"}', id: '1' },
      { type: 'greeting', data: 'line one\nline two', id: '2' },
      { type: 'farewell', data: '{"bye":true}', id: '3' },
    ]);
    await closeSource('named');
  });

  test('sseInterval ticks arrive as message events; closing the EventSource ends the stream', async () => {
    await openSource('ticks', '/ticks', []);
    await until(async () => (await received('ticks')).events.length >= 3, 'three ticks');
    const { events } = await received('ticks');
    expect(events.slice(0, 3).map((e) => [e.type, JSON.parse(e.data)])).toEqual([
      ['message', { n: 1 }],
      ['message', { n: 2 }],
      ['message', { n: 3 }],
    ]);
    await closeSource('ticks');
    // The server saw the client go: the interval's stream closed (its timer released).
    await until(() => intervalStreamsClosed === 1, 'the interval stream to close');
  });

  test('a dropped connection: the browser reconnects with Last-Event-ID and the hub replays what it missed, once, in order', async () => {
    await openSource('live', '/live', ['todo']);
    await until(async () => (await received('live')).opens === 1 && hub.size === 1, 'connected');
    const first = await hub.publish('todo', { n: 1 });
    await until(async () => (await received('live')).events.length === 1, 'the first event');
    // The network drops every connection; two events are published while the page is away.
    for (const socket of sockets) socket.destroy();
    await until(async () => (await received('live')).errors >= 1, 'the error event');
    await until(() => hub.size === 0, 'the hub to see the client leave');
    await hub.publish('todo', { n: 2 });
    await hub.publish('todo', { n: 3 });
    // Chromium reconnects by itself (after its own retry delay) with the last id it saw.
    await until(
      async () => (await received('live')).events.length === 3,
      'the missed events',
      30_000,
    );
    await hub.publish('todo', { n: 4 });
    await until(async () => (await received('live')).events.length === 4, 'a live event');
    const { events, opens } = await received('live');
    expect(opens).toBe(2);
    expect(liveIds).toEqual([undefined, first]);
    expect(events.map((e) => [e.type, JSON.parse(e.data)])).toEqual([
      ['todo', { n: 1 }],
      ['todo', { n: 2 }],
      ['todo', { n: 3 }],
      ['todo', { n: 4 }],
    ]);
    // Every event carried the hub's id: the last is what a third connect would resume from.
    expect(events[0]!.id).toBe(first);
    expect(new Set(events.map((e) => e.id)).size).toBe(4);
    expect(events[3]!.id).toBe(hub.lastId);
    await closeSource('live');
    await until(() => hub.size === 0, 'the hub to see the client leave');
  });
});
