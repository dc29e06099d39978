/**
 * Black-box audit of the request pipeline as a user sees it (also run against the composed
 * client by the core-composed project) (spec resolution, cache, dedup,
 * invalidation, subscriptions, events, errors), through createClient against a real loopback
 * server; time-based rules use the injected FakeClock.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import {
  type CacheUpdate,
  CancelledError,
  type Client,
  type ClientOptions,
  dehydrate,
  HttpError,
  hydrate,
  isCancelledError,
} from '../src/index';
import {
  createTestClient,
  debugOf,
  FakeClock,
  recordEvents,
  settle,
  startServer,
  type TestServer,
} from './helpers';

interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

let server: TestServer;
/** Every request the server read, with its body. */
const seen: Seen[] = [];
/** Answers held by the test: `hold` routes wait here until released. */
let held: { req: Seen; res: ServerResponse }[] = [];
let counter = 0;

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c) => {
      body += c;
    });
    req.on('end', () => resolve(body));
  });
}

async function record(req: IncomingMessage): Promise<Seen> {
  const s = { method: req.method!, url: req.url!, headers: req.headers, body: await readBody(req) };
  seen.push(s);
  return s;
}

function json(
  res: ServerResponse,
  data: unknown,
  status = 200,
  headers: Record<string, string> = {},
) {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(data));
}

beforeAll(async () => {
  const echo = async (req: IncomingMessage, res: ServerResponse) => {
    const s = await record(req);
    json(res, { n: ++counter, method: s.method, url: s.url, headers: s.headers, body: s.body });
  };
  server = await startServer({
    '/echo': echo,
    '/v1/echo': echo,
    '/users': echo,
    '/users/7': echo,
    '/users-x': echo,
    '/hold': async (req, res) => {
      const s = await record(req);
      held.push({ req: s, res });
    },
    '/unavailable': async (req, res) => {
      await record(req);
      json(res, { why: 'busy' }, 503);
    },
    '/fail': async (req, res) => {
      await record(req);
      json(res, { why: 'nope' }, 404, { 'x-why': 'missing' });
    },
  });
});

afterAll(() => server.close());

afterEach(() => {
  seen.length = 0;
  for (const h of held) h.res.destroy();
  held = [];
});

/** Resolves once `n` held requests are waiting. */
async function heldCount(n: number): Promise<void> {
  for (let i = 0; i < 2000 && held.length < n; i++) await new Promise((r) => setTimeout(r, 5));
  expect(held.length).toBe(n);
}

async function until(check: () => boolean): Promise<void> {
  for (let i = 0; i < 2000 && !check(); i++) await new Promise((r) => setTimeout(r, 5));
  expect(check()).toBe(true);
}

function release(i: number, data: unknown): void {
  json(held[i]!.res, data);
}

function client(options: ClientOptions = {}): Client {
  return createTestClient({ baseURL: server.url, retry: false, ...options });
}

// ── spec resolution ─────────────────────────────────────────────────────────────────────────

