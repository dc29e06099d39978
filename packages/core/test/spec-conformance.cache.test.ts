/**
 * Spec conformance, black box (see spec-conformance.test.ts): invalidation targets, subscriptions
 * and CacheUpdates, mutation invalidation, the event payloads and rules, entries written by hand
 * (`setCached`), and Versioning 2-3 (no adaptive block, no scheduler), on vitest's fake timers.
 */
import { afterEach, beforeEach, describe, expect, test, vi } from 'vitest';
import {
  type CacheMeta,
  type CacheUpdate,
  type Client,
  type ClientOptions,
  inspect,
} from '../src/index';
import { createTestClient } from './helpers';
import { BASE, record, SCHEDULER_EVENTS } from './spec-fixtures';

function server(options: ClientOptions = {}) {
  const calls: { method: string; url: string }[] = [];
  let n = 0;
  const status = new Map<string, number>();
  const fetch = async (input: RequestInfo | URL, init: RequestInit = {}) => {
    const url = String(input);
    const method = init.method ?? 'GET';
    calls.push({ method, url });
    const s = status.get(new URL(url).pathname) ?? 200;
    return new Response(JSON.stringify({ n: ++n, url }), {
      status: s,
      headers: { 'content-type': 'application/json' },
    });
  };
  const client = createTestClient({ baseURL: BASE, fetch, retry: false, ...options });
  return { client, calls, status };
}

