// Spec 001 ctx.sseEvent / ctx.sseInterval rows and "Events" 1-3, on what test/blackbox/sse.test.ts
// and extras.test.ts leave open: a handler that sends events and returns nothing, the stream's
// head, both helpers on one stream, and "the framework itself emits no other events". Time runs
// on an injected manual clock.
import { connect } from 'node:net';
import { describe, expect, it } from 'vitest';
import { createApp } from '../../src/index';
import { ManualClock, openSse, serve, ticks } from '../blackbox/helpers';

describe('spec 001 ctx.sseEvent(event, data)', () => {
  it('a handler that only sends events (returning nothing) answers 200 with the stream, not a 500', async () => {
    const app = createApp({ sse: { heartbeatMs: 0 } });
    const errors: unknown[] = [];
    app.onError((err) => {
      errors.push(err);
    });
    const returned: unknown[] = [];
    app.get('/ev', (ctx) => {
      returned.push(ctx.sseEvent('greeting', { hello: 'world' }));
    });
    const port = await serve(app);
    const c = await openSse(port, '/ev');
    expect(c.status).toBe(200);
    const [event] = await c.waitFor(1);
    expect(event?.event).toBe('greeting');
    expect(JSON.parse(event?.data ?? '')).toEqual({ hello: 'world' });
    // true: sent to a connected client (README: false once it left).
    expect(returned).toEqual([true]);
    await ticks();
    expect(errors).toEqual([]);
    c.close();
  });

  it('the stream head: Content-Type text/event-stream, Cache-Control no-cache, no Content-Length', async () => {
    const app = createApp({ sse: { heartbeatMs: 0 } });
    app.get('/ev', (ctx) => {
      ctx.sseEvent('x', {});
    });
    const port = await serve(app);
    const c = await openSse(port, '/ev');
    expect(c.headers['content-type']).toBe('text/event-stream');
    expect(c.headers['cache-control']).toBe('no-cache');
    expect(c.headers['content-length']).toBeUndefined();
    c.close();
  });

  it('the wire form of one event: an event line, the data as one JSON data line, a blank line', async () => {
    const app = createApp({ sse: { heartbeatMs: 0 } });
    app.get('/ev', (ctx) => {
      ctx.sseEvent('update', { text: 'two\nlines', n: [1, 2] });
    });
    const port = await serve(app);
    const socket = connect(port, '127.0.0.1');
    let raw = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      raw += chunk;
    });
    socket.write('GET /ev HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\n\r\n');
    for (let i = 0; i < 200 && !raw.includes('\n\n', raw.indexOf('\r\n\r\n') + 4); i++) {
      await ticks(1);
    }
    socket.destroy();
    // Chunked framing aside, the frame carries `event:` and `data:` lines (an `id:` may be there).
    expect(raw).toMatch(/event: update\n/);
    expect(raw).toContain(`data: ${JSON.stringify({ text: 'two\nlines', n: [1, 2] })}\n`);
  });
});

describe('spec 001 ctx.sseInterval(fn, intervalMs) with ctx.sseEvent, and Events 3', () => {
  it('both on one stream: named events and the interval payloads arrive in order', async () => {
    const clock = new ManualClock();
    const app = createApp({ clock, sse: { heartbeatMs: 0 } });
    let n = 0;
    app.get('/mix', (ctx) => {
      ctx.sseEvent('hello', { at: 'start' });
      return ctx.sseInterval(() => ({ n: ++n }), 100);
    });
    const port = await serve(app);
    const c = await openSse(port, '/mix');
    await c.waitFor(2);
    clock.advance(100);
    await c.waitFor(3);
    expect(c.events.map((e) => [e.event, JSON.parse(e.data)])).toEqual([
      ['hello', { at: 'start' }],
      ['message', { n: 1 }],
      ['message', { n: 2 }],
    ]);
    c.close();
  });

  it("a string from fn is the event's data as is; a number its JSON text", async () => {
    const clock = new ManualClock();
    const app = createApp({ clock, sse: { heartbeatMs: 0 } });
    let n = 0;
    app.get('/s', (ctx) => ctx.sseInterval(() => (++n % 2 === 1 ? `tick ${n}` : n), 50));
    const port = await serve(app);
    const c = await openSse(port, '/s');
    await c.waitFor(1);
    clock.advance(50);
    await c.waitFor(2);
    expect(c.events.map((e) => e.data)).toEqual(['tick 1', '2']);
    c.close();
  });

  it('Events 3: a stream carries only what the handler sent, however long it stays idle (heartbeats are comments)', async () => {
    const clock = new ManualClock();
    const app = createApp({ clock, sse: { heartbeatMs: 1000 } });
    app.get('/only', (ctx) => {
      ctx.sseEvent('one', { a: 1 });
    });
    const port = await serve(app);
    const c = await openSse(port, '/only');
    await c.waitFor(1);
    for (let i = 0; i < 5; i++) {
      clock.advance(1000);
      await ticks();
    }
    expect(c.events.map((e) => e.event)).toEqual(['one']);
    c.close();
  });

  it('the call the handler returns settles once the client has gone, and fn is not called again', async () => {
    const clock = new ManualClock();
    const app = createApp({ clock, sse: { heartbeatMs: 0 } });
    let calls = 0;
    let settled = false;
    app.get('/t', async (ctx) => {
      const done = ctx.sseInterval(() => ++calls, 100);
      expect(done).toBeInstanceOf(Promise);
      await done;
      settled = true;
    });
    const port = await serve(app);
    const c = await openSse(port, '/t');
    await c.waitFor(1);
    expect(settled).toBe(false);
    c.close();
    for (let i = 0; i < 50 && !settled; i++) await ticks();
    expect(settled).toBe(true);
    const before = calls;
    clock.advance(1000);
    await ticks();
    expect(calls).toBe(before);
    expect(clock.pending).toBe(0);
  });
});
