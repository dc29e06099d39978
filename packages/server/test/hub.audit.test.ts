import { request } from 'node:http';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterEach, describe, expect, it } from 'vitest';
import { appStats } from '../src/app';
import {
  type App,
  type Context,
  cors,
  createApp,
  createEventHub,
  type EventHub,
  type HubStore,
  type SseStream,
} from '../src/index';
import { ManualClock, type SseClient, sse, start, until } from './helpers';

// Audit of the in-memory event hub: re-entrancy and ordering edges, through the public API.

const apps: App[] = [];
const clients: SseClient[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) c.close();
  await Promise.all(apps.splice(0).map((a) => a.close()));
});

/** The sequence number of an in-memory id (`<epoch>-<n>`). */
const seq = (id: string | undefined) => Number(id?.split('-')[1]);

async function serve(hub: EventHub, maxBufferedBytes = 256 * 1024) {
  const app = createApp({ sse: { maxBufferedBytes } });
  apps.push(app);
  app.get('/events', (ctx) => hub.connect(ctx));
  const { port } = await start(app);
  return port;
}

/** A client that never reads: the server's queue for it grows until it is dropped. */
function stalled(port: number, requestId: string): () => void {
  const req = request({
    host: '127.0.0.1',
    port,
    path: '/events',
    headers: { 'x-request-id': requestId },
    agent: false,
  });
  req.on('response', (res) => res.pause());
  req.on('error', () => {});
  req.end();
  return () => req.destroy();
}

describe('event hub audit: re-entrancy', () => {
  it('an onSlowClient that publishes does not reorder the event being delivered', async () => {
    let hub!: EventHub;
    const dropped: string[] = [];
    hub = createEventHub({
      onSlowClient: ({ requestId }) => {
        dropped.push(requestId);
        void hub.publish('dropped', requestId);
      },
    });
    const port = await serve(hub);
    // The stalled client is first in delivery order, so it is dropped before the reader is
    // written to, in the middle of one event's fan-out.
    const stop = stalled(port, 'slow-one');
    await until(() => hub.size === 1);
    const reader = await sse(port, '/events');
    clients.push(reader);
    await until(() => hub.size === 2);
    const payload = 'x'.repeat(64 * 1024);
    for (let i = 0; i < 400 && dropped.length === 0; i++) {
      await hub.publish('update', payload);
      await new Promise((r) => setImmediate(r));
    }
    expect(dropped).toEqual(['slow-one']);
    await until(() => reader.events.some((e) => e.event === 'dropped'));
    const ids = reader.events.map((e) => seq(e.id));
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    stop();
  }, 30_000);
});

describe('event hub audit: one ctx, one client', () => {
  it('connecting the same ctx twice attaches it once: each event arrives once', async () => {
    const hub = createEventHub();
    const app = createApp();
    apps.push(app);
    app.get('/events', (ctx) => {
      hub.connect(ctx, { topics: ['a'] });
      return hub.connect(ctx, { topics: ['a'] });
    });
    const { port } = await start(app);
    const client = await sse(port, '/events');
    clients.push(client);
    await until(() => hub.size >= 1);
    expect(hub.size).toBe(1);
    await hub.publish('n', 1);
    await hub.publish('n', 2, { topic: 'a' });
    await hub.publish('n', 3);
    await client.waitFor(3);
    await new Promise((r) => setTimeout(r, 20));
    expect(client.events.map((e) => e.data)).toEqual(['1', '2', '3']);
    client.close();
    await until(() => hub.size === 0);
  });
});

describe('event hub audit: a store that has not opened yet', () => {
  it('keeps nothing of the clients that came and left before it opened', async () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    let open!: (id: string) => void;
    const store: HubStore = {
      open: () => new Promise<string>((resolve) => (open = resolve)),
      append: () => 'x',
      replay: () => ({ kind: 'reset' }),
      close: () => {},
    };
    const hub = createEventHub({ store });
    const app = createApp();
    apps.push(app);
    const refs: WeakRef<SseStream>[] = [];
    app.get('/events', (ctx) => {
      const stream = hub.connect(ctx);
      refs.push(new WeakRef(stream));
      return stream;
    });
    const { port } = await start(app);
    for (let i = 0; i < 20; i++) {
      const client = await sse(port, '/events', { 'last-event-id': `x-${i}` });
      await until(() => hub.size === 1);
      client.close();
      await until(() => hub.size === 0);
    }
    for (let i = 0; i < 10 && refs.some((r) => r.deref() !== undefined); i++) {
      await new Promise((r) => setTimeout(r, 10));
      gc();
    }
    // A store that stays unreachable for hours must not hold every client that came and went.
    expect(refs.filter((r) => r.deref() !== undefined)).toHaveLength(0);
    open('x-0');
    await hub.ready;
  });
});

describe('event hub audit: options that are not objects', () => {
  it('createApp({ sse: null }) is a TypeError, not the default SSE settings', () => {
    expect(() => createApp({ sse: null as never })).toThrow(
      'keel: `sse` must be an object, got null',
    );
  });

  it('store: null is a TypeError, not the in-memory store in silence', () => {
    expect(() => createEventHub({ store: null as never })).toThrow(
      'keel: `store` must be an object, got null',
    );
    expect(() => createEventHub({ store: 'redis' as never })).toThrow(TypeError);
  });

  it('a topic passed where the options go is a TypeError, never a broadcast', async () => {
    const hub = createEventHub();
    const port = await serve(hub);
    const client = await sse(port, '/events');
    clients.push(client);
    await until(() => hub.size === 1);
    expect(() => hub.publish('n', 'secret', 'team:1' as never)).toThrow(
      'keel: `publish options` must be an object, got "team:1"',
    );
    expect(() => hub.invalidate('/todos', 'team:1' as never)).toThrow(TypeError);
    expect(() => hub.publish('n', 1, null as never)).toThrow(TypeError);
    const app = createApp();
    apps.push(app);
    app.get('/e', (ctx) => hub.connect(ctx, 'team:1' as never));
    app.onError(() => {});
    const { port: other } = await start(app);
    const refused = await sse(other, '/e');
    clients.push(refused);
    expect(refused.status).toBe(500);
    await hub.publish('n', 'public');
    await client.waitFor(1);
    expect(client.events.map((e) => e.data)).toEqual(['public']);
  });
});