const keyOf = (c: Client, url: string) => c.resolve('GET', url).key;

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe('invalidate', () => {
  test('a string is segment-aware: /users removes /users, /users/<id> and /users?..., not /users-x', async () => {
    const { client: c } = server();
    for (const url of ['/users', '/users/7', '/users/7/posts', '/users?page=2', '/users-x', '/u']) {
      await c.get(url);
    }
    const removed = c.invalidate('/users');
    expect(removed.sort()).toEqual(
      ['/users', '/users/7', '/users/7/posts', '/users?page=2'].map((u) => keyOf(c, u)).sort(),
    );
    expect(c.getCached(keyOf(c, '/users-x'))).toBeDefined();
    expect(c.getCached(keyOf(c, '/u'))).toBeDefined();
    expect(c.getCached(keyOf(c, '/users'))).toBeUndefined();
  });

  test('a trailing slash on the target and on the path', async () => {
    const { client: c } = server();
    await c.get('/users/');
    await c.get('/users/1');
    expect(c.invalidate('/users/').sort()).toEqual(
      [keyOf(c, '/users/'), keyOf(c, '/users/1')].sort(),
    );
  });

  test('an array targets tags (any of them)', async () => {
    const { client: c } = server();
    await c.get('/a', { tags: ['x'] });
    await c.get('/b', { tags: ['y', 'z'] });
    await c.get('/c', { tags: ['w'] });
    await c.get('/d');
    expect(c.invalidate(['x', 'z']).sort()).toEqual([keyOf(c, '/a'), keyOf(c, '/b')].sort());
    expect(c.invalidate([])).toEqual([]);
    expect(c.getCached(keyOf(c, '/c'))).toBeDefined();
  });

  test('a predicate over CacheMeta {key, tags, storedAt, expiresAt}', async () => {
    const { client: c } = server();
    await c.get('/a', { tags: ['t'] });
    await vi.advanceTimersByTimeAsync(10);
    await c.get('/b');
    const metas: CacheMeta[] = [];
    const removed = c.invalidate((meta) => {
      metas.push(meta);
      return meta.tags.includes('t');
    });
    expect(removed).toEqual([keyOf(c, '/a')]);
    const a = metas.find((m) => m.key === keyOf(c, '/a'))!;
    expect(a.tags).toEqual(['t']);
    expect(a.expiresAt - a.storedAt).toBe(30_000);
    const b = metas.find((m) => m.key === keyOf(c, '/b'))!;
    expect(b.storedAt - a.storedAt).toBe(10);
  });

  test('the invalidate event carries {keys, target}; nothing removed, no event', async () => {
    const { client: c } = server();
    await c.get('/a');
    const log = record(c, ['invalidate']);
    expect(c.invalidate('/zzz')).toEqual([]);
    expect(log).toEqual([]);
    c.invalidate('/a');
    expect(log).toEqual([['invalidate', { keys: [keyOf(c, '/a')], target: '/a' }]]);
  });

  test('a removed entry with a subscriber is refetched (coalesced through dedup) and emits revalidate', async () => {
    const { client: c, calls } = server();
    await c.get('/a');
    const updates: CacheUpdate[] = [];
    const stop = c.subscribe(keyOf(c, '/a'), (u) => updates.push(u));
    const stop2 = c.subscribe(keyOf(c, '/a'), () => undefined);
    const log = record(c, ['revalidate', 'request', 'dedup']);
    c.invalidate('/a');
    const joined = c.get('/a'); // joins the refetch
    await vi.advanceTimersByTimeAsync(0);
    expect(calls).toHaveLength(2);
    expect((await joined).data).toMatchObject({ n: 2 });
    expect(log.map(([name]) => name)).toEqual(['request', 'dedup', 'revalidate']);
    expect(log[2]![1]).toMatchObject({ key: keyOf(c, '/a') });
    expect((log[2]![1].response as { data: unknown }).data).toMatchObject({ n: 2 });
    expect(updates.map((u) => u.type)).toEqual(['invalidate', 'revalidate']);
    expect(updates[0]!.response).toBeUndefined();
    expect(updates[1]!.response?.data).toMatchObject({ n: 2 });
    stop();
    stop2();
  });

  test('without subscribers, or with {refetch: false}, nothing is refetched', async () => {
    const { client: c, calls } = server();
    await c.get('/a');
    c.invalidate('/a');
    await c.get('/b');
    const stop = c.subscribe(keyOf(c, '/b'), () => undefined);
    c.invalidate('/b', { refetch: false });
    await vi.advanceTimersByTimeAsync(0);
    expect(calls).toHaveLength(2);
    stop();
  });

  test('interest is reference-counted and cleaned up on unsubscribe', async () => {
    const { client: c, calls } = server();
    await c.get('/a');
    const key = keyOf(c, '/a');
    const s1 = c.subscribe(key, () => undefined);
    const s2 = c.subscribe(key, () => undefined);
    s1();
    c.invalidate('/a');
    await vi.advanceTimersByTimeAsync(0);
    expect(calls).toHaveLength(2); // still wanted by s2
    s2();
    s2(); // a second call changes nothing
    c.invalidate('/a');
    await vi.advanceTimersByTimeAsync(0);
    expect(calls).toHaveLength(2);
  });

  test('a successful mutation invalidates its path and its tags; a failed one does not', async () => {
    const { client: c, status } = server();
    await c.get('/users');
    await c.get('/users/1');
    await c.get('/feed', { tags: ['users'] });
    await c.get('/other');
    const log = record(c, ['request', 'success', 'invalidate']);
    status.set('/users', 500);
    await c.post('/users', { a: 1 }, { tags: ['users'] }).catch(() => undefined);
    expect(c.getCached(keyOf(c, '/users'))).toBeDefined();
    status.delete('/users');
    log.length = 0;
    await c.post('/users', { a: 1 }, { tags: ['users'] });
    expect(log.map(([name]) => name)).toEqual(['request', 'success', 'invalidate']);
    expect((log[2]![1].keys as string[]).sort()).toEqual(
      ['/users', '/users/1', '/feed'].map((u) => keyOf(c, u)).sort(),
    );
    expect(c.getCached(keyOf(c, '/other'))).toBeDefined();
    for (const method of ['PUT', 'PATCH', 'DELETE'] as const) {
      await c.get('/users/1');
      await c.request(method, '/users/1');
      expect(c.getCached(keyOf(c, '/users/1'))).toBeUndefined();
    }
  });
});

