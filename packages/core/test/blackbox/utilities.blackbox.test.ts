// Black-box acceptance tests: Standalone utilities and Errors (spec tables), option defaults.
import { describe, expect, test } from 'vitest';
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
  TimeoutError,
  Tracker,
} from '../../src/index';
import { ManualClock } from './harness';

describe('Standalone utilities (spec table)', () => {
  test('resolveRetryOptions() fills the spec defaults', () => {
    expect(resolveRetryOptions()).toMatchObject({
      attempts: 3,
      baseDelay: 1000,
      maxDelay: 30000,
      backoff: 'exponential',
      jitter: true,
      respectRetryAfter: true,
    });
    expect(resolveRetryOptions({ attempts: 5 })).toMatchObject({ attempts: 5, baseDelay: 1000 });
  });

  test('computeDelay: exponential growth, fixed, maxDelay cap, jitter within [d/2, d] (README formula)', () => {
    const base = { baseDelay: 100, maxDelay: 1000, jitter: false } as const;
    expect(
      [1, 2, 3, 4, 5].map((attempts) =>
        computeDelay({ ...base, attempts, backoff: 'exponential' }),
      ),
    ).toEqual([100, 200, 400, 800, 1000]);
    expect(
      [1, 2, 3].map((attempts) => computeDelay({ ...base, attempts, backoff: 'fixed' })),
    ).toEqual([100, 100, 100]);
    for (let i = 0; i < 50; i++) {
      const d = computeDelay({ ...base, attempts: 3, backoff: 'exponential', jitter: true });
      expect(d).toBeGreaterThanOrEqual(200);
      expect(d).toBeLessThanOrEqual(400);
    }
  });

  test('isSuccessStatus: 2xx; isRetriableStatus: 408, 429, 500, 502, 503, 504', () => {
    expect([200, 201, 204, 299].every(isSuccessStatus)).toBe(true);
    expect([199, 300, 404, 500, undefined].some((s) => isSuccessStatus(s))).toBe(false);
    const retriable = [408, 429, 500, 502, 503, 504];
    for (let s = 100; s < 600; s++)
      expect(isRetriableStatus(s), String(s)).toBe(retriable.includes(s));
    expect(isRetriableStatus(undefined)).toBe(false);
  });

  test('parseRetryAfter: seconds or HTTP date to ms; -1 if unparsable', () => {
    expect(parseRetryAfter('3')).toBe(3000);
    expect(parseRetryAfter('0')).toBe(0);
    expect(parseRetryAfter(null)).toBe(-1);
    expect(parseRetryAfter('soon')).toBe(-1);
    const now = Date.UTC(2026, 0, 1, 0, 0, 0);
    expect(parseRetryAfter(new Date(now + 7000).toUTCString(), now)).toBe(7000);
  });

  test('decideRetry({error, options, attempts}) returns a RetryDecision', () => {
    const options = resolveRetryOptions({ jitter: false });
    const e503 = new HttpError({ status: 503 } as never);
    expect(decideRetry({ error: e503, options, attempts: 1 })).toMatchObject({
      retry: true,
      delay: 1000,
    });
    expect(decideRetry({ error: e503, options, attempts: 3 }).retry).toBe(false);
    const e404 = new HttpError({ status: 404 } as never);
    expect(decideRetry({ error: e404, options, attempts: 1 }).retry).toBe(false);
    expect(decideRetry({ error: new CancelledError(), options, attempts: 1 }).retry).toBe(false);
    const withRa = new HttpError({
      status: 429,
      headers: new Headers({ 'retry-after': '2' }),
    } as never);
    expect(decideRetry({ error: withRa, options, attempts: 1 })).toMatchObject({
      retry: true,
      delay: 2000,
    });
  });

  test('buildQuery: arrays repeat the key', () => {
    const q = buildQuery({ a: 1, b: ['x', 'y'], c: true, d: null, e: undefined });
    const sp = new URLSearchParams(q.replace(/^\?/, ''));
    expect(sp.get('a')).toBe('1');
    expect(sp.getAll('b')).toEqual(['x', 'y']);
    expect(sp.get('c')).toBe('true');
    expect(sp.has('d')).toBe(false);
    expect(sp.has('e')).toBe(false);
    // README: the query without its `?`, '' for none.
    expect(buildQuery({ a: [1, 2] })).toBe('a=1&a=2');
    expect(buildQuery({})).toBe('');
  });

  test('resolveURL(url, base?) prepends the base to relative URLs; absolute URLs win', () => {
    expect(resolveURL('/users', 'https://api.test')).toBe('https://api.test/users');
    expect(resolveURL('https://other.test/x', 'https://api.test')).toBe('https://other.test/x');
  });

  test('canonicalizeURL sorts query parameters and is idempotent', () => {
    const a = canonicalizeURL('https://API.test:443/x?b=2&a=1#frag');
    expect(a).toBe(canonicalizeURL('https://api.test/x?a=1&b=2'));
    expect(canonicalizeURL(a)).toBe(a);
  });

  test('canonicalizeURL of a relative URL (as keys write it) stays relative, canonical', () => {
    expect(canonicalizeURL('/users?b=2&a=1#top')).toBe('/users?a=1&b=2');
    expect(canonicalizeURL('/a/./b/../c?x=1')).toBe('/a/c?x=1');
    expect(canonicalizeURL('/a b')).toBe('/a%20b');
    expect(canonicalizeURL('users?b=2&a=1')).toBe('users?a=1&b=2');
    expect(canonicalizeURL('?b=2&a=1')).toBe('?a=1&b=2');
    const a = canonicalizeURL('/users?b=2&a=1');
    expect(canonicalizeURL(a)).toBe(a);
  });

  test('createFingerprint of a relative URL: query order ignored, and the key the client uses', async () => {
    expect(createFingerprint({ method: 'GET', url: '/users?b=2&a=1' })).toBe(
      createFingerprint({ method: 'GET', url: '/users?a=1&b=2' }),
    );
    expect(createFingerprint({ method: 'GET', url: '/users#x' })).toBe(
      createFingerprint({ method: 'get', url: '/users' }),
    );
    const seen: string[] = [];
    const client = createClient({
      baseURL: 'https://api.test',
      fetch: async () => new Response('{}', { headers: { 'content-type': 'application/json' } }),
    });
    client.on('request', (e) => seen.push(e.key));
    await client.get('/users?b=2&a=1');
    expect(seen).toEqual([createFingerprint({ method: 'GET', url: '/users?b=2&a=1' })]);
  });

  test('createFingerprint({method, url, headers?, body?}): query order ignored, method/headers/body matter', () => {
    const k = (o: Parameters<typeof createFingerprint>[0]) => createFingerprint(o);
    expect(k({ method: 'GET', url: 'https://a.test/x?b=2&a=1' })).toBe(
      k({ method: 'GET', url: 'https://a.test/x?a=1&b=2' }),
    );
    expect(k({ method: 'GET', url: 'https://a.test/x' })).not.toBe(
      k({ method: 'HEAD', url: 'https://a.test/x' }),
    );
    expect(k({ method: 'GET', url: 'https://a.test/x', headers: { 'x-t': '1' } })).not.toBe(
      k({ method: 'GET', url: 'https://a.test/x', headers: { 'x-t': '2' } }),
    );
    expect(k({ method: 'POST', url: 'https://a.test/x', body: 'a' })).not.toBe(
      k({ method: 'POST', url: 'https://a.test/x', body: 'b' }),
    );
  });

  test('isAbortError(err) tells whether an error is an abort', () => {
    expect(isAbortError(new CancelledError())).toBe(true);
    expect(isAbortError(new DOMException('x', 'AbortError'))).toBe(true);
    expect(isAbortError(new TimeoutError())).toBe(false);
    expect(isAbortError(new Error('x'))).toBe(false);
    expect(isAbortError(null)).toBe(false);
  });

  test('Deduper coalesces concurrent calls for one key', async () => {
    const d = new Deduper<Promise<number>>();
    let starts = 0;
    const start = () => {
      starts++;
      return Promise.resolve(7);
    };
    const [a, b] = await Promise.all([d.run('k', start), d.run('k', start)]);
    expect([a, b]).toEqual([7, 7]);
    expect(starts).toBe(1);
  });

  test('EventEmitter: on, once, off, emit', () => {
    const em = new EventEmitter<{ ping: number }>();
    const got: string[] = [];
    const l = (n: number) => got.push(`on${n}`);
    em.on('ping', l);
    em.once('ping', (n) => got.push(`once${n}`));
    em.emit('ping', 1);
    em.emit('ping', 2);
    em.off('ping', l);
    em.emit('ping', 3);
    expect(got).toEqual(['on1', 'once1', 'on2']);
  });

  test('EventEmitter: off(event, fn) removes a listener added with once(event, fn) before it fires', () => {
    const em = new EventEmitter<{ ping: number; pong: number }>();
    const got: string[] = [];
    const fn = (n: number) => got.push(`fn${n}`);
    em.once('ping', fn);
    em.once('pong', fn);
    em.off('ping', fn);
    em.emit('ping', 1);
    em.emit('pong', 2);
    expect(got).toEqual(['fn2']);
    // Added both ways: each off removes one registration.
    em.on('ping', fn);
    em.once('ping', fn);
    em.off('ping', fn);
    em.emit('ping', 3);
    em.off('ping', fn);
    em.emit('ping', 4);
    expect(got).toEqual(['fn2', 'fn3']);
  });

  test('Tracker: idle -> pending -> retrying -> success; terminal states are final (spec: Request tracker)', () => {
    const t = new Tracker('GET /x');
    expect(t.state).toBe('idle');
    t.start(0);
    expect(t.state).toBe('pending');
    t.retry();
    expect(t.state).toBe('retrying');
    t.succeed(1);
    expect(t.state).toBe('success');
    t.fail(2, new Error('late'));
    t.cancel(3);
    expect(t.state).toBe('success');
    const c = new Tracker('GET /y');
    c.start(0);
    c.cancel(1);
    expect(c.state).toBe('cancelled');
    const e = new Tracker('GET /z');
    e.start(0);
    e.fail(1, new Error('x'));
    expect(e.state).toBe('error');
  });

  test('CacheStore(defaultTtl?) is constructible', () => {
    expect(new CacheStore()).toBeInstanceOf(CacheStore);
    expect(new CacheStore(1000)).toBeInstanceOf(CacheStore);
  });

  test('CacheStore entries are CacheEntry {key, path, response, spec, tags, storedAt, expiresAt, subscribers}', () => {
    const clock = new ManualClock();
    const store = new CacheStore(1000, { clock });
    const response = { data: 1, status: 200, statusText: 'OK', headers: new Headers() };
    const entry = store.set('GET https://api.test/a?x=1', response, { tags: ['t'] });
    expect(entry).toMatchObject({
      key: 'GET https://api.test/a?x=1',
      path: '/a',
      response,
      spec: undefined,
      tags: ['t'],
      storedAt: clock.now(),
      expiresAt: clock.now() + 1000,
    });
    // subscribers: the set of CacheSubscribers interested in the key, kept up to date.
    expect(entry.subscribers).toBeInstanceOf(Set);
    expect(entry.subscribers.size).toBe(0);
    const one = () => {};
    const two = () => {};
    const offOne = store.subscribe('GET https://api.test/a?x=1', one);
    const offTwo = store.subscribe((key) => key.startsWith('GET '), two);
    store.subscribe('GET https://api.test/other', () => {});
    expect([...store.get('GET https://api.test/a?x=1')!.subscribers]).toEqual([one, two]);
    offOne();
    offTwo();
    expect(entry.subscribers.size).toBe(0);
  });
});

