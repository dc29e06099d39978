import { describe, expect, test } from 'vitest';
import { createClient, inspect } from '../src/index';
import { createFakeFetch, debugOf, jsonResponse } from './helpers';

/**
 * A key written by hand (`setCached`, `getCached`, `isFetching`, `subscribe`) names the entry a
 * request for the same resource has, however it is spelled: absolute or relative to the
 * baseURL, query in any order, host in any case, default port or not, with a fragment.
 */
const value = (data: unknown) => ({ data, status: 200, statusText: 'OK', headers: new Headers() });

function clientWith(baseURL?: string) {
  const fake = createFakeFetch({ handler: () => jsonResponse('network') });
  const client = createClient({ ...(baseURL === undefined ? {} : { baseURL }), fetch: fake.fetch });
  return { client, fake };
}

describe('a hand-written key answers the read it names', () => {
  const base = 'https://api.example.com';

  test.each([
    ['GET https://api.example.com/users', '/users', undefined],
    ['GET /users?page=2', '/users', { params: { page: 2 } }],
    ['GET /users?b=1&a=2', '/users', { params: { a: 2, b: 1 } }],
    ['GET https://API.Example.com:443/users?b=1&a=2#top', '/users?a=2&b=1', undefined],
    ['get /users', '/users', undefined],
    ['GET /users', 'https://api.example.com/users', undefined],
    ['GET /a%20b', '/a b', undefined],
    ['GET /v/../users', '/users', undefined],
    [
      'GET https://api.example.com/users |h x-tenant:acme',
      '/users',
      { headers: { 'X-Tenant': 'acme' } },
    ],
    // `get('')` reads the baseURL itself.
    ['GET ', '', undefined],
  ] as const)('with baseURL: setCached(%j) answers get(%j, %j)', async (key, url, options) => {
    const { client, fake } = clientWith(base);
    client.setCached(key, value('hand'));
    expect((await client.get(url, options)).data).toBe('hand');
    expect(fake.calls).toHaveLength(0);
    const spec = client.resolve('GET', url, options);
    expect(
      inspect(client)
        .cache()
        .map((e) => [e.key, e.path]),
    ).toEqual([[spec.key, spec.path]]);
    // Read, removed and watched in the same spelling.
    expect(client.getCached(key)?.data).toBe('hand');
    const updates: string[] = [];
    const off = client.subscribe(key, (u) => updates.push(`${u.type} ${u.key}`));
    client.setCached(spec, value('again'));
    expect(updates).toEqual([`write ${spec.key}`]);
    client.setCached(key, undefined);
    expect(client.getCached(spec.key)).toBeUndefined();
    off();
  });

  test('without baseURL: an absolute key in any spelling answers the read', async () => {
    const { client, fake } = clientWith();
    client.setCached('GET HTTPS://api.example.com:443/users?page=2#x', value('hand'));
    const got = await client.get('https://api.example.com/users', { params: { page: 2 } });
    expect(got.data).toBe('hand');
    expect(fake.calls).toHaveLength(0);
    expect(
      inspect(client)
        .cache()
        .map((e) => [e.key, e.path]),
    ).toEqual([['GET https://api.example.com/users?page=2', '/users']]);
    expect(client.invalidate('/users', { refetch: false })).toEqual([
      'GET https://api.example.com/users?page=2',
    ]);
  });

  test("a key without marks gets the client's own (a client-wide responseType)", async () => {
    const fake = createFakeFetch({ handler: () => new Response('network') });
    const client = createClient({ baseURL: base, fetch: fake.fetch, responseType: 'text' });
    client.setCached('GET https://api.example.com/users', value('hand'));
    expect((await client.get('/users')).data).toBe('hand');
    expect(fake.calls).toHaveLength(0);
  });

  test('a getCached of a read made in another spelling finds it', async () => {
    const { client } = clientWith(base);
    await client.get('/users', { params: { b: 1, a: 2 } });
    expect(client.getCached('GET https://api.example.com/users?b=1&a=2')?.data).toBe('network');
    expect(client.getCached('GET /users?a=2&b=1')?.data).toBe('network');
  });

  test('isFetching answers for any spelling of a read in flight', () => {
    const fake = createFakeFetch();
    const client = createClient({ baseURL: base, fetch: fake.fetch });
    const read = client.get('/users?b=1&a=2');
    expect(client.isFetching('GET https://api.example.com/users?a=2&b=1')).toBe(true);
    read.cancel();
    read.catch(() => {});
  });
});

