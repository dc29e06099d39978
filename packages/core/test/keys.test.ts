import { describe, expect, test } from 'vitest';
import { createClient, createFingerprint } from '../src/index';
import { parseKey } from '../src/internal/fingerprint';
import { createFakeFetch, debugOf } from './helpers';

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

  test('parseKey takes a key apart', () => {
    expect(parseKey('GET /todos?a=1 |h x-a:1:2\nx-b:3')).toEqual({
      method: 'GET',
      url: '/todos?a=1',
      headers: { 'x-a': '1:2', 'x-b': '3' },
    });
    expect(parseKey('GET https://a.test/x')).toEqual({
      method: 'GET',
      url: 'https://a.test/x',
      headers: undefined,
    });
    expect(parseKey('POST /x |b {"a":1}')).toEqual({
      method: 'POST',
      url: '/x',
      headers: undefined,
    });
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
      'keel: `baseURL` must be an absolute URL outside a browser (there is no page to resolve it against; pass the full URL, e.g. "http://localhost:3000/api"), got "/api"',
    );
  });

  test('a relative request-level baseURL rejects the request the same way', async () => {
    const client = createClient({ fetch: noFetch });
    await expect(client.get('/x', { baseURL: 'api' })).rejects.toThrow(
      /`baseURL` must be an absolute URL outside a browser .*, got "api"$/,
    );
  });
});
