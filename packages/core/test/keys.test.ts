import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { createClient, createFingerprint } from '../src/index';
import { fingerprintOf, parseKey } from '../src/internal/fingerprint';
import {
  canonicalizeURL,
  keyBaseOf,
  keyURL,
  resolveBaseURL,
  resolveURL,
} from '../src/internal/url';
import { buildQuery } from '../src/request/query';
import { createFakeFetch, debugOf, flush, jsonResponse, makeClient } from './helpers';

const noFetch = createFakeFetch().fetch;

describe('cache keys do not depend on the origin a client used', () => {
  // The server renders through its API on an internal address; the browser reaches the same API
  // through the page's origin. Same requests, same keys: data can be handed over (dehydrate).
  const server = createClient({ baseURL: 'http://10.0.0.5:8080/api', fetch: noFetch });
  const browser = createClient({ baseURL: 'https://app.example.com/api/', fetch: noFetch });

  test.each([
    ['/todos', undefined],
    ['todos', undefined],
    ['/todos?b=2&a=1', undefined],
    ['/todos', { params: { page: 2, tag: ['x', 'y'] } }],
    ['/todos', { headers: { 'X-Tenant': 'acme' } }],
    ['?q=1', undefined],
  ] as const)('%s %o', (url, options) => {
    const a = server.resolve('GET', url, options);
    const b = browser.resolve('GET', url, options);
    expect(a.key).toBe(b.key);
    expect(a.url).not.toBe(b.url);
  });

  test('a key under the base is written relative to it', () => {
    expect(server.resolve('GET', '/todos/7?b=2&a=1').key).toBe('GET /todos/7?a=1&b=2');
    expect(server.resolve('GET', '/todos', { headers: { 'X-A': '1' } }).key).toBe(
      'GET /todos |h x-a:1',
    );
  });

  test('a URL outside the base (another origin, or a sibling path) keeps its absolute form', () => {
    expect(server.resolve('GET', 'https://cdn.test/x').key).toBe('GET https://cdn.test/x');
    expect(server.resolve('GET', 'http://10.0.0.5:8080/apix/1').key).toBe(
      'GET http://10.0.0.5:8080/apix/1',
    );
    expect(server.resolve('GET', 'http://10.0.0.5:8080/other').key).toBe(
      'GET http://10.0.0.5:8080/other',
    );
    // A request-level baseURL elsewhere is another API: absolute keys, so nothing collides.
    expect(server.resolve('GET', '/todos', { baseURL: 'https://b.test/api' }).key).toBe(
      'GET https://b.test/api/todos',
    );
  });

  test('Node without a baseURL: absolute keys', () => {
    const plain = createClient({ fetch: noFetch });
    expect(plain.resolve('GET', 'https://a.test/x').key).toBe('GET https://a.test/x');
  });

  test('createFingerprint with `base` makes the client key', () => {
    expect(
      createFingerprint({
        method: 'get',
        url: 'HTTP://10.0.0.5:8080/api/t?b=1&a=2',
        base: 'http://10.0.0.5:8080/api',
      }),
    ).toBe(server.resolve('GET', '/t?a=2&b=1').key);
  });

  test.each(['users', './users', '/users', '/x/../users', '../users', '?a=1', '', 'users?b=1&a=2'])(
    'createFingerprint of the relative URL %j with `base` is the key of a request to it',
    (url) => {
      // `users` (no leading slash) was keyed `GET users`, the request's key is `GET /users`; and
      // `../users` leaves the base, so its key is absolute.
      for (const base of ['https://api.test/v1', 'https://api.test/v1/']) {
        const client = createClient({ baseURL: base, fetch: noFetch });
        expect(createFingerprint({ method: 'GET', url, base })).toBe(
          client.resolve('GET', url).key,
        );
      }
    },
  );

  test.each([
    ['a Headers instance', () => new Headers({ 'X-Tenant': 'acme' })],
    [
      'a plain object with an undefined value (not sent)',
      () => ({ 'X-Tenant': 'acme', b: undefined }),
    ],
  ])('createFingerprint takes headers as the client does: %s', (_n, headers) => {
    const key = createClient().resolve('GET', 'https://a.test/x', { headers: headers() }).key;
    expect(key).toBe('GET https://a.test/x |h x-tenant:acme');
    expect(createFingerprint({ method: 'GET', url: 'https://a.test/x', headers: headers() })).toBe(
      key,
    );
  });

  test('parseKey takes a key apart', () => {
    expect(parseKey('GET /todos?a=1 |h x-a:1:2\nx-b:3')).toEqual({
      method: 'GET',
      url: '/todos?a=1',
      headers: { 'x-a': '1:2', 'x-b': '3' },
      body: undefined,
      responseType: undefined,
    });
    expect(parseKey('GET https://a.test/x')).toEqual({
      method: 'GET',
      url: 'https://a.test/x',
      headers: undefined,
      body: undefined,
      responseType: undefined,
    });
    expect(parseKey('POST /x |b {"a":1}')).toEqual({
      method: 'POST',
      url: '/x',
      headers: undefined,
      body: '{"a":1}',
      responseType: undefined,
    });
    // Headers end where the responseType mark starts, with or without a body between.
    expect(parseKey('GET /x |h a:1\nb:2 |r json')).toEqual({
      method: 'GET',
      url: '/x',
      headers: { a: '1', b: '2' },
      body: undefined,
      responseType: 'json',
    });
    expect(parseKey('POST /x |h a:1 |b {"r":" |r text"} |r blob')).toEqual({
      method: 'POST',
      url: '/x',
      headers: { a: '1' },
      body: '{"r":" |r text"}',
      responseType: 'blob',
    });
    expect(parseKey('GET /x |r arrayBuffer')).toMatchObject({
      headers: undefined,
      responseType: 'arrayBuffer',
    });
    // Anything fingerprintOf does not write is no key.
    for (const bad of [
      'GET /x |r bogus',
      'GET /x |h a',
      'GET /x |r json |h a:1',
      'GET',
      'GET /x |',
    ]) {
      expect(parseKey(bad)).toBeUndefined();
    }
  });

  test('an entry written by hand under a relative key is matched by path invalidation', () => {
    const client = createClient({ baseURL: 'http://10.0.0.5:8080/api', fetch: noFetch });
    const response = { data: 1, status: 200, statusText: 'OK', headers: new Headers() };
    client.setCached('GET /todos/7', response);
    client.setCached('GET /users', response);
    expect(client.invalidate('/todos', { refetch: false })).toEqual(['GET /todos/7']);
    expect(debugOf(client).cacheSize).toBe(1);
  });
});

