/**
 * Spec conformance, black box (see spec-conformance.test.ts): the circuit state table and its
 * rules 1-7, the circuit events, and the CircuitBreakerController, on vitest's fake timers.
 */
import { afterEach, beforeEach, describe, expect, test, vi } from 'vitest';
import {
  CancelledError,
  CircuitOpenError,
  type Client,
  type ClientEventName,
  type ClientOptions,
  isCircuitOpenError,
} from '../src/index';
import { createTestClient } from './helpers';
import { BASE, fakeFetch, json, record } from './spec-fixtures';

/** A server whose status per path the test sets (200 when not set); a `hang` path never answers. */
function backend(options: ClientOptions = {}) {
  const status = new Map<string, number | 'hang'>();
  const f = fakeFetch((call) => {
    const path = new URL(call.url).pathname;
    const s = status.get(path) ?? 200;
    return s === 'hang' ? 'hang' : json({ path }, s);
  });
  const client = createTestClient({ baseURL: BASE, fetch: f.fetch, retry: false, ...options });
  return { client, calls: f.calls, status };
}

const ALL: ClientEventName[] = [
  'request',
  'success',
  'error',
  'retry',
  'cancel',
  'dedup',
  'cache-hit',
  'cache-write',
  'invalidate',
  'revalidate',
  'circuit-open',
  'circuit-half-open',
  'circuit-closed',
  'circuit-rejected',
];

