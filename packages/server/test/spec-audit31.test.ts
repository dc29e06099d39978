// Fresh-eyes audit 31 of the ctx spec (seeds/001), black-box over a real loopback socket: the
// corners test/spec/, test/blackbox/ and audit-spec*.test.ts leave open. Each test quotes the
// spec row it reads; where the spec says "not shown", the README's documented choice is pinned.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { type Context, createApp, type Rules } from '../src/index';
import { call, ManualClock, openSse, postJson, serve, ticks } from './blackbox/helpers';

const dir = mkdtempSync(join(tmpdir(), 'keel-audit31-'));
mkdirSync(join(dir, 'pub'));
writeFileSync(join(dir, 'pub', 'a.txt'), 'hello world');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Raw bytes of one response on its own socket, read until `done(raw)` holds. */
async function rawUntil(port: number, request: string, done: (raw: string) => boolean) {
  const socket = connect(port, '127.0.0.1');
  let raw = '';
  socket.setEncoding('latin1');
  socket.on('data', (chunk: string) => {
    raw += chunk;
  });
  socket.write(request);
  for (let i = 0; i < 400 && !done(raw); i++) await ticks(1);
  socket.destroy();
  return raw;
}

/** The SSE body of a raw chunked response, framing removed. */
function sseBody(raw: string): string {
  const body = raw.slice(raw.indexOf('\r\n\r\n') + 4);
  let out = '';
  let at = 0;
  while (at < body.length) {
    const eol = body.indexOf('\r\n', at);
    if (eol === -1) break;
    const size = Number.parseInt(body.slice(at, eol), 16);
    if (!(size > 0)) break;
    out += body.slice(eol + 2, eol + 2 + size);
    at = eol + 2 + size + 2;
  }
  return out;
}