describe('a relative baseURL outside a browser', () => {
  test('is a RangeError that names baseURL, the value and the fix', () => {
    expect(() => createClient({ baseURL: '/api', fetch: noFetch })).toThrow(RangeError);
    expect(() => createClient({ baseURL: '/api', fetch: noFetch })).toThrow(
      'keel: `baseURL` must be a full URL, e.g. "https://api.example.com/v1" (a path works only in a browser), got "/api"',
    );
  });

  test('a relative request-level baseURL rejects the request the same way', async () => {
    const client = createClient({ fetch: noFetch });
    await expect(client.get('/x', { baseURL: 'api' })).rejects.toThrow(
      /`baseURL` must be a full URL, .*\(a path works only in a browser\), got "api"$/,
    );
  });
});

describe('the resolution fast paths give the key a full parse gives', () => {
  // Reference: every URL parsed and serialized by `new URL` (canonicalizeURL), no memo, no
  // plain-URL shortcut, no per-base path memo.
  function reference(base: string, url: string, params: Record<string, string> | undefined) {
    let resolved = resolveURL(url, base);
    const query = params === undefined ? '' : buildQuery(params);
    if (query !== '') {
      const hash = resolved.indexOf('#');
      if (hash !== -1) resolved = resolved.slice(0, hash);
      resolved += (resolved.includes('?') ? '&' : '?') + query;
    }
    const u = new URL(canonicalizeURL(resolved));
    const keyBase = keyBaseOf(resolveBaseURL(base));
    return {
      url: u.href,
      path: u.pathname,
      host: u.hostname,
      key: fingerprintOf('GET', keyURL(u.href, keyBase), undefined, undefined),
    };
  }

  const host = fc.constantFrom(
    'api.test',
    'API.Test',
    'a-b.test',
    '127.0.0.1',
    'xn--bcher-kva.test',
  );
  const port = fc.constantFrom('', ':80', ':443', ':8080', ':08080');
  // A base with a query or fragment is refused (bad-input.test.ts): nothing to agree on.
  const basePath = fc.constantFrom('', '/', '/v1', '/v1/', '/a%20b', '/v1/./x');
  const base = fc
    .tuple(fc.constantFrom('http', 'https', 'HTTPS'), host, port, basePath)
    .map(([s, h, p, b]) => `${s}://${h}${p}${b}`);
  const segment = fc.oneof(
    fc.constantFrom(
      'items',
      'job',
      '.',
      '..',
      '%2e',
      'a%2Fb',
      'A',
      '~x',
      'é',
      'x y',
      'x ',
      '\tx',
      '\\',
      '%zz',
    ),
    fc.webSegment(),
  );
  const path = fc.array(segment, { minLength: 1, maxLength: 3 }).map((s) => `/${s.join('/')}`);
  const pairValue = fc.oneof(
    fc.constantFrom('1', '42', '', 'a+b', 'a b', '%20', 'é', '*', '-_.', '=x'),
    fc.string({ maxLength: 4 }),
  );
  const pair = fc
    .tuple(fc.constantFrom('i', 'k', 'a', 'b', 'z', 'A', 'x.y', 'é'), pairValue)
    .map(([k, v]) => `${k}=${v}`);
  const query = fc.oneof(
    fc.constant(''),
    fc.constant('?'),
    fc.array(pair, { minLength: 1, maxLength: 4 }).map((ps) => `?${ps.join('&')}`),
  );
  const hash = fc.constantFrom('', '', '#', '#frag');
  const url = fc.tuple(path, query, hash).map(([p, q, h]) => p + q + h);
  const params = fc.option(
    fc.dictionary(fc.constantFrom('p', 'a', 'z'), pairValue, { maxKeys: 2 }),
    {
      nil: undefined,
    },
  );

  test('cached and uncached resolution agree for random URLs, params and baseURLs', () => {
    fc.assert(
      fc.property(
        base,
        fc.array(fc.tuple(url, params), { minLength: 1, maxLength: 6 }),
        (b, calls) => {
          const client = createClient({ baseURL: b, fetch: noFetch });
          // Each call twice: the second meets every memo the first filled.
          for (const [u, p] of [...calls, ...calls]) {
            const options = p === undefined ? { priority: 'low' as const } : { params: p };
            const spec = client.resolve('GET', u, options);
            const bare = client.resolve('GET', u);
            const want = reference(b, u, p);
            expect({ url: spec.url, path: spec.path, host: spec.host, key: spec.key }).toEqual(
              want,
            );
            if (p === undefined) expect(bare.key).toBe(want.key);
          }
        },
      ),
      { numRuns: 400 },
    );
  });
});

