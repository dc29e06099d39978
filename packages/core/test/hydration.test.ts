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

/**
 * The server side: the API on its internal address, the server's own clock. The browsers below
 * run a FakeClock too, on the same epoch: a state is as old as its entries' stored times say (a
 * browser on the system clock would be two years ahead, and find every entry long expired).
 */
async function serverState(clock: FakeClock): Promise<DehydratedState> {
  const server = createClient({ baseURL: `${api.url}/api`, clock });
  await server.get('/todos');
  await server.get('/todos', { params: { page: 2 }, tags: ['todos'] });
  await server.get('/todos', { headers: { 'X-Tenant': 'acme' } });
  await clock.advance(10_000);
  // What travels to the page: JSON.
  return JSON.parse(JSON.stringify(dehydrate(server)));
}

/** A browser client on a fake fetch and its own FakeClock. */
function fakeBrowser() {
  const fake = createFakeFetch();
  const browser = createClient({
    baseURL: 'https://app.example.com/api',
    fetch: fake.fetch,
    clock: new FakeClock(),
  });
  return { fake, browser };
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
    // The same content, a new object: written at its first arrival, it is not written again
    // (what the client read since stays; the other two entries, expired and collected, are not
    // brought back either).
    expect(hydrate(browser, JSON.parse(text))).toBe(0);
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

  test("a hydrated entry's request headers keep their names as written, as the fetched entry's", async () => {
    const clock = new FakeClock();
    const server = createClient({ baseURL: `${api.url}/api`, clock });
    await server.get('/todos', { headers: { 'X-Tenant': 'acme', 'x-lower': '1' } });
    const state: DehydratedState = JSON.parse(JSON.stringify(dehydrate(server)));
    const { fake, browser } = fakeBrowser();
    expect(hydrate(browser, state)).toBe(1);
    const headersOf = (client: typeof server) => inspect(client).cache()[0]!.spec!.headers;
    expect(headersOf(browser)).toEqual(headersOf(server));
    expect(headersOf(browser)).toEqual({ 'X-Tenant': 'acme', 'x-lower': '1' });
    // Its invalidation refetch sends them so: a custom fetch reading `X-Tenant` finds it.
    const off = browser.subscribe(inspect(browser).cache()[0]!.key, () => {});
    browser.invalidate('/todos');
    expect(fake.calls.map((c) => c.init?.headers)).toEqual([
      { 'X-Tenant': 'acme', 'x-lower': '1' },
    ]);
    off();
    browser.cancelAll();
  });

  test("headerNames not naming the key's headers are a RangeError naming the field", () => {
    const browser = createClient({ clock: new FakeClock() });
    const entry = {
      key: 'GET /a |h x-tenant:acme',
      tags: [],
      age: 0,
      ttl: 1000,
      headerNames: ['X-Other'],
      response: { data: 1, status: 200, statusText: 'OK', headers: [] },
    };
    expect(() => hydrate(browser, { keel: 1, entries: [entry] })).toThrow(RangeError);
    expect(() => hydrate(browser, { keel: 1, entries: [entry] })).toThrow(
      /state\.entries\[0\]\.headerNames\[0\]/,
    );
    expect(() =>
      hydrate(browser, { keel: 1, entries: [{ ...entry, headerNames: [3] as never }] }),
    ).toThrow(TypeError);
    // Names of Object.prototype members name no header either (they were taken for one).
    const based = createClient({ baseURL: 'https://api.test', clock: new FakeClock() });
    for (const key of [entry.key, 'GET /x']) {
      for (const name of ['constructor', '__proto__', 'toString']) {
        expect(() =>
          hydrate(based, { keel: 1, entries: [{ ...entry, key, headerNames: [name] }] }),
        ).toThrow(RangeError);
      }
    }
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
    const { fake, browser } = fakeBrowser();
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
    const browser = createClient({
      baseURL: 'https://app.example.com/api',
      fetch: fake.fetch,
      clock: new FakeClock(),
    });
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
      clock: new FakeClock(),
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

    test('an entry expired more than gcTime ago is written stale, kept as if it expired now: a read finds it and reads again', async () => {
      // A page rendered with it hydrates with it (a first render without it would not match the
      // server's markup); it used to be dropped.
      const clock = new FakeClock();
      const fake = createFakeFetch({ handler: () => jsonResponse(2) });
      const client = createClient({
        baseURL: 'https://a.test',
        fetch: fake.fetch,
        clock,
        cache: { ttl: 1000, gcTime: 5000 },
      });
      const changes: string[] = [];
      inspect(client).watchCache((c) => changes.push(c.type));
      const state = {
        keel: 1 as const,
        entries: [
          entry({ key: 'GET /old', age: Number.MAX_VALUE }),
          entry({ key: 'GET /gone', age: 6000 }),
          entry({ key: 'GET /stale', age: 5999 }),
        ],
      };
      expect(hydrate(client, state)).toBe(3);
      expect(changes).toEqual(['write', 'write', 'write']);
      expect(
        inspect(client)
          .cache()
          .map((e) => [e.key, e.fresh]),
      ).toEqual([
        ['GET /old', false],
        ['GET /gone', false],
        ['GET /stale', false],
      ]);
      // Kept gcTime from its arrival, then collected, as an entry that expired then.
      await clock.advance(4990);
      expect(client.getCached('GET /old')?.data).toBe(1);
      await clock.advance(20);
      expect(client.getCached('GET /old')).toBeUndefined();
      // Read before that: found, stale, so read again.
      hydrate(client, { keel: 1, entries: [entry({ key: 'GET /gone', age: 60_000 })] });
      expect(client.getCached('GET /gone')?.data).toBe(1);
      expect((await client.get('/gone')).data).toBe(2);
      expect(fake.calls).toHaveLength(1);
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
    const browser = createClient({
      baseURL: 'https://app.example.com/api/',
      fetch: fake.fetch,
      clock: new FakeClock(),
    });
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

  test('headers no Headers can be made of are a TypeError naming the entry, at dehydrate', () => {
    // A bare "Headers constructor: Argument 1 could not be converted" named no entry.
    const server = createClient({ baseURL: base });
    server.setCached('GET /h', { data: 1, headers: 'x-total: 2' as unknown as Headers } as never);
    expect(() => dehydrate(server)).toThrow(TypeError);
    expect(() => dehydrate(server)).toThrow(
      /^keel: `dehydrate: the entry GET \/h\.response\.headers` must be a Headers, a plain object of header strings or \[name, value\] pairs, got "x-total: 2"$/,
    );
  });

  // Chaos monkey (test/chaos/pipeline.chaos.test.ts): dehydrate handed over an entry written by
  // hand under a POST request's key, and hydrate refused the whole state (no entry written).
  test('an entry written by hand under a key no GET request has is refused at dehydrate, naming it', () => {
    const server = createClient({ baseURL: base });
    const response = { data: 1, status: 200, statusText: '', headers: new Headers() };
    server.setCached(server.resolve('POST', '/x', { body: { n: 1 } }), response);
    expect(() => dehydrate(server)).toThrow(RangeError);
    expect(() => dehydrate(server)).toThrow(/POST \/x.*key of a GET request/);
    // What dehydrate hands over, hydrate takes.
    server.setCached(server.resolve('POST', '/x', { body: { n: 1 } }), undefined);
    server.setCached('GET /y', response);
    expect(hydrate(createClient({ baseURL: base }), dehydrate(server))).toBe(1);
  });
});

describe('entries carry when they were stored, not only their age', () => {
  // The server and the browser on one clock (as NTP keeps them), each its own FakeClock.
  const T = Date.UTC(2026, 0, 1);
  const served = (handler: () => unknown) =>
    createFakeFetch({ handler: () => Response.json(handler()) });

  async function stateAt(clock: FakeClock, data: string): Promise<DehydratedState> {
    const server = createClient({
      baseURL: 'https://api.internal/api',
      fetch: served(() => data).fetch,
      clock,
    });
    await server.get('/todos');
    await clock.advance(100);
    return JSON.parse(JSON.stringify(dehydrate(server)));
  }

  test('dehydrate writes the time each entry was stored, on its clock', async () => {
    const state = await stateAt(new FakeClock(T), 'server');
    expect(state.entries[0]).toMatchObject({ storedAt: T, age: 100 });
  });

  test('a state made before the browser last read the key does not replace that read', async () => {
    // The server renders at T (the state made at T + 100); the page's JavaScript arrives late,
    // after the browser (a client kept across navigations) has read the key again at T + 1000.
    const state = await stateAt(new FakeClock(T), 'old');
    const clock = new FakeClock(T + 1000);
    const browser = createClient({
      baseURL: 'https://app.example.com/api',
      fetch: served(() => 'new').fetch,
      clock,
    });
    await browser.get('/todos');
    await clock.advance(4000);
    // Counted from its age (100 ms) the entry would look stored at T + 4900, newer than the read.
    expect(hydrate(browser, state)).toBe(0);
    expect(browser.getCached(browser.resolve('GET', '/todos').key)?.data).toBe('new');
  });

  test('a page a CDN kept for a minute hands over data a minute old: stale, read again', async () => {
    const state = await stateAt(new FakeClock(T), 'cached page');
    const fake = served(() => 'now');
    const clock = new FakeClock(T + 60_000);
    const browser = createClient({
      baseURL: 'https://app.example.com/api',
      fetch: fake.fetch,
      clock,
    });
    expect(hydrate(browser, state)).toBe(1);
    expect(inspect(browser).cache()[0]).toMatchObject({ storedAt: T, fresh: false });
    // Stale-while-revalidate: the cached page's data answers, and a refetch goes out.
    await browser.get('/todos');
    expect(fake.calls).toHaveLength(1);
  });

  test('a server clock ahead of the browser never makes an entry newer than its age says', async () => {
    // One hour ahead: counted by its stored time the entry would be fresh for an hour more and
    // newer than anything the browser reads in that hour.
    const state = await stateAt(new FakeClock(T + 3_600_000), 'server');
    const clock = new FakeClock(T + 100);
    const fake = served(() => 'browser');
    const browser = createClient({
      baseURL: 'https://app.example.com/api',
      fetch: fake.fetch,
      clock,
    });
    expect(hydrate(browser, state)).toBe(1);
    // Stored 100 ms ago (its age), as the time in transit is unknown: 29.9 s of the ttl left.
    expect(inspect(browser).cache()[0]).toMatchObject({ storedAt: T });
    await clock.advance(30_000);
    await browser.get('/todos');
    expect(fake.calls).toHaveLength(1);
  });

  test('a server clock behind the browser makes an entry older: it is read again, never kept fresh', async () => {
    const state = await stateAt(new FakeClock(T - 20_000), 'server');
    const fake = served(() => 'browser');
    const clock = new FakeClock(T + 100);
    const browser = createClient({
      baseURL: 'https://app.example.com/api',
      fetch: fake.fetch,
      clock,
    });
    expect(hydrate(browser, state)).toBe(1);
    expect(inspect(browser).cache()[0]).toMatchObject({ storedAt: T - 20_000 });
    await clock.advance(10_000);
    await browser.get('/todos');
    expect(fake.calls).toHaveLength(1);
  });

  test('an entry without storedAt (a state from before it) is read by its age, as it was', async () => {
    const state = await stateAt(new FakeClock(T), 'server');
    const { storedAt: _, ...entry } = state.entries[0]!;
    const clock = new FakeClock(T + 60_000);
    const browser = createClient({ baseURL: 'https://app.example.com/api', clock });
    expect(hydrate(browser, { keel: 1, entries: [entry] })).toBe(1);
    expect(inspect(browser).cache()[0]).toMatchObject({ storedAt: T + 60_000 - 100 });
  });

  test('an entry hydrated with an age longer than the clock has run does not stop dehydrate', async () => {
    // Its stored time is before the clock's epoch: dehydrate wrote it, then refused it as
    // hydrate would (`storedAt` must be >= 0), throwing for the whole client, every entry lost.
    const state = await stateAt(new FakeClock(T), 'server');
    const clock = new FakeClock(50); // a clock that started 50 ms ago
    const relay = createClient({ baseURL: 'https://app.example.com/api', clock });
    expect(hydrate(relay, { keel: 1, entries: [{ ...state.entries[0]!, age: 10_000 }] })).toBe(1);
    const out = dehydrate(relay);
    expect(out.entries[0]).toMatchObject({ key: state.entries[0]!.key, age: 10_000 });
    // Without a stored time it is read by its age alone, as a state from before storedAt was.
    expect(out.entries[0]!.storedAt).toBeUndefined();
    const next = createClient({ baseURL: 'https://app.example.com/api', clock: new FakeClock(T) });
    expect(hydrate(next, JSON.parse(JSON.stringify(out)))).toBe(1);
  });

  test.each([-1, Number.NaN, '1', null])('storedAt %j is refused, naming it', async (storedAt) => {
    const state = await stateAt(new FakeClock(T), 'server');
    const browser = createClient({ baseURL: 'https://app.example.com/api' });
    const entry = { ...state.entries[0]!, storedAt } as unknown as DehydratedEntry;
    expect(() => hydrate(browser, { keel: 1, entries: [entry] })).toThrow(
      /^keel: `state\.entries\[0\]\.storedAt` must be a finite non-negative number of ms/,
    );
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

  test('thousands of distinct keys hydrated, evicted or cleared: the records stay bounded', async () => {
    // A key per second, each fresh for 30 s: the records left are those of keys the cache holds
    // and of arrivals still fresh (about 30), and at most as many again between two prunes.
    const clock = new FakeClock(1_000_000);
    const client = createClient({ baseURL: 'https://api.test', clock, cache: { maxEntries: 10 } });
    for (let i = 0; i < 5000; i++) {
      expect(hydrate(client, { keel: 1, entries: [entry(i)] })).toBe(1);
      expect(arrivalCount(client)).toBeLessThanOrEqual(100);
      if (i % 1000 === 999) client.clearCache();
      await clock.advance(1000);
    }
    expect(debugOf(client).cacheSize).toBeLessThanOrEqual(10);
  });

  test('past 10,000 records the oldest go, whatever they keep: the records never exceed 20,000', () => {
    const client = createClient({ baseURL: 'https://api.test', cache: { maxEntries: 10 } });
    for (let i = 0; i < 25_000; i++) hydrate(client, { keel: 1, entries: [entry(i)] });
    expect(arrivalCount(client)).toBeLessThanOrEqual(20_000);
    expect(arrivalCount(client)).toBeGreaterThanOrEqual(10_000);
  });

  // The records of keys with no entry were pruned once records outnumbered twice the entries:
  // after an invalidation or a clear (no entry left), the second repeat of a page state of 33
  // keys pruned them, and the third wrote the data from before the mutation (or another user's,
  // after a logout's clearCache) back, fresh.
  test('repeats after an invalidation or a clear never bring the data back, however many keys', async () => {
    const clock = new FakeClock(1_000_000);
    const fake = createFakeFetch({ handler: () => jsonResponse('read') });
    const client = createClient({ baseURL: 'https://api.test', clock, fetch: fake.fetch });
    const text = JSON.stringify({
      keel: 1,
      entries: Array.from({ length: 40 }, (_, i) => entry(i, 'before')),
    });
    expect(hydrate(client, JSON.parse(text))).toBe(40);
    client.invalidate(() => true, { refetch: false });
    for (let i = 0; i < 3; i++) expect(hydrate(client, JSON.parse(text))).toBe(0);
    client.clearCache();
    for (let i = 0; i < 3; i++) expect(hydrate(client, JSON.parse(text))).toBe(0);
    expect((await client.get('/k0')).data).toBe('read');
  });

  // A repeat wrote any key the client held no entry for: after a mutation (or invalidate, or
  // clearCache) removed it, a re-render handing the page state again put the data from before
  // the mutation back, fresh, and reads were answered with it.
  test('the same state handed again after an invalidation or a clear does not bring its data back', async () => {
    const clock = new FakeClock(1_000_000);
    let version = 0;
    const fake = createFakeFetch({ handler: () => jsonResponse(`read ${++version}`) });
    const client = createClient({ baseURL: 'https://api.test', clock, fetch: fake.fetch });
    const state: DehydratedState = { keel: 1, entries: [entry(1, 'server'), entry(2, 'server')] };
    const text = JSON.stringify(state);
    expect(hydrate(client, JSON.parse(text))).toBe(2);
    client.invalidate('/k1', { refetch: false });
    await clock.advance(1000);
    expect(hydrate(client, JSON.parse(text))).toBe(0);
    expect(client.getCached('GET /k1')).toBeUndefined();
    expect((await client.get('/k1')).data).toBe('read 1');
    client.clearCache();
    expect(hydrate(client, JSON.parse(text))).toBe(0);
    expect((await client.get('/k2')).data).toBe('read 2');
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
