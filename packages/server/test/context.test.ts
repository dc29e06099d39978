import { Agent } from 'node:http';
import { describe, expect, it } from 'vitest';
import { appStats } from '../src/app';
import { type Context, ReleasedContextError } from '../src/index';
import { raw, socketBytes, start, trackApps, until } from './helpers';

const make = trackApps();

describe('request accessors', () => {
  it('exposes path, method, query, params, headers', async () => {
    const app = make();
    app.get('/a/:id', (ctx) =>
      ctx.json({
        path: ctx.path,
        method: ctx.method,
        q: ctx.query('q'),
        first: ctx.query('tag'),
        all: ctx.queryAll('tag'),
        missing: ctx.query('nope') ?? null,
        proto: ctx.query('__proto__') ?? null,
        id: ctx.params.id,
        ua: ctx.header('User-Agent'),
      }),
    );
    const res = await app.inject({
      url: '/a/5?q=x%20y&tag=1&tag=2&__proto__=p',
      headers: { 'user-agent': 'test' },
    });
    expect(res.json()).toEqual({
      path: '/a/5',
      method: 'GET',
      q: 'x y',
      first: '1',
      all: ['1', '2'],
      missing: null,
      proto: 'p',
      id: '5',
      ua: 'test',
    });
  });

  it('leaves a #fragment in the raw request target out of path and query, as routing does', async () => {
    const app = make();
    const seen: string[] = [];
    app.onResponse((ctx) => {
      seen.push(ctx.path);
    });
    app.get('/a/:id', (ctx) =>
      ctx.json({
        path: ctx.path,
        id: ctx.params.id,
        q: ctx.query('q') ?? null,
        frag: ctx.query('frag') ?? null,
        x: ctx.query('x') ?? null,
      }),
    );
    const { port } = await start(app);
    // Browsers never send a fragment; a raw client can, and the router cuts it off.
    const request = (target: string, last = false) =>
      `GET ${target} HTTP/1.1\r\nHost: x\r\n${last ? 'Connection: close\r\n' : ''}\r\n`;
    const out = await socketBytes(
      port,
      request('/a/5#frag') +
        request('/a/5?q=1#frag') +
        request('/a/5#frag?x=1') +
        request('/nope#/a/5', true),
      2000,
    );
    const bodies = [...out.matchAll(/\r\n\r\n(\{[^\r]*?\})(?=HTTP|$)/g)].map((m) =>
      JSON.parse(m[1]!),
    );
    expect(bodies.slice(0, 3)).toEqual([
      { path: '/a/5', id: '5', q: null, frag: null, x: null },
      { path: '/a/5', id: '5', q: '1', frag: null, x: null },
      { path: '/a/5', id: '5', q: null, frag: null, x: null },
    ]);
    expect(out).toMatch(/HTTP\/1\.1 404 /);
    await until(() => seen.length === 4);
    expect(seen).toEqual(['/a/5', '/a/5', '/a/5', '/nope']);
  });

  it('takes the path of an absolute-form target as sent, as routing does', async () => {
    const app = make();
    app.get('/*', (ctx) => ctx.json({ path: ctx.path, star: ctx.params['*'], q: ctx.query('q') }));
    const { port } = await start(app);
    const get = async (target: string) => {
      const out = await socketBytes(
        port,
        `GET ${target} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`,
        2000,
      );
      return JSON.parse(out.slice(out.indexOf('\r\n\r\n') + 4));
    };
    // The router matches the raw path: no dot-segment removal, no re-encoding.
    expect(await get('http://x/a/../b?q=1')).toEqual({ path: '/a/../b', star: 'a/../b', q: '1' });
    expect(await get('http://x/{y}')).toEqual({ path: '/{y}', star: '{y}' });
    expect(await get('http://x?q=2')).toEqual({ path: '/', star: '', q: '2' });
  });

  it('keeps a short safe X-Request-ID, replaces an unsafe one, and echoes it', async () => {
    const app = make();
    app.get('/', (ctx) => ctx.json(ctx.requestId));
    const kept = await app.inject({ url: '/', headers: { 'x-request-id': 'abc-123' } });
    expect(kept.json()).toBe('abc-123');
    expect(kept.headers['x-request-id']).toBe('abc-123');
    for (const bad of ['a b', 'x'.repeat(200), '<script>', 'a\u00e9']) {
      const res = await app.inject({ url: '/', headers: { 'x-request-id': bad } });
      expect(res.json()).not.toBe(bad);
      expect(res.headers['x-request-id']).toBe(res.json());
    }
    const a = (await app.inject({ url: '/' })).json();
    const b = (await app.inject({ url: '/' })).json();
    expect(a).not.toBe(b);
  });
});

