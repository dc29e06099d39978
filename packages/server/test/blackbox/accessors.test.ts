// Spec 001 "Resources and their fields" and "What the service does" 1-2, issue #10 items 6 and
// 14, issue #14 item 5: every request accessor through a real loopback socket.
import { describe, expect, it } from 'vitest';
import {
  type Context,
  createApp,
  isReleasedContextError,
  ReleasedContextError,
} from '../../src/index';
import { call, serve } from './helpers';

describe('spec 001: routes and request accessors', () => {
  it('spec "What the service does" 1: app.get / app.post register handlers that receive ctx', async () => {
    const app = createApp();
    app.get('/g', (ctx) => ctx.json({ via: 'get', method: ctx.method }));
    app.post('/p', (ctx) => ctx.json({ via: 'post', method: ctx.method }));
    const port = await serve(app);
    expect((await call(port, { path: '/g' })).json()).toEqual({ via: 'get', method: 'GET' });
    expect((await call(port, { method: 'POST', path: '/p' })).json()).toEqual({
      via: 'post',
      method: 'POST',
    });
  });

  it('spec table ctx.path: the URL path portion, without the query string', async () => {
    const app = createApp();
    app.get('/a/b', (ctx) => ctx.json({ path: ctx.path }));
    const port = await serve(app);
    expect((await call(port, { path: '/a/b?x=1&y=2' })).json()).toEqual({ path: '/a/b' });
  });

  it('spec table ctx.method: the HTTP method string (GET, POST, PUT)', async () => {
    const app = createApp();
    const seen: string[] = [];
    const h = (ctx: Context) => {
      seen.push(ctx.method);
      return ctx.send('ok');
    };
    app.get('/m', h);
    app.post('/m', h);
    app.put('/m', h);
    const port = await serve(app);
    for (const method of ['GET', 'POST', 'PUT']) await call(port, { method, path: '/m' });
    expect(seen).toEqual(['GET', 'POST', 'PUT']);
  });

  it('spec table ctx.query(key): the parsed, decoded query parameter value; undefined when absent (README)', async () => {
    const app = createApp();
    app.get('/q', (ctx) =>
      ctx.json({ a: ctx.query('a'), b: ctx.query('b'), missing: ctx.query('zz') ?? null }),
    );
    const port = await serve(app);
    const r = await call(port, { path: '/q?a=1&b=hello%20world' });
    expect(r.json()).toEqual({ a: '1', b: 'hello world', missing: null });
  });

  it('spec table ctx.params: route path parameters for a segment such as :id', async () => {
    const app = createApp();
    app.get('/users/:id/posts/:post', (ctx) => ctx.json({ ...ctx.params }));
    const port = await serve(app);
    expect((await call(port, { path: '/users/42/posts/x%20y' })).json()).toEqual({
      id: '42',
      post: 'x y',
    });
  });

  it('spec table ctx.ip / ctx.ips: the TCP peer and an empty ips list while trust proxy is off', async () => {
    const app = createApp();
    app.get('/ip', (ctx) => ctx.json({ ip: ctx.ip, ips: ctx.ips, remote: ctx.req.remoteAddress }));
    const port = await serve(app);
    const r = await call(port, { path: '/ip', headers: { 'x-forwarded-for': '203.0.113.7' } });
    expect(r.json()).toEqual({ ip: '127.0.0.1', ips: [], remote: '127.0.0.1' });
  });

  it('spec table ctx.ip: with setTrustProxy(true), the first hop of X-Forwarded-For; ctx.ips the proxy addresses', async () => {
    const app = createApp();
    app.setTrustProxy(true);
    app.get('/ip', (ctx) => ctx.json({ ip: ctx.ip, ips: ctx.ips }));
    const port = await serve(app);
    const r = await call(port, {
      path: '/ip',
      headers: { 'x-forwarded-for': '203.0.113.7, 198.51.100.2' },
    });
    const body = r.json() as { ip: string; ips: string[] };
    expect(body.ip).toBe('203.0.113.7');
    expect(body.ips).toEqual(['203.0.113.7', '198.51.100.2']);
  });

  it('spec table ctx.req.remoteAddress: the spoof-resistant TCP peer, unchanged by X-Forwarded-For under trust proxy', async () => {
    const app = createApp();
    app.setTrustProxy(true);
    app.get('/ip', (ctx) => ctx.json({ remote: ctx.req.remoteAddress }));
    const port = await serve(app);
    const r = await call(port, { path: '/ip', headers: { 'x-forwarded-for': '203.0.113.7' } });
    expect(r.json()).toEqual({ remote: '127.0.0.1' });
  });

  it('issue #10 item 14: ctx.ip is always an IP, never garbage or [v6]:port from a trusted header', async () => {
    const app = createApp();
    app.setTrustProxy(true);
    app.get('/ip', (ctx) => ctx.json({ ip: ctx.ip }));
    const port = await serve(app);
    const garbage = await call(port, { path: '/ip', headers: { 'x-forwarded-for': 'garbage' } });
    expect((garbage.json() as { ip: string }).ip).toBe('127.0.0.1');
    const v6 = await call(port, {
      path: '/ip',
      headers: { 'x-forwarded-for': '[2001:db8::1]:8443' },
    });
    expect((v6.json() as { ip: string }).ip).toBe('2001:db8::1');
  });

  it('spec table ctx.requestId: the incoming X-Request-ID is the correlation id and is echoed', async () => {
    const app = createApp();
    app.get('/id', (ctx) => ctx.json({ id: ctx.requestId }));
    const port = await serve(app);
    const r = await call(port, { path: '/id', headers: { 'x-request-id': 'abc-123' } });
    expect(r.json()).toEqual({ id: 'abc-123' });
    expect(r.headers['x-request-id']).toBe('abc-123');
  });

  it('spec table ctx.requestId: unique per request when the client sends none', async () => {
    const app = createApp();
    app.get('/id', (ctx) => ctx.json({ id: ctx.requestId }));
    const port = await serve(app);
    const ids = new Set<string>();
    for (let i = 0; i < 20; i++) {
      const r = await call(port, { path: '/id' });
      const { id } = r.json() as { id: string };
      expect(id.length).toBeGreaterThan(0);
      expect(r.headers['x-request-id']).toBe(id);
      ids.add(id);
    }
    expect(ids.size).toBe(20);
  });

  it('issue #10 item 14: requestIdHeader: false ignores an incoming X-Request-ID', async () => {
    const app = createApp({ requestIdHeader: false });
    app.get('/id', (ctx) => ctx.json({ id: ctx.requestId }));
    const port = await serve(app);
    const r = await call(port, { path: '/id', headers: { 'x-request-id': 'chosen-by-client' } });
    expect((r.json() as { id: string }).id).not.toBe('chosen-by-client');
  });

  it('README ctx reference: ctx.header(name) is case-insensitive and ctx.cookie(name) URL-decodes', async () => {
    const app = createApp();
    app.get('/h', (ctx) => ctx.json({ h: ctx.header('X-Thing'), c: ctx.cookie('who') }));
    const port = await serve(app);
    const r = await call(port, {
      path: '/h',
      headers: { 'x-thing': 'v', cookie: 'a=1; who=j%C3%B6rg%20x' },
    });
    expect(r.json()).toEqual({ h: 'v', c: 'jörg x' });
  });
});

