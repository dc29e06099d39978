// Issue #10: items 1, 2, 12, 13, 14 and "What users of Fastify, Hono and Express also expect",
// each from the client's request over a real socket, then the next request is answered.
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { cors, createApp, HttpException } from '../../src/index';
import { call, postJson, serve, ticks } from './helpers';

describe('issue #10 item 1: the error path never throws', () => {
  for (const mode of ['sync', 'async'] as const) {
    it(`an HttpException with a header Node refuses (${mode} handler) gives a bare 500, reported; the next request is answered`, async () => {
      const app = createApp();
      const reported: unknown[] = [];
      app.onError((err) => {
        reported.push(err);
      });
      const boom = () => {
        throw new HttpException(400, 'x', { headers: { 'x-bad': 'a\r\nb' } });
      };
      app.get('/boom', mode === 'sync' ? boom : async () => boom());
      app.get('/undef', () => {
        throw new HttpException(400, 'x', {
          headers: { 'x-undef': undefined as unknown as string },
        });
      });
      app.get('/ping', (ctx) => ctx.send('pong'));
      const port = await serve(app);
      expect((await call(port, { path: '/boom' })).status).toBe(500);
      expect((await call(port, { path: '/undef' })).status).toBe(500);
      expect(reported.length).toBeGreaterThanOrEqual(2);
      expect((await call(port, { path: '/ping' })).text).toBe('pong');
    });
  }
});

describe('issue #10 item 2: orphaned work is caught and reported', () => {
  it('a middleware calling next() without returning it still answers; a later failure goes to onError', async () => {
    const app = createApp();
    const reported: unknown[] = [];
    app.onError((err) => {
      reported.push(err);
    });
    app.use((_ctx, next) => {
      void next();
    });
    app.get('/ok', async (ctx) => {
      await ticks(1);
      return ctx.json({ ok: 1 });
    });
    app.get('/fail', async () => {
      await ticks(1);
      throw new Error('late');
    });
    app.get('/ping', (ctx) => ctx.send('pong'));
    const port = await serve(app);
    expect((await call(port, { path: '/ok' })).json()).toEqual({ ok: 1 });
    expect((await call(port, { path: '/fail' })).status).toBe(500);
    await ticks();
    expect(reported.some((e) => e instanceof Error && e.message === 'late')).toBe(true);
    expect((await call(port, { path: '/ping' })).text).toBe('pong');
  });
});

describe('issue #10 item 12: middleware sees the final status', () => {
  it('onResponse reports 404 / 418 / 500 as the client got them', async () => {
    const app = createApp();
    app.onError(() => {});
    const seen: [string, number, boolean][] = [];
    app.onResponse((ctx, { status, finished }) => {
      seen.push([ctx.path, status, finished]);
    });
    app.get('/teapot', () => {
      throw new HttpException(418);
    });
    app.get('/err', () => {
      throw new Error('x');
    });
    app.get('/ok', (ctx) => ctx.send('ok'));
    const port = await serve(app);
    for (const path of ['/missing', '/teapot', '/err', '/ok']) await call(port, { path });
    for (let i = 0; i < 20 && seen.length < 4; i++) await ticks();
    expect(seen).toEqual([
      ['/missing', 404, true],
      ['/teapot', 418, true],
      ['/err', 500, true],
      ['/ok', 200, true],
    ]);
  });
});

describe('issue #10 item 13: server timeouts have safe defaults and options', () => {
  it('listen() applies requestTimeout / headersTimeout / keepAliveTimeout (README defaults) and createApp options', async () => {
    const app = createApp();
    app.get('/', (ctx) => ctx.send('x'));
    const server = await app.listen(0, '127.0.0.1');
    expect([server.requestTimeout, server.headersTimeout, server.keepAliveTimeout]).toEqual([
      30000, 10000, 5000,
    ]);
    await app.close();
    const custom = createApp({
      requestTimeout: 20000,
      headersTimeout: 7000,
      keepAliveTimeout: 65000,
    });
    const s2 = await custom.listen(0, '127.0.0.1');
    expect([s2.requestTimeout, s2.headersTimeout, s2.keepAliveTimeout]).toEqual([
      20000, 7000, 65000,
    ]);
    await custom.close();
  });
});