describe('a key no request of the client can have is the RangeError such a request gets', () => {
  test('a relative key on a client without baseURL (outside a browser)', () => {
    const { client } = clientWith();
    expect(() => client.setCached('GET /users?page=2', value(1))).toThrow(
      'keel: `url` must be an absolute URL where there is no baseURL and no page, got "/users?page=2"',
    );
    expect(() => client.getCached('GET /users?page=2')).toThrow(RangeError);
    expect(() => client.setCached('/users?page=2', value(1))).toThrow(
      'keel: `key` must be a `METHOD url` key with the marks a request writes (` |h`, ` |b`, ` |r`), got "/users?page=2"',
    );
    expect(inspect(client).cache()).toEqual([]);
  });

  test.each(['/users', 'users', 'FETCH /users', '', 'GET', 'GET http://'])(
    'with baseURL: %j',
    (key) => {
      const { client } = clientWith('https://api.example.com');
      expect(() => client.setCached(key, value(1))).toThrow(RangeError);
      expect(() => client.setCached(key, value(1))).toThrow(/`(key|method|url)`/);
      expect(() => client.isFetching(key)).toThrow(RangeError);
    },
  );

  test('a key that is not a string is a TypeError', () => {
    const { client } = clientWith('https://api.example.com');
    expect(() => client.setCached(7 as never, value(1))).toThrow(TypeError);
    expect(() => client.setCached({} as never, value(1))).toThrow(TypeError);
    expect(() => client.setCached(null as never, value(1))).toThrow(TypeError);
    expect(() => client.getCached({} as never)).toThrow(TypeError);
    expect(() => client.subscribe(7 as never, () => {})).toThrow(TypeError);
  });
});

describe('a key names only what a request writes: an unknown mark is a RangeError naming the key', () => {
  test.each([
    'GET /x |r bogus',
    'GET /x |q json',
    'GET /x |r json |h a:1',
    'GET /x |h',
    'GET /x |h junk',
    'GET /x |',
    // A ` |b` after GET is read, not refused: a header value may hold ` |b ` (see below).
  ])('%j', (key) => {
    const { client } = clientWith('https://api.example.com');
    const message = `keel: \`key\` must be a \`METHOD url\` key with the marks a request writes (\` |h\`, \` |b\`, \` |r\`), got ${JSON.stringify(key)}`;
    expect(() => client.setCached(key, value(1))).toThrow(message);
    expect(() => client.getCached(key)).toThrow(RangeError);
    expect(() => client.isFetching(key)).toThrow(RangeError);
    expect(() => client.subscribe(key, () => {})).toThrow(RangeError);
    expect(inspect(client).cache()).toEqual([]);
    expect(debugOf(client).subscriptions).toBe(0);
  });

  test.each([
    ['GET /x |h __proto__:a', '__proto__', 'a'],
    ['GET /x |h a:1\n__PROTO__:b |r text', '__PROTO__', 'b'],
    ['GET /x |h a(b:1', 'a(b', '1'],
    ['GET /x |h a:\u0100', 'a', '\u0100'],
  ])('%j: a header no request can send is the RangeError naming it in the key', (key, name, v) => {
    const { client } = clientWith('https://api.example.com');
    const headers = Object.fromEntries([[name, v]]);
    expect(() => client.resolve('GET', '/x', { headers })).toThrow(RangeError);
    const message = `keel: \`key[${JSON.stringify(name)}]\` must be a valid header`;
    expect(() => client.setCached(key, value(1))).toThrow(message);
    expect(() => client.getCached(key)).toThrow(RangeError);
    expect(() => client.isFetching(key)).toThrow(RangeError);
    expect(() => client.subscribe(key, () => {})).toThrow(RangeError);
    expect(inspect(client).cache()).toEqual([]);
    expect(debugOf(client).subscriptions).toBe(0);
  });

  test.each([
    ['GET /x |h a:1\nb:2 |r text', '/x', { headers: { a: '1', b: '2' }, responseType: 'text' }],
    ['GET /x |r stream', '/x', { responseType: 'stream' }],
    ['POST /x |h content-type:text/plain |b a |b', '/x', undefined],
    ['GET /a b', '/a b', undefined],
  ] as const)('%j is a key a request has', (key, url, options) => {
    const { client } = clientWith('https://api.example.com');
    client.setCached(key, value('hand'));
    expect(client.getCached(key)?.data).toBe('hand');
    if (key.startsWith('GET')) {
      expect(client.getCached(client.resolve('GET', url, options).key)?.data).toBe('hand');
    }
  });
});

