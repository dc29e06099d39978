import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { arrivalCount } from '../src/hydration';
import {
  createClient,
  type DehydratedEntry,
  type DehydratedState,
  dehydrate,
  hydrate,
  inspect,
} from '../src/index';
import {
  createFakeFetch,
  debugOf,
  FakeClock,
  jsonResponse,
  startServer,
  type TestServer,
} from './helpers';

let api: TestServer;
beforeAll(async () => {
  api = await startServer({
    // The baseURL itself, without its trailing slash.
    '/api': (req, res) => {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ url: req.url }));
    },
    '/api/todos': (req, res) => {
      res.setHeader('content-type', 'application/json');
      res.setHeader('x-total', '2');
      res.setHeader('set-cookie', 'session=secret');
      res.end(JSON.stringify({ url: req.url, tenant: req.headers['x-tenant'] ?? null }));
    },
  });
});
afterAll(() => api.close());

/** The server side: the API on its internal address, the server's own clock. */
async function serverState(clock: FakeClock): Promise<DehydratedState> {
  const server = createClient({ baseURL: `${api.url}/api`, clock });
  await server.get('/todos');
  await server.get('/todos', { params: { page: 2 }, tags: ['todos'] });
  await server.get('/todos', { headers: { 'X-Tenant': 'acme' } });
  await clock.advance(10_000);
  // What travels to the page: JSON.
  return JSON.parse(JSON.stringify(dehydrate(server)));
}