describe('spec: ctx.sseEvent / ctx.sseInterval wire form', () => {
  it('"sends one named server-sent event": `event:` then `data:` then a blank line, and nothing before the first event', async () => {
    const app = createApp({ sse: { heartbeatMs: 0 } });
    app.get('/ev', (ctx) => {
      ctx.sseEvent('greet', { hi: 1 });
      ctx.sseEvent('bye', { n: 2 });
    });
    const port = await serve(app);
    const raw = await rawUntil(port, 'GET /ev HTTP/1.1\r\nHost: x\r\n\r\n', (r) =>
      sseBody(r).includes('event: bye'),
    );
    const body = sseBody(raw);
    // A client matching the frame as one string finds it; no preamble comment or retry: field.
    expect(body).toContain('event: greet\ndata: {"hi":1}\n\n');
    expect(body).toContain('event: bye\ndata: {"n":2}\n\n');
    expect(body).toBe(
      'id: 1\nevent: greet\ndata: {"hi":1}\n\nid: 2\nevent: bye\ndata: {"n":2}\n\n',
    );
  });

  it('data that is not an object: null, an array and a number as their JSON text, a string as is', async () => {
    const app = createApp({ sse: { heartbeatMs: 0 } });
    app.get('/ev', (ctx) => {
      ctx.sseEvent('a', null as never);
      ctx.sseEvent('b', [1, 2] as never);
      ctx.sseEvent('c', 5 as never);
      ctx.sseEvent('d', 'plain text' as never);
    });
    const port = await serve(app);
    const c = await openSse(port, '/ev');
    const events = await c.waitFor(4);
    expect(events.map((e) => [e.event, e.data])).toEqual([
      ['a', 'null'],
      ['b', '[1,2]'],
      ['c', '5'],
      ['d', 'plain text'],
    ]);
    c.close();
  });

  it('headers a handler set before the first event (a cookie, its own header) go out on the stream head', async () => {
    const app = createApp({ sse: { heartbeatMs: 0 } });
    app.get('/ev', (ctx) => {
      ctx.setCookie('sid', 'a b');
      ctx.setHeader('x-stream', 'yes');
      ctx.sseEvent('x', {});
    });
    const port = await serve(app);
    const c = await openSse(port, '/ev');
    expect(c.headers['set-cookie']).toEqual(['sid=a%20b; Path=/; SameSite=Lax']);
    expect(c.headers['x-stream']).toBe('yes');
    expect(c.headers['content-type']).toBe('text/event-stream');
    c.close();
  });

  it('README: a stream opened by sseEvent stays open after the handler returned; sseStream().close() ends it', async () => {
    const clock = new ManualClock();
    const app = createApp({ clock, sse: { heartbeatMs: 0 } });
    app.get('/open', (ctx) => ctx.sseEvent('one', { a: 1 }));
    app.get('/done', (ctx) => {
      ctx.sseEvent('one', { a: 1 });
      ctx.sseStream().close();
    });
    const port = await serve(app);
    const open = await openSse(port, '/open');
    await open.waitFor(1);
    let ended = false;
    void open.ended.then(() => {
      ended = true;
    });
    await ticks(20);
    expect(ended).toBe(false);
    open.close();
    const done = await openSse(port, '/done');
    await done.ended;
    expect(done.events.map((e) => [e.event, e.data])).toEqual([['one', '{"a":1}']]);
  });

  it('spec pooling with sseInterval: a fn reading ctx gets its own request while other requests reuse pooled state', async () => {
    const clock = new ManualClock();
    const app = createApp({ clock, sse: { heartbeatMs: 0 } });
    app.get('/feed/:id', (ctx) =>
      ctx.sseInterval(() => ({ id: ctx.params.id, q: ctx.query('q') }), 100),
    );
    app.get('/other/:id', (ctx) => ctx.json({ id: ctx.params.id }));
    const port = await serve(app);
    const a = await openSse(port, '/feed/a?q=1');
    const b = await openSse(port, '/feed/b?q=2');
    await Promise.all([a.waitFor(1), b.waitFor(1)]);
    for (let i = 0; i < 5; i++) {
      expect((await call(port, { path: `/other/x${i}` })).json()).toEqual({ id: `x${i}` });
    }
    clock.advance(100);
    await Promise.all([a.waitFor(2), b.waitFor(2)]);
    expect(a.events.map((e) => JSON.parse(e.data))).toEqual([
      { id: 'a', q: '1' },
      { id: 'a', q: '1' },
    ]);
    expect(b.events.map((e) => JSON.parse(e.data))).toEqual([
      { id: 'b', q: '2' },
      { id: 'b', q: '2' },
    ]);
    a.close();
    b.close();
  });

  it('sseInterval on a route registered with app.post: each payload is an unnamed event, in order', async () => {
    const clock = new ManualClock();
    const app = createApp({ clock, sse: { heartbeatMs: 0 } });
    let n = 0;
    app.post('/feed', (ctx) => ctx.sseInterval(() => ({ n: ++n }), 250));
    const port = await serve(app);
    const socket = connect(port, '127.0.0.1');
    let raw = '';
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => {
      raw += chunk;
    });
    socket.write('POST /feed HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n');
    for (let i = 0; i < 200 && !sseBody(raw).includes('"n":1'); i++) await ticks(1);
    clock.advance(250);
    for (let i = 0; i < 200 && !sseBody(raw).includes('"n":2'); i++) await ticks(1);
    socket.destroy();
    expect(raw.startsWith('HTTP/1.1 200 OK\r\n')).toBe(true);
    expect(sseBody(raw)).toBe('id: 1\ndata: {"n":1}\n\nid: 2\ndata: {"n":2}\n\n');
  });
});

