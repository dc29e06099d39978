import { describe, expect, test } from 'vitest';
import {
  type ClientOptions,
  createClient,
  type HttpMethod,
  hydrate,
  isCancelledError,
  ParseError,
  type RequestOptions,
} from '../src/index';
import { debugOf, flush, jsonResponse, makeClient, settle } from './helpers';

const fetch = async () => new Response('');

/** Calls `run` and checks it returns a rejected CancellablePromise without throwing or fetching. */
async function rejection(run: (t: ReturnType<typeof makeClient>) => Promise<unknown>) {
  const t = makeClient({}, { handler: () => new Response('ok') });
  let p: Promise<unknown> | undefined;
  expect(() => {
    p = run(t);
  }).not.toThrow();
  expect(typeof (p as { cancel?: unknown }).cancel).toBe('function');
  const outcome = await settle(p!);
  expect(outcome.state).toBe('rejected');
  await flush();
  expect(t.fake.calls).toHaveLength(0);
  expect(debugOf(t.client)).toMatchObject({ flights: 0, inflight: 0 });
  expect(t.clock.live).toBe(0);
  expect(t.of('request')).toHaveLength(0);
  expect(t.of('error')).toHaveLength(0);
  return (outcome as { reason: unknown }).reason;
}

describe('bad input: per request, a rejected promise naming the problem', () => {
  test('invalid URL', async () => {
    const noBase = createClient({ fetch });
    await expect(noBase.get('/relative')).rejects.toThrow(RangeError);
    await expect(noBase.get('/relative')).rejects.toThrow(/relative/);
    await expect(noBase.get('http://')).rejects.toThrow(RangeError);
    await expect(noBase.get('http://exa mple.com/')).rejects.toThrow(/URL/);
    expect(await rejection((t) => t.client.get(42 as unknown as string))).toBeInstanceOf(TypeError);
    expect(await rejection((t) => t.client.get('/x', { baseURL: 'not-absolute' }))).toBeInstanceOf(
      RangeError,
    );
    const t = makeClient();
    const queried = await settle(t.client.get('/x', { baseURL: 'https://a.test/v1#top' }));
    expect((queried as { reason: unknown }).reason).toBeInstanceOf(RangeError);
    expect(t.fake.calls).toHaveLength(0);
  });

  test.each<[string, RequestOptions, RegExp]>([
    ['negative ttl', { cache: { ttl: -1 } }, /ttl/],
    ['NaN ttl', { cache: { ttl: Number.NaN } }, /ttl/],
    ['non-numeric ttl', { cache: { ttl: 'soon' as never } }, /ttl/],
    ['negative attempts', { retry: { attempts: -2 } }, /attempts/],
    ['zero attempts', { retry: { attempts: 0 } }, /attempts/],
    ['non-numeric attempts', { retry: { attempts: 'many' as never } }, /attempts/],
    ['negative timeout', { timeout: -5 }, /timeout/],
    ['infinite timeout', { timeout: Number.POSITIVE_INFINITY }, /timeout/],
    ['non-numeric timeout', { timeout: '5s' as never }, /timeout/],
    ['negative baseDelay', { retry: { baseDelay: -1 } }, /baseDelay/],
    ['bad strategy', { cache: { strategy: 'x' as never } }, /strategy/],
    ['bad params', { params: 'a=1' as never }, /params/],
    ['bad headers', { headers: 'x' as never }, /headers/],
    ['null headers', { headers: null as never }, /headers/],
    ['false headers', { headers: false as never }, /headers/],
    ['empty-string headers', { headers: '' as never }, /headers/],
    ['bad tags', { tags: 'x' as never }, /tags/],
    ['bad priority', { priority: 'urgent' as never }, /priority/],
    ['bad cache option', { cache: 5 as never }, /cache/],
    ['bad retry option', { retry: 'x' as never }, /retry/],
  ])('%s', async (_name, options, message) => {
    const err = await rejection((t) => t.client.get('/x', options));
    expect(err instanceof RangeError || err instanceof TypeError).toBe(true);
    expect((err as Error).message).toMatch(message);
  });

  test('non-numbers are TypeErrors, out-of-range numbers RangeErrors', async () => {
    expect(await rejection((t) => t.client.get('/x', { timeout: '5' as never }))).toBeInstanceOf(
      TypeError,
    );
    expect(await rejection((t) => t.client.get('/x', { timeout: -5 }))).toBeInstanceOf(RangeError);
    expect(await rejection((t) => t.client.get('/x', { cache: { ttl: -1 } }))).toBeInstanceOf(
      RangeError,
    );
    expect(await rejection((t) => t.client.get('/x', { retry: { attempts: 0 } }))).toBeInstanceOf(
      RangeError,
    );
  });

  test('unknown method', async () => {
    const err = await rejection((t) => t.client.request('TRACE' as HttpMethod, '/x'));
    expect(err).toBeInstanceOf(RangeError);
    expect((err as Error).message).toBe(
      "keel: `method` must be one of 'GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS', got \"TRACE\"",
    );
    const wrongType = await rejection((t) => t.client.request(7 as never, '/x'));
    expect(wrongType).toBeInstanceOf(TypeError);
  });

  test('the object form of request() is gone: a TypeError naming `method`', async () => {
    const err = await rejection((t) =>
      t.client.request({ method: 'GET', url: '/x' } as never, undefined as never),
    );
    expect(err).toBeInstanceOf(TypeError);
    expect((err as Error).message).toMatch(/^keel: `method` must be one of .*, got an object$/);
  });

  test('a body that cannot be serialized: BigInt', async () => {
    const err = await rejection((t) => t.client.post('/x', { n: 1n }));
    expect(err).toBeInstanceOf(TypeError);
    expect((err as Error).message).toMatch(/body/);
  });

  test('a body that cannot be serialized: a cycle', async () => {
    const cyclic: Record<string, unknown> = { a: 1 };
    cyclic.self = cyclic;
    const err = await rejection((t) => t.client.put('/x', cyclic));
    expect(err).toBeInstanceOf(TypeError);
    expect((err as Error).message).toMatch(/body/);
  });

  test('a string body declared as JSON that is not JSON', async () => {
    const err = await rejection((t) =>
      t.client.post('/x', '{"a":', { headers: { 'Content-Type': 'application/json' } }),
    );
    expect(err).toBeInstanceOf(RangeError);
    expect((err as Error).message).toMatch(/^keel: `body` must be JSON text/);
    // valid JSON text, or a non-JSON content type, is sent as is
    const t = makeClient({}, { handler: () => new Response('') });
    await t.client.post('/x', '{"a":1}', { headers: { 'content-type': 'application/json' } });
    await t.client.post('/x', '{"a":', { headers: { 'content-type': 'text/plain' } });
    expect(t.fake.calls.map((c) => c.body)).toEqual(['{"a":1}', '{"a":']);
  });

  test('a bad cache option on a mutation is reported too', async () => {
    expect(await rejection((t) => t.client.post('/x', 1, { cache: { ttl: -1 } }))).toBeInstanceOf(
      RangeError,
    );
  });

  test('a signal that is not an AbortSignal', async () => {
    const err = await rejection((t) => t.client.get('/x', { signal: {} as AbortSignal }));
    expect(err).toBeInstanceOf(TypeError);
    expect((err as Error).message).toMatch(/signal/);
  });

  test('a signal whose `aborted` getter throws: a rejection with that error, never a throw', async () => {
    const boom = new Error('aborted getter');
    const signal = {
      addEventListener() {},
      removeEventListener() {},
      get aborted(): boolean {
        throw boom;
      },
    } as unknown as AbortSignal;
    expect(await rejection((t) => t.client.get('/x', { signal }))).toBe(boom);
  });

  test('a signal whose `reason` getter throws as it aborts: a rejection with that error, nothing left', async () => {
    // The abort listener threw: an uncaught exception, and the caller's promise pending for ever.
    const boom = new Error('reason getter');
    const uncaught: unknown[] = [];
    const onUncaught = (e: unknown) => uncaught.push(e);
    process.on('uncaughtException', onUncaught);
    try {
      const t = makeClient();
      const owner = settle(t.client.get('/x', { signal: hostileSignal(boom) }));
      const joiner = settle(t.client.get('/x', { signal: hostileSignal(boom, true) }));
      const ac = new AbortController();
      const other = settle(t.client.get('/x', { signal: ac.signal }));
      for (const s of signals) s.abort();
      await flush();
      expect(await owner).toMatchObject({ state: 'rejected', reason: boom });
      expect(await joiner).toMatchObject({ state: 'rejected', reason: boom });
      // The last caller's signal is a plain one: the flight ends cancelled.
      ac.abort();
      expect(await other).toMatchObject({ state: 'rejected' });
      expect(isCancelledError(((await other) as { reason: unknown }).reason)).toBe(true);
      expect(debugOf(t.client)).toMatchObject({ flights: 0, inflight: 0 });
      expect(t.fake.calls[0]!.signal?.aborted).toBe(true);
    } finally {
      process.off('uncaughtException', onUncaught);
      signals.length = 0;
    }
    expect(uncaught).toEqual([]);
  });

  test('a signal whose addEventListener throws: a rejection with that error, nothing left behind', async () => {
    const boom = new Error('addEventListener');
    const signal = {
      aborted: false,
      addEventListener() {
        throw boom;
      },
      removeEventListener() {},
    } as unknown as AbortSignal;
    // As the owner of a flight: it was left in the dedup map, never flown, and every later
    // request of the key joined it and waited for ever.
    expect(await rejection((t) => t.client.get('/x', { signal }))).toBe(boom);
    const t = makeClient({ retry: { attempts: 1 } }, { handler: () => new Response('ok') });
    expect(await settle(t.client.get('/x', { signal }))).toMatchObject({ reason: boom });
    expect((await t.client.get('/x')).data).toBe('ok');
    // As a joiner: it stayed attached, and the flight's answer was an unhandled rejection.
    const u = makeClient({ retry: { attempts: 1 } });
    const owner = settle(u.client.get('/y'));
    expect(await settle(u.client.get('/y', { signal }))).toMatchObject({ reason: boom });
    u.fake.calls[0]!.respond(new Response('', { status: 500 }));
    expect(await owner).toMatchObject({ state: 'rejected' });
    expect(u.of('dedup')).toHaveLength(0);
    expect(debugOf(u.client)).toMatchObject({ flights: 0, inflight: 0 });
  });

  test('a signal that throws on the probe of a half-open circuit leaves the circuit free', async () => {
    const signal = {
      aborted: false,
      addEventListener() {
        throw new Error('addEventListener');
      },
      removeEventListener() {},
    } as unknown as AbortSignal;
    const t = makeClient(
      { retry: { attempts: 1 }, circuitBreaker: { failureThreshold: 1, resetTimeout: 100 } },
      { handler: (call) => new Response('', { status: call.index === 0 ? 500 : 200 }) },
    );
    await settle(t.client.get('/z'));
    expect(t.client.circuitBreaker().status('GET', '/z').state).toBe('open');
    await t.clock.advance(100);
    await settle(t.client.get('/z', { signal }));
    // It was admitted as the probe and never sent: the circuit stayed half-open with its probe
    // "in flight", refusing every later request of the endpoint (another query, another key).
    expect((await settle(t.client.get('/z?page=2'))).state).toBe('fulfilled');
    expect(t.client.circuitBreaker().status('GET', '/z').state).toBe('closed');
  });

  test('a body on GET', async () => {
    expect(await rejection((t) => t.client.get('/x', { body: { a: 1 } }))).toBeInstanceOf(
      RangeError,
    );
  });

  test('a JSON content type with a malformed body is a ParseError; nothing left pending', async () => {
    const t = makeClient(
      { timeout: 1000 },
      {
        handler: () =>
          new Response('not json', { headers: { 'content-type': 'application/json' } }),
      },
    );
    await expect(t.client.get('/m')).rejects.toBeInstanceOf(ParseError);
    await flush();
    expect(debugOf(t.client)).toMatchObject({ flights: 0, inflight: 0 });
    expect(t.clock.live).toBe(0);
  });
});

