// Spec 001 ctx.sseEvent / ctx.sseInterval rows and "Events" 1-2; the default intervalMs is "not
// shown" in the spec: the README's 1000 ms is pinned. Issue #10 items 8 and 9. Time runs on an
// injected manual clock.
import { request } from 'node:http';
import { describe, expect, it } from 'vitest';
import { createApp, type SseStream } from '../../src/index';
import { call, ManualClock, openSse, serve, ticks } from './helpers';

describe('spec 001 server-sent events', () => {
  it('Events 1: ctx.sseEvent(event, data) emits one named event with the data', async () => {
    const app = createApp();
    app.get('/ev', (ctx) => {
      ctx.sseEvent('greeting', { hello: 'world' });
      ctx.sseEvent('second', { n: 2 });
      return ctx.sseStream();
    });
    const port = await serve(app);
    const c = await openSse(port, '/ev');
    expect(c.status).toBe(200);
    expect(c.headers['content-type']).toMatch(/^text\/event-stream/);
    const events = await c.waitFor(2);
    expect(events.map((e) => [e.event, JSON.parse(e.data)])).toEqual([
      ['greeting', { hello: 'world' }],
      ['second', { n: 2 }],
    ]);
    c.close();
  });

  it("Events 2: ctx.sseInterval(fn, intervalMs) emits fn()'s result on every interval until the stream ends", async () => {
    const clock = new ManualClock();
    const app = createApp({ clock, sse: { heartbeatMs: 0 } });
    let n = 0;
    let ended = false;
    app.get('/tick', async (ctx) => {
      await ctx.sseInterval(() => ({ n: ++n }), 250);
      ended = true;
    });
    const port = await serve(app);
    const c = await openSse(port, '/tick');
    await c.waitFor(1); // README: sent now, then every intervalMs
    clock.advance(250);
    await c.waitFor(2);
    clock.advance(249);
    await ticks();
    expect(c.events).toHaveLength(2);
    clock.advance(1);
    await c.waitFor(3);
    expect(c.events.map((e) => JSON.parse(e.data))).toEqual([{ n: 1 }, { n: 2 }, { n: 3 }]);
    c.close();
    for (let i = 0; i < 50 && !ended; i++) await ticks();
    expect(ended).toBe(true);
    clock.advance(10_000);
    await ticks();
    expect(n).toBe(3);
    expect(clock.pending).toBe(0);
  });

  it('README (spec: default not shown): sseInterval without intervalMs ticks every 1000 ms', async () => {
    const clock = new ManualClock();
    const app = createApp({ clock, sse: { heartbeatMs: 0 } });
    let n = 0;
    app.get('/tick', (ctx) => ctx.sseInterval(() => ++n));
    const port = await serve(app);
    const c = await openSse(port, '/tick');
    await c.waitFor(1);
    clock.advance(999);
    await ticks();
    expect(c.events).toHaveLength(1);
    clock.advance(1);
    await c.waitFor(2);
    expect(c.events.map((e) => e.data)).toEqual(['1', '2']);
    c.close();
  });

  it('issue #10 item 8: HEAD on an SSE route gets the headers and the response ends; the socket answers the next request', async () => {
    const app = createApp();
    app.get('/ev', (ctx) => ctx.sseInterval(() => 'x', 1000));
    app.get('/ping', (ctx) => ctx.send('pong'));
    const port = await serve(app);
    // Two requests on one keep-alive socket, written together.
    const net = await import('node:net');
    const sock = net.connect(port, '127.0.0.1');
    const got = await new Promise<string>((resolve, reject) => {
      let text = '';
      sock.setEncoding('utf8');
      sock.on('data', (d: string) => {
        text += d;
        if (text.includes('pong')) resolve(text);
      });
      sock.on('error', reject);
      sock.write(
        'HEAD /ev HTTP/1.1\r\nHost: x\r\n\r\nGET /ping HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n',
      );
    });
    sock.destroy();
    expect(got).toMatch(/^HTTP\/1\.1 200/);
    expect(got).toMatch(/content-type: text\/event-stream/i);
    expect(got).toContain('pong');
  });

  it('issue #10 item 9: app.close() ends open streams and resolves; a stream opened while closing ends at once', async () => {
    const app = createApp({ sse: { heartbeatMs: 0 } });
    let gate!: () => void;
    const late = new Promise<void>((r) => {
      gate = r;
    });
    app.get('/ev', (ctx) => {
      ctx.sseEvent('hi', 1);
      return ctx.sseStream();
    });
    app.get('/late', async (ctx) => {
      await late;
      ctx.sseEvent('hi', 1);
      return ctx.sseStream();
    });
    const server = await app.listen(0, '127.0.0.1');
    const port = (server.address() as { port: number }).port;
    const open = await openSse(port, '/ev');
    await open.waitFor(1);
    const lateReq = new Promise<number>((resolve) => {
      request({ host: '127.0.0.1', port, path: '/late', agent: false }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
        res.on('close', () => resolve(res.statusCode ?? 0));
      })
        .on('error', () => resolve(-1))
        .end();
    });
    await ticks(10);
    const closing = app.close({ timeoutMs: 60_000 });
    gate();
    await closing;
    await open.ended;
    expect(await lateReq).not.toBe(0);
  });

  it('README: ctx.sseStream() is safe after the client left; writes are no-ops', async () => {
    const app = createApp({ sse: { heartbeatMs: 0 } });
    let stream!: SseStream;
    app.get('/ev', (ctx) => {
      stream = ctx.sseStream();
      stream.send('a', 1);
      return stream;
    });
    const port = await serve(app);
    const c = await openSse(port, '/ev');
    await c.waitFor(1);
    c.close();
    for (let i = 0; i < 50 && !stream.closed; i++) await ticks();
    expect(stream.closed).toBe(true);
    expect(() => stream.send('b', 2)).not.toThrow();
  });

  it('README: an event name with CR/LF throws a RangeError (no event injection)', async () => {
    const app = createApp();
    let caught: unknown;
    app.get('/ev', (ctx) => {
      try {
        ctx.sseEvent('a\nevent: evil', 1);
      } catch (e) {
        caught = e;
      }
      return ctx.send('done');
    });
    const port = await serve(app);
    await call(port, { path: '/ev' });
    expect(caught).toBeInstanceOf(RangeError);
  });
});

describe('issue #10 item 9: close({ timeoutMs }) forces remaining connections closed after the timeout', () => {
  it('a connection still sending its request (no request in flight yet) is closed after timeoutMs on the app clock', async () => {
    const clock = new ManualClock();
    const app = createApp({ clock, headersTimeout: 60_000, requestTimeout: 120_000 });
    app.get('/', (ctx) => ctx.send('x'));
    const server = await app.listen(0, '127.0.0.1');
    const port = (server.address() as { port: number }).port;
    const net = await import('node:net');
    const sock = net.connect(port, '127.0.0.1');
    const closed = new Promise<void>((r) => sock.on('close', () => r()));
    sock.on('error', () => {});
    await new Promise<void>((r) => sock.on('connect', () => r()));
    sock.write('GET / HTTP/1.1\r\nHost: x\r\n'); // headers never finished
    await ticks(10);
    let resolved = false;
    const closing = app.close({ timeoutMs: 1000 }).then(() => {
      resolved = true;
    });
    await ticks(10);
    expect(resolved).toBe(false);
    clock.advance(1000);
    await closing;
    await closed;
    expect(resolved).toBe(true);
  });
});