describe('event hub audit: headers set before the stream opens', () => {
  it('CORS, cookies and custom headers reach the event-stream response', async () => {
    const hub = createEventHub();
    const app = createApp();
    apps.push(app);
    app.use(cors({ origin: ['https://app.example'], credentials: true }));
    app.get('/events', (ctx) => {
      ctx.setCookie('seen', '1');
      ctx.setHeader('x-extra', 'yes');
      return hub.connect(ctx);
    });
    const { port } = await start(app);
    const client = await sse(port, '/events', { origin: 'https://app.example' });
    clients.push(client);
    expect(client.status).toBe(200);
    // Exactly the type the README and issue #6 name (event streams are UTF-8 by definition).
    expect(client.headers['content-type']).toBe('text/event-stream');
    expect(client.headers['access-control-allow-origin']).toBe('https://app.example');
    expect(client.headers['access-control-allow-credentials']).toBe('true');
    expect(client.headers['set-cookie']?.[0]).toMatch(/^seen=1;/);
    expect(client.headers['x-extra']).toBe('yes');
    expect(client.headers['x-request-id']).toBeTruthy();
  });
});

describe('event hub audit: a client that left before the handler connected it', () => {
  /**
   * Routes each path to a handler that waits, then answers with `routes[path]`; sends one request
   * per path, aborts them all once every handler waits, then lets the handlers go on. Resolves
   * when the app has no request in flight (it never does if one is left hanging).
   */
  async function leaveEarly(app: App, routes: Record<string, (ctx: Context) => unknown>) {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let entered = 0;
    for (const [path, answer] of Object.entries(routes)) {
      app.get(path, async (ctx) => {
        entered++;
        await gate;
        return answer(ctx);
      });
    }
    const { port } = await start(app);
    const requests = Object.keys(routes).map((path) => {
      const req = request({ host: '127.0.0.1', port, path, agent: false });
      req.on('error', () => {});
      req.end();
      return req;
    });
    await until(() => entered === requests.length);
    for (const req of requests) req.destroy();
    await new Promise((r) => setTimeout(r, 30));
    release();
    await until(() => appStats(app).inflight === 0);
  }

  it('is not attached, and leaves no timer, stream or in-flight request behind', async () => {
    const clock = new ManualClock();
    const hub = createEventHub();
    const app = createApp({ clock, sse: { heartbeatMs: 1000 } });
    apps.push(app);
    const errors: unknown[] = [];
    app.onError((err) => {
      errors.push(err);
    });
    await leaveEarly(app, { '/events': (ctx) => hub.connect(ctx) });
    expect(hub.size).toBe(0);
    expect(clock.active).toBe(0);
    await hub.publish('n', 1);
    expect(hub.metrics.delivered).toBe(0);
    expect(errors).toEqual([]);
  });

  it('a response written through ctx.res after the client left ends the request', async () => {
    const app = createApp();
    apps.push(app);
    await leaveEarly(app, {
      '/raw': (ctx) => {
        ctx.res.writeHead(200, { 'content-type': 'text/plain' });
        ctx.res.write('streamed by hand');
      },
    });
  });

  it('ctx.sseInterval and ctx.sseEvent after the client left: no timer runs, the request ends', async () => {
    const clock = new ManualClock();
    const app = createApp({ clock, sse: { heartbeatMs: 1000 } });
    apps.push(app);
    let ticks = 0;
    let sent: boolean | undefined;
    await leaveEarly(app, {
      '/interval': (ctx) => ctx.sseInterval(() => ++ticks, 500),
      '/event': (ctx) => {
        sent = ctx.sseEvent('n', 1);
        return ctx.sseStream();
      },
    });
    expect(clock.active).toBe(0);
    clock.tick(5000);
    expect(ticks).toBeLessThanOrEqual(1);
    expect(sent).toBe(false);
  });
});

describe('event hub audit: a ctx kept past its response', () => {
  // hub.connect(ctx) from a timer after the response went out threw ReleasedContextError out of
  // ctx.sseStream(): an uncaught exception, the process gone. Every other late operation is a
  // reported no-op.
  it('hub.connect is a reported no-op: an ended stream, no client held', async () => {
    const hub = createEventHub();
    const app = createApp();
    apps.push(app);
    const reported: unknown[] = [];
    app.onError((err) => {
      reported.push(err);
    });
    let kept: Context | undefined;
    app.get('/answered', (ctx) => {
      kept = ctx;
      return ctx.json({ ok: true });
    });
    await app.inject({ url: '/answered' });
    const stream = hub.connect(kept!);
    expect(stream.closed).toBe(true);
    expect(hub.size).toBe(0);
    expect(await hub.publish('x', 1)).toBeTruthy();
    expect(reported).toHaveLength(1);
    expect((reported[0] as Error).name).toBe('ReleasedContextError');
    await hub.close();
  });
});