describe('spec: ctx.validate', () => {
  it('README: a rule without a type bounds a string by its length and a number by its value (a query value is a string)', async () => {
    const app = createApp();
    const rules = { age: { min: 18 } };
    app.get('/q', (ctx) => ctx.json(ctx.validate(rules)));
    app.post('/b', (ctx) => ctx.json(ctx.validate(rules)));
    app.get('/n', (ctx) => ctx.json(ctx.validate({ age: { type: 'number', min: 18 } })));
    const port = await serve(app);
    expect((await postJson(port, '/b', { age: 20 })).json()).toEqual({ age: 20 });
    const low = await postJson(port, '/b', { age: 17 });
    expect(low.status).toBe(400);
    expect(low.json()).toMatchObject({
      fields: [{ field: 'age', rule: 'min', message: 'must be >= 18' }],
    });
    // `?age=20` is the two-character string "20": too short for min 18 as a length.
    const query = await call(port, { path: '/q?age=20' });
    expect(query.status).toBe(400);
    expect(query.json()).toMatchObject({
      fields: [{ field: 'age', rule: 'min', message: 'must be at least 18 characters' }],
    });
    // Bounding a query value by its value takes a number type (coerced).
    expect((await call(port, { path: '/n?age=20' })).json()).toEqual({ age: 20 });
  });

  it('README: an optional field sent as "" or null counts as missing: not checked, left out of the result', async () => {
    const app = createApp();
    const rules = {
      email: { type: 'email' },
      nick: { type: 'string', min: 3 },
      name: { type: 'string', required: true },
    } as const;
    app.get('/q', (ctx) => ctx.json(ctx.validate(rules)));
    app.post('/b', (ctx) => ctx.json(ctx.validate(rules)));
    const port = await serve(app);
    expect((await call(port, { path: '/q?email=&nick=&name=Al' })).json()).toEqual({ name: 'Al' });
    expect((await postJson(port, '/b', { email: null, nick: '', name: 'Al' })).json()).toEqual({
      name: 'Al',
    });
  });

  it('required takes 0 and false (present values), an email with plus-addressing and capitals passes', async () => {
    const app = createApp();
    app.post('/b', (ctx) =>
      ctx.json(
        ctx.validate({
          email: { type: 'email', required: true },
          count: { required: true },
          flag: { required: true },
        }),
      ),
    );
    const port = await serve(app);
    const body = { email: 'John.Doe+tag@Example.COM', count: 0, flag: false };
    const r = await postJson(port, '/b', body);
    expect(r.status).toBe(200);
    expect(r.json()).toEqual(body);
  });

  it('README: rules declared apart from the call type-check with `satisfies Rules` or `as const`', async () => {
    const signup = { email: { type: 'email', required: true } } satisfies Rules;
    const search = { q: { type: 'string', min: 2 } } as const;
    const widened = { q: { type: 'string' } };
    // What the README warns about: declared apart without either, `type` widens to string.
    // @ts-expect-error `type: string` is not a RuleType
    const untyped = (ctx: Context) => ctx.validate(widened);
    expect(typeof untyped).toBe('function');
    const app = createApp();
    app.post('/signup', (ctx) => {
      const data = ctx.validate(signup);
      const email: string = data.email; // required: typed as present
      return ctx.json({ email });
    });
    app.get('/search', (ctx) => ctx.json(ctx.validate(search)));
    const port = await serve(app);
    expect((await postJson(port, '/signup', { email: 'a@b.co' })).json()).toEqual({
      email: 'a@b.co',
    });
    expect((await call(port, { path: '/search?q=x' })).status).toBe(400);
  });

  it('targetData given as ctx.params validates the path parameters, as given', async () => {
    const app = createApp();
    app.get('/users/:id', (ctx) =>
      ctx.json(ctx.validate({ id: { type: 'string', min: 3 } }, ctx.params)),
    );
    const port = await serve(app);
    expect((await call(port, { path: '/users/abc' })).json()).toEqual({ id: 'abc' });
    const short = await call(port, { path: '/users/ab' });
    expect(short.status).toBe(400);
    expect(short.json()).toMatchObject({ status: 400, fields: [{ field: 'id', rule: 'min' }] });
  });

  it('README: with a request body, the body is what is validated (the query is not merged in)', async () => {
    const app = createApp();
    app.post('/b', (ctx) => ctx.json(ctx.validate({ a: { type: 'string', required: true } })));
    const port = await serve(app);
    const r = await postJson(port, '/b?a=fromquery', { b: 1 });
    expect(r.status).toBe(400);
    expect(r.json()).toMatchObject({ fields: [{ field: 'a', rule: 'required' }] });
    expect((await postJson(port, '/b?a=fromquery', { a: 'body' })).json()).toEqual({ a: 'body' });
  });
});

