// Black-box acceptance tests: IntelligenceOptions, IntelligenceSummary / Snapshot / EndpointStats,
// IntelligenceController, adaptive timeout and SWR recommendations (Controllers, Limits).
import { describe, expect, test } from 'vitest';
import { TimeoutError } from '../../src/index';
import { deferred, json, settle, setup } from './harness';

describe('Intelligence records (spec: IntelligenceSummary, EndpointStats)', () => {
  test('counts requests, cache hits/misses, dedup, retries, failures, rate limits, timeouts, cancels', async () => {
    const s = setup({
      retry: { attempts: 2, baseDelay: 10, jitter: false },
      circuitBreaker: { failureThreshold: 100 },
    });
    s.backend.handler = (req) => {
      const path = new URL(req.url).pathname;
      if (path === '/fail') return json({}, 404);
      if (path === '/rl') return json({}, 429);
      if (path === '/hang') return new Promise<Response>(() => {});
      return json({});
    };
    await s.client.get('/ok'); // miss
    await s.client.get('/ok'); // hit
    const d = deferred();
    const prev = s.backend.handler;
    s.backend.handler = () => d.promise;
    const a = s.client.get('/dd');
    const b = s.client.get('/dd'); // dedup
    await new Promise((r) => setImmediate(r));
    d.release(json({}));
    await Promise.all([a, b]);
    s.backend.handler = prev;
    await settle(s.client.get('/fail'));
    const rl = settle(s.client.get('/rl'));
    await s.clock.advance(10);
    await rl;
    const to = settle(s.client.get('/hang', { timeout: 5, retry: false }));
    await s.clock.advance(5);
    await to;
    const c = s.client.get('/hang');
    c.cancel();
    await settle(c);

    const { summary, endpoints } = s.client.intelligence().snapshot();
    expect(summary.cacheHits).toBe(1);
    expect(summary.deduplicated).toBe(1);
    expect(summary.totalRequests).toBe(8);
    expect(summary.cacheMisses).toBe(summary.totalRequests - summary.cacheHits);
    expect(summary.cacheHitRate).toBeCloseTo(1 / 8);
    expect(summary.dedupRate).toBeCloseTo(1 / 8);
    expect(summary.failures).toBe(3); // 404, 429 (after retry), timeout
    expect(summary.rateLimited).toBe(2);
    expect(summary.retriesPerformed).toBe(1);
    expect(summary.timeouts).toBe(1);
    expect(summary.cancels).toBe(1);
    expect(summary.activeRequests).toBe(0);
    expect(summary.failureRate).toBeCloseTo(3 / 8);
    expect(typeof summary.retryRate).toBe('number');
    expect(typeof summary.rateLimitRate).toBe('number');
    expect(summary.circuits).toEqual(expect.objectContaining({ open: 0, halfOpen: 0 }));
    expect(summary.circuitRejected).toBe(0);
    expect(summary.adaptive).toMatchObject({
      decisions: 0,
      concurrencyReductions: 0,
      concurrencyRecoveries: 0,
      throttles: 0,
      retryChanges: 0,
    });
    expect(endpoints.map((e) => `${e.method} ${e.path}`).sort()).toEqual(
      ['GET /dd', 'GET /fail', 'GET /hang', 'GET /ok', 'GET /rl'].sort(),
    );
    const ok = s.client.intelligence().endpoint('GET', '/ok')!;
    expect(ok).toMatchObject({
      method: 'GET',
      path: '/ok',
      requests: 2,
      successes: 1,
      failures: 0,
      cacheHits: 1,
      cacheMisses: 1,
      dedupPrevented: 0,
      retriesPerformed: 0,
      retriesRecovered: 0,
      rateLimited: 0,
      timeouts: 0,
      cancels: 0,
      circuit: 'closed',
      circuitFailures: 0,
      circuitRejected: 0,
    });
    expect(ok.latency).toEqual({
      avg: expect.any(Number),
      p50: expect.any(Number),
      p95: expect.any(Number),
      samples: 1,
    });
    expect(s.client.intelligence().endpoint('GET', '/nothing')).toBeUndefined();
  });

  test('retriesRecovered counts flights that succeed after a retry', async () => {
    const s = setup({ retry: { baseDelay: 10, jitter: false } });
    let n = 0;
    s.backend.handler = () => (++n === 1 ? json({}, 503) : json({}));
    const p = s.client.get('/r');
    await s.clock.advance(10);
    await p;
    expect(s.client.intelligence().endpoint('GET', '/r')).toMatchObject({
      retriesPerformed: 1,
      retriesRecovered: 1,
    });
  });

  test('circuitRejected counts requests blocked by the breaker; circuit mirrors the breaker', async () => {
    const s = setup({ retry: false, circuitBreaker: { failureThreshold: 1 } });
    s.backend.handler = () => json({}, 500);
    await settle(s.client.get('/a'));
    await settle(s.client.get('/a'));
    const e = s.client.intelligence().endpoint('GET', '/a')!;
    expect(e.circuitRejected).toBe(1);
    expect(e.circuit).toBe('open');
    expect(e.circuitFailures).toBe(1);
    expect(s.client.intelligence().snapshot().summary.circuitRejected).toBe(1);
    expect(s.client.intelligence().snapshot().summary.circuits.open).toBe(1);
  });

  test('rates are 0 when there are no requests; reset() clears history', async () => {
    const s = setup();
    expect(s.client.intelligence().snapshot().summary).toMatchObject({
      totalRequests: 0,
      cacheHitRate: 0,
      dedupRate: 0,
      retryRate: 0,
      failureRate: 0,
      rateLimitRate: 0,
    });
    await s.client.get('/a');
    s.client.intelligence().reset();
    expect(s.client.intelligence().snapshot().summary.totalRequests).toBe(0);
    expect(s.client.intelligence().snapshot().endpoints).toEqual([]);
  });

  test('enabled:false records nothing', async () => {
    const s = setup({ intelligence: { enabled: false } });
    await s.client.get('/a');
    expect(s.client.intelligence().snapshot().summary.totalRequests).toBe(0);
  });
});