async function fail(c: Client, path: string, times: number) {
  for (let i = 0; i < times; i++) await c.get(path, { cache: false }).catch(() => undefined);
}

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe('circuit state table', () => {
  test('closed -> open after failureThreshold (5) consecutive countable failures; circuit-open {endpoint, method, path}; openedAt set', async () => {
    const { client: c, status } = backend();
    status.set('/a', 503);
    const log = record(c, ['circuit-open']);
    await fail(c, '/a', 4);
    expect(c.circuitBreaker().status('GET', '/a')).toMatchObject({
      endpoint: 'GET /a',
      state: 'closed',
      consecutiveFailures: 4,
      probing: false,
    });
    await fail(c, '/a', 1);
    expect(log).toEqual([['circuit-open', { endpoint: 'GET /a', method: 'GET', path: '/a' }]]);
    const s = c.circuitBreaker().status('GET', '/a');
    expect(s.state).toBe('open');
    expect(s.openedAt).toBe(Date.now());
  });

  test('a success resets the consecutive-failure counter to 0', async () => {
    const { client: c, status } = backend();
    status.set('/a', 500);
    await fail(c, '/a', 4);
    status.set('/a', 200);
    await c.get('/a', { cache: false });
    expect(c.circuitBreaker().status('GET', '/a').consecutiveFailures).toBe(0);
    status.set('/a', 500);
    await fail(c, '/a', 4);
    expect(c.circuitBreaker().status('GET', '/a').state).toBe('closed');
  });

  test('open: rejected with CircuitOpenError {endpoint}, circuit-rejected, no network call, no request or error event', async () => {
    const { client: c, calls, status } = backend();
    status.set('/a', 503);
    await fail(c, '/a', 5);
    const n = calls.length;
    const log = record(c, ALL);
    const error = await c.get('/a', { cache: false }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CircuitOpenError);
    expect((error as CircuitOpenError).endpoint).toBe('GET /a');
    expect(calls).toHaveLength(n);
    expect(log.map(([name]) => name)).toEqual(['circuit-rejected']);
    expect(log[0]![1]).toMatchObject({ endpoint: 'GET /a', method: 'GET', path: '/a' });
    expect(log[0]![1].error).toBeInstanceOf(CircuitOpenError);
    expect(c.intelligence().snapshot().summary.circuitRejected).toBe(1);
  });

  test('open -> halfOpen after resetTimeout (10000 by default): one probe, circuit-half-open; success closes with circuit-closed', async () => {
    const { client: c, status, calls } = backend();
    status.set('/a', 503);
    await fail(c, '/a', 5);
    await vi.advanceTimersByTimeAsync(9_999);
    await expect(c.get('/a', { cache: false })).rejects.toBeInstanceOf(CircuitOpenError);
    await vi.advanceTimersByTimeAsync(1);
    status.set('/a', 200);
    const log = record(c, ['circuit-half-open', 'circuit-closed', 'request', 'success']);
    const n = calls.length;
    await c.get('/a', { cache: false });
    expect(calls).toHaveLength(n + 1);
    expect(log.map(([name]) => name)).toEqual([
      'circuit-half-open',
      'request',
      'circuit-closed',
      'success',
    ]);
    expect(log[0]![1]).toEqual({ endpoint: 'GET /a', method: 'GET', path: '/a' });
    expect(log[2]![1]).toEqual({ endpoint: 'GET /a', method: 'GET', path: '/a' });
    expect(c.circuitBreaker().status('GET', '/a')).toMatchObject({
      state: 'closed',
      consecutiveFailures: 0,
      probing: false,
    });
  });

  test('halfOpen: a probe that fails countably reopens, restarting the window (circuit-open)', async () => {
    const { client: c, status } = backend({
      circuitBreaker: { failureThreshold: 2, resetTimeout: 1000 },
    });
    status.set('/a', 500);
    await fail(c, '/a', 2);
    const firstOpened = c.circuitBreaker().status('GET', '/a').openedAt!;
    await vi.advanceTimersByTimeAsync(1500);
    const log = record(c, ['circuit-open', 'circuit-half-open']);
    await fail(c, '/a', 1);
    expect(log.map(([name]) => name)).toEqual(['circuit-half-open', 'circuit-open']);
    const s = c.circuitBreaker().status('GET', '/a');
    expect(s.state).toBe('open');
    expect(s.openedAt).toBe(firstOpened + 1500);
    await vi.advanceTimersByTimeAsync(999);
    await expect(c.get('/a', { cache: false })).rejects.toBeInstanceOf(CircuitOpenError);
  });

  test('halfOpen with a probe in flight: other requests are rejected; the status says probing (rule 1: one probe among racers)', async () => {
    const {
      client: c,
      status,
      calls,
    } = backend({
      circuitBreaker: { failureThreshold: 1, resetTimeout: 100 },
    });
    status.set('/a', 500);
    await fail(c, '/a', 1);
    await vi.advanceTimersByTimeAsync(100);
    status.set('/a', 'hang');
    const n = calls.length;
    const racers = Array.from({ length: 20 }, (_, i) =>
      c.get(`/a?i=${i}`, { cache: false }).catch((e: unknown) => e),
    );
    await vi.advanceTimersByTimeAsync(0);
    expect(calls).toHaveLength(n + 1);
    expect(c.circuitBreaker().status('GET', '/a')).toMatchObject({
      state: 'halfOpen',
      probing: true,
    });
    c.cancelAll();
    const outcomes = await Promise.all(racers);
    expect(outcomes.filter((e) => isCircuitOpenError(e))).toHaveLength(19);
    expect(outcomes.filter((e) => e instanceof CancelledError)).toHaveLength(1);
  });

  test('reset(method, path) closes one circuit; reset() closes all', async () => {
    const { client: c, status } = backend({ circuitBreaker: { failureThreshold: 1 } });
    status.set('/a', 500);
    status.set('/b', 500);
    await fail(c, '/a', 1);
    await fail(c, '/b', 1);
    c.circuitBreaker().reset('GET', '/a');
    expect(c.circuitBreaker().status('GET', '/a')).toMatchObject({
      state: 'closed',
      consecutiveFailures: 0,
    });
    expect(c.circuitBreaker().status('GET', '/b').state).toBe('open');
    c.circuitBreaker().reset();
    expect(c.circuitBreaker().status('GET', '/b').state).toBe('closed');
    status.set('/b', 200);
    await expect(c.get('/b')).resolves.toMatchObject({ status: 200 });
  });

  test('status() lazily creates a closed circuit; statuses() lists every circuit observed', async () => {
    const { client: c } = backend();
    expect(c.circuitBreaker().statuses()).toEqual([]);
    expect(c.circuitBreaker().status('GET', '/new')).toEqual({
      endpoint: 'GET /new',
      state: 'closed',
      consecutiveFailures: 0,
      probing: false,
    });
    await c.get('/seen');
    const endpoints = c
      .circuitBreaker()
      .statuses()
      .map((s) => s.endpoint);
    expect(endpoints).toContain('GET /new');
    expect(endpoints).toContain('GET /seen');
  });
});