describe('the baseURL itself: a request for it and its hand-written key agree', () => {
  // A key's URL is relative to the baseURL without its trailing slash: `GET ` is that URL,
  // `GET /` the one with the slash. Every key a request has names its own entry by hand.
  test.each([
    ['https://api.example.com/v1/', 'https://api.example.com/v1', 'GET '],
    ['https://api.example.com/v1', 'https://api.example.com/v1', 'GET '],
    ['https://api.example.com/v1/', '', 'GET /'],
    ['https://api.example.com/v1/', 'https://api.example.com/v1/', 'GET /'],
    ['https://api.example.com/v1', '', 'GET '],
    ['https://api.example.com/', '', 'GET /'],
    ['https://api.example.com/v1/', 'https://api.example.com/v1?a=1', 'GET ?a=1'],
  ])('baseURL %j: get(%j) is %j', async (baseURL, url, key) => {
    const { client, fake } = clientWith(baseURL);
    expect(client.resolve('GET', url).key).toBe(key);
    client.setCached(key, value('hand'));
    expect((await client.get(url)).data).toBe('hand');
    expect(fake.calls).toHaveLength(0);
    expect(
      inspect(client)
        .cache()
        .map((e) => e.key),
    ).toEqual([key]);
  });
});

describe('a header value holding ` |` (fetch allows it)', () => {
  const options = { headers: { 'X-Filter': 'a |b c |r json' } };

  test('a request spec and its key name its entry: setCached, getCached, subscribe, isFetching', async () => {
    const { client, fake } = clientWith('https://api.example.com');
    const spec = client.resolve('GET', '/users', options);
    const seen: string[] = [];
    const off = client.subscribe(spec.key, (update) => seen.push(update.type));
    client.setCached(spec, value('hand'));
    expect(client.getCached(spec.key)?.data).toBe('hand');
    expect(client.isFetching(spec.key)).toBe(false);
    expect((await client.get('/users', options)).data).toBe('hand');
    expect(fake.calls).toHaveLength(0);
    expect(seen.length).toBeGreaterThan(0);
    off();
  });

  test('the same key written by hand names the same entry', () => {
    const { client } = clientWith('https://api.example.com');
    const spec = client.resolve('GET', '/users', options);
    client.setCached(spec.key, value('hand'));
    expect(client.getCached(spec.key)?.data).toBe('hand');
  });
});