describe('issue #10 item 14: smaller items', () => {
  it('a JSON body with a __proto__ key is rejected (400)', async () => {
    const app = createApp();
    app.post('/j', (ctx) => ctx.json({ got: ctx.body }));
    const port = await serve(app);
    const r = await call(port, {
      method: 'POST',
      path: '/j',
      headers: { 'content-type': 'application/json' },
      body: '{"a":1,"__proto__":{"polluted":true}}',
    });
    expect(r.status).toBe(400);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('an upload over the body limit gets 413, not a reset', async () => {
    const app = createApp({ bodyLimit: 1000 });
    app.post('/u', (ctx) => ctx.json({ n: String(ctx.body).length }));
    const port = await serve(app);
    const r = await postJson(port, '/u', { s: 'x'.repeat(5000) });
    expect(r.status).toBe(413);
  });

  it('the router parameter length limit (maxParamLength, README default 100): longer is 404', async () => {
    const app = createApp();
    app.get('/p/:id', (ctx) => ctx.send(ctx.params.id ?? ''));
    const port = await serve(app);
    expect((await call(port, { path: `/p/${'a'.repeat(100)}` })).status).toBe(200);
    expect((await call(port, { path: `/p/${'a'.repeat(101)}` })).status).toBe(404);
  });
});

describe('issue #10: parity with Fastify / Hono / Express', () => {
  it('cors(): a preflight is answered with Access-Control-* for an allowed origin; credentials; a refused origin gets none', async () => {
    const app = createApp();
    app.use(cors({ origin: ['https://app.example'], credentials: true, maxAge: 600 }));
    app.post('/x', (ctx) => ctx.send('ok'));
    const port = await serve(app);
    const pre = await call(port, {
      method: 'OPTIONS',
      path: '/x',
      headers: { origin: 'https://app.example', 'access-control-request-method': 'POST' },
    });
    expect(pre.status).toBe(204);
    expect(pre.headers['access-control-allow-origin']).toBe('https://app.example');
    expect(pre.headers['access-control-allow-credentials']).toBe('true');
    expect(pre.headers['access-control-max-age']).toBe('600');
    const bad = await call(port, {
      method: 'OPTIONS',
      path: '/x',
      headers: { origin: 'https://evil.example', 'access-control-request-method': 'POST' },
    });
    expect(bad.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('cors(): allowed origins as a function', async () => {
    const app = createApp();
    app.use(cors({ origin: (o) => o.endsWith('.trusted.example') }));
    app.get('/x', (ctx) => ctx.send('ok'));
    const port = await serve(app);
    const ok = await call(port, { path: '/x', headers: { origin: 'https://a.trusted.example' } });
    expect(ok.headers['access-control-allow-origin']).toBe('https://a.trusted.example');
    const no = await call(port, { path: '/x', headers: { origin: 'https://b.example' } });
    expect(no.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('compression: gzip and brotli negotiated; small bodies and SSE are not compressed', async () => {
    const app = createApp({ compression: true });
    const big = { text: 'hello '.repeat(1000) };
    app.get('/big', (ctx) => ctx.json(big));
    app.get('/small', (ctx) => ctx.json({ a: 1 }));
    app.get('/ev', (ctx) => {
      ctx.sseEvent('x', 'y'.repeat(5000));
      ctx.sseStream().close();
      return ctx.sseStream();
    });
    const port = await serve(app);
    const gz = await call(port, { path: '/big', headers: { 'accept-encoding': 'gzip' } });
    expect(gz.headers['content-encoding']).toBe('gzip');
    expect(JSON.parse(gunzipSync(gz.body).toString())).toEqual(big);
    const br = await call(port, { path: '/big', headers: { 'accept-encoding': 'br, gzip' } });
    expect(br.headers['content-encoding']).toBe('br');
    expect(JSON.parse(brotliDecompressSync(br.body).toString())).toEqual(big);
    const small = await call(port, { path: '/small', headers: { 'accept-encoding': 'gzip' } });
    expect(small.headers['content-encoding']).toBeUndefined();
    const ev = await call(port, { path: '/ev', headers: { 'accept-encoding': 'gzip' } });
    expect(ev.headers['content-encoding']).toBeUndefined();
  });

  it('ctx.redirect(url, status) with header validation', async () => {
    const app = createApp();
    let caught: unknown;
    app.get('/r', (ctx) => ctx.redirect('/there?a=1', 301));
    app.get('/bad', (ctx) => {
      try {
        ctx.redirect('/x\r\nSet-Cookie: a=1');
      } catch (e) {
        caught = e;
      }
      return ctx.send('no');
    });
    const port = await serve(app);
    const r = await call(port, { path: '/r' });
    expect(r.status).toBe(301);
    expect(r.headers.location).toBe('/there?a=1');
    await call(port, { path: '/bad' });
    expect(caught).toBeInstanceOf(RangeError);
  });

  it('ctx.protocol / hostname / secure honour X-Forwarded-Proto/Host only through trust proxy', async () => {
    const untrusted = createApp();
    const trusted = createApp({ trustProxy: true });
    for (const app of [untrusted, trusted])
      app.get('/w', (ctx) =>
        ctx.json({ protocol: ctx.protocol, hostname: ctx.hostname, secure: ctx.secure }),
      );
    const headers = {
      host: 'inner:8080',
      'x-forwarded-proto': 'https',
      'x-forwarded-host': 'shop.example',
    };
    const a = await call(await serve(untrusted), { path: '/w', headers });
    expect(a.json()).toEqual({ protocol: 'http', hostname: 'inner', secure: false });
    const b = await call(await serve(trusted), { path: '/w', headers });
    expect(b.json()).toEqual({ protocol: 'https', hostname: 'shop.example', secure: true });
  });

  it('per-route body limits and text / raw body parsers', async () => {
    const app = createApp({ bodyLimit: 100, parsers: { text: ['text/*'] } });
    app.post('/t', (ctx) => ctx.json({ body: ctx.body }));
    app.post('/raw', { bodyLimit: 10_000, parsers: { raw: ['application/octet-stream'] } }, (ctx) =>
      ctx.json({ isBuffer: Buffer.isBuffer(ctx.body), n: (ctx.body as Buffer).length }),
    );
    const port = await serve(app);
    const t = await call(port, {
      method: 'POST',
      path: '/t',
      headers: { 'content-type': 'text/plain' },
      body: 'hello',
    });
    expect(t.json()).toEqual({ body: 'hello' });
    const raw = await call(port, {
      method: 'POST',
      path: '/raw',
      headers: { 'content-type': 'application/octet-stream' },
      body: Buffer.alloc(5000, 1),
    });
    expect(raw.json()).toEqual({ isBuffer: true, n: 5000 });
    const over = await call(port, {
      method: 'POST',
      path: '/t',
      headers: { 'content-type': 'text/plain' },
      body: 'x'.repeat(500),
    });
    expect(over.status).toBe(413);
  });
});