describe('dehydrate / hydrate', () => {
  test('the browser client answers the server-fetched reads from its cache, no request', async () => {
    const state = await serverState(new FakeClock());
    expect(state.entries.map((e) => e.key)).toEqual([
      'GET /todos',
      'GET /todos?page=2',
      'GET /todos |h x-tenant:acme',
    ]);
    const fake = createFakeFetch();
    const browserClock = new FakeClock(1_000_000);
    const browser = createClient({
      baseURL: 'https://app.example.com/api',
      fetch: fake.fetch,
      clock: browserClock,
    });
    expect(hydrate(browser, state)).toBe(3);

    const plain = await browser.get<{ url: string }>('/todos');
    const page = await browser.get<{ url: string }>('/todos', { params: { page: 2 } });
    const tenant = await browser.get<{ tenant: string }>('/todos', {
      headers: { 'x-tenant': 'acme' },
    });
    expect(fake.calls).toHaveLength(0);
    expect(plain.data.url).toBe('/api/todos');
    expect(page.data.url).toBe('/api/todos?page=2');
    expect(tenant.data.tenant).toBe('acme');
    // Headers travel, except set-cookie.
    expect(plain.headers.get('x-total')).toBe('2');
    expect(plain.headers.get('content-type')).toBe('application/json');
    expect(plain.headers.has('set-cookie')).toBe(false);

    // 10 s of the 30 s ttl were used on the server: fresh for 20 s more here.
    await browserClock.advance(19_999);
    await browser.get('/todos');
    expect(fake.calls).toHaveLength(0);
    await browserClock.advance(2);
    void browser.get('/todos').catch(() => {});
    expect(fake.calls.map((c) => c.url)).toEqual(['https://app.example.com/api/todos']);
    browser.cancelAll();
  });

  test('the same state hydrated again (parsed anew) keeps its first arrival: a newer read stays', async () => {
    const state = await serverState(new FakeClock());
    const text = JSON.stringify(state);
    const clock = new FakeClock(1_000_000);
    const browser = createClient({ baseURL: `${api.url}/api`, clock });
    expect(hydrate(browser, JSON.parse(text))).toBe(3);
    await clock.advance(1000);
    browser.invalidate('/todos', { refetch: false });
    const fresh = await browser.get('/todos');
    // Longer than the entries' age (10 s): counted from now, they would look newer than `fresh`.
    await clock.advance(15_000);
    // The same content, a new object: nothing is newer than what the client read since.
    expect(hydrate(browser, JSON.parse(text))).toBe(2);
    expect(browser.getCached(browser.resolve('GET', '/todos').key)).toBe(fresh);
    // A state whose entry changed is a new arrival, written over the older read.
    const changed = JSON.parse(text) as DehydratedState;
    (changed.entries[0]!.response as { data: unknown }).data = { url: 'changed' };
    (changed.entries[0] as { age: number }).age = 0;
    expect(hydrate(browser, changed)).toBe(1);
    expect(browser.getCached(browser.resolve('GET', '/todos').key)?.data).toEqual({
      url: 'changed',
    });
  });

  test('a read with headers and a responseType comes back under its own key', async () => {
    const clock = new FakeClock();
    const server = createClient({ baseURL: `${api.url}/api`, clock });
    const read = { headers: { 'X-Tenant': 'acme' }, responseType: 'text' } as const;
    await server.get('/todos', read);
    await server.get('/todos', { responseType: 'json' });
    const state: DehydratedState = JSON.parse(JSON.stringify(dehydrate(server)));
    expect(state.entries.map((e) => e.key)).toEqual([
      'GET /todos |h x-tenant:acme |r text',
      'GET /todos |r json',
    ]);
    const fake = createFakeFetch();
    const browser = createClient({ baseURL: 'https://app.example.com/api', fetch: fake.fetch });
    expect(hydrate(browser, state)).toBe(2);
    const text = await browser.get<string>('/todos', read);
    const json = await browser.get<{ tenant: string | null }>('/todos', { responseType: 'json' });
    expect(fake.calls).toHaveLength(0);
    expect(JSON.parse(text.data).tenant).toBe('acme');
    expect(json.data.tenant).toBe(null);
    // An invalidation refetch sends the header as it was written, not `acme |r text`.
    const key = browser.resolve('GET', '/todos', read).key;
    const off = browser.subscribe(key, () => {});
    browser.invalidate('/todos');
    await new Promise((r) => setTimeout(r, 0));
    expect(fake.calls.map((c) => new Headers(c.init?.headers).get('x-tenant'))).toEqual(['acme']);
    off();
    browser.cancelAll();
  });

  test('a hydrated entry carries its spec and tags: invalidation refetches it', async () => {
    const state = await serverState(new FakeClock());
    const fake = createFakeFetch({ handler: (call) => Response.json({ fresh: call.url }) });
    const browser = createClient({ baseURL: 'https://app.example.com/api', fetch: fake.fetch });
    hydrate(browser, state);
    const key = browser.resolve('GET', '/todos', { params: { page: 2 } }).key;
    const off = browser.subscribe(key, () => {});
    expect(browser.invalidate(['todos'])).toEqual([key]);
    await new Promise((r) => setTimeout(r, 0));
    expect(fake.calls.map((c) => c.url)).toEqual(['https://app.example.com/api/todos?page=2']);
    off();
    expect(debugOf(browser).subscriptions).toBe(0);
  });

  test('newer data in the browser wins over an older hydrated entry', async () => {
    const state = await serverState(new FakeClock());
    const browser = createClient({
      baseURL: 'https://app.example.com/api',
      fetch: createFakeFetch().fetch,
    });
    const spec = browser.resolve('GET', '/todos');
    browser.setCached(spec, {
      data: 'browser',
      status: 200,
      statusText: 'OK',
      headers: new Headers(),
    });
    expect(hydrate(browser, state)).toBe(2);
    expect(browser.getCached(spec.key)?.data).toBe('browser');
  });

  test('include takes an invalidation target', async () => {
    const clock = new FakeClock();
    const server = createClient({ baseURL: `${api.url}/api`, clock });
    await server.get('/todos');
    await server.get('/todos', { tags: ['t'], params: { a: 1 } });
    expect(dehydrate(server, { include: ['t'] }).entries.map((e) => e.key)).toEqual([
      'GET /todos?a=1',
    ]);
    expect(dehydrate(server, { include: '/todos' }).entries).toHaveLength(2);
    expect(() => dehydrate(server, { include: 3 as never })).toThrow(
      /^keel: `include` must be a path string/,
    );
  });

  test('a malformed state is a TypeError naming the field', () => {
    const client = createClient({ baseURL: 'https://a.test', fetch: createFakeFetch().fetch });
    expect(() => hydrate(client, null as never)).toThrow(TypeError);
    expect(() => hydrate(client, { keel: 2, entries: [] } as never)).toThrow(RangeError);
    const good = {
      key: 'GET /x',
      tags: [],
      age: 0,
      ttl: 1000,
      response: { data: 1, status: 200, statusText: 'OK', headers: [] },
    };
    expect(() => hydrate(client, { keel: 1, entries: [good, { ...good, age: -1 }] })).toThrow(
      'keel: `state.entries[1].age` must be a finite non-negative number of ms, got -1',
    );
    expect(() => hydrate(client, { keel: 1, entries: [{ ...good, key: 'POST /x' }] })).toThrow(
      /`state.entries\[0\].key` must be the key of a GET request, got "POST \/x"/,
    );
    expect(() => dehydrate({} as never)).toThrow(
      'keel: `dehydrate(client)` must be a client made by createClient or createBaseClient, got an object',
    );
  });

  describe('hydrate refuses what no response of the client can be', () => {
    const entry = (over: Partial<DehydratedEntry> = {}, status = 200): DehydratedEntry => ({
      key: 'GET /x',
      tags: [],
      age: 0,
      ttl: 1000,
      response: { data: 1, status, statusText: '', headers: [] },
      ...over,
    });
    const browser = () =>
      createClient({ baseURL: 'https://a.test', fetch: createFakeFetch().fetch });

    // A Response's status is 200-599 (the Response constructor refuses any other): 0 is an
    // opaque response, never stored; 1xx never reaches a fetch caller.
    test.each([99, 0, 199, 600, 1_000_000])('status %j is a RangeError naming it', (status) => {
      const client = browser();
      expect(() => hydrate(client, { keel: 1, entries: [entry(), entry({}, status)] })).toThrow(
        `keel: \`state.entries[1].response.status\` must be an HTTP status (an integer from 200 to 599), got ${status}`,
      );
      expect(inspect(client).cache()).toEqual([]);
    });

    test.each([200, 404, 599])('status %j is written', (status) => {
      const client = browser();
      expect(hydrate(client, { keel: 1, entries: [entry({}, status)] })).toBe(1);
      expect(client.getCached('GET /x')?.status).toBe(status);
    });

    test.each([
      ['GET /x |r bogus'],
      ['GET /x |q json'],
      ['GET /x |r json |h a:1'],
      ['GET /x |h'],
      ['GET /x |'],
      // A GET request has no body (its request is the RangeError `body`).
      ['GET /x |b {}'],
      ['GET /x |h a:1 |b x |r json'],
    ])('a key with a mark no request writes (%j) is a RangeError naming it', (key) => {
      const client = browser();
      expect(() => hydrate(client, { keel: 1, entries: [entry(), entry({ key })] })).toThrow(
        `\`state.entries[1].key\` must be the key of a GET request, got ${JSON.stringify(key)}`,
      );
      expect(inspect(client).cache()).toEqual([]);
    });

    test('an entry already due for collection is not written, nor counted', () => {
      const clock = new FakeClock();
      const client = createClient({
        baseURL: 'https://a.test',
        fetch: createFakeFetch().fetch,
        clock,
        cache: { ttl: 1000, gcTime: 5000 },
      });
      const changes: string[] = [];
      inspect(client).watchCache((c) => changes.push(c.type));
      const state = {
        keel: 1 as const,
        entries: [
          entry({ key: 'GET /old', age: Number.MAX_VALUE }),
          // Expired 5 s ago: collected now (gcTime 5 s).
          entry({ key: 'GET /gone', age: 6000 }),
          // Expired 4.999 s ago: kept (stale) for 1 ms more.
          entry({ key: 'GET /stale', age: 5999 }),
        ],
      };
      expect(hydrate(client, state)).toBe(1);
      expect(changes).toEqual(['write']);
      expect(
        inspect(client)
          .cache()
          .map((e) => e.key),
      ).toEqual(['GET /stale']);
      expect(client.getCached('GET /old')).toBeUndefined();
      // Watched, a stale entry is kept however old: it is written.
      const off = client.subscribe('GET /old', () => {});
      expect(hydrate(client, state)).toBe(1);
      expect(client.getCached('GET /old')?.data).toBe(1);
      off();
    });
  });

  test('the baseURL without its trailing slash comes back under its own key', async () => {
    const server = createClient({ baseURL: `${api.url}/api/`, clock: new FakeClock() });
    // `GET ` (nothing after the base) is `/api`; `GET /` is `/api/`, what get('') reads here.
    await server.get(`${api.url}/api`, { params: { n: 1 } });
    await server.get(`${api.url}/api`);
    const state: DehydratedState = JSON.parse(JSON.stringify(dehydrate(server)));
    expect(state.entries.map((e) => e.key)).toEqual(['GET ?n=1', 'GET ']);
    const fake = createFakeFetch();
    const browser = createClient({ baseURL: 'https://app.example.com/api/', fetch: fake.fetch });
    expect(hydrate(browser, state)).toBe(2);
    expect(
      inspect(browser)
        .cache()
        .map((e) => [e.key, e.path]),
    ).toEqual([
      ['GET ?n=1', '/api'],
      ['GET ', '/api'],
    ]);
    await browser.get('https://app.example.com/api');
    await browser.get('https://app.example.com/api?n=1');
    expect(fake.calls).toHaveLength(0);
    expect(browser.getCached('GET ')).toBe(browser.getCached(dehydrate(browser).entries[1]!.key));
  });
});