describe('Intelligence recommendations (spec: Controllers; Limits: adaptive timeout)', () => {
  async function samples(
    s: ReturnType<typeof setup>,
    path: string,
    latency: number,
    count: number,
  ) {
    s.backend.handler = () =>
      new Promise<Response>((r) => {
        s.clock.setTimeout(() => r(json({})), latency);
      });
    for (let i = 0; i < count; i++) {
      const p = s.client.get(`${path}?i=${i}`, { cache: false });
      await s.clock.advance(latency);
      await p;
    }
  }

  test('adaptiveTimeout: after >= 5 samples the per-attempt timeout is 3 x p95', async () => {
    const s = setup({ intelligence: { adaptiveTimeout: true }, retry: false });
    await samples(s, '/t', 200, 4);
    s.backend.handler = () => new Promise<Response>(() => {});
    // 4 samples: no recommendation yet (timeout 0 = none)
    const early = settle(s.client.get('/t', { cache: false }));
    await s.clock.advance(60_000);
    s.client.cancelAll();
    expect((await early).ok).toBe(false);
    expect(s.clock.pending).toBe(0);
    await samples(s, '/t', 200, 1);
    s.backend.handler = () => new Promise<Response>(() => {});
    const p = settle(s.client.get('/t', { cache: false }));
    await s.clock.advance(599);
    expect(s.backend.calls.at(-1)?.signal?.aborted).toBe(false);
    await s.clock.advance(1);
    const o = await p;
    expect(!o.ok && o.error instanceof TimeoutError).toBe(true);
  });

  test('adaptiveTimeout is clamped to at least 100 ms', async () => {
    const s = setup({ intelligence: { adaptiveTimeout: true }, retry: false });
    await samples(s, '/t', 10, 5);
    s.backend.handler = () => new Promise<Response>(() => {});
    const p = settle(s.client.get('/t', { cache: false }));
    await s.clock.advance(99);
    expect(s.backend.calls.at(-1)?.signal?.aborted).toBe(false);
    await s.clock.advance(1);
    expect(!(await p).ok).toBe(true);
  });

  test('adaptiveTimeout is clamped to at most 60 s', async () => {
    const s = setup({ intelligence: { adaptiveTimeout: true }, retry: false });
    await samples(s, '/t', 30_000, 5);
    s.backend.handler = () => new Promise<Response>(() => {});
    const p = settle(s.client.get('/t', { cache: false }));
    await s.clock.advance(59_999);
    expect(s.backend.calls.at(-1)?.signal?.aborted).toBe(false);
    await s.clock.advance(1);
    expect(!(await p).ok).toBe(true);
  });

  test('an explicit RequestOptions.timeout wins over the recommendation (spec: rule 5)', async () => {
    const s = setup({ intelligence: { adaptiveTimeout: true }, retry: false });
    await samples(s, '/t', 200, 5);
    s.backend.handler = () => new Promise<Response>(() => {});
    const p = settle(s.client.get('/t', { cache: false, timeout: 5000 }));
    await s.clock.advance(4999);
    expect(s.backend.calls.at(-1)?.signal?.aborted).toBe(false);
    await s.clock.advance(1);
    expect(!(await p).ok).toBe(true);
  });

  test('adaptiveStaleWhileRevalidate: p95 >= 500 ms switches the endpoint to SWR', async () => {
    const s = setup({
      intelligence: { adaptiveStaleWhileRevalidate: true },
      cache: { enabled: true, ttl: 1000 },
    });
    await samples(s, '/s', 600, 5);
    s.backend.handler = () => json({ v: 'first' });
    await s.client.get('/s');
    await s.clock.advance(2000); // stale
    s.backend.handler = () => new Promise<Response>(() => {});
    const r = await s.client.get('/s'); // served stale at once, refresh in the background
    expect(r.data).toEqual({ v: 'first' });
    s.client.cancelAll();
  });

  test('without adaptiveStaleWhileRevalidate (default false) a slow endpoint stays cache-first', async () => {
    const s = setup({ cache: { enabled: true, ttl: 1000 } });
    await samples(s, '/s', 600, 5);
    s.backend.handler = () => json({ v: 'first' });
    await s.client.get('/s');
    await s.clock.advance(2000);
    s.backend.handler = () => json({ v: 'second' });
    const r = await s.client.get('/s');
    expect(r.data).toEqual({ v: 'second' });
  });
});
