import { mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import {
  type App,
  createApp,
  createEventHub,
  HUB_INVALIDATE_EVENT,
  HUB_RESET_EVENT,
} from '../src/index';
import {
  ManualClock,
  type RawResponse,
  raw,
  settle,
  socketBytes,
  sse,
  start,
  until,
} from './helpers';

const apps: App[] = [];
function make(options: Parameters<typeof createApp>[0] = {}): App {
  const app = createApp(options);
  apps.push(app);
  return app;
}
afterEach(async () => {
  await Promise.all(apps.splice(0).map((a) => a.close({ timeoutMs: 100 })));
});

const dirs: string[] = [];
function tempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  dirs.push(dir);
  return dir;
}
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe('accessors', () => {
  it('query: first of repeated keys, queryAll, + and %20 decoding, missing and prototype keys', async () => {
    const app = make();
    app.get('/q', (ctx) =>
      ctx.json({
        a: ctx.query('a'),
        all: ctx.queryAll('a'),
        b: ctx.query('b'),
        empty: ctx.query('e'),
        none: ctx.query('none') ?? null,
        proto: ctx.query('__proto__') ?? null,
        toString: ctx.query('toString') ?? null,
        path: ctx.path,
        method: ctx.method,
      }),
    );
    const { port } = await start(app);
    const r = await raw(port, { path: '/q?a=1&a=2&b=x+y%20z&e' });
    expect(r.status).toBe(200);
    expect(JSON.parse(r.body)).toEqual({
      a: '1',
      all: ['1', '2'],
      b: 'x y z',
      empty: '',
      none: null,
      proto: null,
      toString: null,
      path: '/q',
      method: 'GET',
    });
  });

  it('params decoded once; path as routed (reserved escapes and %25 kept)', async () => {
    const app = make();
    app.get('/u/:id', (ctx) => ctx.json({ id: ctx.params.id, path: ctx.path }));
    const { port } = await start(app);
    const r = await raw(port, { path: '/u/a%20b%2520?x=1' });
    expect(JSON.parse(r.body)).toEqual({ id: 'a b%20', path: '/u/a b%2520' });
  });

  it('ip / ips without and with trust proxy', async () => {
    const app = make();
    app.get('/ip', (ctx) => ctx.json({ ip: ctx.ip, ips: ctx.ips, peer: ctx.req.remoteAddress }));
    const { port } = await start(app);
    const headers = { 'x-forwarded-for': '203.0.113.9, 10.0.0.1' };
    let r = await raw(port, { path: '/ip', headers });
    expect(JSON.parse(r.body)).toEqual({ ip: '127.0.0.1', ips: [], peer: '127.0.0.1' });
    app.setTrustProxy(true);
    r = await raw(port, { path: '/ip', headers });
    const j = JSON.parse(r.body);
    expect(j.ip).toBe('203.0.113.9');
    expect(j.ips).toEqual(['203.0.113.9', '10.0.0.1']);
    expect(j.peer).toBe('127.0.0.1');
  });

  it('requestId: echoed, generated when absent or unsafe, unique', async () => {
    const app = make();
    app.get('/id', (ctx) => ctx.json({ id: ctx.requestId }));
    const { port } = await start(app);
    const a = await raw(port, { path: '/id', headers: { 'x-request-id': 'abc-123' } });
    expect(JSON.parse(a.body).id).toBe('abc-123');
    expect(a.headers['x-request-id']).toBe('abc-123');
    const b = await raw(port, { path: '/id' });
    const c = await raw(port, { path: '/id', headers: { 'x-request-id': 'bad id <x>' } });
    expect(b.headers['x-request-id']).toBe(JSON.parse(b.body).id);
    expect(JSON.parse(c.body).id).not.toBe('bad id <x>');
    expect(JSON.parse(b.body).id).not.toBe(JSON.parse(c.body).id);
  });
});