describe('bad input: createClient throws RangeError / TypeError naming the option', () => {
  test.each<[string, ClientOptions, ErrorConstructor, RegExp]>([
    ['negative ttl', { cache: { ttl: -1 } }, RangeError, /ttl/],
    ['non-numeric ttl', { cache: { ttl: 'x' as never } }, TypeError, /ttl/],
    ['negative attempts', { retry: { attempts: -1 } }, RangeError, /attempts/],
    ['non-numeric attempts', { retry: { attempts: 'x' as never } }, TypeError, /attempts/],
    ['negative timeout', { timeout: -1 }, RangeError, /timeout/],
    ['non-numeric timeout', { timeout: 'x' as never }, TypeError, /timeout/],
    ['relative baseURL', { baseURL: 'api' }, RangeError, /`baseURL`/],
    ['non-string baseURL', { baseURL: 5 as never }, TypeError, /`baseURL`/],
    // Joined as text, `/users` went into the query (`/v1?k=1/users`) or the fragment: every
    // request fetched `/v1`, and under one key (get('/posts') answered with /users' response).
    ['baseURL with a query', { baseURL: 'https://a.test/v1?k=1' }, RangeError, /`baseURL`.*query/],
    ['baseURL with a fragment', { baseURL: 'https://a.test/v1#top' }, RangeError, /`baseURL`/],
    ['baseURL with an empty query', { baseURL: 'https://a.test/v1?' }, RangeError, /`baseURL`/],
    ['bad fetch', { fetch: 1 as never }, TypeError, /fetch/],
  ])('%s', (_name, options, type, message) => {
    expect(() => createClient({ fetch, ...options })).toThrow(type);
    expect(() => createClient({ fetch, ...options })).toThrow(message);
  });
});