describe('responses', () => {
  it('chains status into json, send and sets cache-control in seconds', async () => {
    const app = make();
    app.onError(() => {});
    app.get('/json', (ctx) =>
      ctx
        .cacheControl({ public: true, maxAge: 60, staleWhileRevalidate: 30 })
        .status(201)
        .json([1]),
    );
    app.get('/text', (ctx) => ctx.send('héllo'));
    app.get('/buf', (ctx) => ctx.send(Buffer.from([1, 2, 3])));
    app.get('/obj', (ctx) => ctx.send({ a: 1 }));
    app.get('/empty', (ctx) => ctx.status(204).send(null));
    app.get('/typed', (ctx) => ctx.setHeader('content-type', 'text/html').send('<b>x</b>'));
    app.get('/private', (ctx) => ctx.cacheControl({ public: false, maxAge: 1.9 }).json(null));
    app.get('/nostore', (ctx) => ctx.cacheControl({ noStore: true, maxAge: 5 }).json(null));
    app.get('/bad', (ctx) => ctx.cacheControl({ maxAge: -1 }).json(null));
    const json = await app.inject({ url: '/json' });
    expect(json.status).toBe(201);
    expect(json.headers['cache-control']).toBe('public, max-age=60, stale-while-revalidate=30');
    expect(json.json()).toEqual([1]);
    const text = await app.inject({ url: '/text' });
    expect(text.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(text.headers['content-length']).toBe(String(Buffer.byteLength('héllo')));
    expect(text.body).toBe('héllo');
    const buf = await app.inject({ url: '/buf' });
    expect(buf.headers['content-type']).toBe('application/octet-stream');
    expect(buf.headers['content-length']).toBe('3');
    expect((await app.inject({ url: '/obj' })).json()).toEqual({ a: 1 });
    const empty = await app.inject({ url: '/empty' });
    expect(empty.status).toBe(204);
    expect(empty.body).toBe('');
    expect((await app.inject({ url: '/typed' })).headers['content-type']).toBe('text/html');
    expect((await app.inject({ url: '/private' })).headers['cache-control']).toBe(
      'private, max-age=1',
    );
    expect((await app.inject({ url: '/nostore' })).headers['cache-control']).toBe('no-store');
    expect((await app.inject({ url: '/bad' })).status).toBe(500);
  });

  it('refuses a second response and an invalid status', async () => {
    const app = make();
    const errors: unknown[] = [];
    app.onError((err) => {
      errors.push(err);
    });
    app.get('/twice', (ctx) => {
      ctx.json(1);
      ctx.json(2);
    });
    app.get('/status', (ctx) => ctx.status(99).json(1));
    expect((await app.inject({ url: '/twice' })).body).toBe('1');
    expect(String(errors[0])).toMatch(/already sent/);
    expect((await app.inject({ url: '/status' })).status).toBe(500);
    expect(errors[1]).toBeInstanceOf(RangeError);
  });
});

describe('pooling', () => {
  it('serves 10,000 keep-alive requests without state bleeding between them', async () => {
    const app = make({ poolSize: 8 });
    app.use(async (ctx, next) => {
      // Any leftover state from an earlier request would show up here.
      if ((ctx.method === 'GET' && ctx.body !== undefined) || Object.keys(ctx.state).length > 0) {
        throw new Error('bleed');
      }
      ctx.state.seen = ctx.params.n;
      await next();
    });
    app.get('/n/:n', async (ctx) => {
      const n = ctx.params.n;
      if (Number(n) % 3 === 0) await new Promise((r) => setImmediate(r));
      return ctx.json({
        n,
        q: ctx.query('q') ?? null,
        seen: ctx.state.seen,
        cookie: ctx.cookie('c') ?? null,
        id: ctx.requestId,
      });
    });
    app.post('/n/:n', (ctx) => ctx.json({ n: ctx.params.n, body: ctx.body ?? null }));
    const { port } = await start(app);
    const agent = new Agent({ keepAlive: true, maxSockets: 16 });
    const ids = new Set<string>();
    let failures = 0;
    const total = 10_000;
    let next = 0;
    async function worker(): Promise<void> {
      while (next < total) {
        const i = next++;
        const post = i % 5 === 0;
        const res = await raw(port, {
          method: post ? 'POST' : 'GET',
          path: `/n/${i}${i % 2 ? `?q=${i}` : ''}`,
          headers: {
            ...(i % 7 === 0 ? { cookie: `c=${i}` } : {}),
            ...(post ? { 'content-type': 'application/json' } : {}),
          },
          body: post ? JSON.stringify({ i }) : undefined,
          agent,
        });
        const got = JSON.parse(res.body);
        const ok = post
          ? got.n === String(i) && got.body?.i === i
          : got.n === String(i) &&
            got.seen === String(i) &&
            got.q === (i % 2 ? String(i) : null) &&
            got.cookie === (i % 7 === 0 ? String(i) : null);
        if (!ok) failures++;
        if (!post) ids.add(got.id);
      }
    }
    await Promise.all(Array.from({ length: 16 }, worker));
    agent.destroy();
    expect(failures).toBe(0);
    expect(ids.size).toBe(total - total / 5);
    await until(() => appStats(app).inflight === 0);
    // Bounded: at most poolSize idle objects are kept.
    expect(appStats(app).pooled).toBeLessThanOrEqual(8);
  }, 60_000);

  it.each([true, false])(
    'a kept ctx reads its own request and cannot answer a later one (development: %s)',
    async (development) => {
      const app = make({ development, poolSize: 1 });
      const reported: unknown[] = [];
      app.onError((err) => {
        reported.push(err);
      });
      let kept: Context | undefined;
      app.get('/keep/:id', (ctx) => {
        kept ??= ctx;
        return ctx.json({ id: ctx.params.id });
      });
      await app.inject({ url: '/keep/1', headers: { 'x-request-id': 'first' } });
      // The pooled state now serves /keep/2; the kept ctx still describes /keep/1.
      const second = app.inject({ url: '/keep/2' });
      expect(kept!.params.id).toBe('1');
      expect(kept!.requestId).toBe('first');
      expect(kept!.path).toBe('/keep/1');
      kept!.status(500).json({ stolen: true });
      kept!.send('again');
      expect((await second).json()).toEqual({ id: '2' });
      // Reported once per stale ctx, naming the first operation.
      expect(reported).toHaveLength(1);
      expect(reported[0]).toBeInstanceOf(ReleasedContextError);
      expect((reported[0] as ReleasedContextError).operation).toBe('status()');
      expect(await kept!.sendFile('/etc/hostname')).toBeUndefined();
      expect(kept!.sseEvent('x', 1)).toBe(false);
      const stream = kept!.sseStream();
      expect(stream.closed).toBe(true);
      expect(stream.send('x', 1)).toBe(false);
      let closes = 0;
      stream.onClose(() => closes++);
      expect(closes).toBe(1);
      stream.close();
      expect(reported).toHaveLength(1);
    },
  );

  it('keeps a ctx that owns a stream until the stream ends', async () => {
    const app = make({ development: true });
    let kept: Context | undefined;
    app.get('/sse', (ctx) => {
      kept = ctx;
      ctx.sseEvent('hello', { a: 1 });
    });
    const { port } = await start(app);
    const { request } = await import('node:http');
    const req = request({ host: '127.0.0.1', port, path: '/sse' });
    const firstChunk = new Promise<string>((resolve) => {
      req.on('response', (res) => res.once('data', (c: Buffer) => resolve(c.toString())));
    });
    req.end();
    expect(await firstChunk).toContain('event: hello');
    // Still live while the stream is open: using it from a callback is fine.
    expect(kept!.path).toBe('/sse');
    expect(appStats(app).inflight).toBe(1);
    req.destroy();
    await until(() => appStats(app).inflight === 0);
    expect(kept!.path).toBe('/sse');
    expect(kept!.sseEvent('late', 1)).toBe(false);
  });
});