describe('response helpers', () => {
  it('HEAD on a GET json route: same headers, no body', async () => {
    const app = make();
    app.get('/j', (ctx) => ctx.json({ hello: 'world' }));
    const { port } = await start(app);
    const g = await raw(port, { path: '/j' });
    const h = await raw(port, { method: 'HEAD', path: '/j' });
    expect(h.status).toBe(200);
    expect(h.body).toBe('');
    expect(h.headers['content-length']).toBe(g.headers['content-length']);
    expect(h.headers['content-type']).toBe('application/json');
  });

  it('status chains into json/send; send types', async () => {
    const app = make();
    app.get('/s', (ctx) => ctx.status(201).send('hi'));
    app.get('/b', (ctx) => ctx.send(Buffer.from([1, 2, 3])));
    app.get('/o', (ctx) => ctx.send({ a: 1 }));
    app.get('/n', (ctx) => ctx.status(204).send(null));
    app.get('/ct', (ctx) => ctx.setHeader('content-type', 'text/html').send('<b>x</b>'));
    const { port } = await start(app);
    let r = await raw(port, { path: '/s' });
    expect([r.status, r.headers['content-type'], r.body]).toEqual([
      201,
      'text/plain; charset=utf-8',
      'hi',
    ]);
    r = await raw(port, { path: '/b' });
    expect([r.headers['content-type'], r.raw.length]).toEqual(['application/octet-stream', 3]);
    r = await raw(port, { path: '/o' });
    expect([r.headers['content-type'], r.body]).toEqual(['application/json', '{"a":1}']);
    r = await raw(port, { path: '/n' });
    expect([r.status, r.body, r.headers['content-length']]).toEqual([204, '', undefined]);
    r = await raw(port, { path: '/ct' });
    expect(r.headers['content-type']).toBe('text/html');
  });

  it('cacheControl', async () => {
    const app = make();
    app.get('/c', (ctx) =>
      ctx.cacheControl({ public: true, maxAge: 60, staleWhileRevalidate: 30 }).json(1),
    );
    app.get('/p', (ctx) => ctx.cacheControl({ public: false, maxAge: 1.9 }).json(1));
    app.get('/z', (ctx) => ctx.cacheControl({ maxAge: 0 }).json(1));
    app.get('/bad', (ctx) => ctx.cacheControl({ maxAge: -1 }).json(1));
    const { port } = await start(app);
    expect((await raw(port, { path: '/c' })).headers['cache-control']).toBe(
      'public, max-age=60, stale-while-revalidate=30',
    );
    expect((await raw(port, { path: '/p' })).headers['cache-control']).toBe('private, max-age=1');
    expect((await raw(port, { path: '/z' })).headers['cache-control']).toBe('max-age=0');
    expect((await raw(port, { path: '/bad' })).status).toBe(500);
  });

  it('setCookie attributes, encoding, CRLF strip', async () => {
    const app = make();
    app.get('/ck', (ctx) =>
      ctx
        .setCookie('a b', 'x;y=z\r\nSet-Cookie: evil=1', {
          httpOnly: true,
          secure: true,
          maxAge: 60,
        })
        .setCookie('plain', 'v')
        .json(1),
    );
    app.get('/read', (ctx) => ctx.json({ v: ctx.cookie('a b') ?? null }));
    const { port } = await start(app);
    const r = await raw(port, { path: '/ck' });
    const cookies = r.headers['set-cookie']!;
    expect(cookies).toHaveLength(2);
    expect(cookies[0]).toBe(
      'a%20b=x%3By%3DzSet-Cookie%3A%20evil%3D1; Max-Age=60; Path=/; HttpOnly; Secure; SameSite=Lax',
    );
    expect(cookies[1]).toBe('plain=v; Path=/; SameSite=Lax');
    const back = await raw(port, {
      path: '/read',
      headers: { cookie: cookies[0]!.split(';')[0]! },
    });
    expect(JSON.parse(back.body).v).toBe('x;y=zSet-Cookie: evil=1');
  });
});

