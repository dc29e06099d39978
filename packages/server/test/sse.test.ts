import { afterEach, describe, expect, it } from 'vitest';
import { appStats } from '../src/app';
import { type App, createApp, createEventHub, type SseStream } from '../src/index';
import { ManualClock, pausedGet, raw, sse, start, until } from './helpers';

const apps: App[] = [];
function make(clock: ManualClock, options: Parameters<typeof createApp>[0] = {}): App {
  const app = createApp({ clock, ...options });
  apps.push(app);
  return app;
}
const closers: { destroy(): void }[] = [];
afterEach(async () => {
  for (const c of closers.splice(0)) c.destroy();
  await Promise.all(apps.splice(0).map((a) => a.close()));
});

describe('ctx.sseEvent / sseInterval over HTTP', () => {
  it('opens the stream with the right headers and sends named events with ids', async () => {
    const clock = new ManualClock();
    const app = make(clock);
    app.get('/events', (ctx) => {
      ctx.sseEvent('greeting', { hello: 'world' });
      ctx.sseEvent('poem', 'line one\nline two');
      ctx.sseStream().close();
    });
    const { port } = await start(app);
    const client = await sse(port, '/events');
    await client.ended;
    // Exactly the type the README and issue #6 name (event streams are UTF-8 by definition).
    expect(client.headers['content-type']).toBe('text/event-stream');
    expect(client.headers['cache-control']).toBe('no-cache');
    expect(client.headers['x-accel-buffering']).toBe('no');
    expect(client.events).toEqual([
      { id: '1', event: 'greeting', data: '{"hello":"world"}' },
      { id: '2', event: 'poem', data: 'line one\nline two' },
    ]);
    await until(() => appStats(app).inflight === 0);
    expect(clock.active).toBe(0);
  });

  it('streams fn() every interval, heartbeats when idle, and releases everything on disconnect', async () => {
    const clock = new ManualClock();
    const app = make(clock, { sse: { heartbeatMs: 5000 } });
    let n = 0;
    let finished = false;
    app.get('/ticks', async (ctx) => {
      await ctx.sseInterval(() => (++n % 3 === 0 ? undefined : { n }));
      finished = true;
    });
    app.get('/idle', (ctx) => {
      ctx.sseStream();
    });
    const { port } = await start(app);
    const client = await sse(port, '/ticks');
    await client.waitFor(1); // the first tick is immediate
    expect(clock.active).toBe(2); // this stream's interval + the shared heartbeat
    clock.tick(1000);
    clock.tick(1000); // n=3 returns undefined: skipped
    clock.tick(1000);
    await client.waitFor(3);
    expect(client.events.map((e) => JSON.parse(e.data).n)).toEqual([1, 2, 4]);
    expect(client.events.map((e) => e.id)).toEqual(['1', '2', '3']);
    expect(client.events[0]?.event).toBeUndefined();
    const idle = await sse(port, '/idle');
    await until(() => appStats(app).inflight === 2);
    expect(clock.active).toBe(2); // still one heartbeat for both streams
    // The shared heartbeat fires every 5 s and writes to streams idle for a whole period.
    clock.tick(10_000);
    await until(() => idle.comments >= 1);
    expect(client.comments).toBe(0); // the ticking stream is never idle
    client.close();
    idle.close();
    await until(() => appStats(app).inflight === 0);
    expect(clock.active).toBe(0);
    expect(finished).toBe(true);
    const before = n;
    clock.tick(10_000);
    expect(n).toBe(before);
  });

  it('reports an fn error to onError and ends the stream', async () => {
    const clock = new ManualClock();
    const app = make(clock);
    const errors: unknown[] = [];
    app.onError((e) => {
      errors.push(e);
    });
    let calls = 0;
    app.get('/bad', (ctx) =>
      ctx.sseInterval(() => {
        if (++calls === 2) throw new Error('tick failed');
        return calls;
      }, 100),
    );
    const { port } = await start(app);
    const client = await sse(port, '/bad');
    await client.waitFor(1);
    clock.tick(100);
    await client.ended;
    expect(String(errors[0])).toMatch(/tick failed/);
    await until(() => appStats(app).inflight === 0);
    expect(clock.active).toBe(0);
  });

  it('rejects a bad event name without breaking the framing', async () => {
    const clock = new ManualClock();
    const app = make(clock);
    let caught: unknown;
    app.get('/inject', (ctx) => {
      try {
        ctx.sseEvent('evil\ndata: injected', 1);
      } catch (err) {
        caught = err;
      }
      ctx.sseEvent('ok', 1);
      ctx.sseStream().close();
    });
    const { port } = await start(app);
    const client = await sse(port, '/inject');
    await client.ended;
    expect(caught).toBeInstanceOf(RangeError);
    expect(client.events).toEqual([{ id: '1', event: 'ok', data: '1' }]);
  });

  it('refuses a lone surrogate in an event name (U+FFFD on the wire: no listener would fire)', async () => {
    const clock = new ManualClock();
    const app = make(clock);
    const caught: unknown[] = [];
    app.get('/lone', (ctx) => {
      for (const send of [
        () => ctx.sseEvent('bad\uD800', 1),
        () => ctx.sseStream().send('bad\uDC00x', 1),
        () => ctx.sseStream().send('\uDBFF', 1),
      ]) {
        try {
          send();
        } catch (err) {
          caught.push(err);
        }
      }
      // A well-formed pair (an emoji) is a name like any other.
      ctx.sseEvent('ok\u{1F600}', 1);
      ctx.sseStream().close();
    });
    const { port } = await start(app);
    const client = await sse(port, '/lone');
    await client.ended;
    expect(caught).toHaveLength(3);
    for (const err of caught) {
      expect(err).toBeInstanceOf(RangeError);
      expect((err as Error).message).toMatch(/^keel: `event` must be .*no lone surrogate/);
    }
    expect(caught.map((e) => (e as Error).message)[0]).toContain('"bad\\ud800"');
    // Nothing of the refused events was sent, and the stream's ids go on from 1.
    expect(client.events).toEqual([{ id: '1', event: 'ok\u{1F600}', data: '1' }]);
  });

  it('close() ends open streams', async () => {
    const clock = new ManualClock();
    const app = make(clock);
    app.get('/forever', (ctx) => ctx.sseInterval(() => 'x', 1000));
    const { port } = await start(app);
    const client = await sse(port, '/forever');
    await client.waitFor(1);
    await app.close();
    await client.ended;
    expect(clock.active).toBe(0);
    expect(appStats(app).inflight).toBe(0);
  });

  it('validates intervalMs', async () => {
    const app = make(new ManualClock());
    app.onError(() => {});
    app.get('/', (ctx) => ctx.sseInterval(() => 1, 0));
    expect((await app.inject({ url: '/' })).status).toBe(500);
  });
});