describe('clients whose baseURLs differ only by a trailing slash', () => {
  // get('') reads the baseURL as written: `https://api.test/v1/` on one, `https://api.test/v1`
  // on the other, two URLs a server may answer differently, so two keys (`GET /`, `GET `).
  // Every other relative URL resolves alike on both, and hands over.
  const echo = () => createFakeFetch({ handler: (call) => jsonResponse(call.url) });

  test("each hydrates the other's entries, but for get(''), which reads another URL", async () => {
    const serverFetch = echo();
    const server = createClient({ baseURL: 'https://api.test/v1/', fetch: serverFetch.fetch });
    const browserFetch = echo();
    const browser = createClient({ baseURL: 'https://api.test/v1', fetch: browserFetch.fetch });
    expect(server.resolve('GET', '').key).toBe('GET /');
    expect(browser.resolve('GET', '').key).toBe('GET ');
    for (const url of ['', '/', '?a=1', '/users']) {
      expect(server.resolve('GET', url).url, url).toBe(browser.resolve('GET', url || '/').url);
    }

    for (const url of ['', '?a=1', '/users']) await server.get(url);
    expect(serverFetch.calls.map((c) => c.url)).toEqual([
      'https://api.test/v1/',
      'https://api.test/v1?a=1',
      'https://api.test/v1/users',
    ]);
    const state: DehydratedState = JSON.parse(JSON.stringify(dehydrate(server)));
    expect(state.entries.map((e) => e.key)).toEqual(['GET /', 'GET ?a=1', 'GET /users']);
    expect(hydrate(browser, state)).toBe(3);
    // The server's get('') is the browser's get('/'): the same URL, the same key.
    expect((await browser.get('/')).data).toBe('https://api.test/v1/');
    expect((await browser.get('?a=1')).data).toBe('https://api.test/v1?a=1');
    expect((await browser.get('/users')).data).toBe('https://api.test/v1/users');
    expect(browserFetch.calls).toHaveLength(0);
    // The browser's get('') is `https://api.test/v1`: no entry was handed for it.
    expect((await browser.get('')).data).toBe('https://api.test/v1');
    expect(browserFetch.calls.map((c) => c.url)).toEqual(['https://api.test/v1']);
  });
});