describe('spec: ctx.graphql', () => {
  const sdl = 'type Query { hello: String n: Int } type Mutation { add(a: Int!, b: Int!): Int }';

  it('resolvers may be plain values, by type or as a root value; a root-value mutation runs', async () => {
    const app = createApp();
    app.all('/byType', (ctx) =>
      ctx.graphql(sdl, { Query: { hello: 'world', n: () => 3 } } as never),
    );
    app.all('/root', (ctx) =>
      ctx.graphql(sdl, {
        hello: 'world',
        n: 3,
        add: ({ a, b }: { a: number; b: number }) => a + b,
      } as never),
    );
    const port = await serve(app);
    for (const path of ['/byType', '/root']) {
      const r = await postJson(port, path, { query: '{ hello n }' });
      expect(r.status).toBe(200);
      expect(r.json()).toEqual({ data: { hello: 'world', n: 3 } });
    }
    const m = await postJson(port, '/root', { query: 'mutation { add(a: 1, b: 2) }' });
    expect(m.json()).toEqual({ data: { add: 3 } });
  });

  it('variables and operationName sent as null, and an extensions member, are accepted', async () => {
    const app = createApp();
    app.post('/g', (ctx) => ctx.graphql(sdl, { Query: { hello: () => 'w' } }));
    const port = await serve(app);
    const r = await postJson(port, '/g', {
      query: '{ hello }',
      variables: null,
      operationName: null,
      extensions: {},
    });
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toBe('application/json');
    expect(r.json()).toEqual({ data: { hello: 'w' } });
  });

  it('HEAD on a GET query gets the headers GET gets, and no body', async () => {
    const app = createApp();
    app.get('/g', (ctx) => ctx.graphql(sdl, { Query: { hello: () => 'w' } }));
    const port = await serve(app);
    const path = `/g?query=${encodeURIComponent('{ hello }')}`;
    const get = await call(port, { path });
    const head = await call(port, { method: 'HEAD', path });
    expect(get.text).toBe('{"data":{"hello":"w"}}');
    expect(head.status).toBe(200);
    expect(head.headers['content-type']).toBe('application/json');
    expect(head.headers['content-length']).toBe(get.headers['content-length']);
    expect(head.text).toBe('');
  });
});