describe('the header marks of a hand-written key are read as a request writes them', () => {
  // A request's key lower-cases header names and sorts the lines: a key written by hand
  // names its entry whatever the case of the names and the order of the lines.
  test.each([
    ['GET /users |h X-Tenant:acme', { 'x-tenant': 'acme' }],
    ['GET /users |h b:2\na:1', { a: '1', b: '2' }],
    ['GET /users |h X-B:2\nx-a:1', { 'X-A': '1', 'x-b': '2' }],
  ])('%j', async (key, headers) => {
    const { client, fake } = clientWith('https://api.example.com');
    client.setCached(key, value('hand'));
    expect((await client.get('/users', { headers })).data).toBe('hand');
    expect(fake.calls).toHaveLength(0);
    const spec = client.resolve('GET', '/users', { headers });
    expect(
      inspect(client)
        .cache()
        .map((e) => e.key),
    ).toEqual([spec.key]);
    expect(client.getCached(key)?.data).toBe('hand');
    const read = client.get('/other', { headers });
    expect(client.isFetching(key.replace('/users', '/other'))).toBe(true);
    read.cancel();
    read.catch(() => {});
  });

  test("a key with marks but no ` |r` gets the client's responseType, as a request's key does", async () => {
    const fake = createFakeFetch({ handler: () => new Response('network') });
    const client = createClient({
      baseURL: 'https://api.example.com',
      fetch: fake.fetch,
      responseType: 'text',
    });
    const headers = { 'X-Tenant': 'acme' };
    expect(client.resolve('GET', '/users', { headers }).key).toBe(
      'GET /users |h x-tenant:acme |r text',
    );
    client.setCached('GET /users |h X-Tenant:acme', value('hand'));
    expect((await client.get('/users', { headers })).data).toBe('hand');
    expect(fake.calls).toHaveLength(0);
    // A ` |r` written by hand is kept: another read of the same URL.
    client.setCached('GET /users |h x-tenant:acme |r json', value('json'));
    expect((await client.get('/users', { headers, responseType: 'json' })).data).toBe('json');
    expect((await client.get('/users', { headers })).data).toBe('hand');
    expect(fake.calls).toHaveLength(0);
  });
});

/**
 * isFetching runs on every query state change (React): a request's own key (canonical, as a
 * spec or a hook holds it) is looked up as it is, any other spelling is parsed first. Both must
 * answer the same, for every shape of key a read can have.
 */
describe('isFetching: the canonical key and any other spelling answer alike', () => {
  test.each([
    ['/users', undefined, 'GET https://API.example.com:443/users#x'],
    ['/users', { params: { b: 1, a: 2 } }, 'GET /users?b=1&a=2'],
    ['/a b', undefined, 'get /a%20b'],
    ['/users', { headers: { 'X-Tenant': 'acme' } }, 'GET /users |h X-TENANT:acme'],
    ['/users', { headers: { 'X-Filter': 'a |b c |r json' } }, undefined],
    ['/users', { responseType: 'text' as const }, 'GET https://api.example.com/users |r text'],
    ['', undefined, 'GET https://api.example.com'],
  ])('get(%j, %j)', async (url, options, spelling) => {
    const { client, fake } = clientWith('https://api.example.com');
    const spec = client.resolve('GET', url, options);
    expect(client.isFetching(spec.key)).toBe(false);
    if (spelling !== undefined) expect(client.isFetching(spelling)).toBe(false);
    const read = client.get(url, options);
    expect(client.isFetching(spec.key)).toBe(true);
    if (spelling !== undefined) expect(client.isFetching(spelling)).toBe(true);
    // Another resource is not in flight, in either form.
    expect(client.isFetching(client.resolve('GET', '/other').key)).toBe(false);
    expect(client.isFetching('GET /other')).toBe(false);
    // A key no request can have is refused with a read in flight too.
    expect(() => client.isFetching('FOO /users')).toThrow(RangeError);
    expect(() => client.isFetching(5 as never)).toThrow(TypeError);
    read.cancel();
    await read.catch(() => {});
    expect(client.isFetching(spec.key)).toBe(false);
    if (spelling !== undefined) expect(client.isFetching(spelling)).toBe(false);
    expect(fake.calls).toHaveLength(1);
  });
});