describe('events', () => {
  test('request {key, method, url, tracker}; success {key, tracker, response}; error {key, tracker, error}', async () => {
    const { client: c, status } = server();
    const log = record(c, ['request', 'success', 'error']);
    await c.get('/ok?b=2&a=1');
    status.set('/bad', 404);
    await c.delete('/bad').catch(() => undefined);
    expect(log.map(([name]) => name)).toEqual(['request', 'success', 'request', 'error']);
    expect(log[0]![1]).toMatchObject({
      key: keyOf(c, '/ok?a=1&b=2'),
      method: 'GET',
      url: `${BASE}/ok?a=1&b=2`,
    });
    expect(log[0]![1].tracker).toBeDefined();
    expect(log[1]![1]).toMatchObject({ key: keyOf(c, '/ok?a=1&b=2') });
    expect((log[1]![1].response as { status: number }).status).toBe(200);
    expect(log[3]![1]).toMatchObject({ error: expect.objectContaining({ status: 404 }) });
    expect(log[2]![1]).toMatchObject({ method: 'DELETE' });
  });

  test('on() returns an unsubscribe function', async () => {
    const { client: c } = server();
    const seen: unknown[] = [];
    const off = c.on('request', (e) => seen.push(e));
    await c.get('/a', { cache: false });
    off();
    await c.get('/a', { cache: false });
    expect(seen).toHaveLength(1);
  });

  test('rule 1 / Versioning 3: without a scheduler (or enabled: false) no scheduler event is emitted and stats are zero', async () => {
    for (const options of [{}, { scheduler: { enabled: false } }] as ClientOptions[]) {
      const { client: c } = server(options);
      const log = record(c, SCHEDULER_EVENTS);
      await c.get('/a');
      await c.post('/b', {});
      c.scheduler().pauseGroup('g');
      c.scheduler().resumeGroup('g');
      c.cancelGroup('g');
      expect(log).toEqual([]);
      expect(c.scheduler().stats()).toMatchObject({
        active: 0,
        queued: 0,
        delayed: 0,
        completed: 0,
        rejected: 0,
      });
    }
  });

  test('rule 1: with the scheduler on, its events are emitted', async () => {
    const { client: c } = server({ scheduler: {} });
    const log = record(c, SCHEDULER_EVENTS);
    await c.get('/a');
    expect(log.map(([name]) => name)).toEqual([
      'request-queued',
      'request-dequeued',
      'request-started',
    ]);
  });

  test('rule 2: subscribe delivers write, revalidate and invalidate only for accepted keys', async () => {
    const { client: c } = server({ cache: { ttl: 10, strategy: 'stale-while-revalidate' } });
    const updates: string[] = [];
    c.subscribe(
      (key) => key.includes('/a'),
      (u) => updates.push(`${u.type} ${u.key}`),
    );
    await c.get('/a');
    await c.get('/b');
    await vi.advanceTimersByTimeAsync(20);
    await c.get('/a'); // stale: served, refetched
    await vi.advanceTimersByTimeAsync(0);
    c.invalidate('/a', { refetch: false });
    const k = keyOf(c, '/a');
    expect(updates).toEqual([`write ${k}`, `revalidate ${k}`, `invalidate ${k}`]);
  });

  test('Versioning 2: without an adaptive block the controller reports disabled and nothing measured', async () => {
    const { client: c } = server();
    await c.get('/a');
    expect(c.adaptive().snapshot()).toEqual({ enabled: false, endpoints: {} });
    expect(c.adaptive().endpoint('GET', '/a')).toBeUndefined();
    expect(c.adaptive().metrics()).toEqual({
      decisions: 0,
      concurrencyReductions: 0,
      concurrencyRecoveries: 0,
      throttles: 0,
      retryChanges: 0,
    });
    const off = server({ adaptive: { enabled: false } });
    await off.client.get('/a');
    expect(off.client.adaptive().snapshot()).toEqual({ enabled: false, endpoints: {} });
  });
});

describe('intelligence summary', () => {
  test('counts and rates over a scripted mix', async () => {
    const { client: c, status } = server();
    await c.get('/a'); // miss
    await c.get('/a'); // hit
    await Promise.all([c.get('/b'), c.get('/b')]); // miss + dedup
    status.set('/e', 404);
    await c.get('/e').catch(() => undefined); // failure
    const { summary, endpoints } = c.intelligence().snapshot();
    expect(summary).toMatchObject({
      totalRequests: 5,
      cacheHits: 1,
      cacheMisses: 4,
      deduplicated: 1,
      failures: 1,
      activeRequests: 0,
      cacheHitRate: 1 / 5,
      dedupRate: 1 / 5,
      failureRate: 1 / 5,
      circuits: { open: 0, halfOpen: 0, closed: expect.any(Number) },
      circuitRejected: 0,
    });
    const a = endpoints.find((e) => e.path === '/a')!;
    expect(a).toMatchObject({ method: 'GET', requests: 2, cacheHits: 1, successes: 1 });
    expect(a.latency).toEqual({
      avg: expect.any(Number),
      p50: expect.any(Number),
      p95: expect.any(Number),
      samples: 1,
    });
    expect(c.intelligence().endpoint('GET', '/nope')).toBeUndefined();
    c.intelligence().reset();
    expect(c.intelligence().snapshot().summary.totalRequests).toBe(0);
  });

  test('with no request every rate is 0', () => {
    const { client: c } = server();
    expect(c.intelligence().snapshot().summary).toMatchObject({
      totalRequests: 0,
      cacheHitRate: 0,
      dedupRate: 0,
      retryRate: 0,
      failureRate: 0,
      rateLimitRate: 0,
    });
  });
});