describe('spec 001 "What the service does" 2 / issue #10 item 6: pooled ctx never cross-wires', () => {
  it('a ctx kept past its response does not answer the next request; ReleasedContextError goes to onError', async () => {
    const app = createApp({ development: false });
    const errors: unknown[] = [];
    app.onError((err) => {
      errors.push(err);
    });
    let kept: Context | undefined;
    app.get('/leak', (ctx) => {
      kept = ctx;
      return ctx.json({ who: 'leak' });
    });
    let release!: () => void;
    const gate = new Promise<void>((r) => {
      release = r;
    });
    app.get('/victim', async (ctx) => {
      await gate;
      return ctx.json({ who: 'victim' });
    });
    const port = await serve(app);
    expect((await call(port, { path: '/leak' })).json()).toEqual({ who: 'leak' });
    const victim = call(port, { path: '/victim' });
    // The victim's handler is running now; the stale ctx tries to answer.
    await new Promise((r) => setTimeout(r, 20));
    expect(() => kept?.json({ who: 'leak', late: true })).not.toThrow();
    release();
    expect((await victim).json()).toEqual({ who: 'victim' });
    expect(errors.some(isReleasedContextError)).toBe(true);
    expect(errors.find(isReleasedContextError)).toBeInstanceOf(ReleasedContextError);
  });

  it("a kept ctx still reads its own request data, never a later request's (README Pooling)", async () => {
    const app = createApp({ development: false });
    app.onError(() => {});
    const kept: Context[] = [];
    app.get('/u/:id', (ctx) => {
      kept.push(ctx);
      return ctx.json({ id: ctx.params.id });
    });
    const port = await serve(app);
    for (let i = 0; i < 50; i++) await call(port, { path: `/u/${i}?q=${i}` });
    kept.forEach((ctx, i) => {
      expect(ctx.params.id).toBe(String(i));
      expect(ctx.query('q')).toBe(String(i));
      expect(ctx.path).toBe(`/u/${i}`);
    });
  });

  it("issue #10 item 6: 10,000 interleaved requests with stale ctx calls never answer with another request's data", async () => {
    const app = createApp({ development: false });
    let released = 0;
    app.onError((err) => {
      if (isReleasedContextError(err)) released++;
    });
    const stale: Context[] = [];
    app.get('/n/:n', async (ctx) => {
      const n = ctx.params.n;
      // Every stale ctx from earlier requests tries to answer this one's slot.
      // A ctx whose response is out but not yet released throws (README: "a second throws");
      // a released one is dropped silently. Neither may write into this request.
      for (const s of stale.splice(0)) {
        try {
          s.json({ n: 'stale' });
        } catch {}
      }
      if (Number(n) % 2 === 0) await Promise.resolve();
      stale.push(ctx);
      return ctx.json({ n });
    });
    let wrong = 0;
    for (let batch = 0; batch < 100; batch++) {
      const replies = await Promise.all(
        Array.from({ length: 100 }, (_, i) => {
          const n = String(batch * 100 + i);
          return app.inject({ method: 'GET', url: `/n/${n}` }).then((r) => {
            if ((r.json() as { n: string }).n !== n) wrong++;
          });
        }),
      );
      expect(replies).toHaveLength(100);
    }
    expect(wrong).toBe(0);
    expect(released).toBeGreaterThan(0);
  }, 60_000);
});

describe('issue #14 item 5: ctx internals are not reachable', () => {
  it('ctx has no `_`-prefixed own members', async () => {
    const app = createApp();
    let keys: string[] = [];
    app.get('/k', (ctx) => {
      keys = Object.keys(ctx);
      for (
        let o = Object.getPrototypeOf(ctx);
        o && o !== Object.prototype;
        o = Object.getPrototypeOf(o)
      )
        keys.push(...Object.getOwnPropertyNames(o));
      return ctx.send('ok');
    });
    const port = await serve(app);
    await call(port, { path: '/k' });
    expect(keys.filter((k) => k.startsWith('_'))).toEqual([]);
  });
});
