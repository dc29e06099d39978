import { describe, expect, test } from 'vitest';
import { CACHE_DEFAULTS } from '../cache/options';
import { resolveClientOptions } from '../config';
import { normalizeMethod } from '../internal/methods';
import { keyBaseOf, keyURL } from '../internal/url';
import type { ClientOptions, RequestOptions } from '../types/options';
import { applyRecommendation, isDedupable, resolveRequest } from './resolve';

const fetch = async () => new Response('');
function spec(
  method: Parameters<typeof normalizeMethod>[0],
  url: string,
  options?: RequestOptions,
  client: ClientOptions = {},
) {
  return resolveRequest(
    resolveClientOptions({ fetch, ...client }),
    normalizeMethod(method),
    url,
    options,
  );
}

describe('resolveRequest', () => {
  test('headers: client and request merged, request wins case-insensitively', () => {
    const s = spec(
      'GET',
      'https://a.test/x',
      { headers: { authorization: 'request', 'X-Req': '1' } },
      { headers: { Authorization: 'client', 'X-Client': 'c' } },
    );
    expect(s.headers).toEqual({ authorization: 'request', 'X-Client': 'c', 'X-Req': '1' });
  });

  test('baseURL from the client, or from the request (request wins); base path kept', () => {
    expect(spec('GET', '/u', undefined, { baseURL: 'https://a.test/v1' }).url).toBe(
      'https://a.test/v1/u',
    );
    expect(
      spec('GET', '/u', { baseURL: 'https://b.test/v2/' }, { baseURL: 'https://a.test/v1' }).url,
    ).toBe('https://b.test/v2/u');
    expect(spec('GET', 'https://c.test/abs', undefined, { baseURL: 'https://a.test/v1' }).url).toBe(
      'https://c.test/abs',
    );
  });

  test('params are appended via buildQuery, merged with an existing query, then sorted', () => {
    const s = spec('GET', 'https://a.test/x?z=1#frag', {
      params: { tag: ['b', 'a'], skip: null, n: undefined, page: 2 },
    });
    expect(s.url).toBe('https://a.test/x?page=2&tag=b&tag=a&z=1');
  });

  describe('params: the URLs sent, pinned for every way of writing base and URL', () => {
    const Q = { q: '1' };
    const BA = { b: 2, a: 1 };
    // [baseURL, url, params, spec.url, spec.fetchURL when it differs]. An empty URL keeps the
    // base as written (`.../v1/?q=1`); a query or fragment alone attaches to the base without
    // its trailing slash (`.../v1?q=1`); a query or fragment in the base is kept as today.
    const rows: [string, string, Record<string, number | string>, string, string?][] = [
      ['https://api.test', '', Q, 'https://api.test/?q=1'],
      ['https://api.test', '/', Q, 'https://api.test/?q=1'],
      ['https://api.test', '/x', Q, 'https://api.test/x?q=1'],
      ['https://api.test', '/x?a=1', Q, 'https://api.test/x?a=1&q=1'],
      ['https://api.test', '/x?z=1', Q, 'https://api.test/x?q=1&z=1', 'https://api.test/x?z=1&q=1'],
      ['https://api.test', '/x?', Q, 'https://api.test/x?q=1', 'https://api.test/x?&q=1'],
      ['https://api.test', '?a=1', Q, 'https://api.test/?a=1&q=1'],
      ['https://api.test', '#f', Q, 'https://api.test/?q=1'],
      ['https://api.test', '/x#f', Q, 'https://api.test/x?q=1'],
      ['https://api.test', '/a/../b', Q, 'https://api.test/b?q=1'],
      ['https://api.test', '/x y', Q, 'https://api.test/x%20y?q=1'],
      ['https://api.test', 'https://other.test/y#f', Q, 'https://other.test/y?q=1'],
      ['https://api.test/v1', '', Q, 'https://api.test/v1?q=1'],
      ['https://api.test/v1', '/', Q, 'https://api.test/v1/?q=1'],
      ['https://api.test/v1', '/x', Q, 'https://api.test/v1/x?q=1'],
      ['https://api.test/v1', '/x?a=1', Q, 'https://api.test/v1/x?a=1&q=1'],
      [
        'https://api.test/v1',
        '/x?z=1',
        Q,
        'https://api.test/v1/x?q=1&z=1',
        'https://api.test/v1/x?z=1&q=1',
      ],
      ['https://api.test/v1', '/x?', Q, 'https://api.test/v1/x?q=1', 'https://api.test/v1/x?&q=1'],
      ['https://api.test/v1', '?a=1', Q, 'https://api.test/v1?a=1&q=1'],
      ['https://api.test/v1', '#f', Q, 'https://api.test/v1?q=1'],
      ['https://api.test/v1', '/x#f', Q, 'https://api.test/v1/x?q=1'],
      ['https://api.test/v1', '/a/../b', Q, 'https://api.test/v1/b?q=1'],
      ['https://api.test/v1', '/x y', Q, 'https://api.test/v1/x%20y?q=1'],
      ['https://api.test/v1', 'https://other.test/y#f', Q, 'https://other.test/y?q=1'],
      ['https://api.test/v1/', '', Q, 'https://api.test/v1/?q=1'],
      [
        'https://api.test/v1/',
        '',
        BA,
        'https://api.test/v1/?a=1&b=2',
        'https://api.test/v1/?b=2&a=1',
      ],
      ['https://api.test/v1/', '/', Q, 'https://api.test/v1/?q=1'],
      [
        'https://api.test/v1/',
        '/',
        BA,
        'https://api.test/v1/?a=1&b=2',
        'https://api.test/v1/?b=2&a=1',
      ],
      ['https://api.test/v1/', '/x', Q, 'https://api.test/v1/x?q=1'],
      [
        'https://api.test/v1/',
        '/x',
        BA,
        'https://api.test/v1/x?a=1&b=2',
        'https://api.test/v1/x?b=2&a=1',
      ],
      ['https://api.test/v1/', '/x?a=1', Q, 'https://api.test/v1/x?a=1&q=1'],
      [
        'https://api.test/v1/',
        '/x?a=1',
        BA,
        'https://api.test/v1/x?a=1&a=1&b=2',
        'https://api.test/v1/x?a=1&b=2&a=1',
      ],
      [
        'https://api.test/v1/',
        '/x?z=1',
        Q,
        'https://api.test/v1/x?q=1&z=1',
        'https://api.test/v1/x?z=1&q=1',
      ],
      [
        'https://api.test/v1/',
        '/x?z=1',
        BA,
        'https://api.test/v1/x?a=1&b=2&z=1',
        'https://api.test/v1/x?z=1&b=2&a=1',
      ],
      ['https://api.test/v1/', '/x?', Q, 'https://api.test/v1/x?q=1', 'https://api.test/v1/x?&q=1'],
      [
        'https://api.test/v1/',
        '/x?',
        BA,
        'https://api.test/v1/x?a=1&b=2',
        'https://api.test/v1/x?&b=2&a=1',
      ],
      ['https://api.test/v1/', '?a=1', Q, 'https://api.test/v1?a=1&q=1'],
      [
        'https://api.test/v1/',
        '?a=1',
        BA,
        'https://api.test/v1?a=1&a=1&b=2',
        'https://api.test/v1?a=1&b=2&a=1',
      ],
      ['https://api.test/v1/', '#f', Q, 'https://api.test/v1?q=1'],
      [
        'https://api.test/v1/',
        '#f',
        BA,
        'https://api.test/v1?a=1&b=2',
        'https://api.test/v1?b=2&a=1',
      ],
      ['https://api.test/v1/', '/x#f', Q, 'https://api.test/v1/x?q=1'],
      [
        'https://api.test/v1/',
        '/x#f',
        BA,
        'https://api.test/v1/x?a=1&b=2',
        'https://api.test/v1/x?b=2&a=1',
      ],
      ['https://api.test/v1/', '/a/../b', Q, 'https://api.test/v1/b?q=1'],
      [
        'https://api.test/v1/',
        '/a/../b',
        BA,
        'https://api.test/v1/b?a=1&b=2',
        'https://api.test/v1/b?b=2&a=1',
      ],
      ['https://api.test/v1/', '/x y', Q, 'https://api.test/v1/x%20y?q=1'],
      [
        'https://api.test/v1/',
        '/x y',
        BA,
        'https://api.test/v1/x%20y?a=1&b=2',
        'https://api.test/v1/x%20y?b=2&a=1',
      ],
      ['https://api.test/v1/', 'https://other.test/y#f', Q, 'https://other.test/y?q=1'],
      [
        'https://api.test/v1/',
        'https://other.test/y#f',
        BA,
        'https://other.test/y?a=1&b=2',
        'https://other.test/y?b=2&a=1',
      ],
      ['https://API.test:443/v1/', '', Q, 'https://api.test/v1/?q=1'],
      ['https://API.test:443/v1/', '/', Q, 'https://api.test/v1/?q=1'],
      ['https://API.test:443/v1/', '/x', Q, 'https://api.test/v1/x?q=1'],
      ['https://API.test:443/v1/', '/x?a=1', Q, 'https://api.test/v1/x?a=1&q=1'],
      [
        'https://API.test:443/v1/',
        '/x?z=1',
        Q,
        'https://api.test/v1/x?q=1&z=1',
        'https://api.test/v1/x?z=1&q=1',
      ],
      [
        'https://API.test:443/v1/',
        '/x?',
        Q,
        'https://api.test/v1/x?q=1',
        'https://api.test/v1/x?&q=1',
      ],
      ['https://API.test:443/v1/', '?a=1', Q, 'https://api.test/v1?a=1&q=1'],
      ['https://API.test:443/v1/', '#f', Q, 'https://api.test/v1?q=1'],
      ['https://API.test:443/v1/', '/x#f', Q, 'https://api.test/v1/x?q=1'],
      ['https://API.test:443/v1/', '/a/../b', Q, 'https://api.test/v1/b?q=1'],
      ['https://API.test:443/v1/', '/x y', Q, 'https://api.test/v1/x%20y?q=1'],
      ['https://API.test:443/v1/', 'https://other.test/y#f', Q, 'https://other.test/y?q=1'],
    ];
    test.each(rows)('%s + %j', (baseURL, url, params, href, sent = href) => {
      const s = spec('GET', url, { params }, { baseURL });
      expect([s.url, s.fetchURL]).toEqual([href, sent]);
      const u = new URL(href);
      expect([s.path, s.host]).toEqual([u.pathname, u.hostname]);
      expect(s.key).toBe(`GET ${keyURL(href, keyBaseOf(baseURL))}`);
    });

    test('a base with a query or fragment is refused: URLs are joined onto it as text', () => {
      // It was joined anyway: `/x` went into the query (`/v1?key=1/x`) or was cut off with the
      // fragment, so every request fetched the base itself.
      for (const baseURL of ['https://api.test/v1?key=1', 'https://api.test/v1#h']) {
        expect(() => spec('GET', '/x', { params: Q }, { baseURL })).toThrow(
          `keel: \`baseURL\` must be a URL without a query or fragment, got "${baseURL}"`,
        );
        expect(() => spec('GET', '/x', { baseURL })).toThrow(RangeError);
      }
    });

    test('per-request baseURL, and no base outside a browser', () => {
      expect(spec('GET', '/x?a=1', { baseURL: 'https://b.test/v2/', params: Q }).fetchURL).toBe(
        'https://b.test/v2/x?a=1&q=1',
      );
      expect(() => spec('GET', '/x', { params: Q })).toThrow(
        'keel: `url` must be an absolute URL where there is no baseURL and no page, got "/x"',
      );
    });
  });

  test('key, endpoint, path and host', () => {
    const s = spec('get', 'https://A.test:443/users/7?b=1&a=2');
    expect(s.method).toBe('GET');
    expect(s.key).toBe('GET https://a.test/users/7?a=2&b=1');
    expect(s.endpoint).toBe('GET /users/7');
    expect(s.path).toBe('/users/7');
    expect(s.host).toBe('a.test');
  });

  test('the query string is not part of the endpoint key', () => {
    expect(spec('GET', 'https://a.test/a?page=1').endpoint).toBe(
      spec('GET', 'https://a.test/a?page=2').endpoint,
    );
  });

  test('an object body is JSON with content-type application/json', () => {
    const s = spec('POST', 'https://a.test/x', { body: { a: 1 } });
    expect(s.body).toBe('{"a":1}');
    expect(s.headers['content-type']).toBe('application/json');
  });

  test('a caller content-type (any case) is not overridden', () => {
    const s = spec('POST', 'https://a.test/x', {
      body: { a: 1 },
      headers: { 'Content-Type': 'application/vnd.api+json' },
    });
    expect(s.headers).toEqual({ 'Content-Type': 'application/vnd.api+json' });
  });

  test('pass-through bodies keep their identity and get no json content-type', () => {
    const form = new FormData();
    const s = spec('POST', 'https://a.test/x', { body: form });
    expect(s.body).toBe(form);
    expect(s.headers['content-type']).toBeUndefined();
  });

  test('GET and HEAD cannot carry a body', () => {
    expect(() => spec('GET', 'https://a.test/x', { body: { a: 1 } })).toThrow(
      'keel: `body` must be absent on a GET request, got an object',
    );
    expect(() => spec('HEAD', 'https://a.test/x', { body: 'x' })).toThrow(RangeError);
  });

  test('cache is resolved for GET only; cache:false and disabled caching give null', () => {
    expect(spec('GET', 'https://a.test/x').cache).toEqual(CACHE_DEFAULTS);
    expect(spec('POST', 'https://a.test/x').cache).toBeNull();
    expect(spec('HEAD', 'https://a.test/x').cache).toBeNull();
    expect(spec('GET', 'https://a.test/x', { cache: false }).cache).toBeNull();
    expect(spec('GET', 'https://a.test/x', {}, { cache: { enabled: false } }).cache).toBeNull();
    expect(
      spec('GET', 'https://a.test/x', { cache: true }, { cache: { enabled: false } }).cache
        ?.enabled,
    ).toBe(true);
  });

  test('priority: request option > recommendation > client default', () => {
    const config = resolveClientOptions({ fetch, timeout: 3000, cache: { ttl: 5 } });
    const rec = { timeout: 2000, strategy: 'stale-while-revalidate' as const };
    const none = resolveRequest(config, 'GET', 'https://a.test/x', undefined);
    expect(none.timeout).toBe(3000);
    expect(none.cache?.strategy).toBe('cache-first');
    const recommended = applyRecommendation(none, undefined, rec);
    expect(recommended.timeout).toBe(2000);
    expect(recommended.cache?.strategy).toBe('stale-while-revalidate');
    expect(recommended.cache?.ttl).toBe(5);
    const options = { timeout: 4000, cache: { strategy: 'cache-first' as const } };
    const explicit = applyRecommendation(
      resolveRequest(config, 'GET', 'https://a.test/x', options),
      options,
      rec,
    );
    expect(explicit.timeout).toBe(4000);
    expect(explicit.cache?.strategy).toBe('cache-first');
  });

  test('a recommended timeout never exceeds the configured one (it may only tighten it)', () => {
    const config = resolveClientOptions({ fetch, timeout: 200 });
    const at = (timeout: number) =>
      applyRecommendation(resolveRequest(config, 'GET', 'https://a.test/x', undefined), undefined, {
        timeout,
      }).timeout;
    expect(at(693)).toBe(200);
    expect(at(150)).toBe(150);
    const none = resolveClientOptions({ fetch });
    const unbounded = resolveRequest(none, 'GET', 'https://a.test/x', undefined);
    expect(applyRecommendation(unbounded, undefined, { timeout: 693 }).timeout).toBe(693);
  });

  test('retry: request object layered over the client retry; false is one attempt', () => {
    const s = spec(
      'GET',
      'https://a.test/x',
      { retry: { attempts: 5 } },
      { retry: { baseDelay: 7 } },
    );
    expect(s.retry.attempts).toBe(5);
    expect(s.retry.baseDelay).toBe(7);
    expect(spec('GET', 'https://a.test/x', { retry: false }).retry.attempts).toBe(1);
  });

  test('tags, priority and group', () => {
    const s = spec('GET', 'https://a.test/x', {
      tags: ['a'],
      priority: 'high',
      scheduler: { group: 'g' },
    });
    expect(s.tags).toEqual(['a']);
    expect(s.priority).toBe('high');
    expect(s.group).toBe('g');
    expect(spec('GET', 'https://a.test/x').priority).toBe('normal');
  });

  test('the spec is frozen', () => {
    expect(Object.isFrozen(spec('GET', 'https://a.test/x', { headers: { a: 'b' } }))).toBe(true);
  });

  test('unknown methods are a TypeError naming the method', () => {
    expect(() => normalizeMethod('FETCH')).toThrow(/FETCH/);
    expect(() => normalizeMethod(undefined)).toThrow(TypeError);
  });

  test('only GET, HEAD and OPTIONS are dedupable', () => {
    expect(['GET', 'HEAD', 'OPTIONS'].every((m) => isDedupable(m as never))).toBe(true);
    expect(['POST', 'PUT', 'PATCH', 'DELETE'].some((m) => isDedupable(m as never))).toBe(false);
  });
});