describe('a controller names an endpoint as a request to that path does', () => {
  // The request's endpoint key is `METHOD pathname` of its parsed URL: spaces and non-ASCII
  // percent-encoded, dot segments resolved. `endpoint(method, path)` must read the same record.
  test.each([
    ['/a b', '/a b'],
    ['/a b', '/a%20b'],
    ['/a%20b', '/a b'],
    ['/über', '/über'],
    ['/über', '/%C3%BCber'],
    ['/x/../a b', '/a b'],
    ['/a b?q=1', '/a b?r=2#f'],
  ])('a request to %s, asked as %s', async (requested, asked) => {
    const t = makeClient(
      {
        circuitBreaker: { failureThreshold: 1, resetTimeout: 1000 },
        adaptive: { enabled: true },
        retry: { attempts: 1 },
      },
      { handler: () => new Response('down', { status: 503 }) },
    );
    await t.client.get(requested).catch(() => {});
    const endpoint = t.client.resolve('GET', requested).endpoint;
    expect(t.client.circuitBreaker().status('get', asked)).toMatchObject({
      endpoint,
      state: 'open',
    });
    expect(t.client.intelligence().endpoint('GET', asked)).toMatchObject({
      requests: 1,
      failures: 1,
    });
    expect(t.client.adaptive().endpoint('GET', asked)).toMatchObject({ endpoint });
    t.client.circuitBreaker().reset('GET', asked);
    expect(t.client.circuitBreaker().status('GET', requested).state).toBe('closed');
    expect(t.client.circuitBreaker().statuses()).toHaveLength(1);
  });

  test('a path that is no valid URL is the RangeError a request to it gets', () => {
    const client = createClient({ baseURL: 'https://api.test', fetch: noFetch });
    const asRequest = (() => {
      try {
        client.resolve('GET', 'http://');
      } catch (e) {
        return e;
      }
    })();
    expect(asRequest).toBeInstanceOf(RangeError);
    expect(() => client.circuitBreaker().status('GET', 'http://')).toThrow(asRequest as Error);
    expect(() => client.intelligence().endpoint('GET', 'http://')).toThrow(asRequest as Error);
  });
});

