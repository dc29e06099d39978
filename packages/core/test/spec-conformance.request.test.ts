/**
 * Spec conformance, black box (see spec-conformance.test.ts): request resolution (headers,
 * baseURL, params, body), response handling, bad input, and intelligence's recommendations
 * (adaptiveTimeout, adaptiveStaleWhileRevalidate), on vitest's fake timers.
 */
import { afterEach, beforeEach, describe, expect, test, vi } from 'vitest';
import { type ClientOptions, HttpError, TimeoutError } from '../src/index';
import { createTestClient } from './helpers';

interface Seen {
  url: string;
  method: string;
  headers: Headers;
  body: unknown;
}

function echo(options: ClientOptions = {}, reply?: (seen: Seen) => Response | 'hang') {
  const seen: Seen[] = [];
  const fetch = (input: RequestInfo | URL, init: RequestInit = {}) => {
    const s: Seen = {
      url: String(input),
      method: init.method ?? 'GET',
      headers: new Headers(init.headers),
      body: init.body,
    };
    seen.push(s);
    const r = reply?.(s) ?? Response.json({ ok: true });
    return new Promise<Response>((resolve, reject) => {
      const signal = init.signal;
      signal?.addEventListener('abort', () => reject(signal.reason), { once: true });
      if (r !== 'hang') resolve(r);
    });
  };
  const client = createTestClient({ fetch, retry: false, ...options });
  return { client, seen };
}

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe('request resolution', () => {
  test('client headers are merged into every request; request headers win', async () => {
    const { client: c, seen } = echo({
      baseURL: 'https://api.test',
      headers: { 'x-client': 'c', 'x-both': 'client' },
    });
    await c.get('/a', { headers: { 'x-both': 'request', 'x-req': 'r' } });
    expect(seen[0]!.headers.get('x-client')).toBe('c');
    expect(seen[0]!.headers.get('x-both')).toBe('request');
    expect(seen[0]!.headers.get('x-req')).toBe('r');
  });

  test('baseURL is prepended to relative URLs, not to absolute ones; a request baseURL wins', async () => {
    const { client: c, seen } = echo({ baseURL: 'https://api.test/v1' });
    await c.get('/users');
    await c.get('https://other.test/x');
    await c.get('/y', { baseURL: 'https://req.test' });
    expect(seen.map((s) => s.url)).toEqual([
      'https://api.test/v1/users',
      'https://other.test/x',
      'https://req.test/y',
    ]);
  });

  test('params are serialized into the query string; arrays repeat the key; null/undefined dropped', async () => {
    const { client: c, seen } = echo({ baseURL: 'https://api.test' });
    await c.get('/s', {
      params: { q: 'a b', tag: ['x', 'y'], n: 2, f: false, z: null, u: undefined },
    });
    const url = new URL(seen[0]!.url);
    expect(url.searchParams.get('q')).toBe('a b');
    expect(url.searchParams.getAll('tag')).toEqual(['x', 'y']);
    expect(url.searchParams.get('n')).toBe('2');
    expect(url.searchParams.get('f')).toBe('false');
    expect(url.searchParams.has('z')).toBe(false);
    expect(url.searchParams.has('u')).toBe(false);
  });

  test('the query string is not part of the endpoint key but is part of the cache key', async () => {
    const { client: c, seen } = echo({ baseURL: 'https://api.test' });
    await c.get('/p', { params: { page: 1 } });
    await c.get('/p', { params: { page: 2 } });
    await c.get('/p?page=1');
    expect(seen).toHaveLength(2);
    expect(c.intelligence().endpoint('GET', '/p')?.requests).toBe(3);
  });

  test('an object body is JSON-stringified; strings, URLSearchParams, FormData, Blob, ArrayBuffer and typed arrays are sent as they are', async () => {
    const { client: c, seen } = echo({ baseURL: 'https://api.test' });
    await c.post('/j', { a: 1, b: [true] });
    expect(seen[0]!.body).toBe('{"a":1,"b":[true]}');
    expect(seen[0]!.headers.get('content-type')).toMatch(/application\/json/);
    await c.post('/j', [1, 2]);
    expect(seen[1]!.body).toBe('[1,2]');
    const raw = [
      'plain',
      new URLSearchParams('a=1'),
      new FormData(),
      new Blob(['x']),
      new ArrayBuffer(4),
      new Uint8Array([1, 2]),
    ];
    for (const body of raw) await c.put('/r', body);
    expect(seen.slice(2).map((s) => s.body)).toEqual(raw);
  });

  test('an unknown method, an invalid URL and an unserializable body reject with a typed error; nothing is sent', async () => {
    const { client: c, seen } = echo({ baseURL: 'https://api.test' });
    const cycle: Record<string, unknown> = {};
    cycle.self = cycle;
    const errors = await Promise.all([
      c.request('FETCH' as 'GET', '/a').catch((e: unknown) => e),
      c.get('http://').catch((e: unknown) => e),
      c.post('/a', cycle).catch((e: unknown) => e),
      c.post('/a', { n: 1n }).catch((e: unknown) => e),
    ]);
    for (const e of errors) {
      expect(e instanceof TypeError || e instanceof RangeError).toBe(true);
      expect((e as Error).message).toMatch(/keel/);
    }
    expect(seen).toHaveLength(0);
  });

  test.each([
    [{ timeout: -1 }, RangeError],
    [{ timeout: '5' }, TypeError],
    [{ cache: { ttl: Number.NaN } }, RangeError],
    [{ cache: { ttl: -5 } }, RangeError],
    [{ retry: { attempts: 0 } }, RangeError],
    [{ retry: { attempts: 1.5 } }, RangeError],
  ] as [ClientOptions, ErrorConstructor][])('createClient(%o) throws %o', (options, type) => {
    expect(() => createTestClient(options)).toThrow(type);
  });

  test.each([[{ timeout: -1 }], [{ cache: { ttl: -1 } }], [{ retry: { attempts: -2 } }]] as [
    Record<string, unknown>,
  ][])('a request with %o rejects, nothing sent', async (options) => {
    const { client: c, seen } = echo({ baseURL: 'https://api.test' });
    await expect(c.get('/a', options)).rejects.toBeInstanceOf(RangeError);
    expect(seen).toHaveLength(0);
  });
});

