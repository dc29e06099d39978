// Spec 001 "Endpoints" response rows (ctx.status, ctx.json, ctx.send, ctx.cacheControl,
// ctx.setCookie), checked the way the spec words them: exact header values where the spec names
// one, each documented option on its own, and the helpers called one per statement as well as
// chained. What test/blackbox/responses.test.ts already pins is not repeated here.
import { describe, expect, it } from 'vitest';
import { type CacheControlOptions, createApp, HttpException } from '../../src/index';
import { call, postJson, serve } from '../blackbox/helpers';

describe('spec 001 ctx.json', () => {
  it('"with Content-Type application/json": exactly that value (RFC 8259 defines no charset)', async () => {
    const app = createApp();
    app.get('/j', (ctx) => ctx.json({ ok: true }));
    app.get('/o', (ctx) => ctx.send({ ok: true }));
    const port = await serve(app);
    for (const path of ['/j', '/o']) {
      const r = await call(port, { path });
      expect(r.headers['content-type']).toBe('application/json');
      expect(r.json()).toEqual({ ok: true });
    }
  });

  it('the JSON keel writes itself (error bodies, validation, GraphQL) has the same Content-Type', async () => {
    const app = createApp();
    app.get('/boom', () => {
      throw new HttpException(409, 'Taken');
    });
    app.post('/v', (ctx) => ctx.json(ctx.validate({ name: { type: 'string', required: true } })));
    app.post('/gql', (ctx) => ctx.graphql('type Query { hello: String }', { hello: () => 'hi' }));
    const port = await serve(app);
    const boom = await call(port, { path: '/boom' });
    expect(boom.status).toBe(409);
    expect(boom.headers['content-type']).toBe('application/json');
    const missing = await call(port, { path: '/nope' });
    expect(missing.status).toBe(404);
    expect(missing.headers['content-type']).toBe('application/json');
    const bad = await postJson(port, '/v', {});
    expect(bad.status).toBe(400);
    expect(bad.headers['content-type']).toBe('application/json');
    const gql = await postJson(port, '/gql', { query: '{ hello }' });
    expect(gql.headers['content-type']).toBe('application/json');
    expect(gql.json()).toEqual({ data: { hello: 'hi' } });
  });

  it('arrays, strings, numbers and null are sent as their JSON text', async () => {
    const app = createApp();
    const values: Record<string, unknown> = { arr: [1, 2], str: 'x', num: 42, nul: null };
    app.get('/v/:k', (ctx) => ctx.json(values[ctx.params.k ?? '']));
    const port = await serve(app);
    for (const [k, v] of Object.entries(values)) {
      const r = await call(port, { path: `/v/${k}` });
      expect(r.text).toBe(JSON.stringify(v));
    }
  });
});

describe('spec 001 ctx.status', () => {
  it('called on its own, the code holds for the response operation that follows', async () => {
    const app = createApp();
    app.post('/created', (ctx) => {
      ctx.status(201);
      return ctx.json({ id: 1 });
    });
    app.get('/teapot', (ctx) => {
      ctx.status(418);
      return ctx.send('short and stout');
    });
    const port = await serve(app);
    const created = await call(port, { method: 'POST', path: '/created' });
    expect(created.status).toBe(201);
    expect(created.json()).toEqual({ id: 1 });
    const teapot = await call(port, { path: '/teapot' });
    expect(teapot.status).toBe(418);
    expect(teapot.text).toBe('short and stout');
  });

  it('returns a value that chains into json and send (and status again)', async () => {
    const app = createApp();
    app.get('/a', (ctx) => ctx.status(202).json({ queued: true }));
    app.get('/b', (ctx) => ctx.status(500).status(503).send('later'));
    const port = await serve(app);
    const a = await call(port, { path: '/a' });
    expect([a.status, a.json()]).toEqual([202, { queued: true }]);
    const b = await call(port, { path: '/b' });
    expect(b.status).toBe(503);
    expect(b.text).toBe('later');
  });
});

