// More rows of spec 001 and README choices where the spec says "not shown": sseEvent ids,
// sseInterval's skip / error rules, one response per request, status chaining into sendFile,
// validate's min on numbers and email, and issue #13's slow-client accounting.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createApp, createEventHub } from '../../src/index';
import { call, ManualClock, openSse, postJson, serve, ticks } from './helpers';

describe('spec 001 SSE helpers, README details', () => {
  it('README: sseEvent on a plain stream carries the next id (1, 2, ...)', async () => {
    const app = createApp({ sse: { heartbeatMs: 0 } });
    app.get('/ev', (ctx) => {
      ctx.sseEvent('a', 1);
      ctx.sseEvent('b', 'two');
      return ctx.sseStream();
    });
    const port = await serve(app);
    const c = await openSse(port, '/ev');
    const events = await c.waitFor(2);
    expect(events).toEqual([
      { event: 'a', data: '1', id: '1' },
      { event: 'b', data: 'two', id: '2' },
    ]);
    c.close();
  });

  it('README: an sseInterval tick returning undefined is skipped; a throwing fn goes to onError and ends the stream', async () => {
    const clock = new ManualClock();
    const app = createApp({ clock, sse: { heartbeatMs: 0 } });
    const errors: unknown[] = [];
    app.onError((err) => {
      errors.push(err);
    });
    let n = 0;
    app.get('/tick', (ctx) =>
      ctx.sseInterval(() => {
        n++;
        if (n === 2) return undefined;
        if (n === 4) throw new Error('tick failed');
        return n;
      }, 100),
    );
    const port = await serve(app);
    const c = await openSse(port, '/tick');
    await c.waitFor(1);
    clock.advance(100); // n = 2: skipped
    await ticks();
    clock.advance(100); // n = 3
    await c.waitFor(2);
    clock.advance(100); // n = 4: throws
    await c.ended;
    expect(c.events.map((e) => e.data)).toEqual(['1', '3']);
    expect(errors.some((e) => e instanceof Error && e.message === 'tick failed')).toBe(true);
    clock.advance(1000);
    expect(n).toBe(4);
  });

  it('README: an async sseInterval fn is awaited; ticks are skipped while it is pending', async () => {
    const clock = new ManualClock();
    const app = createApp({ clock, sse: { heartbeatMs: 0 } });
    let calls = 0;
    let release!: (v: number) => void;
    app.get('/tick', (ctx) =>
      ctx.sseInterval(() => {
        calls++;
        return new Promise<number>((r) => {
          release = r;
        });
      }, 100),
    );
    const port = await serve(app);
    const c = await openSse(port, '/tick');
    await ticks();
    expect(calls).toBe(1);
    clock.advance(300);
    await ticks();
    expect(calls).toBe(1);
    release(7);
    await c.waitFor(1);
    expect(c.events[0]?.data).toBe('7');
    c.close();
  });
});

describe('spec 001 response operations, README details', () => {
  it('README: one response operation per request; a second throws', async () => {
    const app = createApp();
    let second: unknown;
    app.get('/twice', (ctx) => {
      const r = ctx.json({ first: true });
      try {
        ctx.json({ second: true });
      } catch (e) {
        second = e;
      }
      return r;
    });
    const port = await serve(app);
    expect((await call(port, { path: '/twice' })).json()).toEqual({ first: true });
    expect(second).toBeInstanceOf(Error);
  });

  it('spec ctx.status "allows chaining to a response operation": status(404).sendFile, status(204).send', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'bb-status-'));
    try {
      writeFileSync(join(dir, 'nf.html'), 'not found page');
      const app = createApp();
      app.get('/nf', (ctx) => ctx.status(404).sendFile('nf.html', { root: dir }));
      app.get('/empty', (ctx) => ctx.status(204).send('ignored'));
      const port = await serve(app);
      const nf = await call(port, { path: '/nf' });
      expect(nf.status).toBe(404);
      expect(nf.text).toBe('not found page');
      const empty = await call(port, { path: '/empty' });
      expect(empty.status).toBe(204);
      expect(empty.body.length).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('README: ctx.status with a 1xx code is a RangeError', async () => {
    const app = createApp();
    let caught: unknown;
    app.get('/s', (ctx) => {
      try {
        ctx.status(101);
      } catch (e) {
        caught = e;
      }
      return ctx.send('x');
    });
    const port = await serve(app);
    await call(port, { path: '/s' });
    expect(caught).toBeInstanceOf(RangeError);
  });
});

describe('spec 001 ctx.validate rule keys, README details', () => {
  it('min on a number rule bounds the value (README); query strings are coerced', async () => {
    const app = createApp();
    app.get('/n', (ctx) => ctx.json(ctx.validate({ age: { type: 'number', min: 18 } })));
    const port = await serve(app);
    expect((await call(port, { path: '/n?age=21' })).json()).toEqual({ age: 21 });
    const low = await call(port, { path: '/n?age=5' });
    expect(low.status).toBe(400);
    expect((low.json() as { fields: { rule: string }[] }).fields[0]?.rule).toBe('min');
  });

  it('type email: a valid address passes, an address without a dot in the domain fails', async () => {
    const app = createApp();
    app.post('/e', (ctx) => ctx.json(ctx.validate({ email: { type: 'email', required: true } })));
    const port = await serve(app);
    expect((await postJson(port, '/e', { email: 'a.b+c@mail.example.org' })).status).toBe(200);
    expect((await postJson(port, '/e', { email: 'a@localhost' })).status).toBe(400);
    expect((await postJson(port, '/e', { email: 'no-at-sign' })).status).toBe(400);
  });

  it('an optional missing field is left out of the result; min on a string is its length', async () => {
    const app = createApp();
    app.post('/o', (ctx) =>
      ctx.json(ctx.validate({ nick: { type: 'string', min: 3 }, name: { type: 'string' } })),
    );
    const port = await serve(app);
    expect((await postJson(port, '/o', { name: 'x' })).json()).toEqual({ name: 'x' });
    expect((await postJson(port, '/o', { nick: 'ab' })).status).toBe(400);
  });
});

describe('issue #13: a slow client that is dropped is counted and reported', () => {
  it('a client that reads nothing is disconnected past sse.maxBufferedBytes; onSlowClient and metrics.slowDrops say so', async () => {
    const slow: { requestId: string; topics: readonly string[] }[] = [];
    const hub = createEventHub({ onSlowClient: (info) => slow.push(info) });
    const app = createApp({ sse: { heartbeatMs: 0, maxBufferedBytes: 64 * 1024 } });
    app.get('/events', (ctx) => hub.connect(ctx, { topics: ['t'] }));
    const port = await serve(app);
    const sock = connect(port, '127.0.0.1');
    sock.on('error', () => {});
    const closed = new Promise<void>((r) => sock.on('close', () => r()));
    sock.write('GET /events HTTP/1.1\r\nHost: x\r\nX-Request-ID: slow-1\r\n\r\n');
    sock.pause(); // never reads
    for (let i = 0; i < 100 && hub.size === 0; i++) await ticks();
    expect(hub.size).toBe(1);
    const chunk = 'q'.repeat(16 * 1024);
    for (let i = 0; i < 2000 && slow.length === 0; i++) {
      await hub.publish('e', chunk);
      await ticks(1);
    }
    expect(slow).toEqual([{ requestId: 'slow-1', topics: ['t'] }]);
    expect(hub.metrics.slowDrops).toBe(1);
    // The kernel still holds what was queued before the drop; once the client reads it, it
    // finds the connection closed.
    sock.resume();
    await closed;
    expect(hub.size).toBe(0);
    await hub.close();
  }, 30_000);
});