describe('spec resolution', () => {
  test.each([
    ['/v1', '/echo', '/v1/echo'],
    ['/v1/', '/echo', '/v1/echo'],
    ['/v1', 'echo', '/v1/echo'],
    ['/v1/', 'echo', '/v1/echo'],
    ['', '/echo?b=2&a=1', '/echo?a=1&b=2'],
    ['/v1', '?x=1', '/v1?x=1'],
  ])('baseURL %s + %s reaches %s', async (basePath, url, expected) => {
    const c = createTestClient({ baseURL: server.url + basePath, retry: false });
    const spec = c.resolve('GET', url);
    expect(spec.url).toBe(server.url + expected);
    expect(spec.endpoint).toBe(`GET ${expected.split('?')[0]}`);
  });

  test('an absolute URL ignores baseURL; a request baseURL overrides the client one', async () => {
    const c = createTestClient({ baseURL: 'https://elsewhere.invalid/api' });
    expect(c.resolve('GET', `${server.url}/echo`).url).toBe(`${server.url}/echo`);
    const r = await c.get<{ url: string }>('/echo', { baseURL: server.url, retry: false });
    expect(r.data.url).toBe('/echo');
  });

  test('params: arrays repeat the key, null/undefined dropped, merged after the own query, sorted in the key', async () => {
    const c = client();
    const r = await c.get<{ url: string }>('/echo?z=0', {
      params: { q: 'a b&c', tag: ['x', null, 'y'], skip: null, none: undefined, n: 0, f: false },
    });
    const sent = new URL(r.data.url, server.url);
    expect(sent.searchParams.getAll('tag')).toEqual(['x', 'y']);
    expect(sent.searchParams.get('q')).toBe('a b&c');
    expect(sent.searchParams.get('n')).toBe('0');
    expect(sent.searchParams.get('f')).toBe('false');
    expect(sent.searchParams.get('z')).toBe('0');
    expect(sent.searchParams.has('skip')).toBe(false);
    expect(sent.searchParams.has('none')).toBe(false);
    // The same request written with the query in the URL, in another order, is the same key.
    const same = c.resolve('GET', '/echo?tag=x&f=false&q=a%20b%26c&z=0&n=0&tag=y');
    expect(
      c.resolve('GET', '/echo?z=0', { params: { q: 'a b&c', tag: ['x', 'y'], n: 0, f: false } })
        .key,
    ).toBe(same.key);
  });

  test('params that add nothing leave the URL as it is (fragment dropped)', () => {
    const c = client();
    expect(c.resolve('GET', '/echo#frag', { params: { a: null } }).url).toBe(`${server.url}/echo`);
    expect(c.resolve('GET', '/echo?b=1#frag', { params: { a: 1 } }).url).toBe(
      `${server.url}/echo?a=1&b=1`,
    );
  });

  test('headers: client defaults merged, request headers win case-insensitively, one value sent', async () => {
    const c = client({ headers: { Authorization: 'client', 'X-Client': 'c' } });
    const r = await c.get<{ headers: Record<string, string> }>('/echo', {
      headers: { authorization: 'request', 'X-Req': 'r' },
    });
    expect(r.data.headers.authorization).toBe('request');
    expect(r.data.headers['x-client']).toBe('c');
    expect(r.data.headers['x-req']).toBe('r');
  });

  test('a header name or value fetch would refuse is a RangeError naming it; nothing is sent, nothing retried', async () => {
    const c = createTestClient({ baseURL: server.url, retry: { attempts: 3, baseDelay: 1 } });
    const rec = recordEvents(c, ['request', 'retry', 'error']);
    for (const [headers, name] of [
      [{ 'x-a': 'a\nb' }, 'headers["x-a"]'],
      [{ 'x-a': 'a\r\nInjected: 1' }, 'headers["x-a"]'],
      [{ 'x a': 'b' }, 'headers["x a"]'],
      [{ 'x:a': 'b' }, 'headers["x:a"]'],
      [{ '': 'b' }, 'headers[""]'],
      [{ 'x-a': 'price in €' }, 'headers["x-a"]'],
    ] as const) {
      const r = await settle(c.get('/echo', { headers }));
      const err = (r as { reason: Error }).reason;
      expect(err).toBeInstanceOf(RangeError);
      expect(err.message).toContain(`\`${name}\``);
    }
    expect(() => createTestClient({ headers: { 'x-a': 'a\nb' } })).toThrow(RangeError);
    expect(seen).toHaveLength(0);
    expect(rec.events).toEqual([]);
    // Values fetch trims or accepts stay accepted.
    const ok = await c.get<Seen>('/echo', {
      headers: { 'x-b': ' padded\t', 'x-c': 'é', 'x-d': '' },
    });
    expect(ok.data.headers['x-b']).toBe('padded');
  });

  test('headers given as a Headers instance are sent (not silently dropped), at client and request level', async () => {
    const c = client({ headers: new Headers({ 'X-Client': 'c' }) });
    const r = await c.get<Seen>('/echo', {
      headers: new Headers({ Authorization: 'token' }),
    });
    expect(r.data.headers.authorization).toBe('token');
    expect(r.data.headers['x-client']).toBe('c');
    expect(c.resolve('GET', '/echo', { headers: new Headers({ 'x-a': '1' }) }).key).toBe(
      c.resolve('GET', '/echo', { headers: { 'x-a': '1' } }).key,
    );
  });

  test('params values other than string, number, boolean, null or undefined are a TypeError naming the param', async () => {
    const c = client();
    for (const [params, name] of [
      [{ a: { b: 1 } }, 'params["a"]'],
      [{ a: [1, { b: 1 }] }, 'params["a"]'],
      [{ a: () => 1 }, 'params["a"]'],
      [{ 'x y': new Date(0) }, 'params["x y"]'],
    ] as const) {
      const r = await settle(c.get('/echo', { params: params as never }));
      const err = (r as { reason: Error }).reason;
      expect(err).toBeInstanceOf(TypeError);
      expect(err.message).toContain(`\`${name}\``);
    }
    expect(seen).toHaveLength(0);
  });

  test('params given as URLSearchParams are sent (not silently dropped)', async () => {
    const c = client();
    const r = await c.get<Seen>('/echo', {
      params: new URLSearchParams([
        ['b', '2'],
        ['a', 'x y'],
        ['b', '1'],
      ]),
    });
    const sent = new URL(r.data.url, server.url).searchParams;
    expect(sent.getAll('b')).toEqual(['2', '1']);
    expect(sent.get('a')).toBe('x y');
  });

  test('request headers are part of the key; client headers are not', () => {
    const c = client({ headers: { 'x-a': '1' } });
    const d = client({ headers: { 'x-a': '2' } });
    expect(c.resolve('GET', '/echo').key).toBe(d.resolve('GET', '/echo').key);
    expect(c.resolve('GET', '/echo', { headers: { 'X-B': '1' } }).key).not.toBe(
      c.resolve('GET', '/echo', { headers: { 'X-B': '2' } }).key,
    );
    expect(c.resolve('GET', '/echo', { headers: { 'X-B': '1' } }).key).toBe(
      c.resolve('GET', '/echo', { headers: { 'x-b': '1' } }).key,
    );
  });

  test.each([
    [{ a: 1 }, 'application/json', '{"a":1}'],
    [[1, 2], 'application/json', '[1,2]'],
    [0, 'application/json', '0'],
    [false, 'application/json', 'false'],
    ['plain', 'text/plain;charset=UTF-8', 'plain'],
    [
      new URLSearchParams({ a: '1', b: 'x y' }),
      'application/x-www-form-urlencoded;charset=UTF-8',
      'a=1&b=x+y',
    ],
    [new Uint8Array([104, 105]), undefined, 'hi'],
    [new Uint8Array([104, 105]).buffer, undefined, 'hi'],
    [new Blob(['blob'], { type: 'text/x-blob' }), 'text/x-blob', 'blob'],
  ])('body %o is sent with content-type %s', async (body, type, text) => {
    const c = client();
    const r = await c.post<Seen>('/echo', body);
    expect(r.data.body).toBe(text);
    expect(r.data.headers['content-type']).toBe(type);
  });

  test('a ReadableStream body is streamed to the server (fetch needs duplex: half for it)', async () => {
    const c = client();
    const stream = () =>
      new ReadableStream<Uint8Array>({
        start(ctl) {
          ctl.enqueue(new TextEncoder().encode('str'));
          ctl.enqueue(new TextEncoder().encode('eam'));
          ctl.close();
        },
      });
    const r = await c.post<Seen>('/echo', stream(), { headers: { 'content-type': 'text/plain' } });
    expect(r.data.body).toBe('stream');
    expect(r.data.headers['content-type']).toBe('text/plain');
    const put = await c.put<Seen>('/echo', stream());
    expect(put.data.body).toBe('stream');
  });

  test('a ReadableStream body is read once: its request is not retried (the 503 is what the caller gets)', async () => {
    const c = createTestClient({
      baseURL: server.url,
      retry: { attempts: 3, baseDelay: 1, jitter: false },
    });
    const body = new ReadableStream<Uint8Array>({
      start(ctl) {
        ctl.enqueue(new TextEncoder().encode('x'));
        ctl.close();
      },
    });
    const r = await settle(c.put('/unavailable', body));
    expect((r as { reason: HttpError }).reason).toMatchObject({ name: 'HttpError', status: 503 });
    expect(seen.filter((s) => s.url === '/unavailable')).toHaveLength(1);
  });

  test('an explicit Content-Type (any case, client or request) is kept for a JSON body', async () => {
    const c = client({ headers: { 'Content-Type': 'application/vnd.x+json' } });
    const r1 = await c.post<Seen>('/echo', { a: 1 });
    expect(r1.data.headers['content-type']).toBe('application/vnd.x+json');
    const r2 = await c.put<Seen>('/echo', { a: 1 }, { headers: { 'CONTENT-TYPE': 'text/json' } });
    expect(r2.data.headers['content-type']).toBe('text/json');
    expect(r2.data.body).toBe('{"a":1}');
  });

  test('method names are case-insensitive; an unknown one rejects with a RangeError and sends nothing', async () => {
    const c = client();
    const r = await c.request<Seen>('patch' as never, '/echo', { body: { a: 1 } });
    expect(r.data.method).toBe('PATCH');
    const bad = await settle(c.request('FETCH' as never, '/echo'));
    expect(bad.state).toBe('rejected');
    expect((bad as { reason: Error }).reason).toBeInstanceOf(RangeError);
    expect((bad as { reason: Error }).reason.message).toContain('`method`');
    const wrongType = await settle(c.request(5 as never, '/echo'));
    expect((wrongType as { reason: Error }).reason).toBeInstanceOf(TypeError);
    expect(seen.map((s) => s.method)).toEqual(['PATCH']);
  });

  test('a GET with a body is a RangeError naming `body`; nothing is sent', async () => {
    const c = client();
    const r = await settle(c.get('/echo', { body: { a: 1 } }));
    expect((r as { reason: Error }).reason).toBeInstanceOf(RangeError);
    expect((r as { reason: Error }).reason.message).toContain('`body`');
    expect(seen).toHaveLength(0);
  });
});

// ── cache ───────────────────────────────────────────────────────────────────────────────────