describe('bad input: other entry points', () => {
  test('on() with a non-function listener', () => {
    expect(() => createClient({ fetch }).on('request', 5 as never)).toThrow(TypeError);
  });

  test('subscribe() with bad arguments', () => {
    const client = createClient({ fetch });
    expect(() => client.subscribe(5 as never, () => {})).toThrow(TypeError);
    expect(() => client.subscribe('GET https://a.test/k', null as never)).toThrow(TypeError);
  });

  test('invalidate() with a bad target', () => {
    const client = createClient({ fetch });
    expect(() => client.invalidate(5 as never)).toThrow(TypeError);
    expect(() => client.invalidate([1] as never)).toThrow(TypeError);
  });

  test('invalidate() with bad options is a TypeError naming them; nothing is removed or refetched', async () => {
    // `{ refetch: 'no' }` was truthy: the watched entry was removed and refetched.
    const t = makeClient({}, { handler: () => jsonResponse({ ok: true }) });
    await t.client.get('/x');
    const key = t.client.resolve('GET', '/x').key;
    const off = t.client.subscribe(key, () => {});
    expect(() => t.client.invalidate('/x', { refetch: 'no' as never })).toThrow(
      new TypeError('keel: `refetch` must be true or false, got "no"'),
    );
    expect(() => t.client.invalidate('/x', { refetch: 0 as never })).toThrow(TypeError);
    await flush();
    expect(t.client.getCached(key)).toBeDefined();
    expect(t.fake.calls).toHaveLength(1);
    // Absent and undefined are the default (refetch).
    expect(t.client.invalidate('/x', { refetch: undefined })).toEqual([key]);
    await flush();
    expect(t.fake.calls).toHaveLength(2);
    off();
  });

  test('an absolute target that is no valid URL is a RangeError naming it', () => {
    const client = createClient({ fetch });
    for (const bad of ['https://', 'http://[::1', 'https://a b.test/x']) {
      expect(() => client.invalidate(bad)).toThrow(RangeError);
      expect(() => client.invalidate(bad)).toThrow(`keel: \`target\` must be`);
      expect(() => client.fetchingKeys(bad)).toThrow(/`target`/);
    }
  });

  test('hydrate with holes in `entries` is a TypeError naming the entry', () => {
    const client = createClient({ fetch });
    const entry = {
      key: 'GET https://a.test/x',
      tags: [],
      age: 0,
      ttl: 1000,
      response: { data: 1, status: 200, statusText: 'OK', headers: [] },
    };
    // biome-ignore lint/suspicious/noSparseArray: the hole is the bad input
    const entries = [, entry];
    expect(() => hydrate(client, { keel: 1, entries } as never)).toThrow(
      'keel: `state.entries[0]` must be an object, got undefined',
    );
    expect(client.getCached(entry.key)).toBeUndefined();
  });
});