describe('validation', () => {
  it('400 structured; query with repeated key; params', async () => {
    const app = make();
    app.get('/v/:id', (ctx) =>
      ctx.json(
        ctx.validate({
          id: { type: 'string', required: true },
          name: { type: 'string', required: true, min: 2 },
          email: { type: 'email' },
        }),
      ),
    );
    app.post('/v', (ctx) => ctx.json(ctx.validate({ name: { type: 'string', required: true } })));
    const { port } = await start(app);
    let r = await raw(port, { path: '/v/7?name=ab&email=a@b.co' });
    expect([r.status, JSON.parse(r.body)]).toEqual([200, { id: '7', name: 'ab', email: 'a@b.co' }]);
    r = await raw(port, { path: '/v/7?name=a&email=nope' });
    expect(r.status).toBe(400);
    expect(r.headers['content-type']).toBe('application/json');
    expect(JSON.parse(r.body)).toEqual({
      status: 400,
      error: 'Bad Request',
      message: 'Validation failed',
      fields: [
        { field: 'name', rule: 'min', message: expect.any(String) },
        { field: 'email', rule: 'type', message: expect.any(String) },
      ],
    });
    r = await raw(port, { path: '/v/7?name=ab&name=cd' });
    expect([r.status, JSON.parse(r.body).name]).toEqual([200, 'ab']);
    r = await raw(port, {
      method: 'POST',
      path: '/v',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    expect(r.status).toBe(400);
  });
});

describe('graphql', () => {
  const schema = 'type Query { hello(name: String): String } type Mutation { bump: Int }';
  const resolvers = {
    Query: { hello: (_: unknown, a: { name?: string }) => `hi ${a.name ?? 'you'}` },
    Mutation: { bump: () => 1 },
  };
  it('GET and POST, mutation over GET is 405, form POST 415', async () => {
    const app = make();
    app.get('/gql', (ctx) => ctx.graphql(schema, resolvers));
    app.post('/gql', (ctx) => ctx.graphql(schema, resolvers));
    const { port } = await start(app);
    const q = encodeURIComponent('query($n: String) { hello(name: $n) }');
    const v = encodeURIComponent('{"n":"bo"}');
    let r = await raw(port, { path: `/gql?query=${q}&variables=${v}` });
    expect([r.status, JSON.parse(r.body)]).toEqual([200, { data: { hello: 'hi bo' } }]);
    r = await raw(port, {
      method: 'POST',
      path: '/gql',
      headers: { 'content-type': 'application/json; charset=utf-8' },
      body: JSON.stringify({ query: 'mutation { bump }' }),
    });
    expect([r.status, JSON.parse(r.body)]).toEqual([200, { data: { bump: 1 } }]);
    r = await raw(port, { path: `/gql?query=${encodeURIComponent('mutation { bump }')}` });
    expect([r.status, r.headers.allow]).toEqual([405, 'POST']);
    r = await raw(port, {
      method: 'POST',
      path: '/gql',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'query=mutation%20%7B%20bump%20%7D',
    });
    expect(r.status).toBe(415);
    r = await raw(port, { path: '/gql' });
    expect(r.status).toBe(400);
    expect(JSON.parse(r.body).errors).toBeInstanceOf(Array);
    r = await raw(port, { method: 'HEAD', path: `/gql?query=${q}` });
    expect([r.status, r.body]).toEqual([200, '']);
  });
});

describe('files', () => {
  const dir = tempDir('keel-audit-');
  const content = 'abcdefghijklmnopqrstuvwxyz';
  writeFileSync(join(dir, 'a.txt'), content);
  writeFileSync(join(dir, 'empty.txt'), '');
  const mtime = new Date('2024-01-02T03:04:05Z');
  utimesSync(join(dir, 'a.txt'), mtime, mtime);

  async function fileApp() {
    const app = make();
    app.get('/f/*', (ctx) => ctx.sendFile(ctx.params['*']!, { root: dir }));
    const { port } = await start(app);
    return port;
  }

  it('200 with validators, 304 on ETag / If-Modified-Since, HEAD', async () => {
    const port = await fileApp();
    const r = await raw(port, { path: '/f/a.txt' });
    expect(r.status).toBe(200);
    expect(r.body).toBe(content);
    expect(r.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(r.headers['content-length']).toBe('26');
    expect(r.headers['accept-ranges']).toBe('bytes');
    expect(r.headers['last-modified']).toBe(mtime.toUTCString());
    const etag = r.headers.etag!;
    let c = await raw(port, { path: '/f/a.txt', headers: { 'if-none-match': etag } });
    expect([c.status, c.body, c.headers.etag]).toEqual([304, '', etag]);
    c = await raw(port, { path: '/f/a.txt', headers: { 'if-none-match': `"x", W/${etag}` } });
    expect(c.status).toBe(304);
    c = await raw(port, { path: '/f/a.txt', headers: { 'if-none-match': '"other"' } });
    expect(c.status).toBe(200);
    c = await raw(port, {
      path: '/f/a.txt',
      headers: { 'if-modified-since': mtime.toUTCString() },
    });
    expect(c.status).toBe(304);
    c = await raw(port, {
      path: '/f/a.txt',
      headers: { 'if-modified-since': new Date(mtime.getTime() - 1000).toUTCString() },
    });
    expect(c.status).toBe(200);
    // If-None-Match wins over If-Modified-Since
    c = await raw(port, {
      path: '/f/a.txt',
      headers: { 'if-none-match': '"other"', 'if-modified-since': mtime.toUTCString() },
    });
    expect(c.status).toBe(200);
    const h = await raw(port, { method: 'HEAD', path: '/f/a.txt' });
    expect([h.status, h.body, h.headers['content-length']]).toEqual([200, '', '26']);
  });

  it('a Content-Type the handler set wins over the one from the extension', async () => {
    writeFileSync(join(dir, 'data'), '{"a":1}');
    const app = make();
    app.get('/typed', (ctx) =>
      ctx
        .setHeader('content-type', 'application/json; charset=utf-8')
        .sendFile('data', { root: dir }),
    );
    app.get('/md', (ctx) =>
      ctx.setHeader('content-type', 'text/markdown').sendFile('a.txt', { root: dir }),
    );
    app.get('/plain', (ctx) => ctx.sendFile('data', { root: dir }));
    const { port } = await start(app);
    let r = await raw(port, { path: '/typed' });
    expect([r.status, r.headers['content-type'], r.body]).toEqual([
      200,
      'application/json; charset=utf-8',
      '{"a":1}',
    ]);
    r = await raw(port, { path: '/md', headers: { range: 'bytes=0-1' } });
    expect([r.status, r.headers['content-type']]).toEqual([206, 'text/markdown']);
    r = await raw(port, { path: '/plain' });
    expect(r.headers['content-type']).toBe('application/octet-stream');
  });

  it('ranges: 206, suffix, open, clamp, 416, If-Range', async () => {
    const port = await fileApp();
    const get = (headers: Record<string, string>) => raw(port, { path: '/f/a.txt', headers });
    let r = await get({ range: 'bytes=0-4' });
    expect([r.status, r.body, r.headers['content-range'], r.headers['content-length']]).toEqual([
      206,
      'abcde',
      'bytes 0-4/26',
      '5',
    ]);
    r = await get({ range: 'bytes=-3' });
    expect([r.status, r.body]).toEqual([206, 'xyz']);
    r = await get({ range: 'bytes=24-' });
    expect([r.status, r.body]).toEqual([206, 'yz']);
    r = await get({ range: 'bytes=20-100' });
    expect([r.status, r.body, r.headers['content-range']]).toEqual([
      206,
      'uvwxyz',
      'bytes 20-25/26',
    ]);
    r = await get({ range: 'bytes=-100' });
    expect([r.status, r.body.length]).toEqual([206, 26]);
    r = await get({ range: 'bytes=26-' });
    expect([r.status, r.headers['content-range']]).toEqual([416, 'bytes */26']);
    r = await get({ range: 'bytes=5-2' });
    expect(r.status).not.toBe(206);
    r = await get({ range: 'items=0-1' });
    expect(r.status).toBe(200);
    const etag = (await get({})).headers.etag!;
    r = await get({ range: 'bytes=0-1', 'if-range': etag });
    expect([r.status, r.body]).toEqual([206, 'ab']);
    r = await get({ range: 'bytes=0-1', 'if-range': '"nope"' });
    expect([r.status, r.body]).toEqual([200, content]);
    r = await get({ range: 'bytes=0-1', 'if-range': mtime.toUTCString() });
    expect(r.status).toBe(206);
    r = await get({ range: 'bytes=0-1,3-4' });
    expect([r.status, r.body]).toEqual([200, content]);
    r = await get({ range: 'bytes=0-1,2-4' });
    expect([r.status, r.body]).toEqual([206, 'abcde']);
    // conditional + range: 304 wins
    r = await get({ range: 'bytes=0-1', 'if-none-match': etag });
    expect(r.status).toBe(304);
    // empty file
    r = await raw(port, { path: '/f/empty.txt' });
    expect([r.status, r.body, r.headers['content-length']]).toEqual([200, '', '0']);
    r = await raw(port, { path: '/f/missing.txt' });
    expect(r.status).toBe(404);
    r = await raw(port, { path: '/f/../x' });
    expect([403, 404]).toContain(r.status);
  });
});

describe('sse framing', () => {
  it('raw bytes of sseEvent and sseInterval', async () => {
    const app = make({ sse: { heartbeatMs: 0 } });
    let n = 0;
    app.get('/e', (ctx) => {
      ctx.sseEvent('hello', { a: 1 });
      ctx.sseEvent('multi', 'x\r\ny');
      ctx.sseStream().close();
    });
    app.get('/i', (ctx) => ctx.sseInterval(() => (++n > 2 ? ctx.sseStream().close() : { n }), 5));
    const { port } = await start(app);
    const out = await socketBytes(port, 'GET /e HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    expect(out).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    expect(out).toContain('id: 1\nevent: hello\ndata: {"a":1}\n\n');
    expect(out).toContain('id: 2\nevent: multi\ndata: x\ndata: y\n\n');
    const c = await sse(port, '/i');
    await c.ended;
    expect(c.events.map((e) => [e.event, e.data])).toEqual([
      [undefined, '{"n":1}'],
      [undefined, '{"n":2}'],
    ]);
  });

  it('hub replays after Last-Event-ID', async () => {
    const app = make({ sse: { heartbeatMs: 0 } });
    const hub = createEventHub();
    app.get('/live', (ctx) => hub.connect(ctx));
    const { port } = await start(app);
    await hub.ready;
    const a = await hub.publish('x', 1);
    await hub.publish('x', 2);
    await hub.publish('x', 3);
    const c = await sse(port, '/live', { 'last-event-id': a });
    await c.waitFor(2);
    expect(c.events.map((e) => e.data)).toEqual(['2', '3']);
    c.close();
    await hub.close();
  });

  it('an empty Last-Event-ID is no id: no keel:reset, live events only', async () => {
    const app = make({ sse: { heartbeatMs: 0 } });
    const hub = createEventHub();
    app.get('/live', (ctx) => hub.connect(ctx));
    const { port } = await start(app);
    await hub.ready;
    await hub.publish('x', 1);
    const c = await sse(port, '/live', { 'last-event-id': '' });
    await until(() => hub.size === 1);
    await hub.publish('x', 2);
    await c.waitFor(1);
    expect(c.events.map((e) => [e.event, e.data])).toEqual([['x', '2']]);
    expect(hub.metrics.resets).toBe(0);
    c.close();
    await hub.close();
  });
});

describe('sse heartbeat', () => {
  it('a stream idle for one whole heartbeatMs period gets a comment at that beat', async () => {
    const clock = new ManualClock();
    const app = make({ clock, sse: { heartbeatMs: 1000 } });
    app.get('/idle', (ctx) => ctx.sseStream());
    const { port } = await start(app);
    const first = await sse(port, '/idle'); // arms the shared heartbeat: aligned with it
    clock.tick(500);
    const second = await sse(port, '/idle'); // opened mid-period
    clock.tick(500); // t=1000: first idle 1000 ms, second 500 ms
    await until(() => first.comments === 1);
    expect(second.comments).toBe(0);
    clock.tick(1000); // t=2000: both idle a whole period
    await until(() => first.comments === 2 && second.comments === 1);
    first.close();
    second.close();
    await until(() => clock.active === 0);
  });
});

describe('pooling', () => {
  it('a kept ctx reads its own request after release, and later requests are unaffected', async () => {
    const app = make();
    const errors: unknown[] = [];
    app.onError((e) => {
      errors.push(e);
    });
    let kept: import('../src/index').Context | null = null;
    app.get('/keep/:id', (ctx) => {
      kept = ctx;
      ctx.state.x = ctx.params.id;
      return ctx.setCookie('k', 'v').cacheControl({ maxAge: 5 }).json({ id: ctx.params.id });
    });
    app.get('/other/:id', (ctx) =>
      ctx.json({ id: ctx.params.id, state: ctx.state.x ?? null, q: ctx.query('a') ?? null }),
    );
    const { port } = await start(app);
    await raw(port, { path: '/keep/1?a=first', headers: { cookie: 'c=1' } });
    const r = await raw(port, { path: '/other/2?a=second' });
    expect(JSON.parse(r.body)).toEqual({ id: '2', state: null, q: 'second' });
    expect(r.headers['set-cookie']).toBeUndefined();
    expect(r.headers['cache-control']).toBeUndefined();
    const k = kept as unknown as import('../src/index').Context;
    expect([k.params.id, k.query('a'), k.cookie('c'), k.path, k.state.x]).toEqual([
      '1',
      'first',
      '1',
      '/keep/1',
      '1',
    ]);
    k.setCookie('late', '1');
    k.json({ late: true });
    await until(() => errors.length > 0);
    expect((errors[0] as Error).name).toBe('ReleasedContextError');
  });
});

describe('bodies', () => {
  /** `{"a":1}` as JSON with `Content-Encoding: coding`, to an app answering the body it read. */
  async function postEncoded(coding: string): Promise<RawResponse> {
    const app = make();
    app.post('/b', (ctx) => ctx.json({ body: ctx.body ?? null }));
    const { port } = await start(app);
    return raw(port, {
      method: 'POST',
      path: '/b',
      headers: { 'content-type': 'application/json', 'content-encoding': coding },
      body: '{"a":1}',
    });
  }

  it('a compressed body the app would parse is 415, not "Malformed JSON"; raw bodies pass as sent', async () => {
    const app = make({ parsers: { raw: ['application/octet-stream'] } });
    app.post('/b', (ctx) => ctx.json({ body: ctx.body ?? null }));
    app.post('/raw', (ctx) => ctx.json({ length: (ctx.body as Buffer).length }));
    const { port } = await start(app);
    const gz = gzipSync('{"a":1}');
    for (const type of ['application/json', 'application/x-www-form-urlencoded']) {
      const r = await raw(port, {
        method: 'POST',
        path: '/b',
        headers: { 'content-type': type, 'content-encoding': 'gzip' },
        body: gz,
      });
      expect(r.status).toBe(415);
      expect(JSON.parse(r.body)).toEqual({
        status: 415,
        error: 'Unsupported Media Type',
        message: 'Compressed request bodies (Content-Encoding) are not supported',
      });
    }
    let r = await raw(port, {
      method: 'POST',
      path: '/b',
      headers: { 'content-type': 'application/json', 'content-encoding': 'identity' },
      body: '{"a":1}',
    });
    expect([r.status, JSON.parse(r.body)]).toEqual([200, { body: { a: 1 } }]);
    r = await raw(port, {
      method: 'POST',
      path: '/raw',
      headers: { 'content-type': 'application/octet-stream', 'content-encoding': 'gzip' },
      body: gz,
    });
    expect([r.status, JSON.parse(r.body)]).toEqual([200, { length: gz.length }]);
  });

  // One way to read a header token: OWS (spaces, tabs) around it, not String#trim's Unicode
  // spaces, as the Content-Type check (isMediaType). `identity` + a no-break space is no
  // `identity`: a coding keel does not decode, 415, where trim() took it for no encoding.
  it.each(['identity\u00a0', '\u00a0identity', '\u00a0identity\u00a0'])(
    'Content-Encoding %j is a coding keel does not decode (415)',
    async (coding) => {
      const r = await postEncoded(coding);
      expect(r.status).toBe(415);
    },
  );

  it.each(['identity', 'IDENTITY', 'Identity'])(
    'Content-Encoding %j is no encoding: the body is read',
    async (coding) => {
      const r = await postEncoded(coding);
      expect([r.status, JSON.parse(r.body)]).toEqual([200, { body: { a: 1 } }]);
    },
  );

  it('413 over limit, json with charset, empty json body', async () => {
    const app = make({ bodyLimit: 10 });
    app.post('/b', (ctx) => ctx.json({ body: ctx.body ?? null }));
    const { port } = await start(app);
    let r = await raw(port, {
      method: 'POST',
      path: '/b',
      headers: { 'content-type': 'application/json' },
      body: '{"a":"01234567890"}',
    });
    expect(r.status).toBe(413);
    r = await raw(port, {
      method: 'POST',
      path: '/b',
      headers: { 'content-type': 'Application/JSON; charset=UTF-8' },
      body: '{"a":1}',
    });
    expect([r.status, JSON.parse(r.body)]).toEqual([200, { body: { a: 1 } }]);
    r = await raw(port, {
      method: 'POST',
      path: '/b',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'a=1&a=2&b=',
    });
    expect([r.status, JSON.parse(r.body)]).toEqual([200, { body: { a: ['1', '2'], b: '' } }]);
  });
});

describe('bad arguments to ctx methods: a typed error naming the argument, before anything is sent', () => {
  const cases: [string, (ctx: import('../src/index').Context) => unknown, string, string][] = [
    ['sendFile path', (ctx) => ctx.sendFile(123 as never), 'TypeError', '`sendFile path`'],
    [
      'sendFile options',
      (ctx) => ctx.sendFile('a', null as never),
      'TypeError',
      '`sendFile options`',
    ],
    [
      'sendFile root',
      (ctx) => ctx.sendFile('a', { root: 1 as never }),
      'TypeError',
      '`sendFile root`',
    ],
    [
      'cacheControl',
      (ctx) => ctx.cacheControl(null as never),
      'TypeError',
      '`cacheControl options`',
    ],
    ['setCookie value', (ctx) => ctx.setCookie('a', 'x\ud800'), 'RangeError', '`setCookie value`'],
    ['setCookie name', (ctx) => ctx.setCookie('\udc00', 'x'), 'RangeError', '`setCookie name`'],
    ['sseEvent name', (ctx) => ctx.sseEvent(1 as never, 'x'), 'TypeError', '`event`'],
    ['sseEvent CR', (ctx) => ctx.sseEvent('a\nb', 'x'), 'RangeError', '`event`'],
    ['sseInterval fn', (ctx) => ctx.sseInterval('x' as never, 10), 'TypeError', '`sseInterval fn`'],
    ['setHeader CRLF', (ctx) => ctx.setHeader('x-a', 'a\r\nb'), 'RangeError', '`setHeader value`'],
    ['setHeader name', (ctx) => ctx.setHeader('a b', 'x'), 'RangeError', '`setHeader name`'],
    [
      'setHeader undefined',
      (ctx) => ctx.setHeader('x-a', undefined as never),
      'TypeError',
      '`setHeader value`',
    ],
  ];
  it.each(cases)('%s', async (_, call, name, named) => {
    const app = make();
    const errors: Error[] = [];
    app.onError((err) => {
      errors.push(err as Error);
    });
    app.get('/x', async (ctx) => {
      await call(ctx);
      if (!ctx.res.headersSent) ctx.json('no error');
    });
    const r = await app.inject({ url: '/x' });
    expect(r.status).toBe(500);
    expect(r.headers['content-type']).toBe('application/json');
    expect(errors).toHaveLength(1);
    expect(errors[0]!.name).toBe(name);
    expect(errors[0]!.message).toContain(`keel: ${named} must be`);
  });
});

function pipeline(port: number, bytes: string, expectResponses: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = connect(port, '127.0.0.1');
    let out = '';
    s.setEncoding('latin1');
    const timer = setTimeout(() => {
      s.destroy();
      resolve(out);
    }, 1500);
    s.on('data', (c: string) => {
      out += c;
      if (
        (out.match(/HTTP\/1\.1 \d{3}/g) ?? []).length >= expectResponses &&
        out.endsWith('LAST')
      ) {
        clearTimeout(timer);
        s.destroy();
        resolve(out);
      }
    });
    s.on('error', reject);
    s.write(bytes, 'latin1');
  });
}

describe('keep-alive framing', () => {
  it('HEAD, 304, 416, 204, 413, 405 then a GET on the same socket', async () => {
    const dir = tempDir('keel-audit2-');
    writeFileSync(join(dir, 'a.txt'), 'hello world');
    const app = make({ bodyLimit: 5 });
    app.get('/j', (ctx) => ctx.json({ a: 1 }));
    app.get('/f', (ctx) => ctx.sendFile('a.txt', { root: dir }));
    app.get('/n', (ctx) => ctx.status(204).send(null));
    app.post('/p', (ctx) => ctx.json(ctx.body));
    app.get('/last', (ctx) => ctx.send('LAST'));
    const { port } = await start(app);
    const etag = (await raw(port, { path: '/f' })).headers.etag!;
    const req = (line: string, extra = '') => `${line} HTTP/1.1\r\nHost: x\r\n${extra}\r\n`;
    const bytes =
      req('HEAD /j') +
      req('GET /f', `If-None-Match: ${etag}\r\n`) +
      req('GET /f', 'Range: bytes=100-\r\n') +
      req('GET /n') +
      req('POST /p', 'Content-Type: application/json\r\nContent-Length: 12\r\n') +
      '{"a":"long"}' +
      req('PUT /j') +
      req('HEAD /f') +
      req('GET /last');
    const out = await pipeline(port, bytes, 8);
    const statuses = (out.match(/HTTP\/1\.1 (\d{3})/g) ?? []).map((s) => s.slice(9));
    expect(statuses).toEqual(['200', '304', '416', '204', '413', '405', '200', '200']);
    expect(out.endsWith('LAST')).toBe(true);
    expect((out.match(/x-request-id:/gi) ?? []).length).toBe(8);
  });
});

describe('sendFile extras', () => {
  it('status set first serves as-is; POST conditional does not 304', async () => {
    const dir = tempDir('keel-audit3-');
    writeFileSync(join(dir, 'a.txt'), 'hello world');
    const app = make();
    app.get('/nf', (ctx) => ctx.status(404).sendFile('a.txt', { root: dir }));
    app.post('/f', (ctx) => ctx.sendFile('a.txt', { root: dir }));
    app.get('/f', (ctx) => ctx.sendFile('a.txt', { root: dir }));
    const { port } = await start(app);
    const etag = (await raw(port, { path: '/f' })).headers.etag!;
    let r = await raw(port, {
      path: '/nf',
      headers: { 'if-none-match': etag, range: 'bytes=0-1' },
    });
    expect([r.status, r.body]).toEqual([404, 'hello world']);
    r = await raw(port, { method: 'POST', path: '/f', headers: { 'if-none-match': etag } });
    expect(r.status).toBe(200);
    r = await raw(port, { path: '/f', headers: { 'if-none-match': '*' } });
    expect(r.status).toBe(304);
    r = await raw(port, {
      path: '/f',
      headers: { 'if-none-match': etag, 'cache-control': 'no-cache' },
    });
    // no-cache asks for validation, which this is (fetch sends it with every validator).
    expect(r.status).toBe(304);
    r = await raw(port, { method: 'HEAD', path: '/f', headers: { range: 'bytes=0-1' } });
    expect([r.status, r.headers['content-length'], r.body]).toEqual([206, '2', '']);
  });
});

describe('stale ctx and idle heartbeat', () => {
  it('heartbeat comment on idle stream with manual clock', async () => {
    const clock = new ManualClock();
    const app = make({ clock, sse: { heartbeatMs: 1000 } });
    app.get('/s', (ctx) => {
      ctx.sseEvent('a', 1);
      return ctx.sseStream();
    });
    const { port } = await start(app);
    const c = await sse(port, '/s');
    await c.waitFor(1);
    clock.tick(1000);
    clock.tick(1000);
    await until(() => c.comments >= 1);
    c.close();
    await until(() => clock.active === 0);
  });

  it('stale ctx: sseEvent false, sendFile/graphql resolve', async () => {
    const app = make();
    const errors: unknown[] = [];
    app.onError((e) => {
      errors.push(e);
    });
    let kept: import('../src/index').Context | undefined;
    app.get('/k', (ctx) => {
      kept = ctx;
      return ctx.json(1);
    });
    const { port } = await start(app);
    await raw(port, { path: '/k' });
    await settle();
    expect(kept!.sseEvent('x', 1)).toBe(false);
    await expect(kept!.sendFile('never-read.txt')).resolves.toBeUndefined();
    await expect(kept!.graphql('type Query { a: Int }')).resolves.toBeUndefined();
    await expect(kept!.sseInterval(() => 1, 10)).resolves.toBeUndefined();
    expect(errors.length).toBe(1);
    const r = await raw(port, { path: '/k' });
    expect(r.status).toBe(200);
  });
});

describe('hub', () => {
  it('topics, replay by topic, invalidate shape, reset for foreign id, HEAD', async () => {
    const app = make({ sse: { heartbeatMs: 0 } });
    const hub = createEventHub();
    app.get('/live', (ctx) => hub.connect(ctx, { topics: ctx.queryAll('t') }));
    const { port } = await start(app);
    await hub.ready;
    const first = await hub.publish('a', { n: 1 }, { topic: 'red' });
    await hub.publish('a', { n: 2 }, { topic: 'blue' });
    await hub.publish('a', { n: 3 });
    const c = await sse(port, '/live?t=red', { 'last-event-id': first });
    await c.waitFor(1);
    expect(c.events.map((e) => e.data)).toEqual(['{"n":3}']);
    await hub.publish('a', { n: 4 }, { topic: 'red' });
    await hub.invalidate('/todos', { topic: 'red' });
    await hub.invalidate(['x', 'y']);
    await c.waitFor(4);
    expect(c.events.slice(1).map((e) => [e.event, e.data])).toEqual([
      ['a', '{"n":4}'],
      [HUB_INVALIDATE_EVENT, '{"target":"/todos"}'],
      [HUB_INVALIDATE_EVENT, '{"target":["x","y"]}'],
    ]);
    const d = await sse(port, '/live', { 'last-event-id': 'garbage' });
    await d.waitFor(1);
    expect(d.events[0]!.event).toBe(HUB_RESET_EVENT);
    expect(JSON.parse(d.events[0]!.data)).toEqual({ lastEventId: 'garbage' });
    expect(d.events[0]!.id).toBe(hub.lastId);
    const h = await raw(port, { method: 'HEAD', path: '/live' });
    expect(h.status).toBe(200);
    expect(() => hub.publish('bad\nname', 1)).toThrow(RangeError);
    expect(() => hub.publish('keel:x', 1)).toThrow();
    c.close();
    d.close();
    await hub.close();
    await expect(hub.publish('a', 1)).rejects.toMatchObject({
      name: 'HubPublishError',
      reason: 'closed',
    });
  });
});