describe('the URL sent keeps the query as the caller wrote it; the key is canonical', () => {
  test.each([
    ['/a?b=2&a=1', 'https://api.test/a?b=2&a=1', 'GET /a?a=1&b=2'],
    // A signature over the raw query: `+`, a bare name and an encoded `+` stay as they are.
    [
      '/s?x=1&sig=a%2Bb&q=a+b&flag',
      'https://api.test/s?x=1&sig=a%2Bb&q=a+b&flag',
      'GET /s?flag=&q=a%20b&sig=a%2Bb&x=1',
    ],
    ['/a?b=2&a=1#top', 'https://api.test/a?b=2&a=1', 'GET /a?a=1&b=2'],
    ['/A/../a b?z=1&y=2', 'https://api.test/a%20b?z=1&y=2', 'GET /a%20b?y=2&z=1'],
  ])('%s', async (url, sent, key) => {
    const t = makeClient({}, { handler: () => jsonResponse({}) });
    expect(t.client.resolve('GET', url).key).toBe(key);
    await t.client.get(url);
    expect(t.fake.calls.map((c) => c.url)).toEqual([sent]);
  });

  test("`params` follow the URL's own query, in their own order", async () => {
    const t = makeClient({}, { handler: () => jsonResponse({}) });
    await t.client.get('/p?z=1', { params: { b: 2, a: [3, 1] } });
    expect(t.fake.calls.map((c) => c.url)).toEqual(['https://api.test/p?z=1&b=2&a=3&a=1']);
    expect(t.client.resolve('GET', '/p?z=1', { params: { b: 2, a: [3, 1] } }).key).toBe(
      'GET /p?a=3&a=1&b=2&z=1',
    );
  });

  test('a read spelled in another order joins the flight; a refetch sends what the owner sent', async () => {
    const t = makeClient();
    const first = t.client.get('/j?b=2&a=1');
    const second = t.client.get('/j?a=1&b=2');
    expect(t.fake.calls).toHaveLength(1);
    t.fake.last().json({ n: 1 });
    await Promise.all([first, second]);
    const off = t.client.subscribe(t.client.resolve('GET', '/j?a=1&b=2').key, () => {});
    t.client.invalidate('/j');
    expect(t.fake.calls.map((c) => c.url)).toEqual([
      'https://api.test/j?b=2&a=1',
      'https://api.test/j?b=2&a=1',
    ]);
    t.fake.last().json({ n: 2 });
    await flush();
    off();
  });
});