describe('entries written by hand (setCached)', () => {
  const response = (data: unknown) => ({
    data,
    status: 200,
    statusText: 'OK',
    headers: new Headers(),
  });

  test('a key-only entry answers a read of that key from memory', async () => {
    const { client: c, calls } = server();
    c.setCached(keyOf(c, '/users'), response(['hand']));
    expect((await c.get('/users')).data).toEqual(['hand']);
    expect(calls).toHaveLength(0);
  });

  test('a key-only entry is invalidated by its path, with no refetch (it has no spec); subscribers hear invalidate', async () => {
    const { client: c, calls } = server();
    const key = keyOf(c, '/users/7');
    c.setCached(key, response(['hand']));
    const updates: string[] = [];
    const stop = c.subscribe(key, (u) => updates.push(u.type));
    expect(c.invalidate('/users')).toEqual([key]);
    await vi.advanceTimersByTimeAsync(0);
    expect(updates).toEqual(['invalidate']);
    expect(calls).toHaveLength(0);
    expect(inspect(c).cache()).toEqual([]);
    stop();
  });

  test('an entry written with its spec is refetched after invalidation when subscribed', async () => {
    const { client: c, calls } = server();
    const spec = c.resolve('GET', '/users/7');
    c.setCached(spec, response(['hand']));
    const updates: string[] = [];
    const stop = c.subscribe(spec.key, (u) => updates.push(u.type));
    c.invalidate('/users');
    await vi.advanceTimersByTimeAsync(0);
    expect(calls).toHaveLength(1);
    expect(updates).toEqual(['invalidate', 'revalidate']);
    stop();
  });

  test('setCached(key, undefined) removes it and tells subscribers; inspect shows no spec for a key-only entry', async () => {
    const { client: c } = server();
    const key = keyOf(c, '/a');
    c.setCached(key, response(1));
    expect(inspect(c).cache()[0]).toMatchObject({ key, path: '/a', spec: undefined, fresh: true });
    const updates: string[] = [];
    c.subscribe(key, (u) => updates.push(u.type));
    c.setCached(key, undefined);
    expect(c.getCached(key)).toBeUndefined();
    expect(updates).toEqual(['invalidate']);
  });

  test('a key-only write over an entry a request filled keeps its spec, tags and ttl', async () => {
    const { client: c, calls } = server();
    await c.get('/a', { cache: { ttl: 100 }, tags: ['t'] });
    const key = keyOf(c, '/a');
    c.setCached(key, response('hand'));
    const [entry] = inspect(c).cache();
    expect(entry).toMatchObject({ key, tags: ['t'] });
    expect(entry!.spec?.key).toBe(key);
    expect(entry!.expiresAt - entry!.storedAt).toBe(100);
    // The spec it kept refetches it after invalidation (tag target) while subscribed.
    const stop = c.subscribe(key, () => undefined);
    expect(c.invalidate(['t'])).toEqual([key]);
    await vi.advanceTimersByTimeAsync(0);
    expect(calls).toHaveLength(2);
    stop();
  });

  test('a key-only entry uses the client ttl', async () => {
    const { client: c, calls } = server({ cache: { ttl: 100 } });
    c.setCached(keyOf(c, '/a'), response(1));
    await vi.advanceTimersByTimeAsync(100);
    await c.get('/a');
    expect(calls).toHaveLength(1);
  });

  test('a key-only entry stale under SWR is served and refetched', async () => {
    const { client: c, calls } = server({
      cache: { ttl: 100, strategy: 'stale-while-revalidate' },
    });
    c.setCached(keyOf(c, '/a'), response('hand'));
    await vi.advanceTimersByTimeAsync(150);
    expect((await c.get('/a')).data).toBe('hand');
    await vi.advanceTimersByTimeAsync(0);
    expect(calls).toHaveLength(1);
    expect((await c.get('/a')).data).toMatchObject({ n: 1 });
  });
});