describe('circuit rules', () => {
  test('rule 2: 429, 5xx, timeouts and network errors count; other 4xx and cancellations do not', async () => {
    const { client: c, status } = backend({ timeout: 50 });
    status.set('/x', 429);
    await fail(c, '/x', 1);
    status.set('/x', 501);
    await fail(c, '/x', 1);
    status.set('/x', 'hang');
    const t = c.get('/x', { cache: false }).catch(() => undefined);
    await vi.advanceTimersByTimeAsync(50);
    await t;
    expect(c.circuitBreaker().status('GET', '/x').consecutiveFailures).toBe(3);
    for (const s of [400, 401, 403, 404, 409, 422]) {
      status.set('/x', s);
      await fail(c, '/x', 1);
    }
    status.set('/x', 'hang');
    const p = c.get('/x', { cache: false });
    await vi.advanceTimersByTimeAsync(10);
    p.cancel();
    await p.catch(() => undefined);
    expect(c.circuitBreaker().status('GET', '/x')).toMatchObject({
      state: 'closed',
      consecutiveFailures: 3,
    });
    const net = createTestClient({
      baseURL: BASE,
      retry: false,
      fetch: () => Promise.reject(new TypeError('fetch failed')),
    });
    await net.get('/n').catch(() => undefined);
    expect(net.circuitBreaker().status('GET', '/n').consecutiveFailures).toBe(1);
  });

  test('rule 3: one failure per request at its terminal outcome, with retries and dedup joiners', async () => {
    const failing = createTestClient({
      baseURL: BASE,
      retry: { attempts: 3, baseDelay: 1, jitter: false },
      fetch: () => Promise.resolve(json({}, 503)),
    });
    const a = failing.get('/r').catch(() => undefined);
    const b = failing.get('/r').catch(() => undefined);
    const d = failing.get('/r').catch(() => undefined);
    await vi.runAllTimersAsync();
    await Promise.all([a, b, d]);
    expect(failing.circuitBreaker().status('GET', '/r').consecutiveFailures).toBe(1);
  });

  test('rule 4: keyed by METHOD pathname; the query is ignored; other endpoints are untouched', async () => {
    const { client: c, status, calls } = backend({ circuitBreaker: { failureThreshold: 2 } });
    status.set('/a', 500);
    await c.get('/a?page=1').catch(() => undefined);
    await c.get('/a?page=2').catch(() => undefined);
    expect(c.circuitBreaker().status('GET', '/a').state).toBe('open');
    expect(c.circuitBreaker().status('GET', '/a?page=3').state).toBe('open');
    await expect(c.get('/a?page=3')).rejects.toBeInstanceOf(CircuitOpenError);
    const n = calls.length;
    await expect(c.get('/b')).resolves.toMatchObject({ status: 200 });
    await expect(c.post('/a', {})).rejects.toMatchObject({ status: 500 });
    expect(calls).toHaveLength(n + 2);
    expect(c.circuitBreaker().status('POST', '/a').state).toBe('closed');
  });

  test('rule 4 / pipeline 4: a fresh cache hit is served while the circuit is open', async () => {
    const { client: c, status } = backend({ circuitBreaker: { failureThreshold: 1 } });
    await c.get('/a?cached=1');
    status.set('/a', 500);
    await c.get('/a?other=1').catch(() => undefined);
    expect(c.circuitBreaker().status('GET', '/a').state).toBe('open');
    await expect(c.get('/a?cached=1')).resolves.toMatchObject({ status: 200 });
  });

  test('rule 6: an SWR refresh dropped by an open circuit is silent; the stale copy is served', async () => {
    const {
      client: c,
      status,
      calls,
    } = backend({
      circuitBreaker: { failureThreshold: 1 },
      cache: { ttl: 100, strategy: 'stale-while-revalidate' },
    });
    await c.get('/a?k=1');
    status.set('/a', 500);
    await c.get('/a?k=2').catch(() => undefined);
    await vi.advanceTimersByTimeAsync(200);
    const n = calls.length;
    const log = record(c, ['circuit-rejected', 'error', 'request']);
    const unhandled: unknown[] = [];
    const onUnhandled = (e: unknown) => unhandled.push(e);
    process.on('unhandledRejection', onUnhandled);
    try {
      await expect(c.get('/a?k=1')).resolves.toMatchObject({ status: 200 });
      await vi.advanceTimersByTimeAsync(0);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
    expect(calls).toHaveLength(n);
    expect(log).toEqual([]);
    expect(unhandled).toEqual([]);
  });

  test('rule 6: a post-invalidation refetch dropped by an open circuit is silent', async () => {
    const { client: c, status, calls } = backend({ circuitBreaker: { failureThreshold: 1 } });
    await c.get('/a?k=1');
    const stop = c.subscribe(
      () => true,
      () => undefined,
    );
    status.set('/a', 500);
    await c.get('/a?k=2').catch(() => undefined);
    const n = calls.length;
    const log = record(c, ['circuit-rejected', 'error', 'request']);
    expect(c.invalidate('/a')).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(0);
    expect(calls).toHaveLength(n);
    expect(log).toEqual([]);
    stop();
  });

  test('rule 7: a dedup join onto a half-open probe is allowed and makes no second call', async () => {
    const {
      client: c,
      status,
      calls,
    } = backend({
      circuitBreaker: { failureThreshold: 1, resetTimeout: 100 },
    });
    status.set('/a', 500);
    await fail(c, '/a', 1);
    await vi.advanceTimersByTimeAsync(100);
    status.set('/a', 200);
    const n = calls.length;
    const probe = c.get('/a');
    const joiner = c.get('/a');
    await expect(Promise.all([probe, joiner])).resolves.toHaveLength(2);
    expect(calls).toHaveLength(n + 1);
    expect(c.circuitBreaker().status('GET', '/a').state).toBe('closed');
  });

  test('circuitBreaker: {enabled: false} guards nothing', async () => {
    const { client: c, status, calls } = backend({ circuitBreaker: { enabled: false } });
    status.set('/a', 500);
    await fail(c, '/a', 8);
    expect(calls).toHaveLength(8);
    expect(c.circuitBreaker().status('GET', '/a').state).toBe('closed');
  });
});