describe('Errors (spec: Errors table)', () => {
  test('HttpError {status, statusText, headers}; TimeoutError; CancelledError; CircuitOpenError {endpoint}', () => {
    const h = new HttpError({ status: 500, statusText: 'x', headers: new Headers() } as never);
    expect(h).toBeInstanceOf(Error);
    expect(h.status).toBe(500);
    expect(h.statusText).toBe('x');
    expect(h.headers).toBeInstanceOf(Headers);
    expect(new TimeoutError()).toBeInstanceOf(Error);
    expect(new CancelledError()).toBeInstanceOf(Error);
    expect(new CircuitOpenError()).toBeInstanceOf(Error);
    expect(h.name).toBe('HttpError');
    expect(new TimeoutError().name).toBe('TimeoutError');
    expect(new CancelledError().name).toBe('CancelledError');
    expect(new CircuitOpenError().name).toBe('CircuitOpenError');
  });

  test('CircuitOpenError.endpoint is a string (`METHOD pathname`) however it is built', () => {
    expect(new CircuitOpenError().endpoint).toBe('');
    expect(new CircuitOpenError('GET /users').endpoint).toBe('GET /users');
    // The endpoint alone names no request: method and url are '', the message has no suffix.
    expect(new CircuitOpenError('GET /users')).toMatchObject({
      message: 'Circuit open for GET /users',
      method: '',
      url: '',
    });
    expect(new CircuitOpenError(undefined, { endpoint: 'GET /a' }).endpoint).toBe('GET /a');
    const request = { method: 'GET', url: 'https://api.test/a?x=1' };
    expect(new CircuitOpenError(request, { endpoint: 'GET /a' })).toMatchObject({
      endpoint: 'GET /a',
      method: 'GET',
      url: 'https://api.test/a?x=1',
    });
  });
});

