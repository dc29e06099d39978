/**
 * Intelligence through the client: counters against a scripted mix of cache hits, dedup joins,
 * retries, failures, 429s, timeouts, cancels and circuit rejections; `enabled:false`; and the
 * adaptiveTimeout / adaptiveStaleWhileRevalidate recommendations as request resolution applies them.
 */
import { describe, expect, it } from 'vitest';
import { TimeoutError } from '../src/errors/timeout-error';
import type { ClientOptions } from '../src/types/options';
import { type Harness, harness, outcome } from './circuit.fixture';

const MIX: ClientOptions = {
  cache: { enabled: true, ttl: 60_000 },
  retry: { attempts: 3, baseDelay: 10, jitter: false },
};

/** Runs the scripted mix; returns the outcomes so the test can check them too. */
async function script(h: Harness) {
  const { client, clock } = h;
  // A: a cached read, then two cache hits.
  expect((await outcome(client.get('/users'))).ok).toBe(true);
  await outcome(client.get('/users'));
  await outcome(client.get('/users'));

  // B: an owner and two joiners on one flight that takes 30 ms.
  h.answer('/users', 'hang');
  const owner = outcome(client.get('/users?page=2'));
  const joiners = [outcome(client.get('/users?page=2')), outcome(client.get('/users?page=2'))];
  await clock.advance(30);
  h.callsTo('/users')
    .at(-1)!
    .json([{ id: 1 }]);
  expect((await Promise.all([owner, ...joiners])).every((r) => r.ok)).toBe(true);

  // C: 503 then 200: one retry, recovered.
  h.answer('/flaky', 'hang');
  const flaky = outcome(client.get('/flaky'));
  await clock.advance(0);
  h.callsTo('/flaky')[0]!.json({}, { status: 503 });
  await clock.advance(100);
  h.callsTo('/flaky')[1]!.json({ ok: true });
  expect((await flaky).ok).toBe(true);

  // D: 429 on every attempt: two retries, three 429s, one failure.
  h.answer('/limited', 429);
  const limited = outcome(client.get('/limited'));
  await clock.runAll();
  expect((await limited).ok).toBe(false);

  // E: the first attempt times out, the retry answers: one timeout, one retry, recovered.
  h.answer('/slow', 'hang');
  const slow = outcome(client.get('/slow', { timeout: 50 }));
  await clock.advance(50); // attempt 1 times out; the retry waits 10 ms
  await clock.advance(10);
  h.callsTo('/slow')[1]!.json({ ok: true });
  expect((await slow).ok).toBe(true);

  // F: a 404: a failure, not retried.
  h.answer('/missing', 404);
  expect((await outcome(client.get('/missing'))).ok).toBe(false);

  // G: an owner and a joiner, both cancelled (the second cancel ends the flight).
  h.answer('/cancel', 'hang');
  const c1 = client.get('/cancel');
  const c2 = client.get('/cancel');
  c2.cancel();
  c1.cancel();
  await Promise.all([outcome(c1), outcome(c2)]);

  // H: three 503s open GET /down (threshold 3); the fourth request is rejected.
  h.answer('/down', 503);
  for (let i = 0; i < 3; i++) await outcome(client.get(`/down?i=${i}`, { retry: false }));
  expect((await outcome(client.get('/down?i=3'))).ok).toBe(false);
}