describe('responses', () => {
  test('ApiResponse {data, status, statusText, headers}; JSON by content type, text otherwise', async () => {
    const { client: c } = echo({ baseURL: 'https://api.test' }, (s) =>
      s.url.endsWith('/json')
        ? new Response('{"a":1}', {
            status: 201,
            statusText: 'Created',
            headers: { 'content-type': 'application/json; charset=utf-8', 'x-h': '1' },
          })
        : new Response('hello', { headers: { 'content-type': 'text/plain' } }),
    );
    const r = await c.get('/json');
    expect(r).toMatchObject({ data: { a: 1 }, status: 201, statusText: 'Created' });
    expect(r.headers.get('x-h')).toBe('1');
    expect((await c.get('/text')).data).toBe('hello');
  });

  test('empty bodies: 204 and HEAD', async () => {
    const { client: c } = echo({ baseURL: 'https://api.test' }, (s) =>
      s.method === 'HEAD'
        ? new Response(null, { headers: { 'content-type': 'application/json' } })
        : new Response(null, { status: 204, headers: { 'content-type': 'application/json' } }),
    );
    expect((await c.delete('/x')).status).toBe(204);
    expect((await c.head('/x')).status).toBe(200);
  });

  test('a non-2xx response rejects with HttpError carrying status, statusText, headers and the parsed body', async () => {
    const { client: c } = echo({ baseURL: 'https://api.test' }, () =>
      Response.json(
        { reason: 'nope' },
        { status: 409, statusText: 'Conflict', headers: { 'x-e': '1' } },
      ),
    );
    const e = (await c.put('/x', {}).catch((err: unknown) => err)) as HttpError;
    expect(e).toBeInstanceOf(HttpError);
    expect(e).toMatchObject({ status: 409, statusText: 'Conflict', data: { reason: 'nope' } });
    expect(e.headers?.get('x-e')).toBe('1');
  });
});