describe('dehydrate hands over only what hydrate takes (values written by hand)', () => {
  const base = 'https://api.example.com';

  test('headers given as a plain object or pairs are handed over as pairs', () => {
    const server = createClient({ baseURL: base });
    server.setCached('GET /a', {
      data: 1,
      status: 200,
      statusText: 'OK',
      headers: { 'X-Total': '2' } as unknown as Headers,
    });
    server.setCached('GET /b', {
      data: 2,
      status: 200,
      statusText: 'OK',
      headers: [['x-total', '3']] as unknown as Headers,
    });
    const state = JSON.parse(JSON.stringify(dehydrate(server))) as DehydratedState;
    const byKey = Object.fromEntries(state.entries.map((e) => [e.key, e.response.headers]));
    expect(byKey).toEqual({ 'GET /a': [['x-total', '2']], 'GET /b': [['x-total', '3']] });
    const browser = createClient({ baseURL: base });
    expect(hydrate(browser, state)).toBe(2);
    expect(browser.getCached('GET /a')?.headers.get('x-total')).toBe('2');
  });

  test('a status no Response can have is a RangeError naming the entry, at dehydrate', () => {
    const server = createClient({ baseURL: base });
    server.setCached('GET /x', { data: 1, status: 99, statusText: '', headers: new Headers() });
    expect(() => dehydrate(server)).toThrow(RangeError);
    expect(() => dehydrate(server)).toThrow(/GET \/x.*status.*200 to 599.*99/);
  });
});