describe('cache', () => {
  test('cache-first: a fresh entry answers from memory with cache-hit; after ttl it is a miss', async () => {
    const clock = new FakeClock();
    const c = client({ clock, cache: { ttl: 1000 } });
    const rec = recordEvents(c, ['cache-hit', 'request', 'cache-write']);
    const a = await c.get<{ n: number }>('/echo');
    const b = await c.get<{ n: number }>('/echo');
    expect(b).toBe(a);
    expect(seen).toHaveLength(1);
    expect(rec.events.map((e) => e.name)).toEqual(['request', 'cache-write', 'cache-hit']);
    await clock.advance(1000);
    const d = await c.get<{ n: number }>('/echo');
    expect(d.data.n).toBeGreaterThan(a.data.n);
    expect(seen).toHaveLength(2);
  });

  test('per-request ttl: a shorter reader ttl refetches; a longer one does not extend the entry', async () => {
    const clock = new FakeClock();
    const c = client({ clock, cache: { ttl: 10_000 } });
    await c.get('/echo');
    await clock.advance(2000);
    await c.get('/echo', { cache: { ttl: 5000 } });
    expect(seen).toHaveLength(1);
    await c.get('/echo', { cache: { ttl: 1000 } });
    expect(seen).toHaveLength(2);
    // Written with ttl 1000 now: a reader asking for 10 s still sees it expire after 1 s.
    await clock.advance(1500);
    await c.get('/echo', { cache: { ttl: 10_000 } });
    expect(seen).toHaveLength(3);
  });

  test('per-request ttl is written into the entry', async () => {
    const clock = new FakeClock();
    const c = client({ clock, cache: { ttl: 1000 } });
    await c.get('/echo', { cache: { ttl: 60_000 } });
    await clock.advance(5000);
    await c.get('/echo', { cache: { ttl: 60_000 } });
    expect(seen).toHaveLength(1);
  });

  test('stale-while-revalidate: a stale entry answers at once and refetches in the background', async () => {
    const clock = new FakeClock();
    const c = client({ clock, cache: { ttl: 1000, strategy: 'stale-while-revalidate' } });
    const key = c.resolve('GET', '/echo').key;
    const updates: CacheUpdate[] = [];
    c.subscribe(key, (u) => updates.push(u));
    const first = await c.get<{ n: number }>('/echo');
    await clock.advance(1500);
    const rec = recordEvents(c, ['cache-hit', 'request', 'cache-write', 'success', 'revalidate']);
    const stale = await c.get<{ n: number }>('/echo');
    expect(stale).toBe(first);
    await until(() => rec.events.some((e) => e.name === 'revalidate'));
    expect(rec.events.map((e) => e.name)).toEqual([
      'cache-hit',
      'request',
      'cache-write',
      'success',
      'revalidate',
    ]);
    expect((rec.events[0]!.payload as { stale?: boolean }).stale).toBe(true);
    expect(updates.map((u) => u.type)).toEqual(['write', 'revalidate']);
    const fresh = await c.get<{ n: number }>('/echo');
    expect(fresh.data.n).toBeGreaterThan(first.data.n);
    expect(seen).toHaveLength(2);
  });

  test('SWR: stale reads during the background refetch do not start a second fetch', async () => {
    const clock = new FakeClock();
    const c = client({ clock, cache: { ttl: 1000, strategy: 'stale-while-revalidate' } });
    const first = c.get('/hold');
    await heldCount(1);
    release(0, { v: 1 });
    await first;
    await clock.advance(2000);
    await c.get('/hold');
    await c.get('/hold');
    await c.get('/hold');
    await heldCount(2);
    release(1, { v: 2 });
    await until(() => c.getCached<{ v: number }>(c.resolve('GET', '/hold').key)?.data.v === 2);
    expect((await c.get<{ v: number }>('/hold')).data.v).toBe(2);
    expect(held).toHaveLength(2);
  });

  test('only GET is cached: HEAD, OPTIONS and mutations always reach the server', async () => {
    const c = client();
    await c.head('/echo');
    await c.head('/echo');
    await c.options('/echo');
    await c.options('/echo');
    await c.delete('/echo');
    await c.delete('/echo');
    expect(seen.map((s) => s.method)).toEqual([
      'HEAD',
      'HEAD',
      'OPTIONS',
      'OPTIONS',
      'DELETE',
      'DELETE',
    ]);
    expect(debugOf(c).cacheSize).toBe(0);
  });

  test('cache:false skips reading and writing; cache:true opts in on a client without a cache', async () => {
    const c = client();
    await c.get('/echo');
    await c.get('/echo', { cache: false });
    expect(seen).toHaveLength(2);
    const off = client({ cache: false });
    await off.get('/echo');
    await off.get('/echo');
    expect(seen).toHaveLength(4);
    await off.get('/echo', { cache: true });
    await off.get('/echo', { cache: true });
    expect(seen).toHaveLength(5);
  });

  test('clearCache during a flight: the caller gets its answer, it is not stored, a later read fetches anew', async () => {
    const c = client();
    const p = c.get<{ v: number }>('/hold');
    await heldCount(1);
    c.clearCache();
    const q = c.get<{ v: number }>('/hold');
    await heldCount(2);
    release(0, { v: 1 });
    release(1, { v: 2 });
    expect((await p).data.v).toBe(1);
    expect((await q).data.v).toBe(2);
    expect((await c.get<{ v: number }>('/hold')).data.v).toBe(2);
  });

  test('setCached / getCached by key and by spec; undefined deletes and tells subscribers', async () => {
    const c = client();
    const spec = c.resolve('GET', '/echo', { tags: ['t'] });
    const updates: CacheUpdate[] = [];
    c.subscribe(spec.key, (u) => updates.push(u));
    const value = { data: { hand: 1 }, status: 200, statusText: 'OK', headers: new Headers() };
    c.setCached(spec, value);
    expect(c.getCached(spec.key)).toBe(value);
    expect((await c.get('/echo')).data).toEqual({ hand: 1 });
    expect(seen).toHaveLength(0);
    // Written with the spec's tags: a tag invalidation reaches it.
    expect(c.invalidate(['t'], { refetch: false })).toEqual([spec.key]);
    c.setCached(spec.key, value);
    expect((await c.get('/echo')).data).toEqual({ hand: 1 });
    c.setCached(spec.key, undefined);
    expect(c.getCached(spec.key)).toBeUndefined();
    expect(updates.map((u) => u.type)).toEqual(['write', 'invalidate', 'write', 'invalidate']);
    expect(updates[1]).toEqual({ type: 'invalidate', key: spec.key });
  });

  test('dehydrate / hydrate: the entries cross to another client (other origin form), keeping their age', async () => {
    const clock = new FakeClock();
    const a = client({ clock, cache: { ttl: 10_000 } });
    await a.get('/echo', { params: { q: 1 }, tags: ['x'] });
    await clock.advance(4000);
    const state = JSON.parse(JSON.stringify(dehydrate(a)));
    const clock2 = new FakeClock();
    const b = createTestClient({
      baseURL: `${server.url.replace('127.0.0.1', 'localhost')}`,
      clock: clock2,
      retry: false,
    });
    expect(hydrate(b, state)).toBe(1);
    await b.get('/echo', { params: { q: 1 } });
    expect(seen).toHaveLength(1);
    expect(b.invalidate(['x'], { refetch: false })).toHaveLength(1);
    // The same state again: written at its first arrival, not again over the invalidation.
    expect(hydrate(b, state)).toBe(0);
    await clock2.advance(6000);
    await b.get('/echo', { params: { q: 1 } });
    expect(seen).toHaveLength(2);
  });
});

// ── dedup ───────────────────────────────────────────────────────────────────────────────────