describe('intelligence recommendations', () => {
  function timed(options: ClientOptions, latency: () => number) {
    const seen: string[] = [];
    const fetch = (input: RequestInfo | URL, init: RequestInit = {}) =>
      new Promise<Response>((resolve, reject) => {
        seen.push(String(input));
        const signal = init.signal;
        const t = setTimeout(() => resolve(Response.json({ ok: 1 })), latency());
        signal?.addEventListener(
          'abort',
          () => {
            clearTimeout(t);
            reject(signal.reason);
          },
          { once: true },
        );
      });
    return {
      client: createTestClient({ baseURL: 'https://api.test', fetch, retry: false, ...options }),
      seen,
    };
  }

  test('adaptiveTimeout: after 5 samples the per-attempt timeout is 3 x p95 (clamped to >= 100 ms)', async () => {
    let latency = 200;
    const { client: c } = timed({ intelligence: { adaptiveTimeout: true } }, () => latency);
    for (let i = 0; i < 4; i++) {
      const p = c.get('/s', { cache: false });
      await vi.advanceTimersByTimeAsync(200);
      await p;
    }
    // 4 samples: no recommendation yet, a 10 s answer still arrives.
    latency = 10_000;
    const fifth = c.get('/s', { cache: false });
    await vi.advanceTimersByTimeAsync(10_000);
    await fifth;
    // p95 of [200 x4, 10000] is 10000: 3 x = 30 s.
    latency = 31_000;
    const p = c.get('/s', { cache: false }).catch((e: unknown) => e);
    await vi.advanceTimersByTimeAsync(30_000);
    expect(await p).toBeInstanceOf(TimeoutError);
    // An explicit request timeout wins over the recommendation.
    const q = c.get('/s', { cache: false, timeout: 40_000 });
    await vi.advanceTimersByTimeAsync(31_000);
    await expect(q).resolves.toMatchObject({ status: 200 });
  });

  test('adaptiveTimeout clamps to 100 ms at least', async () => {
    let latency = 1;
    const { client: c } = timed({ intelligence: { adaptiveTimeout: true } }, () => latency);
    for (let i = 0; i < 5; i++) {
      const p = c.get('/f', { cache: false });
      await vi.advanceTimersByTimeAsync(1);
      await p;
    }
    latency = 150;
    const late = c.get('/f', { cache: false }).catch((e: unknown) => e);
    await vi.advanceTimersByTimeAsync(100); // 3 x 1 ms, clamped up to 100 ms
    expect(await late).toBeInstanceOf(TimeoutError);
    // A timed-out attempt is no sample: 99 ms still fits.
    latency = 99;
    const ok = c.get('/f', { cache: false });
    await vi.advanceTimersByTimeAsync(99);
    await expect(ok).resolves.toMatchObject({ status: 200 });
  });

  test('adaptiveStaleWhileRevalidate: p95 >= 500 ms switches cached reads to SWR', async () => {
    const { client: c, seen } = timed(
      { intelligence: { adaptiveStaleWhileRevalidate: true }, cache: { ttl: 1000 } },
      () => 600,
    );
    for (let i = 0; i < 5; i++) {
      const p = c.get(`/v?i=${i}`);
      await vi.advanceTimersByTimeAsync(600);
      await p;
    }
    await vi.advanceTimersByTimeAsync(2000); // every entry stale
    const n = seen.length;
    let done = false;
    const stale = c.get('/v?i=0').then((r) => {
      done = true;
      return r;
    });
    await vi.advanceTimersByTimeAsync(0);
    expect(done).toBe(true); // served stale at once
    expect(seen).toHaveLength(n + 1); // and refetched in the background
    await stale;
    await vi.advanceTimersByTimeAsync(600);
  });
});
