// Black-box acceptance tests: circuit state table and rules 1-7, CircuitStatus,
// CircuitBreakerController, CircuitOpenError, circuit-* events.
import { describe, expect, test } from 'vitest';
import { CircuitOpenError, createClient } from '../../src/index';
import { deferred, json, names, record, settle, setup } from './harness';

const EVENTS = [
  'request',
  'error',
  'success',
  'circuit-open',
  'circuit-half-open',
  'circuit-closed',
  'circuit-rejected',
];

async function tripped(threshold = 2, resetTimeout = 1000) {
  const s = setup({ circuitBreaker: { failureThreshold: threshold, resetTimeout }, retry: false });
  s.backend.handler = () => json({}, 500);
  for (let i = 0; i < threshold; i++) await settle(s.client.get('/a', { cache: false }));
  return s;
}

describe('Circuit breaker defaults (spec: CircuitBreakerOptions)', () => {
  test('enabled, failureThreshold 5, resetTimeout 10000', async () => {
    const { client, backend, clock } = setup({ retry: false });
    backend.handler = () => json({}, 500);
    const log = record(client, EVENTS);
    for (let i = 0; i < 4; i++) await settle(client.get('/a'));
    expect(client.circuitBreaker().status('GET', '/a')).toMatchObject({
      state: 'closed',
      consecutiveFailures: 4,
    });
    await settle(client.get('/a'));
    const st = client.circuitBreaker().status('GET', '/a');
    expect(st).toMatchObject({
      endpoint: 'GET /a',
      state: 'open',
      consecutiveFailures: 5,
      probing: false,
    });
    expect(st.openedAt).toBe(clock.now());
    expect(names(log).filter((n) => n === 'circuit-open')).toHaveLength(1);
    await clock.advance(9_999);
    const r = await settle(client.get('/a'));
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error).toBeInstanceOf(CircuitOpenError);
    await clock.advance(1);
    backend.handler = () => json({});
    expect((await settle(client.get('/a'))).ok).toBe(true);
    expect(client.circuitBreaker().status('GET', '/a').state).toBe('closed');
  });
});

