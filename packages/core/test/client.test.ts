import { describe, expect, test, vi } from 'vitest';
import * as index from '../src/index';
import {
  buildQuery,
  CacheStore,
  CancelledError,
  CircuitOpenError,
  canonicalizeURL,
  computeDelay,
  createClient,
  createFingerprint,
  Deduper,
  decideRetry,
  EventEmitter,
  HttpError,
  isAbortError,
  isRetriableStatus,
  isSuccessStatus,
  parseRetryAfter,
  resolveRetryOptions,
  resolveURL,
  systemClock,
  TimeoutError,
  Tracker,
} from '../src/index';
import * as internals from '../src/internals';
import { CACHE_DEFAULTS, RETRY_DEFAULTS } from '../src/internals';
import { createFakeFetch, debugOf, FakeClock, flush, makeClient } from './helpers';

describe('createClient', () => {
  test('works with no options (global fetch, documented defaults)', () => {
    const client = createClient();
    const spec = client.resolve('GET', 'https://a.test/x');
    // The defaults' values are checked where the config is resolved (config.test.ts).
    expect(spec.cache).toEqual(CACHE_DEFAULTS);
    expect(spec.retry).toEqual(RETRY_DEFAULTS);
    expect(spec.timeout).toBe(0);
  });

  test('uses the global fetch when none is given, looked up per call', async () => {
    const original = globalThis.fetch;
    const seen: string[] = [];
    globalThis.fetch = (async (url: string) => {
      seen.push(url);
      return new Response('hi');
    }) as typeof fetch;
    try {
      const client = createClient({ baseURL: 'https://a.test' });
      await expect(client.get('/g', { cache: false })).resolves.toMatchObject({ data: 'hi' });
      expect(seen).toEqual(['https://a.test/g']);
    } finally {
      globalThis.fetch = original;
    }
  });

  test('every documented standalone utility and error is exported', () => {
    for (const value of [
      CacheStore,
      Deduper,
      Tracker,
      EventEmitter,
      decideRetry,
      resolveRetryOptions,
      computeDelay,
      isSuccessStatus,
      isRetriableStatus,
      parseRetryAfter,
      createFingerprint,
      resolveURL,
      buildQuery,
      canonicalizeURL,
      isAbortError,
      HttpError,
      TimeoutError,
      CancelledError,
      CircuitOpenError,
    ]) {
      expect(typeof value).toBe('function');
    }
  });

  test('internals are exported from @keel/core/internals, not from @keel/core', () => {
    for (const name of [
      'checkInvalidateTarget',
      'isCountableFailure',
      'CACHE_DEFAULTS',
      'RETRY_DEFAULTS',
      'CIRCUIT_DEFAULTS',
      'INTELLIGENCE_DEFAULTS',
      'typeError',
      'clockOf',
      'fetchOf',
    ]) {
      expect(name in index, name).toBe(false);
      expect(name in internals, name).toBe(true);
    }
  });
});

describe('request methods', () => {
  test.each([
    ['get', 'GET'],
    ['delete', 'DELETE'],
    ['head', 'HEAD'],
    ['options', 'OPTIONS'],
  ] as const)('%s(url, options) sends %s', async (name, method) => {
    const { client, fake } = makeClient({}, { handler: () => new Response(null, { status: 204 }) });
    const p = client[name]('/r', { headers: { 'x-a': '1' } });
    expect(typeof p.cancel).toBe('function');
    await p;
    expect(fake.last()).toMatchObject({ method, url: 'https://api.test/r' });
    expect(fake.last().headers['x-a']).toBe('1');
  });

  test.each([
    ['post', 'POST'],
    ['put', 'PUT'],
    ['patch', 'PATCH'],
  ] as const)('%s(url, body, options) sends %s with a JSON body', async (name, method) => {
    const { client, fake } = makeClient({}, { handler: () => Response.json({ ok: true }) });
    const p = client[name]('/r', { a: 1 }, { headers: { 'x-a': '1' } });
    expect(typeof p.cancel).toBe('function');
    await expect(p).resolves.toMatchObject({ data: { ok: true }, status: 200 });
    expect(fake.last()).toMatchObject({ method, body: '{"a":1}' });
    expect(fake.last().headers).toMatchObject({ 'content-type': 'application/json', 'x-a': '1' });
  });

  test('post without a body sends none', async () => {
    const { client, fake } = makeClient({}, { handler: () => new Response('') });
    await client.post('/r');
    expect(fake.last().body).toBeUndefined();
  });

  test('request(method, url, options) is the generic form; method is case-insensitive', async () => {
    const { client, fake } = makeClient({}, { handler: () => new Response('') });
    await client.request('PATCH', '/r', { body: 'raw' });
    await client.request('put' as 'PUT', '/r');
    expect(fake.calls.map((c) => c.method)).toEqual(['PATCH', 'PUT']);
    expect(fake.calls[0]!.body).toBe('raw');
  });

  test('every call returns a CancellablePromise: network, cache hit, join, and rejections', async () => {
    const { client } = makeClient({}, { handler: () => Response.json(1) });
    const promises = [
      client.get('/a'),
      client.get('/a'), // join
      client.request('NOPE' as 'GET', '/a'), // bad input
    ];
    for (const p of promises) {
      expect(p).toBeInstanceOf(Promise);
      expect(typeof p.cancel).toBe('function');
    }
    await Promise.allSettled(promises);
    const hit = client.get('/a');
    expect(typeof hit.cancel).toBe('function');
    hit.cancel(); // harmless on a settled promise
    await expect(hit).resolves.toMatchObject({ data: 1 });
  });

  test('ApiResponse has data, status, statusText and headers', async () => {
    const { client } = makeClient(
      {},
      {
        handler: () =>
          Response.json({ a: 1 }, { status: 201, statusText: 'Created', headers: { 'x-id': '7' } }),
      },
    );
    const r = await client.post('/r', {});
    expect(r.data).toEqual({ a: 1 });
    expect(r.status).toBe(201);
    expect(r.statusText).toBe('Created');
    expect(r.headers).toBeInstanceOf(Headers);
    expect(r.headers.get('x-id')).toBe('7');
  });
});