describe('spec 001 ctx.send', () => {
  it('sends the payload as given: no quoting of text, no re-encoding of bytes', async () => {
    const app = createApp();
    app.get('/t', (ctx) => ctx.send('{"not":"parsed"}'));
    app.get('/u', (ctx) => ctx.send('héllo ✓'));
    const port = await serve(app);
    expect((await call(port, { path: '/t' })).text).toBe('{"not":"parsed"}');
    const u = await call(port, { path: '/u' });
    expect(u.text).toBe('héllo ✓');
    expect(Number(u.headers['content-length'])).toBe(Buffer.byteLength('héllo ✓'));
  });
});

describe('spec 001 ctx.cacheControl {maxAge, public, staleWhileRevalidate}', () => {
  const cases: [string, CacheControlOptions, string][] = [
    ['maxAge alone', { maxAge: 60 }, 'max-age=60'],
    ['maxAge 0', { maxAge: 0 }, 'max-age=0'],
    ['public alone', { public: true }, 'public'],
    ['staleWhileRevalidate alone', { staleWhileRevalidate: 30 }, 'stale-while-revalidate=30'],
    [
      'all three',
      { maxAge: 3600, public: true, staleWhileRevalidate: 86400 },
      'public, max-age=3600, stale-while-revalidate=86400',
    ],
  ];
  for (const [name, options, header] of cases) {
    it(`${name} -> Cache-Control: ${header}`, async () => {
      const app = createApp();
      app.get('/c', (ctx) => {
        ctx.cacheControl(options);
        return ctx.json({});
      });
      const port = await serve(app);
      const r = await call(port, { path: '/c' });
      expect(r.status).toBe(200);
      expect(r.headers['cache-control']).toBe(header);
    });
  }

  it('a later call replaces the header rather than adding a second one', async () => {
    const app = createApp();
    app.get('/c', (ctx) => ctx.cacheControl({ maxAge: 10 }).cacheControl({ maxAge: 20 }).send('x'));
    const port = await serve(app);
    expect((await call(port, { path: '/c' })).headers['cache-control']).toBe('max-age=20');
  });
});

describe('spec 001 ctx.setCookie', () => {
  it('name=value plus exactly the defaults Path=/ and SameSite=Lax, nothing else unasked', async () => {
    const app = createApp();
    app.get('/k', (ctx) => {
      ctx.setCookie('sid', 'abc123');
      return ctx.send('ok');
    });
    const port = await serve(app);
    const r = await call(port, { path: '/k' });
    expect(r.headers['set-cookie']).toEqual(['sid=abc123; Path=/; SameSite=Lax']);
  });

  it('httpOnly / secure false add nothing; maxAge 0 is sent (a cookie deletion)', async () => {
    const app = createApp();
    app.get('/k', (ctx) =>
      ctx.setCookie('sid', '', { httpOnly: false, secure: false, maxAge: 0 }).send('ok'),
    );
    const port = await serve(app);
    const [cookie] = (await call(port, { path: '/k' })).headers['set-cookie'] ?? [];
    expect(cookie).toBe('sid=; Max-Age=0; Path=/; SameSite=Lax');
  });

  it('URL-encoding: the value is readable back with decodeURIComponent; CR/LF are stripped, not encoded', async () => {
    const app = createApp();
    const value = 'a b,c;d=e%f\r\ng\rh\ni';
    app.get('/k', (ctx) => ctx.setCookie('pref', value).send('ok'));
    const port = await serve(app);
    const [cookie] = (await call(port, { path: '/k' })).headers['set-cookie'] ?? [];
    const pair = cookie?.split('; ')[0] ?? '';
    expect(pair).not.toMatch(/%0D|%0A/i);
    expect(decodeURIComponent(pair.slice('pref='.length))).toBe('a b,c;d=e%fghi');
  });

  it('each call adds its own header, in call order', async () => {
    const app = createApp();
    app.get('/k', (ctx) => {
      ctx.setCookie('a', '1');
      ctx.setCookie('b', '2', { httpOnly: true });
      return ctx.send('ok');
    });
    const port = await serve(app);
    const cookies = (await call(port, { path: '/k' })).headers['set-cookie'] ?? [];
    expect(cookies.map((c) => c.split(';')[0])).toEqual(['a=1', 'b=2']);
    expect(cookies[1]).toMatch(/; HttpOnly(;|$)/);
    expect(cookies[0]).not.toMatch(/HttpOnly/);
  });
});