describe('Circuit state table (spec: Circuit state)', () => {
  test('closed: a success resets the consecutive-failure counter to 0', async () => {
    const { client, backend } = setup({ retry: false, cache: false });
    backend.handler = () => json({}, 500);
    await settle(client.get('/a'));
    await settle(client.get('/a'));
    expect(client.circuitBreaker().status('GET', '/a').consecutiveFailures).toBe(2);
    backend.handler = () => json({});
    await client.get('/a');
    expect(client.circuitBreaker().status('GET', '/a').consecutiveFailures).toBe(0);
  });

  test('closed -> open: circuit-open {endpoint, method, path}; openedAt set', async () => {
    const s = setup({ circuitBreaker: { failureThreshold: 2 }, retry: false });
    s.backend.handler = () => json({}, 502);
    const log = record(s.client, ['circuit-open']);
    await settle(s.client.get('/a?x=1'));
    await settle(s.client.get('/a?x=2'));
    expect(log).toHaveLength(1);
    expect(log[0]!.payload).toMatchObject({ endpoint: 'GET /a', method: 'GET', path: '/a' });
    expect(s.client.circuitBreaker().status('GET', '/a').openedAt).toBe(s.clock.now());
  });

  test('open: rejected with CircuitOpenError {endpoint}; circuit-rejected; no network call; no request/error event', async () => {
    const s = await tripped();
    const calls = s.backend.calls.length;
    const log = record(s.client, EVENTS);
    const out = await settle(s.client.get('/a', { cache: false }));
    expect(out.ok).toBe(false);
    if (!out.ok) {
      expect(out.error).toBeInstanceOf(CircuitOpenError);
      expect((out.error as CircuitOpenError).endpoint).toBe('GET /a');
    }
    expect(s.backend.calls.length).toBe(calls);
    expect(names(log)).toEqual(['circuit-rejected']);
    expect(log[0]!.payload).toMatchObject({ endpoint: 'GET /a', method: 'GET', path: '/a' });
    expect(log[0]!.payload.error).toBeInstanceOf(CircuitOpenError);
  });

  test('open -> halfOpen after resetTimeout: that request is the single probe; circuit-half-open; probe success closes (circuit-closed)', async () => {
    const s = await tripped(2, 1000);
    await s.clock.advance(1000);
    const d = deferred();
    s.backend.handler = () => d.promise;
    const log = record(s.client, EVENTS);
    const probe = s.client.get('/a', { cache: false });
    await new Promise((r) => setImmediate(r));
    expect(s.client.circuitBreaker().status('GET', '/a')).toMatchObject({
      state: 'halfOpen',
      probing: true,
    });
    // another request while the probe is in flight is rejected as for open (different key: no dedup)
    const other = await settle(s.client.get('/a?other=1', { cache: false }));
    expect(other.ok).toBe(false);
    if (!other.ok) expect(other.error).toBeInstanceOf(CircuitOpenError);
    d.release(json({}));
    await probe;
    expect(names(log)).toEqual([
      'circuit-half-open',
      'request',
      'circuit-rejected',
      'circuit-closed',
      'success',
    ]);
    expect(log[0]!.payload).toMatchObject({ endpoint: 'GET /a', method: 'GET', path: '/a' });
    expect(log.find((l) => l.event === 'circuit-closed')!.payload).toMatchObject({
      endpoint: 'GET /a',
    });
    expect(s.client.circuitBreaker().status('GET', '/a')).toMatchObject({
      state: 'closed',
      consecutiveFailures: 0,
      probing: false,
    });
  });

  test('halfOpen: a probe failing countably reopens and restarts the reset window (circuit-open)', async () => {
    const s = await tripped(2, 1000);
    await s.clock.advance(1500);
    const log = record(s.client, ['circuit-open']);
    await settle(s.client.get('/a', { cache: false }));
    expect(log).toHaveLength(1);
    const st = s.client.circuitBreaker().status('GET', '/a');
    expect(st.state).toBe('open');
    expect(st.openedAt).toBe(s.clock.now());
    await s.clock.advance(999);
    const r = await settle(s.client.get('/a', { cache: false }));
    expect(!r.ok && r.error instanceof CircuitOpenError).toBe(true);
  });

  test('rule 1: exactly one probe among racing requests', async () => {
    const s = await tripped(2, 1000);
    await s.clock.advance(1000);
    const calls = s.backend.calls.length;
    s.backend.handler = () => json({});
    const racers = Array.from({ length: 20 }, (_, i) =>
      settle(s.client.get(`/a?i=${i}`, { cache: false })),
    );
    const outs = await Promise.all(racers);
    expect(s.backend.calls.length - calls).toBe(1);
    expect(outs.filter((o) => o.ok)).toHaveLength(1);
    expect(outs.filter((o) => !o.ok && o.error instanceof CircuitOpenError)).toHaveLength(19);
  });

  test('rule 2: 4xx other than 429 and cancellation are not countable; 429 and timeouts are', async () => {
    const { client, backend, clock } = setup({
      retry: false,
      cache: false,
      circuitBreaker: { failureThreshold: 2 },
    });
    backend.handler = () => json({}, 404);
    await settle(client.get('/a'));
    await settle(client.get('/a'));
    await settle(client.get('/a'));
    expect(client.circuitBreaker().status('GET', '/a').consecutiveFailures).toBe(0);
    backend.handler = () => new Promise<Response>(() => {});
    const p = client.get('/a');
    p.cancel();
    await settle(p);
    expect(client.circuitBreaker().status('GET', '/a').consecutiveFailures).toBe(0);
    backend.handler = () => json({}, 429);
    await settle(client.get('/b'));
    expect(client.circuitBreaker().status('GET', '/b').consecutiveFailures).toBe(1);
    backend.handler = () => new Promise<Response>(() => {});
    const t = settle(client.get('/c', { timeout: 10 }));
    await clock.advance(10);
    await t;
    expect(client.circuitBreaker().status('GET', '/c').consecutiveFailures).toBe(1);
    backend.handler = () => {
      throw new TypeError('fetch failed');
    };
    await settle(client.get('/d'));
    expect(client.circuitBreaker().status('GET', '/d').consecutiveFailures).toBe(1);
  });

  test('rule 3: a failure is recorded once per request even with retries; dedup consumers do not double-count', async () => {
    const { client, backend, clock } = setup({
      retry: { attempts: 3, baseDelay: 10, jitter: false },
    });
    backend.handler = () => json({}, 503);
    const ps = [client.get('/a'), client.get('/a'), client.get('/a')].map(settle);
    await clock.advance(1000);
    await Promise.all(ps);
    expect(backend.calls).toHaveLength(3);
    expect(client.circuitBreaker().status('GET', '/a').consecutiveFailures).toBe(1);
  });

  test('rule 4: GET /a?page=1 and ?page=2 share one circuit; another endpoint is untouched', async () => {
    const s = setup({ retry: false, circuitBreaker: { failureThreshold: 2 } });
    s.backend.handler = () => json({}, 500);
    await settle(s.client.get('/a?page=1'));
    await settle(s.client.get('/a?page=2'));
    expect(s.client.circuitBreaker().status('GET', '/a').state).toBe('open');
    expect(s.client.circuitBreaker().status('GET', '/b').state).toBe('closed');
    expect(s.client.circuitBreaker().status('POST', '/a').state).toBe('closed');
    s.backend.handler = () => json({});
    expect((await settle(s.client.get('/b'))).ok).toBe(true);
  });

  test('rule 6: an open circuit silently drops post-invalidation refetches (no circuit-rejected, no error)', async () => {
    const s = setup({ retry: false, circuitBreaker: { failureThreshold: 1 } });
    s.client.subscribe('GET /a' as never, () => {});
    await s.client.get('/a');
    s.backend.handler = () => json({}, 500);
    await settle(s.client.get('/a?x=1'));
    expect(s.client.circuitBreaker().status('GET', '/a').state).toBe('open');
    const calls = s.backend.calls.length;
    const log = record(s.client, EVENTS);
    s.client.invalidate('/a');
    await new Promise((r) => setImmediate(r));
    expect(s.backend.calls.length).toBe(calls);
    expect(names(log)).toEqual([]);
  });

  test('rule 6: an open circuit silently drops an SWR background refresh; the stale copy is still served', async () => {
    const s = setup({
      retry: false,
      circuitBreaker: { failureThreshold: 1 },
      cache: { enabled: true, ttl: 100, strategy: 'stale-while-revalidate' },
    });
    await s.client.get('/a');
    s.backend.handler = () => json({}, 500);
    await settle(s.client.get('/a?x=1'));
    await s.clock.advance(200);
    const log = record(s.client, EVENTS);
    const calls = s.backend.calls.length;
    const r = await s.client.get('/a');
    expect(r.data).toEqual({ ok: true });
    await new Promise((r2) => setImmediate(r2));
    expect(s.backend.calls.length).toBe(calls);
    expect(names(log)).toEqual([]);
  });

  test('rule 7: a dedup join is allowed when the flight is a half-open probe; no second network call', async () => {
    const s = await tripped(2, 1000);
    await s.clock.advance(1000);
    const d = deferred();
    s.backend.handler = () => d.promise;
    const calls = s.backend.calls.length;
    const a = s.client.get('/a', { cache: false });
    const b = s.client.get('/a', { cache: false });
    await new Promise((r) => setImmediate(r));
    d.release(json({ v: 1 }));
    const [ra, rb] = await Promise.all([settle(a), settle(b)]);
    expect(ra.ok && rb.ok).toBe(true);
    expect(s.backend.calls.length - calls).toBe(1);
  });

  test('reset(method, path) closes one circuit; reset() closes all', async () => {
    const s = setup({ retry: false, circuitBreaker: { failureThreshold: 1 } });
    s.backend.handler = () => json({}, 500);
    await settle(s.client.get('/a'));
    await settle(s.client.get('/b'));
    s.client.circuitBreaker().reset('GET', '/a');
    expect(s.client.circuitBreaker().status('GET', '/a')).toMatchObject({
      state: 'closed',
      consecutiveFailures: 0,
    });
    expect(s.client.circuitBreaker().status('GET', '/b').state).toBe('open');
    s.client.circuitBreaker().reset();
    expect(s.client.circuitBreaker().status('GET', '/b').state).toBe('closed');
  });

  test('status() lazily creates the circuit; statuses() lists every circuit observed', () => {
    const client = createClient({
      fetch: (() => Promise.resolve(json({}))) as never,
      baseURL: 'https://x.test',
    });
    expect(client.circuitBreaker().statuses()).toEqual([]);
    const st = client.circuitBreaker().status('GET', '/lazy');
    expect(st).toMatchObject({
      endpoint: 'GET /lazy',
      state: 'closed',
      consecutiveFailures: 0,
      probing: false,
    });
    expect(
      client
        .circuitBreaker()
        .statuses()
        .map((x) => x.endpoint),
    ).toEqual(['GET /lazy']);
  });

  test('enabled:false guards nothing', async () => {
    const s = setup({ retry: false, circuitBreaker: { enabled: false, failureThreshold: 1 } });
    s.backend.handler = () => json({}, 500);
    await settle(s.client.get('/a'));
    await settle(s.client.get('/a'));
    expect(s.backend.calls).toHaveLength(2);
  });

  test('options are read once at creation: mutating them later changes nothing', async () => {
    const cb = { failureThreshold: 1, resetTimeout: 1000 };
    const s = setup({ retry: false, circuitBreaker: cb });
    cb.failureThreshold = 100;
    s.backend.handler = () => json({}, 500);
    await settle(s.client.get('/a'));
    expect(s.client.circuitBreaker().status('GET', '/a').state).toBe('open');
  });
});