describe('spec resolution through the client', () => {
  test('headers: client defaults merged, request wins case-insensitively', async () => {
    const { client, fake } = makeClient(
      { headers: { Authorization: 'client', 'X-Client': 'c' } },
      { handler: () => new Response('') },
    );
    await client.get('/h', { headers: { authorization: 'request' } });
    expect(fake.last().headers).toMatchObject({ authorization: 'request', 'x-client': 'c' });
  });

  test('baseURL: client, request override, base path kept, absolute URL untouched', async () => {
    const { client, fake } = makeClient(
      { baseURL: 'https://api.test/v1/' },
      { handler: () => new Response('') },
    );
    await client.get('/users', { cache: false });
    await client.get('users', { cache: false, baseURL: 'https://other.test/v2' });
    await client.get('https://abs.test/x', { cache: false });
    expect(fake.calls.map((c) => c.url)).toEqual([
      'https://api.test/v1/users',
      'https://other.test/v2/users',
      'https://abs.test/x',
    ]);
  });

  test('params: arrays repeat the key, null/undefined dropped', async () => {
    const { client, fake } = makeClient({}, { handler: () => new Response('') });
    await client.get('/s', { params: { tag: ['a', 'b'], q: 'x y', none: null, u: undefined } });
    const url = new URL(fake.last().url);
    expect(url.searchParams.getAll('tag')).toEqual(['a', 'b']);
    expect(url.searchParams.get('q')).toBe('x y');
    expect(url.searchParams.has('none')).toBe(false);
    expect(url.searchParams.has('u')).toBe(false);
  });

  test('body pass-through types reach fetch as the same object', async () => {
    const { client, fake } = makeClient({}, { handler: () => new Response('') });
    const bodies = [
      new URLSearchParams('a=1'),
      new FormData(),
      new Blob(['x']),
      new ArrayBuffer(2),
      new Uint8Array([1]),
    ];
    for (const body of bodies) await client.post('/b', body);
    expect(fake.calls.map((c) => c.body)).toEqual(bodies);
    expect(fake.calls.every((c) => c.headers['content-type'] !== 'application/json')).toBe(true);
  });

  test('the same request written differently has the same key and shares one fetch', async () => {
    const { client, fake } = makeClient();
    const a = client.get('/k?b=2&a=1');
    const b = client.get('https://API.test:443/k?a=1&b=2#frag');
    const c = client.get('/k', { params: { a: 1, b: 2 } });
    expect(fake.calls).toHaveLength(1);
    fake.last().json({ ok: 1 });
    expect((await a).data).toEqual({ ok: 1 });
    expect(await b).toBe(await a);
    expect(await c).toBe(await a);
    expect(client.resolve('GET', '/k?b=2&a=1').key).toBe(
      createFingerprint({
        method: 'GET',
        url: 'https://api.test/k?a=1&b=2',
        base: 'https://api.test',
      }),
    );
  });
});

describe('debug and clock', () => {
  test('a finished request leaves no flight, no timer', async () => {
    const clock = new FakeClock();
    const fake = createFakeFetch({ handler: () => new Response('') });
    const client = createClient({ fetch: fake.fetch, clock, timeout: 1000 });
    await client.get('https://a.test/');
    await flush();
    expect(debugOf(client)).toMatchObject({ flights: 0, inflight: 0 });
    expect(clock.live).toBe(0);
  });

  test("clockOf gives the client's clock, also from another copy of the module (the CommonJS internals bundle)", async () => {
    const clock = new FakeClock();
    const client = createClient({ clock });
    expect(internals.clockOf(client)).toBe(clock);
    vi.resetModules();
    const copy: typeof internals = await import('../src/internals');
    expect(copy.clockOf).not.toBe(internals.clockOf);
    expect(copy.clockOf(client)).toBe(clock);
    // A client keel did not make (a hand-written Client) runs on the system clock.
    expect(internals.clockOf({})).toBe(systemClock);
    expect(internals.clockOf(createClient())).toBe(systemClock);
  });

  test("fetchOf gives the client's fetch (the global one looked up per call without the option), also from another copy of the module", async () => {
    const own = vi.fn(async () => new Response('own'));
    const client = createClient({ fetch: own });
    await internals.fetchOf(client)!('https://a.test/', {});
    expect(own).toHaveBeenCalledWith('https://a.test/', {});
    vi.resetModules();
    const copy: typeof internals = await import('../src/internals');
    expect(copy.fetchOf(client)).toBe(internals.fetchOf(client));
    // Without the option: the global fetch, looked up at the call (msw or a polyfill set later).
    const later = vi.fn(async () => new Response('later'));
    vi.stubGlobal('fetch', later);
    try {
      await internals.fetchOf(createClient())!('https://b.test/', {});
      expect(later).toHaveBeenCalledWith('https://b.test/', {});
    } finally {
      vi.unstubAllGlobals();
    }
    // A client keel did not make: none (the caller's default).
    expect(internals.fetchOf({})).toBeUndefined();
  });
});