describe('dedup', () => {
  test('only reads join; mutations and different keys fly on their own', async () => {
    const c = client({ cache: false });
    const reads = [c.get('/hold'), c.get('/hold'), c.head('/hold'), c.head('/hold')];
    const posts = [c.post('/hold', { a: 1 }), c.post('/hold', { a: 1 })];
    await heldCount(4);
    for (let i = 0; i < held.length; i++) release(i, { i });
    await Promise.all([...reads, ...posts]);
  });

  test('each joiner has its own cancel(); the owner cancelling leaves joiners their answer', async () => {
    const c = client();
    const rec = recordEvents(c, ['cancel', 'success', 'dedup']);
    const owner = c.get<{ v: number }>('/hold');
    const j1 = c.get<{ v: number }>('/hold');
    const j2 = c.get<{ v: number }>('/hold');
    await heldCount(1);
    owner.cancel();
    j1.cancel();
    const o = await settle(owner);
    expect(isCancelledError((o as { reason: unknown }).reason)).toBe(true);
    expect((await settle(j1)).state).toBe('rejected');
    release(0, { v: 9 });
    expect((await j2).data.v).toBe(9);
    expect(
      rec.events
        .filter((e) => e.name === 'cancel')
        .map((e) => (e.payload as { final: boolean }).final),
    ).toEqual([false, false]);
    expect(rec.events.filter((e) => e.name === 'success')).toHaveLength(1);
    // The answer was stored: a later read is a hit.
    expect((await c.get<{ v: number }>('/hold')).data.v).toBe(9);
    expect(debugOf(c)).toMatchObject({ flights: 0, inflight: 0 });
  });

  test("the owner leaving a shared flight: its cancel event's tracker is cancelled, the flight's goes on", async () => {
    const clock = new FakeClock();
    const c = client({ clock });
    const rec = recordEvents(c, ['request', 'cancel', 'success']);
    const owner = c.get('/hold');
    const ownerOut = settle(owner);
    await clock.advance(10);
    const joiner = c.get<{ v: number }>('/hold');
    await heldCount(1);
    await clock.advance(5);
    owner.cancel();
    await ownerOut;
    const cancel = rec.events.find((e) => e.name === 'cancel')!.payload as {
      final: boolean;
      tracker: { state: string; startedAt: number; endedAt: number };
    };
    const flightTracker = (rec.events[0]!.payload as { tracker: { state: string } }).tracker;
    expect(cancel.final).toBe(false);
    expect(cancel.tracker.state).toBe('cancelled');
    expect(cancel.tracker.startedAt).toBe(clock.now() - 15);
    expect(cancel.tracker).not.toBe(flightTracker);
    expect(flightTracker.state).toBe('pending');
    release(0, { v: 1 });
    expect((await joiner).data.v).toBe(1);
    expect(flightTracker.state).toBe('success');
  });

  test('the last caller leaving aborts the request; the server sees it go', async () => {
    const c = client();
    const a = c.get('/hold');
    const b = c.get('/hold');
    const outcomes = Promise.all([settle(a), settle(b)]);
    await heldCount(1);
    const before = server.aborted;
    a.cancel();
    b.cancel();
    await server.waitForAborted(before + 1);
    for (const r of await outcomes)
      expect(isCancelledError((r as { reason: unknown }).reason)).toBe(true);
    expect(debugOf(c)).toMatchObject({ flights: 0, inflight: 0 });
    // Nothing stored, nothing joined: the next read is a new request.
    const d = c.get('/hold');
    await heldCount(2);
    release(1, { v: 1 });
    await d;
  });

  test('a joiner with its own signal leaves alone; a joiner with an aborted signal rejects at once', async () => {
    const c = client();
    const owner = c.get<{ v: number }>('/hold');
    await heldCount(1);
    const ac = new AbortController();
    const joiner = c.get('/hold', { signal: ac.signal });
    ac.abort();
    const r = await settle(joiner);
    expect((r as { reason: unknown }).reason).toBeInstanceOf(CancelledError);
    const pre = new AbortController();
    pre.abort();
    const r2 = await settle(c.get('/hold', { signal: pre.signal }));
    expect((r2 as { reason: unknown }).reason).toBeInstanceOf(CancelledError);
    release(0, { v: 3 });
    expect((await owner).data.v).toBe(3);
  });

  test('a joiner with a shorter deadline times out alone; the flight goes on', async () => {
    const clock = new FakeClock();
    const c = client({ clock });
    const owner = c.get<{ v: number }>('/hold');
    await heldCount(1);
    const joiner = settle(c.get('/hold', { deadline: 100 }));
    await clock.advance(100);
    const r = await joiner;
    expect((r as { reason: { name: string; kind: string } }).reason).toMatchObject({
      name: 'TimeoutError',
      kind: 'deadline',
    });
    release(0, { v: 4 });
    expect((await owner).data.v).toBe(4);
    expect(clock.live).toBe(0);
  });

  test('a read after invalidate() detached the flight starts a new one and gets the new data', async () => {
    const c = client();
    const old = c.get<{ v: number }>('/hold');
    await heldCount(1);
    c.invalidate('/hold');
    const fresh = c.get<{ v: number }>('/hold');
    const joiner = c.get<{ v: number }>('/hold');
    await heldCount(2);
    release(0, { v: 1 });
    release(1, { v: 2 });
    expect((await old).data.v).toBe(1);
    expect((await fresh).data.v).toBe(2);
    expect((await joiner).data.v).toBe(2);
    // The detached flight's answer is not what the cache holds.
    expect((await c.get<{ v: number }>('/hold')).data.v).toBe(2);
    expect(debugOf(c)).toMatchObject({ flights: 0, inflight: 0 });
  });

  test('a detached flight answering after its successor does not overwrite the newer entry', async () => {
    const c = client();
    const key = c.resolve('GET', '/hold').key;
    const updates: CacheUpdate[] = [];
    c.subscribe(key, (u) => updates.push(u));
    const old = c.get<{ v: number }>('/hold');
    await heldCount(1);
    c.invalidate('/hold');
    // The subscribed key is refetched at once by a new flight.
    await heldCount(2);
    release(1, { v: 2 });
    await until(() => c.getCached<{ v: number }>(key)?.data.v === 2);
    release(0, { v: 1 });
    expect((await old).data.v).toBe(1);
    expect(c.getCached<{ v: number }>(key)?.data.v).toBe(2);
    expect(updates.map((u) => [u.type, u.response?.data])).toEqual([['revalidate', { v: 2 }]]);
  });

  test('streamed reads are never cached nor joined', async () => {
    const c = client();
    const a = c.get<ReadableStream>('/users', { responseType: 'stream' });
    const b = c.get<ReadableStream>('/users', { responseType: 'stream' });
    const [ra, rb] = await Promise.all([a, b]);
    expect(ra.data).not.toBe(rb.data);
    await Promise.all([ra.data.cancel(), rb.data.cancel()]);
    await c.get<ReadableStream>('/users', { responseType: 'stream' }).then((r) => r.data.cancel());
    expect(seen).toHaveLength(3);
    expect(debugOf(c).cacheSize).toBe(0);
  });

  test('a detached flight settling later does not evict its successor from dedup', async () => {
    const c = client();
    const old = c.get<{ v: number }>('/hold');
    await heldCount(1);
    c.invalidate('/hold');
    const fresh = c.get<{ v: number }>('/hold');
    await heldCount(2);
    release(0, { v: 1 });
    await old;
    const joiner = c.get<{ v: number }>('/hold');
    release(1, { v: 2 });
    expect((await joiner).data.v).toBe(2);
    expect((await fresh).data.v).toBe(2);
    expect(held).toHaveLength(2);
  });
});

// ── invalidation ────────────────────────────────────────────────────────────────────────────