describe('spec: ctx.sendFile', () => {
  it('ETag: a rewritten file gets a new tag; the old tag no longer gets a 304', async () => {
    const file = join(dir, 'changing.txt');
    writeFileSync(file, 'one');
    const app = createApp();
    app.get('/f', (ctx) => ctx.sendFile(file));
    const port = await serve(app);
    const first = await call(port, { path: '/f' });
    const tag = first.headers.etag as string;
    expect((await call(port, { path: '/f', headers: { 'if-none-match': tag } })).status).toBe(304);
    writeFileSync(file, 'two, longer');
    const after = await call(port, { path: '/f', headers: { 'if-none-match': tag } });
    expect(after.status).toBe(200);
    expect(after.text).toBe('two, longer');
    expect(after.headers.etag).not.toBe(tag);
  });

  it('"a conditional request matching the ETag" is a 304 from fetch too, which adds Cache-Control: no-cache to it', async () => {
    const app = createApp();
    const seen: (string | undefined)[] = [];
    app.get('/f', (ctx) => {
      seen.push(ctx.header('cache-control'));
      return ctx.sendFile('a.txt', { root: join(dir, 'pub') });
    });
    const port = await serve(app);
    const url = `http://127.0.0.1:${port}/f`;
    const first = await fetch(url);
    const etag = first.headers.get('etag') ?? '';
    const modified = first.headers.get('last-modified') ?? '';
    expect(await first.text()).toBe('hello world');
    const byTag = await fetch(url, { headers: { 'if-none-match': etag } });
    expect(byTag.status).toBe(304);
    expect(await byTag.text()).toBe('');
    const byDate = await fetch(url, { headers: { 'if-modified-since': modified } });
    expect(byDate.status).toBe(304);
    // The Fetch standard makes a request with a validator "no-store": it sends no-cache.
    expect(seen).toEqual([undefined, 'no-cache', 'no-cache']);
    // A validator that does not match still gets the file.
    const stale = await fetch(url, { headers: { 'if-none-match': '"other"' } });
    expect([stale.status, await stale.text()]).toEqual([200, 'hello world']);
  });

  it('a conditional request matching the ETag is a 304 even with a Range; HEAD with a Range is a 206 head', async () => {
    const app = createApp();
    app.get('/f/:name', (ctx) => ctx.sendFile(ctx.params.name ?? '', { root: join(dir, 'pub') }));
    const port = await serve(app);
    const tag = (await call(port, { path: '/f/a.txt' })).headers.etag as string;
    const cond = await call(port, {
      path: '/f/a.txt',
      headers: { 'if-none-match': tag, range: 'bytes=0-1' },
    });
    expect(cond.status).toBe(304);
    expect(cond.text).toBe('');
    const head = await call(port, {
      method: 'HEAD',
      path: '/f/a.txt',
      headers: { range: 'bytes=0-4' },
    });
    expect(head.status).toBe(206);
    expect(head.headers['content-range']).toBe('bytes 0-4/11');
    expect(head.headers['content-length']).toBe('5');
    expect(head.text).toBe('');
  });

  it('README: two disjoint ranges get the whole file once (200), never a multipart body', async () => {
    const app = createApp();
    app.get('/f', (ctx) => ctx.sendFile('a.txt', { root: join(dir, 'pub') }));
    const port = await serve(app);
    const r = await call(port, { path: '/f', headers: { range: 'bytes=0-1,6-7' } });
    expect(r.status).toBe(200);
    expect(r.text).toBe('hello world');
    expect(r.headers['content-range']).toBeUndefined();
  });

  it('cacheControl and setCookie before sendFile are sent with the file, and Cache-Control with its 304', async () => {
    const app = createApp();
    app.get('/f', (ctx) =>
      ctx
        .cacheControl({ public: true, maxAge: 60 })
        .setCookie('seen', '1')
        .sendFile('a.txt', { root: join(dir, 'pub') }),
    );
    const port = await serve(app);
    const ok = await call(port, { path: '/f' });
    expect(ok.status).toBe(200);
    expect(ok.headers['cache-control']).toBe('public, max-age=60');
    expect(ok.headers['set-cookie']).toEqual(['seen=1; Path=/; SameSite=Lax']);
    // RFC 9110 §15.4.5: a 304 carries the Cache-Control a 200 would have had.
    const cached = await call(port, {
      path: '/f',
      headers: { 'if-none-match': ok.headers.etag as string },
    });
    expect(cached.status).toBe(304);
    expect(cached.headers['cache-control']).toBe('public, max-age=60');
    expect(cached.headers.etag).toBe(ok.headers.etag);
  });

  it('README: a relative root, and a relative path without root, are resolved from process.cwd()', async () => {
    const app = createApp();
    const relRoot = relative(process.cwd(), join(dir, 'pub'));
    app.get('/root/:name', (ctx) => ctx.sendFile(ctx.params.name ?? '', { root: relRoot }));
    app.get('/plain', (ctx) => ctx.sendFile(join(relRoot, 'a.txt')));
    const port = await serve(app);
    expect((await call(port, { path: '/root/a.txt' })).text).toBe('hello world');
    expect((await call(port, { path: '/plain' })).text).toBe('hello world');
    expect((await call(port, { path: '/root/..%2Fpub%2Fa.txt' })).status).toBe(403);
  });
});