describe('onResponse for an event stream', () => {
  it('reports finished: true when the server ends the stream, false when the client leaves or is dropped', async () => {
    const clock = new ManualClock();
    const app = make(clock, { sse: { maxBufferedBytes: 1024 } });
    const infos: { path: string; status: number; finished: boolean }[] = [];
    app.onResponse((ctx, { status, finished }) => {
      infos.push({ path: ctx.path, status, finished });
    });
    let open: SseStream | null = null;
    app.get('/ended', (ctx) => {
      ctx.sseEvent('one', 1);
      open = ctx.sseStream();
    });
    app.get('/left', (ctx) => {
      ctx.sseEvent('one', 1);
    });
    // More than twice the queue cap at once: the client is disconnected as too slow.
    app.get('/dropped', (ctx) => {
      ctx.sseEvent('big', 'x'.repeat(4096));
    });
    const { port } = await start(app);

    const ended = await sse(port, '/ended');
    await ended.waitFor(1);
    open!.close();
    await ended.ended;
    await until(() => infos.length === 1);
    expect(infos[0]).toEqual({ path: '/ended', status: 200, finished: true });

    const left = await sse(port, '/left');
    await left.waitFor(1);
    left.close();
    await until(() => infos.length === 2);
    expect(infos[1]).toEqual({ path: '/left', status: 200, finished: false });

    const dropped = await sse(port, '/dropped');
    await dropped.ended;
    await until(() => infos.length === 3);
    expect(dropped.events).toEqual([]);
    expect(infos[2]).toEqual({ path: '/dropped', status: 200, finished: false });

    // HEAD gets the headers and an ended stream: complete.
    const head = await raw(port, { method: 'HEAD', path: '/left' });
    expect(head.status).toBe(200);
    await until(() => infos.length === 4);
    expect(infos[3]).toEqual({ path: '/left', status: 200, finished: true });

    // A hub's client, ended by hub.close(): the server ended it.
    const hub = createEventHub();
    app.get('/hub', (ctx) => hub.connect(ctx));
    const onHub = await sse(port, '/hub');
    await until(() => hub.size === 1);
    await hub.close();
    await onHub.ended;
    await until(() => infos.length === 5);
    expect(infos[4]).toEqual({ path: '/hub', status: 200, finished: true });
    await until(() => appStats(app).inflight === 0);
  });
});

describe('an event stream the server ends with its tail still queued', () => {
  // `stream.close()` ends the response at once, but what the client has not taken yet is still
  // queued: the stream is finished only if that tail reaches the socket.
  const EVENT = 'x'.repeat(64 * 1024);

  async function ended(clock: ManualClock, sendTimeout: number) {
    const app = make(clock, { sendTimeout, sse: { maxBufferedBytes: 64 * 1024 * 1024 } });
    const infos: boolean[] = [];
    app.onResponse((_ctx, { finished }) => {
      infos.push(finished);
    });
    let stream: SseStream | null = null;
    let res: import('node:http').ServerResponse | null = null;
    app.get('/events', (ctx) => {
      stream = ctx.sseStream();
      res = ctx.res;
    });
    const { port } = await start(app);
    const client = await pausedGet(port, '/events', closers);
    // More than loopback's kernel buffers hold: most of it stays queued for the paused client.
    for (let i = 0; i < 512; i++) stream!.send('big', EVENT);
    await until(() => res!.writableNeedDrain);
    stream!.close();
    expect(stream!.closed).toBe(true);
    return { app, client, infos, res: res! };
  }

  it('cut by sendTimeout: onResponse reports finished: false, once the tail was cut', async () => {
    const clock = new ManualClock();
    const { app, infos, res } = await ended(clock, 1000);
    await until(() => res.writableLength > 0 && !res.writableFinished);
    // Not over while its tail waits: it may still be taken.
    expect(infos).toEqual([]);
    expect(appStats(app).inflight).toBe(1);
    clock.tick(2000);
    await until(() => infos.length === 1);
    expect(infos).toEqual([false]);
    expect(appStats(app).inflight).toBe(0);
    expect(clock.active).toBe(0);
  });

  it('taken by the client: finished: true once the tail was written', async () => {
    const clock = new ManualClock();
    const { app, client, infos } = await ended(clock, 1000);
    client.resume();
    await until(() => infos.length === 1);
    expect(infos).toEqual([true]);
    expect(appStats(app).inflight).toBe(0);
    expect(clock.active).toBe(0);
  });
});