describe('invalidate', () => {
  test('a path string is segment-aware: children and query variants, not siblings', async () => {
    const c = client();
    await Promise.all([c.get('/users'), c.get('/users/7'), c.get('/users?x=1'), c.get('/users-x')]);
    const rec = recordEvents(c, ['invalidate']);
    const keys = c.invalidate('/users');
    expect(keys.sort()).toEqual(
      [
        c.resolve('GET', '/users').key,
        c.resolve('GET', '/users/7').key,
        c.resolve('GET', '/users?x=1').key,
      ].sort(),
    );
    expect(rec.events).toHaveLength(1);
    expect(rec.events[0]!.payload).toEqual({ keys, target: '/users' });
    expect(c.invalidate('/users')).toEqual([]);
    expect(rec.events).toHaveLength(1);
    expect(debugOf(c).cacheSize).toBe(1);
  });

  test('a relative target reaches entries under the baseURL path; an absolute one pins the origin', async () => {
    const c = createTestClient({ baseURL: `${server.url}/v1`, retry: false });
    await c.get('/echo');
    expect(c.invalidate('/echo', { refetch: false })).toHaveLength(1);
    await c.get('/echo');
    expect(c.invalidate('http://other.invalid/v1/echo')).toEqual([]);
    expect(c.invalidate(`${server.url}/v1/echo`)).toHaveLength(1);
  });

  test('tags and predicates; the predicate sees CacheMeta', async () => {
    const clock = new FakeClock();
    const c = client({ clock, cache: { ttl: 5000 } });
    await c.get('/users', { tags: ['a', 'b'] });
    await c.get('/users/7', { tags: ['c'] });
    expect(c.invalidate(['b', 'zzz'], { refetch: false })).toEqual([
      c.resolve('GET', '/users').key,
    ]);
    const metas: unknown[] = [];
    const key7 = c.resolve('GET', '/users/7').key;
    expect(
      c.invalidate((m) => {
        metas.push(m);
        return m.tags.includes('c');
      }),
    ).toEqual([key7]);
    expect(metas).toEqual([
      { key: key7, tags: ['c'], storedAt: clock.now(), expiresAt: clock.now() + 5000 },
    ]);
  });

  test('a bad target is a TypeError naming it', () => {
    const c = client();
    expect(() => c.invalidate(5 as never)).toThrow(TypeError);
    expect(() => c.invalidate(5 as never)).toThrow(/`target`/);
    expect(() => c.invalidate(['a', 2] as never)).toThrow(/`target\[1\]`/);
    expect(() => c.invalidate(/users/ as never)).toThrow(TypeError);
  });

  test('subscribed keys are refetched and end in revalidate; unsubscribed ones are only removed', async () => {
    const c = client();
    await c.get('/users');
    await c.get('/users/7');
    const key = c.resolve('GET', '/users').key;
    const updates: CacheUpdate[] = [];
    const off = c.subscribe(key, (u) => updates.push(u));
    const rec = recordEvents(c, ['revalidate', 'request']);
    c.invalidate('/users');
    await until(() => rec.events.some((e) => e.name === 'revalidate'));
    expect(rec.events.map((e) => e.name)).toEqual(['request', 'revalidate']);
    expect(updates.map((u) => u.type)).toEqual(['invalidate', 'revalidate']);
    expect(updates[1]!.response?.status).toBe(200);
    expect(c.getCached(key)).toBeDefined();
    expect(c.getCached(c.resolve('GET', '/users/7').key)).toBeUndefined();
    expect(seen).toHaveLength(3);
    off();
    c.invalidate('/users');
    await new Promise((r) => setTimeout(r, 20));
    expect(seen).toHaveLength(3);
  });

  test('a predicate subscription is interest too: the keys it accepts are refetched', async () => {
    const c = client();
    await Promise.all([c.get('/users'), c.get('/users/7')]);
    const got: string[] = [];
    c.subscribe(
      (k) => k.endsWith('/7'),
      (u) => got.push(u.type),
    );
    c.invalidate('/users');
    await until(() => got.includes('revalidate'));
    expect(got).toEqual(['invalidate', 'revalidate']);
    expect(seen.map((s) => s.url).sort()).toEqual(['/users', '/users/7', '/users/7']);
  });

  test('refetch:false removes without refetching', async () => {
    const c = client();
    await c.get('/users');
    c.subscribe(c.resolve('GET', '/users').key, () => {});
    c.invalidate('/users', { refetch: false });
    await new Promise((r) => setTimeout(r, 20));
    expect(seen).toHaveLength(1);
  });

  test('the refetch of a subscribed key coalesces with reads through dedup', async () => {
    const c = client();
    const first = c.get('/hold');
    await heldCount(1);
    release(0, { v: 1 });
    await first;
    c.subscribe(c.resolve('GET', '/hold').key, () => {});
    c.invalidate('/hold');
    const read = c.get<{ v: number }>('/hold');
    await heldCount(2);
    release(1, { v: 2 });
    expect((await read).data.v).toBe(2);
    await new Promise((r) => setTimeout(r, 20));
    expect(held).toHaveLength(2);
  });

  test('invalidating a subscribed key while its read is in flight refetches after the invalidation', async () => {
    const c = client();
    const key = c.resolve('GET', '/hold').key;
    const updates: CacheUpdate[] = [];
    c.subscribe(key, (u) => updates.push(u));
    const read = c.get<{ v: number }>('/hold');
    await heldCount(1);
    c.invalidate('/hold');
    await heldCount(2);
    release(0, { v: 1 });
    expect((await read).data.v).toBe(1);
    release(1, { v: 2 });
    await until(() => updates.some((u) => u.type === 'revalidate'));
    expect(c.getCached<{ v: number }>(key)?.data.v).toBe(2);
    expect(updates.map((u) => u.type)).toEqual(['revalidate']);
  });

  test('a subscribed key invalidated while an uncached read of it is in flight is refetched and stored anew', async () => {
    const c = client();
    const key = c.resolve('GET', '/hold').key;
    const first = c.get('/hold');
    await heldCount(1);
    release(0, { v: 1 });
    await first;
    const updates: CacheUpdate[] = [];
    c.subscribe(key, (u) => updates.push(u));
    // Started before the invalidation, and not cached: its answer is older than the invalidation.
    const uncached = c.get<{ v: number }>('/hold', { cache: false });
    await heldCount(2);
    c.invalidate('/hold');
    await heldCount(3);
    release(1, { v: 2 });
    expect((await uncached).data.v).toBe(2);
    release(2, { v: 3 });
    await until(() => updates.some((u) => u.type === 'revalidate'));
    expect(updates.map((u) => u.type)).toEqual(['invalidate', 'revalidate']);
    expect(c.getCached<{ v: number }>(key)?.data.v).toBe(3);
  });

  test('an SWR refresh rides on an uncached read: one fetch, and the stale entry is refreshed by it', async () => {
    const clock = new FakeClock();
    const c = client({ clock, cache: { ttl: 1000, strategy: 'stale-while-revalidate' } });
    const key = c.resolve('GET', '/hold').key;
    const first = c.get('/hold');
    await heldCount(1);
    release(0, { v: 1 });
    await first;
    await clock.advance(2000);
    const updates: string[] = [];
    c.subscribe(key, (u) => updates.push(u.type));
    const uncached = c.get<{ v: number }>('/hold', { cache: false });
    await heldCount(2);
    expect((await c.get<{ v: number }>('/hold')).data.v).toBe(1);
    release(1, { v: 2 });
    await uncached;
    await until(() => c.getCached<{ v: number }>(key)?.data.v === 2);
    expect(updates).toEqual(['revalidate']);
    expect(held).toHaveLength(2);
  });

  test('a successful mutation invalidates its path (and children) and its tags before its caller resumes', async () => {
    const c = client();
    await Promise.all([
      c.get('/users'),
      c.get('/users/7'),
      c.get('/echo', { tags: ['people'] }),
      c.get('/users-x'),
    ]);
    const rec = recordEvents(c, ['invalidate', 'success']);
    await c.post('/users', { name: 'x' }, { tags: ['people'] });
    expect(c.getCached(c.resolve('GET', '/users').key)).toBeUndefined();
    expect(c.getCached(c.resolve('GET', '/users/7').key)).toBeUndefined();
    expect(c.getCached(c.resolve('GET', '/echo').key)).toBeUndefined();
    expect(c.getCached(c.resolve('GET', '/users-x').key)).toBeDefined();
    expect(rec.events.map((e) => e.name)).toEqual(['success', 'invalidate']);
    expect((rec.events[1]!.payload as { keys: string[] }).keys).toHaveLength(3);
  });

  test('a mutation invalidates its path on its own origin only, like an absolute target', async () => {
    const c = client();
    await c.get('/users');
    const other = server.url.replace('127.0.0.1', 'localhost');
    await c.post(`${other}/users`, { a: 1 });
    expect(c.getCached(c.resolve('GET', '/users').key)).toBeDefined();
    await c.post('/users', { a: 1 });
    expect(c.getCached(c.resolve('GET', '/users').key)).toBeUndefined();
  });

  test('a failed mutation invalidates nothing', async () => {
    const c = client();
    await c.get('/fail/..'.replace('/fail/..', '/users'));
    const r = await settle(c.post('/fail', {}, { tags: [] }));
    expect(r.state).toBe('rejected');
    await settle(c.delete('/users-x/../fail'));
    expect(c.getCached(c.resolve('GET', '/users').key)).toBeDefined();
  });

  test('a mutation invalidates a path only at segment boundaries', async () => {
    const c = client();
    await c.get('/users-x');
    await c.put('/users', { a: 1 });
    expect(c.getCached(c.resolve('GET', '/users-x').key)).toBeDefined();
  });
});

// ── subscribe ───────────────────────────────────────────────────────────────────────────────