describe('arrival records do not outlive their entries', () => {
  const entry = (i: number, data: unknown = i): DehydratedEntry => ({
    key: `GET /k${i}`,
    tags: [],
    age: 0,
    ttl: 30_000,
    response: { data, status: 200, statusText: 'OK', headers: [] },
  });

  test('thousands of distinct keys hydrated, evicted or cleared: the records stay bounded by the cache', () => {
    const client = createClient({ baseURL: 'https://api.test', cache: { maxEntries: 10 } });
    for (let i = 0; i < 5000; i++) {
      expect(hydrate(client, { keel: 1, entries: [entry(i)] })).toBe(1);
      // A record per key the cache holds, plus at most as many again and a small slack.
      expect(arrivalCount(client)).toBeLessThanOrEqual(2 * debugOf(client).cacheSize + 32);
      if (i % 1000 === 999) client.clearCache();
    }
    expect(debugOf(client).cacheSize).toBeLessThanOrEqual(10);
  });

  test('a kept record still tells a repeat: the same state after a newer read keeps the read', async () => {
    const clock = new FakeClock(1_000_000);
    const fake = createFakeFetch({ handler: () => jsonResponse('read') });
    const client = createClient({ baseURL: 'https://api.test', clock, fetch: fake.fetch });
    const state: DehydratedState = { keel: 1, entries: [{ ...entry(1, 'server'), age: 10_000 }] };
    hydrate(client, JSON.parse(JSON.stringify(state)));
    await clock.advance(1000);
    client.invalidate('/k1', { refetch: false });
    const read = await client.get('/k1');
    await clock.advance(15_000);
    // Many other keys hydrated meanwhile (each record with its entry): the record of /k1 stays.
    for (let i = 2; i < 200; i++) hydrate(client, { keel: 1, entries: [entry(i)] });
    expect(hydrate(client, JSON.parse(JSON.stringify(state)))).toBe(0);
    expect(client.getCached('GET /k1')).toBe(read);
  });
});