describe('spec: ctx.setCookie / ctx.cacheControl / ctx.status / ctx.json / ctx.send', () => {
  it('setCookie: separators in the value are URL-encoded as encodeURIComponent does; maxAge fractions floored, 0 and negative sent', async () => {
    const app = createApp();
    app.get('/c', (ctx) =>
      ctx
        .setCookie('prefs', 'a=b; c,d "e"', { maxAge: 1.9 })
        .setCookie('gone', '', { maxAge: 0 })
        .setCookie('gone2', 'x', { maxAge: -1 })
        .send('ok'),
    );
    const port = await serve(app);
    const r = await call(port, { path: '/c' });
    expect(r.headers['set-cookie']).toEqual([
      `prefs=${encodeURIComponent('a=b; c,d "e"')}; Max-Age=1; Path=/; SameSite=Lax`,
      'gone=; Max-Age=0; Path=/; SameSite=Lax',
      'gone2=x; Max-Age=-1; Path=/; SameSite=Lax',
    ]);
  });

  it('cacheControl: public false is `private`; options with no directive set no header', async () => {
    const app = createApp();
    app.get('/p', (ctx) => ctx.cacheControl({ public: false, maxAge: 0 }).send('x'));
    app.get('/none', (ctx) => ctx.cacheControl({}).send('x'));
    const port = await serve(app);
    expect((await call(port, { path: '/p' })).headers['cache-control']).toBe('private, max-age=0');
    expect((await call(port, { path: '/none' })).headers['cache-control']).toBeUndefined();
  });

  it('status returns a value every helper chains from: status -> cacheControl -> setCookie -> json', async () => {
    const app = createApp();
    app.post('/items', (ctx) =>
      ctx
        .status(201)
        .cacheControl({ maxAge: 5 })
        .setCookie('k', 'v', { httpOnly: true })
        .json({ created: true }),
    );
    const port = await serve(app);
    const r = await postJson(port, '/items', {});
    expect(r.status).toBe(201);
    expect(r.headers['cache-control']).toBe('max-age=5');
    expect(r.headers['set-cookie']).toEqual(['k=v; Path=/; HttpOnly; SameSite=Lax']);
    expect(r.json()).toEqual({ created: true });
  });

  it('README: json(undefined) sends `null`; send of a number or boolean sends its JSON text', async () => {
    const app = createApp();
    app.get('/u', (ctx) => ctx.json(undefined));
    app.get('/n', (ctx) => ctx.send(42 as never));
    app.get('/t', (ctx) => ctx.send(true as never));
    const port = await serve(app);
    for (const [path, text] of [
      ['/u', 'null'],
      ['/n', '42'],
      ['/t', 'true'],
    ] as const) {
      const r = await call(port, { path });
      expect(r.status).toBe(200);
      expect(r.headers['content-type']).toBe('application/json');
      expect(r.text).toBe(text);
    }
  });

  it('ctx.query on a POST route reads the URL query, not the body; ctx.ips joins two X-Forwarded-For lines, client first', async () => {
    const app = createApp();
    app.setTrustProxy(true);
    app.post('/q', (ctx) => ctx.json({ a: ctx.query('a') ?? null, ip: ctx.ip, ips: ctx.ips }));
    const port = await serve(app);
    const r = await call(port, {
      method: 'POST',
      path: '/q?a=url',
      headers: {
        'content-type': 'application/json',
        'x-forwarded-for': ['198.51.100.1', '10.0.0.1'],
      },
      body: JSON.stringify({ a: 'body' }),
    });
    expect(r.json()).toEqual({ a: 'url', ip: '198.51.100.1', ips: ['198.51.100.1', '10.0.0.1'] });
  });
});