describe('subscribe', () => {
  test('key interest is reference-counted; a second unsubscribe call does nothing', async () => {
    const c = client();
    const key = c.resolve('GET', '/users').key;
    const fn = () => {};
    const off1 = c.subscribe(key, fn);
    const off2 = c.subscribe(key, fn);
    off1();
    off1();
    expect(debugOf(c).subscriptions).toBe(1);
    await c.get('/users');
    c.invalidate('/users');
    await until(() => seen.length === 2);
    off2();
    expect(debugOf(c).subscriptions).toBe(0);
  });

  test('predicate subscriptions get the updates of accepted keys only', async () => {
    const c = client();
    const got: CacheUpdate[] = [];
    c.subscribe(
      (k) => k.includes('/users/'),
      (u) => got.push(u),
    );
    await c.get('/users');
    await c.get('/users/7');
    expect(got.map((u) => [u.type, u.key])).toEqual([['write', c.resolve('GET', '/users/7').key]]);
  });

  test('a throwing subscriber or matcher goes to onError; the others and the request are unaffected', async () => {
    const errors: unknown[][] = [];
    const c = client({ onError: (e, ctx) => errors.push([e, ctx]) });
    const key = c.resolve('GET', '/users').key;
    const got: string[] = [];
    c.subscribe(key, () => {
      throw new Error('sub');
    });
    c.subscribe(
      () => {
        throw new Error('match');
      },
      () => {},
    );
    c.subscribe(key, (u) => got.push(u.type));
    const r = await c.get('/users');
    expect(r.status).toBe(200);
    expect(got).toEqual(['write']);
    expect(errors.map(([, ctx]) => ctx)).toEqual(
      expect.arrayContaining([
        { source: 'subscriber', key },
        { source: 'matcher', key },
      ]),
    );
  });

  test('a bad matcher or listener is a TypeError', () => {
    const c = client();
    expect(() => c.subscribe(5 as never, () => {})).toThrow(TypeError);
    expect(() => c.subscribe('GET https://a.test/k', 'x' as never)).toThrow(TypeError);
  });
});

// ── events and errors ───────────────────────────────────────────────────────────────────────

describe('events', () => {
  test('payloads of request, success, cache-write, dedup, cache-hit', async () => {
    const c = client();
    const rec = recordEvents(c);
    const a = c.get('/users');
    const b = c.get('/users');
    const [ra] = await Promise.all([a, b]);
    await c.get('/users');
    const key = c.resolve('GET', '/users').key;
    const url = `${server.url}/users`;
    expect(rec.events.map((e) => e.name)).toEqual([
      'request',
      'dedup',
      'cache-write',
      'success',
      'cache-hit',
    ]);
    const [req, dedup, write, success, hit] = rec.events.map((e) => e.payload) as never as [
      Record<string, unknown>,
      Record<string, unknown>,
      Record<string, unknown>,
      Record<string, unknown>,
      Record<string, unknown>,
    ];
    expect(req).toMatchObject({ key, method: 'GET', url, endpoint: 'GET /users' });
    expect((req.tracker as { state: string }).state).toBe('success');
    expect(dedup).toEqual({ key, method: 'GET', url, consumers: 2, endpoint: 'GET /users' });
    expect(write).toEqual({ key, response: ra });
    expect(success).toMatchObject({ key, response: ra, tracker: req.tracker });
    expect(hit).toMatchObject({ key, stale: false });
    expect((hit.tracker as { state: string }).state).toBe('success');
  });

  test('error and cancel payloads; the tracker ends in error / cancelled', async () => {
    const c = client();
    const rec = recordEvents(c, ['error', 'cancel']);
    const r = await settle(c.get('/fail'));
    const err = (r as { reason: HttpError }).reason;
    expect(rec.events[0]).toMatchObject({
      name: 'error',
      payload: { key: c.resolve('GET', '/fail').key, error: err },
    });
    expect(
      (rec.events[0]!.payload as { tracker: { state: string; error: unknown } }).tracker,
    ).toMatchObject({
      state: 'error',
      error: err,
    });
    const p = c.get('/hold');
    const out = settle(p);
    await heldCount(1);
    p.cancel();
    await out;
    expect(rec.events[1]).toMatchObject({
      name: 'cancel',
      payload: { key: c.resolve('GET', '/hold').key, final: true },
    });
    expect((rec.events[1]!.payload as { tracker: { state: string } }).tracker.state).toBe(
      'cancelled',
    );
  });

  test("an unsubscribe called twice removes only its own listener, not another registration's", async () => {
    const c = client();
    const calls: string[] = [];
    const listener = (p: { key: string }) => calls.push(p.key);
    const off1 = c.on('request', listener);
    const off2 = c.on('request', listener);
    off1();
    off1();
    await c.get('/users');
    expect(calls).toHaveLength(1);
    expect(debugOf(c).listeners).toBe(1);
    off2();
    expect(debugOf(c).listeners).toBe(0);
  });

  test('a throwing listener goes to onError; the request settles as it would have', async () => {
    const errors: unknown[][] = [];
    const c = client({ onError: (e, ctx) => errors.push([e, ctx]) });
    c.on('success', () => {
      throw new Error('boom');
    });
    c.on('request', () => {
      throw new Error('boom2');
    });
    const r = await c.get('/users');
    expect(r.status).toBe(200);
    expect(errors.map(([, ctx]) => ctx)).toEqual([
      { source: 'event', event: 'request' },
      { source: 'event', event: 'success' },
    ]);
  });

  test('on() returns an unsubscribe; a non-function listener is a TypeError', async () => {
    const c = client();
    const got: string[] = [];
    const off = c.on('request', (p) => got.push(p.key));
    await c.get('/users');
    off();
    await c.get('/users/7');
    expect(got).toHaveLength(1);
    expect(() => c.on('request', 5 as never)).toThrow(TypeError);
    expect(debugOf(c).listeners).toBe(0);
  });
});

describe('errors', () => {
  test('HttpError carries status, statusText, headers, data, method and url', async () => {
    const c = client();
    const r = await settle(c.get('/fail'));
    const err = (r as { reason: HttpError }).reason;
    expect(err).toBeInstanceOf(HttpError);
    expect(err.status).toBe(404);
    expect(err.statusText).toBe('Not Found');
    expect(err.headers?.get('x-why')).toBe('missing');
    expect(err.data).toEqual({ why: 'nope' });
    expect(err).toMatchObject({ method: 'GET', url: `${server.url}/fail` });
    expect(c.getCached(c.resolve('GET', '/fail').key)).toBeUndefined();
  });

  test('CircuitOpenError names the endpoint; a cached copy is still served while open', async () => {
    const c = client({ circuitBreaker: { failureThreshold: 1, resetTimeout: 60_000 } });
    await c.get('/users');
    const s = await settle(c.get('/hold', { timeout: 20 }));
    expect((s as { reason: { name: string } }).reason.name).toBe('TimeoutError');
    const rejected = await settle(c.get('/hold'));
    expect((rejected as { reason: { name: string; endpoint: string } }).reason).toMatchObject({
      name: 'CircuitOpenError',
      endpoint: 'GET /hold',
    });
    expect((await c.get('/users')).status).toBe(200);
  });
});

// ── response bodies ─────────────────────────────────────────────────────────────────────────