describe('bad input: null is not "absent" in the retry and cache options', () => {
  // `null` is a value a caller wrote; reading it as the default hides a bug (a config loaded from
  // JSON with a field set to null). Every other option block already refuses it.
  test.each([
    ['retry.attempts', { retry: { attempts: null } }],
    ['retry.baseDelay', { retry: { baseDelay: null } }],
    ['retry.jitter', { retry: { jitter: null } }],
    ['retry.retryOn', { retry: { retryOn: null } }],
    ['cache.ttl', { cache: { ttl: null } }],
    ['cache.strategy', { cache: { strategy: null } }],
    ['cache.enabled', { cache: { enabled: null } }],
    ['cache.gcTime', { cache: { gcTime: null } }],
    ['cache.maxEntries', { cache: { maxEntries: null } }],
  ])('createClient with %s: null is a TypeError naming it', (name, options) => {
    expect(() => createClient({ fetch, ...(options as unknown as ClientOptions) })).toThrow(
      TypeError,
    );
    expect(() => createClient({ fetch, ...(options as unknown as ClientOptions) })).toThrow(name);
  });

  test.each([
    ['retry.attempts', { retry: { attempts: null } }],
    ['cache.ttl', { cache: { ttl: null } }],
    ['cache.strategy', { cache: { strategy: null } }],
  ])('a request with %s: null rejects with a TypeError naming it', async (name, options) => {
    const reason = await rejection((t) => t.client.get('/x', options as unknown as RequestOptions));
    expect(reason).toBeInstanceOf(TypeError);
    expect(String((reason as Error).message)).toContain(name);
  });
});

/** Controllers of the signals hostileSignal made, aborted by the test. */
const signals: AbortController[] = [];

/** A real AbortSignal whose `reason` getter throws `error` (once aborted, or always). */
function hostileSignal(error: Error, always = false): AbortSignal {
  const controller = new AbortController();
  signals.push(controller);
  const { signal } = controller;
  Object.defineProperty(signal, 'reason', {
    get() {
      if (always || signal.aborted) throw error;
      return undefined;
    },
  });
  return signal;
}