describe('intelligence counters against a scripted mix', () => {
  it('summary', async () => {
    const h = harness(MIX);
    await script(h);
    const { summary } = h.client.intelligence().snapshot();
    // flights: users 2, flaky, limited, slow, missing, cancel, down 3 = 10
    const total = 10 + 2 /* hits */ + 3 /* joins */ + 1; /* rejected */
    expect(summary).toEqual({
      totalRequests: total,
      cacheHits: 2,
      cacheMisses: total - 2,
      deduplicated: 3,
      retriesPerformed: 4,
      retriesRecovered: 2,
      failures: 5,
      rateLimited: 3,
      timeouts: 1,
      cancels: 2,
      activeRequests: 0,
      cacheHitRate: 2 / total,
      dedupRate: 3 / total,
      retryRate: 4 / total,
      failureRate: 5 / total,
      rateLimitRate: 3 / total,
      adaptive: {
        decisions: 0,
        concurrencyReductions: 0,
        concurrencyRecoveries: 0,
        throttles: 0,
        retryChanges: 0,
      },
      circuits: { open: 1, halfOpen: 0, closed: 6 },
      circuitRejected: 1,
    });
    // Every counter that mirrors an event agrees with the event log.
    expect(summary.cacheHits).toBe(h.count('cache-hit'));
    expect(summary.deduplicated).toBe(h.count('dedup'));
    expect(summary.retriesPerformed).toBe(h.count('retry'));
    expect(summary.cancels).toBe(h.count('cancel'));
    expect(summary.circuitRejected).toBe(h.count('circuit-rejected'));
    expect(summary.failures).toBe(h.count('error'));
    expect(summary.totalRequests - summary.cacheHits - summary.deduplicated).toBe(
      h.count('request') + h.count('circuit-rejected'),
    );
  });

  it('per endpoint', async () => {
    const h = harness(MIX);
    await script(h);
    const intel = h.client.intelligence();
    expect(intel.endpoint('GET', '/users')).toEqual({
      method: 'GET',
      path: '/users',
      requests: 6,
      successes: 2,
      failures: 0,
      cacheHits: 2,
      cacheMisses: 4,
      dedupPrevented: 2,
      retriesPerformed: 0,
      retriesRecovered: 0,
      rateLimited: 0,
      timeouts: 0,
      cancels: 0,
      latency: { avg: 15, p50: 0, p95: 30, samples: 2 },
      circuit: 'closed',
      circuitFailures: 0,
      circuitRejected: 0,
    });
    expect(intel.endpoint('GET', '/flaky')).toMatchObject({
      successes: 1,
      retriesPerformed: 1,
      retriesRecovered: 1,
      latency: { samples: 2 }, // one per attempt with a response: the 503 and the 200
    });
    expect(intel.endpoint('GET', '/limited')).toMatchObject({
      requests: 1,
      failures: 1,
      retriesPerformed: 2,
      rateLimited: 3,
      circuit: 'closed',
      circuitFailures: 1,
    });
    expect(intel.endpoint('GET', '/slow')).toMatchObject({
      timeouts: 1,
      retriesPerformed: 1,
      retriesRecovered: 1,
    });
    expect(intel.endpoint('GET', '/missing')).toMatchObject({
      failures: 1,
      retriesPerformed: 0,
      circuitFailures: 0,
    });
    expect(intel.endpoint('GET', '/cancel')).toMatchObject({
      requests: 2,
      dedupPrevented: 1,
      cancels: 2,
      successes: 0,
      failures: 0,
      latency: { samples: 0 },
    });
    expect(intel.endpoint('GET', '/down')).toMatchObject({
      requests: 4,
      failures: 3,
      circuit: 'open',
      circuitFailures: 3,
      circuitRejected: 1,
    });
    expect(intel.snapshot().endpoints.map((e) => e.path)).toEqual([
      '/users',
      '/flaky',
      '/limited',
      '/slow',
      '/missing',
      '/cancel',
      '/down',
    ]);
  });

  it('reset() clears observation history; the breaker keeps its state', async () => {
    const h = harness(MIX);
    await script(h);
    h.client.intelligence().reset();
    const { summary, endpoints } = h.client.intelligence().snapshot();
    expect(endpoints).toEqual([]);
    expect(summary.totalRequests).toBe(0);
    expect(summary.circuits).toEqual({ open: 1, halfOpen: 0, closed: 6 });
    await outcome(h.client.get('/users'));
    expect(h.client.intelligence().endpoint('GET', '/users')?.cacheHits).toBe(1);
  });

  it('enabled:false records nothing and recommends nothing', async () => {
    const h = harness({
      ...MIX,
      intelligence: { enabled: false, adaptiveTimeout: true, adaptiveStaleWhileRevalidate: true },
    });
    await script(h);
    const intel = h.client.intelligence();
    expect(intel.snapshot().endpoints).toEqual([]);
    expect(intel.snapshot().summary).toMatchObject({
      totalRequests: 0,
      cacheHits: 0,
      failures: 0,
      circuitRejected: 0,
      activeRequests: 0,
    });
    expect(intel.endpoint('GET', '/users')).toBeUndefined();
    expect(h.client.resolve('GET', '/users').timeout).toBe(0);
    // The breaker still works without intelligence.
    expect(h.client.circuitBreaker().status('GET', '/down').state).toBe('open');
  });
});