describe('response bodies', () => {
  let bodies: TestServer;
  const BYTES = Buffer.from([0xff, 0x00, 0xfe, 0x80, 0x41]);
  beforeAll(async () => {
    const send =
      (type: string | undefined, body: string | Buffer, status = 200) =>
      (_req: IncomingMessage, res: ServerResponse) => {
        if (type) res.setHeader('content-type', type);
        res.statusCode = status;
        res.end(body);
      };
    bodies = await startServer({
      '/json': send('application/json; charset=utf-8', '{"a":1}'),
      '/problem': send('application/problem+json', '{"title":"bad"}', 422),
      '/badjson': send('application/json', '{nope'),
      '/badjson-error': send('application/json', '{nope', 500),
      '/empty-json': send('application/json', ''),
      '/no-content': send('application/json', '', 204),
      '/text': send('text/plain', 'héllo'),
      '/xml': send('application/xml', '<a/>'),
      '/none': send(undefined, 'raw'),
      '/bin': send('application/octet-stream', BYTES),
      '/big': send('text/plain', 'x'.repeat(5000)),
      '/chunked': (_req, res) => {
        res.setHeader('content-type', 'application/json');
        res.write('["');
        res.write('y'.repeat(3000));
        res.end('"]');
      },
    });
  });
  afterAll(() => bodies.close());
  const c = () => createTestClient({ baseURL: bodies.url, retry: false, cache: false });

  test.each([
    ['/json', { a: 1 }],
    ['/text', 'héllo'],
    ['/xml', '<a/>'],
    ['/none', 'raw'],
  ])('by Content-Type: %s', async (path, data) => {
    expect((await c().get(path)).data).toEqual(data);
  });

  test('binary bodies are bytes, never decoded as text', async () => {
    const r = await c().get<ArrayBuffer>('/bin');
    expect(r.data).toBeInstanceOf(ArrayBuffer);
    expect([...new Uint8Array(r.data)]).toEqual([...BYTES]);
    const limited = await c().get<ArrayBuffer>('/bin', { maxResponseBytes: 100 });
    expect([...new Uint8Array(limited.data)]).toEqual([...BYTES]);
  });

  test('no data for HEAD, 204 and an empty JSON body', async () => {
    expect((await c().head('/json')).data).toBeUndefined();
    const nc = await c().get('/no-content');
    expect(nc).toMatchObject({ status: 204, data: undefined });
    expect((await c().get('/empty-json')).data).toBeUndefined();
  });

  test('responseType overrides the Content-Type, and is part of the key', async () => {
    const client = createTestClient({ baseURL: bodies.url, retry: false });
    expect((await client.get('/json', { responseType: 'text' })).data).toBe('{"a":1}');
    expect((await client.get('/json')).data).toEqual({ a: 1 });
    expect((await client.get('/text', { responseType: 'arrayBuffer' })).data).toBeInstanceOf(
      ArrayBuffer,
    );
    const blob = (await client.get<Blob>('/bin', { responseType: 'blob' })).data;
    expect(blob.type).toBe('application/octet-stream');
    expect(blob.size).toBe(5);
    expect(client.resolve('GET', '/json', { responseType: 'text' }).key).not.toBe(
      client.resolve('GET', '/json').key,
    );
    const stream = (await client.get<ReadableStream>('/json', { responseType: 'stream' })).data;
    expect(await new Response(stream).text()).toBe('{"a":1}');
  });

  test('a 2xx body that claims JSON and does not parse is a ParseError; an error body is kept as text', async () => {
    const r = await settle(c().get('/badjson'));
    expect((r as { reason: { name: string; body: string; status: number } }).reason).toMatchObject({
      name: 'ParseError',
      body: '{nope',
      status: 200,
    });
    const e = await settle(c().get('/badjson-error'));
    expect((e as { reason: HttpError }).reason).toMatchObject({
      name: 'HttpError',
      status: 500,
      data: '{nope',
    });
    const p = await settle(c().get('/problem'));
    expect((p as { reason: HttpError }).reason).toMatchObject({
      status: 422,
      data: { title: 'bad' },
    });
  });

  test('maxResponseBytes: by Content-Length and by counting a chunked body', async () => {
    const r = await settle(c().get('/big', { maxResponseBytes: 100 }));
    expect((r as { reason: unknown }).reason).toMatchObject({
      name: 'ResponseTooLargeError',
      limit: 100,
      received: 5000,
      status: 200,
    });
    const ch = await settle(c().get('/chunked', { maxResponseBytes: 1000 }));
    expect((ch as { reason: { name: string; limit: number } }).reason).toMatchObject({
      name: 'ResponseTooLargeError',
      limit: 1000,
    });
    expect((ch as { reason: { received: number } }).reason.received).toBeGreaterThan(1000);
    expect((await c().get<string[]>('/chunked', { maxResponseBytes: 5000 })).data[0]).toHaveLength(
      3000,
    );
    expect((await c().get('/text', { maxResponseBytes: 6 })).data).toBe('héllo');
  });
});

// ── memory model and hand-over ──────────────────────────────────────────────────────────────

describe('gcTime, maxEntries, dehydrate / hydrate', () => {
  test('an expired entry is served stale under SWR within gcTime, then collected: a miss, not in getCached', async () => {
    const clock = new FakeClock();
    const c = client({
      clock,
      cache: { ttl: 1000, gcTime: 5000, strategy: 'stale-while-revalidate' },
    });
    const key = c.resolve('GET', '/users').key;
    await c.get('/users', { cache: { ttl: 1000, strategy: 'cache-first' } });
    await clock.advance(3000);
    expect(c.getCached(key)).toBeDefined();
    await clock.advance(3001);
    expect(c.getCached(key)).toBeUndefined();
    const rec = recordEvents(c, ['cache-hit']);
    await c.get('/users');
    expect(rec.events).toEqual([]);
    expect(seen).toHaveLength(2);
  });

  test('a subscription keeps an expired entry past gcTime; gcTime counts again from the unsubscribe', async () => {
    const clock = new FakeClock();
    const c = client({ clock, cache: { ttl: 1000, gcTime: 2000 } });
    const key = c.resolve('GET', '/users').key;
    await c.get('/users');
    const off = c.subscribe(key, () => {});
    await clock.advance(10_000);
    expect(c.getCached(key)).toBeDefined();
    off();
    await clock.advance(1999);
    expect(c.getCached(key)).toBeDefined();
    await clock.advance(1);
    expect(c.getCached(key)).toBeUndefined();
  });

  test('maxEntries evicts the least recently written entry', async () => {
    const c = client({ cache: { maxEntries: 2 } });
    await c.get('/users');
    await c.get('/users/7');
    await c.get('/users'); // a hit, not a write: /users stays the oldest
    await c.get('/echo');
    expect(c.getCached(c.resolve('GET', '/users').key)).toBeUndefined();
    expect(c.getCached(c.resolve('GET', '/users/7').key)).toBeDefined();
    expect(debugOf(c).cacheSize).toBe(2);
  });

  test('dehydrate leaves out what the cache has collected', async () => {
    const clock = new FakeClock();
    const c = client({ clock, cache: { ttl: 1000, gcTime: 1000 } });
    await c.get('/users');
    await clock.advance(1500);
    expect(dehydrate(c).entries).toHaveLength(1);
    await clock.advance(1000);
    expect(dehydrate(c).entries).toEqual([]);
    expect(c.getCached(c.resolve('GET', '/users').key)).toBeUndefined();
  });

  test('an entry written by hand as { data } alone (the optimistic-update shape) dehydrates and hydrates', async () => {
    const a = client();
    const spec = a.resolve('GET', '/todos');
    // What `{ ...getCached(key)!, data }` gives when nothing was cached yet.
    a.setCached(spec, { data: ['draft'] } as never);
    const state = JSON.parse(JSON.stringify(dehydrate(a)));
    const b = client();
    expect(hydrate(b, state)).toBe(1);
    const r = await b.get('/todos');
    expect(r.data).toEqual(['draft']);
    expect(r.status).toBe(200);
    expect(seen).toHaveLength(0);
  });

  test('a bad entry anywhere in a state is a typed error naming it, and nothing is written', async () => {
    const a = client();
    await a.get('/users');
    const state = dehydrate(a);
    const b = client();
    const bad = { ...state, entries: [state.entries[0]!, { ...state.entries[0]!, age: -1 }] };
    expect(() => hydrate(b, bad)).toThrow(/`state\.entries\[1\]\.age`/);
    expect(debugOf(b).cacheSize).toBe(0);
    expect(b.getCached(state.entries[0]!.key)).toBeUndefined();
    const badHeaders = {
      ...state,
      entries: [
        state.entries[0]!,
        {
          ...state.entries[0]!,
          response: { ...state.entries[0]!.response, headers: [['x y', '1']] },
        },
      ],
    };
    expect(() => hydrate(b, badHeaders as never)).toThrow(TypeError);
    expect(() => hydrate(b, badHeaders as never)).toThrow(
      /`state\.entries\[1\]\.response\.headers`/,
    );
    expect(debugOf(b).cacheSize).toBe(0);
  });
});