describe('Option validation (issue #2 Bad input)', () => {
  test.each([
    [{ timeout: -1 }, RangeError],
    [{ timeout: '5' }, TypeError],
    [{ retry: { attempts: 0 } }, RangeError],
    [{ cache: { ttl: Number.NaN } }, RangeError],
    [{ cache: { ttl: -5 } }, RangeError],
    [{ circuitBreaker: { failureThreshold: 0 } }, RangeError],
    [{ scheduler: { concurrency: 0 } }, RangeError],
    [{ scheduler: { concurrency: 1.5 } }, RangeError],
    [{ scheduler: { rateLimit: { requests: 0, interval: 10 } } }, RangeError],
    [{ scheduler: { rateLimit: { requests: 1, interval: 0 } } }, RangeError],
    [{ scheduler: { hosts: { 'a.test': 0 } } }, RangeError],
    [{ adaptive: { rateLimitRatio: 2 } }, RangeError],
    [{ adaptive: { latencyWindow: 3 } }, RangeError],
    [{ adaptive: { outcomeWindow: 1 } }, RangeError],
    [{ adaptive: { lowLatencyMs: 3000, highLatencyMs: 2000 } }, RangeError],
    [{ adaptive: { minConcurrency: 0 } }, RangeError],
  ])('createClient(%j) throws %o', (options, ErrorClass) => {
    expect(() => createClient({ baseURL: 'https://x.test', ...(options as object) })).toThrow(
      ErrorClass,
    );
  });

  test('per-request problems reject the returned promise (unknown method, bad timeout)', async () => {
    const client = createClient({
      baseURL: 'https://x.test',
      fetch: (() => Promise.resolve(new Response('{}'))) as never,
    });
    await expect(client.request('BREW' as never, '/x')).rejects.toBeInstanceOf(RangeError);
    await expect(client.get('/x', { timeout: -1 })).rejects.toBeInstanceOf(RangeError);
    const cyc: Record<string, unknown> = {};
    cyc.self = cyc;
    await expect(client.post('/x', cyc)).rejects.toBeInstanceOf(TypeError);
  });
});
