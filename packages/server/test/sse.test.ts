import { EventEmitter } from 'node:events';
import type { ServerResponse } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { appStats } from '../src/app';
import { type App, createApp } from '../src/index';
import { formatEvent, openSseStream, SseRegistry, streamEvery } from '../src/sse';
import { ManualClock, sse, start, until } from './helpers';

const apps: App[] = [];
function make(clock: ManualClock, options: Parameters<typeof createApp>[0] = {}): App {
  const app = createApp({ clock, ...options });
  apps.push(app);
  return app;
}
afterEach(async () => {
  await Promise.all(apps.splice(0).map((a) => a.close()));
});

describe('formatEvent', () => {
  it('frames ids, names and multi-line data', () => {
    expect(formatEvent('tick', { a: 1 }, '7')).toBe('id: 7\nevent: tick\ndata: {"a":1}\n\n');
    expect(formatEvent(undefined, 'a\nb\r\nc\rd', undefined)).toBe(
      'data: a\ndata: b\ndata: c\ndata: d\n\n',
    );
    expect(formatEvent('x', '', '1')).toBe('id: 1\nevent: x\ndata: \n\n');
  });

  it('rejects CR, LF and NUL in event names and ids', () => {
    expect(() => formatEvent('a\nb', 1, '1')).toThrow(RangeError);
    expect(() => formatEvent('a\rdata: injected', 1, '1')).toThrow(RangeError);
    expect(() => formatEvent('a', 1, '1\n')).toThrow(RangeError);
    expect(() => formatEvent('a', 1, '1\0')).toThrow(RangeError);
  });
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
    expect(client.headers['content-type']).toBe('text/event-stream; charset=utf-8');
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

/** A response double whose socket buffer the test controls. */
class FakeRes extends EventEmitter {
  writableLength = 0;
  writableNeedDrain = false;
  written: string[] = [];
  destroyed = false;
  ended = false;
  writeHead() {
    return this;
  }
  flushHeaders() {}
  write(chunk: string | Buffer) {
    this.written.push(chunk.toString());
    this.writableLength += chunk.length;
    return !this.writableNeedDrain;
  }
  end() {
    this.ended = true;
    this.emit('close');
  }
  destroy() {
    this.destroyed = true;
    this.emit('close');
  }
}

describe('backpressure', () => {
  function open(maxBufferedBytes = 1000) {
    const clock = new ManualClock();
    const registry = new SseRegistry(clock, { heartbeatMs: 0, maxBufferedBytes });
    const res = new FakeRes();
    const stream = openSseStream(res as unknown as ServerResponse, registry, []);
    return { clock, registry, res, stream };
  }

  it('skips interval ticks while the socket is congested', () => {
    const { clock, res, stream } = open();
    let calls = 0;
    void streamEvery(
      stream,
      () => ++calls,
      100,
      () => {},
    );
    expect(calls).toBe(1);
    res.writableNeedDrain = true;
    clock.tick(500);
    expect(calls).toBe(1);
    res.writableNeedDrain = false;
    clock.tick(100);
    expect(calls).toBe(2);
    stream.close();
    expect(clock.active).toBe(0);
  });

  it('skips ticks while an async fn is pending', async () => {
    const { clock, stream, res } = open();
    let resolve!: (v: unknown) => void;
    let calls = 0;
    void streamEvery(
      stream,
      () => {
        calls++;
        return new Promise((r) => {
          resolve = r;
        });
      },
      100,
      () => {},
    );
    clock.tick(300);
    expect(calls).toBe(1);
    resolve('done');
    await Promise.resolve();
    await Promise.resolve();
    expect(res.written.some((w) => w.includes('data: done'))).toBe(true);
    clock.tick(100);
    expect(calls).toBe(2);
    stream.close();
  });

  it('disconnects a client that left more than maxBufferedBytes unsent', async () => {
    const { res, stream, registry } = open(1000);
    // Bytes of the current turn are held by Node's cork, not unsent: no drop within one turn.
    expect(stream.send('a', 'x'.repeat(700))).toBe(true);
    expect(stream.send('a', 'x'.repeat(700))).toBe(true);
    expect(res.destroyed).toBe(false);
    await new Promise((r) => setImmediate(r));
    expect(stream.send('a', 'x'.repeat(10))).toBe(false);
    expect(res.destroyed).toBe(true);
    expect(stream.closed).toBe(true);
    expect(registry.streams.size).toBe(0);
    expect(stream.send('a', 1)).toBe(false);
  });
});