describe('cache strategy precedence', () => {
  test('request strategy, then the intelligence recommendation, then the client default', async () => {
    const clock = new FakeClock();
    const c = client({
      clock,
      cache: { ttl: 1000 },
      intelligence: { enabled: true, adaptiveStaleWhileRevalidate: true },
    });
    // Slow answers (600 ms of the client's clock each) make the endpoint an SWR one.
    for (let i = 0; i < 6; i++) {
      const p = c.get('/hold', { params: { i } });
      await heldCount(i + 1);
      await clock.advance(600);
      release(i, { i });
      await p;
    }
    await clock.advance(2000);
    const rec = recordEvents(c, ['cache-hit']);
    // Expired: the recommendation serves it stale (and refreshes it)...
    await c.get('/hold', { params: { i: 1 } });
    expect(rec.events).toHaveLength(1);
    expect((rec.events[0]!.payload as { stale: boolean }).stale).toBe(true);
    await heldCount(7);
    // ...but a request that names its strategy is not overridden.
    const explicit = c.get('/hold', { params: { i: 2 }, cache: { strategy: 'cache-first' } });
    await heldCount(8);
    expect(rec.events).toHaveLength(1);
    release(7, { i: 2 });
    await explicit;
  });
});

describe('defaults and guards', () => {
  test('gcTime defaults to 5 minutes after expiry', async () => {
    const clock = new FakeClock();
    const c = client({ clock });
    const key = c.resolve('GET', '/users').key;
    await c.get('/users');
    await clock.advance(30_000 + 299_999);
    expect(c.getCached(key)).toBeDefined();
    await clock.advance(1);
    expect(c.getCached(key)).toBeUndefined();
  });

  test('the error guards recognise keel errors only; isAbortError takes CancelledError and AbortError, not TimeoutError', async () => {
    const {
      isHttpError,
      isCancelledError: isCancelled,
      isTimeoutError,
      isAbortError,
      isKeelError,
      isCircuitOpenError,
    } = await import('../src/index');
    const c = client();
    const http = (await settle(c.get('/fail'))) as { reason: unknown };
    expect(isHttpError(http.reason)).toBe(true);
    expect(isKeelError(http.reason)).toBe(true);
    expect(isHttpError({ name: 'HttpError', status: 404 })).toBe(false);
    expect(isTimeoutError(new DOMException('t', 'TimeoutError'))).toBe(false);
    expect(isAbortError(new DOMException('a', 'AbortError'))).toBe(true);
    const p = c.get('/hold');
    const out = settle(p);
    await heldCount(1);
    p.cancel();
    const cancelled = ((await out) as { reason: unknown }).reason;
    expect(isCancelled(cancelled)).toBe(true);
    expect(isAbortError(cancelled)).toBe(true);
    const timeout = ((await settle(c.get('/hold', { timeout: 10 }))) as { reason: unknown }).reason;
    expect(isTimeoutError(timeout)).toBe(true);
    expect(isAbortError(timeout)).toBe(false);
    expect(isCircuitOpenError(timeout)).toBe(false);
  });
});

describe('cache and dedup around an open circuit', () => {
  test('an SWR stale hit is served while the circuit is open; its refresh is dropped silently', async () => {
    const clock = new FakeClock();
    const c = client({
      clock,
      cache: { ttl: 1000, strategy: 'stale-while-revalidate' },
      circuitBreaker: { failureThreshold: 1, resetTimeout: 60_000 },
    });
    const first = c.get<{ v: number }>('/hold');
    await heldCount(1);
    release(0, { v: 1 });
    await first;
    // Another URL of the same endpoint fails: GET /hold's circuit opens.
    const failing = settle(c.get('/hold', { params: { x: 1 } }));
    await heldCount(2);
    held[1]!.res.writeHead(503).end();
    await failing;
    expect(c.circuitBreaker().status('GET', '/hold').state).toBe('open');
    await clock.advance(2000);
    const rec = recordEvents(c, ['circuit-rejected', 'error', 'request', 'cache-hit']);
    expect((await c.get<{ v: number }>('/hold')).data.v).toBe(1);
    expect(rec.events.map((e) => e.name)).toEqual(['cache-hit']);
    expect(held).toHaveLength(2);
  });

  test('a dedup join is not refused by a circuit that opened while the flight was in the air', async () => {
    const c = client({ circuitBreaker: { failureThreshold: 1, resetTimeout: 60_000 } });
    const owner = c.get<{ v: number }>('/hold');
    await heldCount(1);
    const failing = settle(c.get('/hold', { params: { x: 1 } }));
    await heldCount(2);
    held[1]!.res.writeHead(500).end();
    await failing;
    expect(c.circuitBreaker().status('GET', '/hold').state).toBe('open');
    const joiner = c.get<{ v: number }>('/hold');
    release(0, { v: 5 });
    expect((await owner).data.v).toBe(5);
    expect((await joiner).data.v).toBe(5);
  });
});

describe('dedup through the scheduler', () => {
  test('an owner leaving a queued flight leaves it queued for its joiner; the last one leaving drops the job', async () => {
    const c = client({ scheduler: { concurrency: 1 } });
    const busy = c.get<{ v: number }>('/hold', { params: { busy: 1 } });
    await heldCount(1);
    const owner = c.get<{ v: number }>('/hold');
    const ownerOut = settle(owner);
    const joiner = c.get<{ v: number }>('/hold');
    expect(c.scheduler().stats()).toMatchObject({ active: 1, queued: 1 });
    owner.cancel();
    expect(isCancelledError(((await ownerOut) as { reason: unknown }).reason)).toBe(true);
    expect(c.scheduler().stats()).toMatchObject({ active: 1, queued: 1 });
    release(0, { v: 0 });
    await busy;
    await heldCount(2);
    release(1, { v: 2 });
    expect((await joiner).data.v).toBe(2);

    const busy2 = c.get('/hold', { params: { busy: 2 } });
    await heldCount(3);
    const a = c.get('/hold', { params: { q: 1 } });
    const b = c.get('/hold', { params: { q: 1 } });
    const out = Promise.all([settle(a), settle(b)]);
    a.cancel();
    b.cancel();
    await out;
    expect(c.scheduler().stats()).toMatchObject({ active: 1, queued: 0 });
    release(2, { v: 3 });
    await busy2;
    await new Promise((r) => setTimeout(r, 20));
    expect(held).toHaveLength(3);
    expect(debugOf(c)).toMatchObject({ flights: 0, inflight: 0 });
  });

  test('cancelGroup rejects every caller of a grouped flight, joiners included, with CancelledError', async () => {
    const c = client({ scheduler: { concurrency: 4 } });
    const owner = settle(c.get('/hold', { scheduler: { group: 'g' } }));
    const joiner = settle(c.get('/hold'));
    await heldCount(1);
    c.cancelGroup('g');
    for (const r of await Promise.all([owner, joiner])) {
      expect(isCancelledError((r as { reason: unknown }).reason)).toBe(true);
    }
    expect(debugOf(c)).toMatchObject({ flights: 0, inflight: 0 });
  });

  test("a joiner naming another group follows the job's group (README: one job, the starter's group)", async () => {
    const c = client({ scheduler: { concurrency: 4 } });
    const owner = settle(c.get('/hold', { scheduler: { group: 'a' } }));
    const joiner = settle(c.get('/hold', { scheduler: { group: 'b' } }));
    await heldCount(1);
    c.cancelGroup('b'); // the job is group a's: nothing of group b is queued, parked or running
    expect(c.fetchingKeys()).toHaveLength(1);
    c.cancelGroup('a');
    for (const r of await Promise.all([owner, joiner])) {
      expect(isCancelledError((r as { reason: unknown }).reason)).toBe(true);
    }
    expect(debugOf(c)).toMatchObject({ flights: 0, inflight: 0 });
  });
});