/** `n` requests to `path`, each answered after `ms` of (fake) time. */
async function samples(h: Harness, path: string, n: number, ms: number) {
  h.answer(path, 'hang');
  for (let i = 0; i < n; i++) {
    // An explicit timeout 0 wins over any recommendation, so a slow sample is not cut short.
    const p = outcome(h.client.get(`${path}?sample=${i}`, { timeout: 0 }));
    await h.clock.advance(ms);
    h.callsTo(path).at(-1)!.json({ i });
    expect((await p).ok).toBe(true);
  }
}

describe('recommendations', () => {
  it('adaptiveTimeout: from the 5th sample, 3 x p95; request option > recommendation > client default', async () => {
    const h = harness({ timeout: 5000, intelligence: { adaptiveTimeout: true } });
    await samples(h, '/r', 4, 100);
    expect(h.client.resolve('GET', '/r').timeout).toBe(5000);
    await samples(h, '/r', 1, 100);
    expect(h.client.resolve('GET', '/r').timeout).toBe(300);
    expect(h.client.resolve('GET', '/r?q=1').timeout).toBe(300); // per endpoint: query ignored
    expect(h.client.resolve('GET', '/r', { timeout: 77 }).timeout).toBe(77);
    expect(h.client.resolve('GET', '/r', { headers: { a: 'b' } }).timeout).toBe(300);
    expect(h.client.resolve('GET', '/other').timeout).toBe(5000);
    expect(h.client.resolve('POST', '/r').timeout).toBe(5000);

    // It is applied: a hanging request now times out after 300 ms.
    const p = outcome(h.client.get('/r?late'));
    await h.clock.advance(299);
    expect(h.callsTo('/r').at(-1)!.done).toBe(false);
    await h.clock.advance(1);
    expect(((await p) as { error: unknown }).error).toBeInstanceOf(TimeoutError);
  });

  it('adaptiveTimeout follows the samples: the recommended spec is never memoized', async () => {
    const h = harness({ intelligence: { adaptiveTimeout: true } });
    await samples(h, '/r', 5, 10);
    expect(h.client.resolve('GET', '/r').timeout).toBe(100); // clamped up
    await samples(h, '/r', 5, 1000);
    expect(h.client.resolve('GET', '/r').timeout).toBe(3000);
    // An endpoint without a recommendation still gets the memoized spec.
    expect(h.client.resolve('GET', '/plain')).toBe(h.client.resolve('GET', '/plain'));
  });

  it('adaptiveStaleWhileRevalidate: p95 >= 500 ms switches reads to SWR unless the request says otherwise', async () => {
    const h = harness({
      cache: { enabled: true, ttl: 1000 },
      intelligence: { adaptiveStaleWhileRevalidate: true },
    });
    await samples(h, '/s', 5, 499);
    expect(h.client.resolve('GET', '/s').cache?.strategy).toBe('cache-first');
    await samples(h, '/s', 5, 600);
    // Window [499 x5, 600 x5]: p95 = 600.
    expect(h.client.resolve('GET', '/s').cache?.strategy).toBe('stale-while-revalidate');
    expect(
      h.client.resolve('GET', '/s', { cache: { strategy: 'cache-first' } }).cache?.strategy,
    ).toBe('cache-first');
    expect(h.client.resolve('GET', '/s').timeout).toBe(0); // adaptiveTimeout is off

    // Applied: once stale, the cached copy is served at once and refreshed in the background.
    await h.clock.advance(2000);
    const calls = h.callsTo('/s').length;
    const revalidated = h.count('revalidate');
    const served = await outcome(h.client.get('/s?sample=4'));
    expect(served.ok).toBe(true);
    expect(h.callsTo('/s')).toHaveLength(calls + 1); // the background refresh
    h.callsTo('/s').at(-1)!.json({ fresh: true });
    await h.clock.advance(0);
    expect(h.count('revalidate')).toBe(revalidated + 1);
  });

  it('no recommendation without a switch: option-less specs stay memoized', async () => {
    const h = harness();
    await samples(h, '/r', 6, 900);
    const spec = h.client.resolve('GET', '/r');
    expect(spec.timeout).toBe(0);
    expect(h.client.resolve('GET', '/r')).toBe(spec);
  });
});
