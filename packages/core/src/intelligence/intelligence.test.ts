import { describe, expect, it } from 'vitest';
import { errorOf } from '../errors/errors.fixture';
import { EventEmitter } from '../events/emitter';
import { Tracker } from '../tracker/tracker';
import type { ClientEvents } from '../types/events';
import { Intelligence, MAX_ENDPOINTS } from './intelligence';
import { resolveIntelligenceOptions } from './options';

/** A cache hit the way the client reports it (see HitTally). */
function hit(intel: Intelligence, spec: { endpoint: string }) {
  if (intel.hits.spec === spec) intel.hits.pending++;
  else intel.hits.switchTo(spec);
}

/** Intelligence fed synthetic lifecycle events, shaped the way the client emits them. */
function setup(options = {}) {
  const events = new EventEmitter<ClientEvents>();
  const intel = new Intelligence(resolveIntelligenceOptions(options), {
    circuits: {
      stateOf: (e) => (e === 'GET /a' ? 'open' : 'closed'),
      failuresOf: (e) => (e === 'GET /a' ? 5 : 0),
      counts: () => ({ open: 1, halfOpen: 0, closed: 2 }),
    },
  });
  const off = intel.observe(events);
  let now = 0;
  function flight(endpoint = 'GET /a', ms = 10) {
    const tracker = new Tracker(endpoint);
    tracker.start(now);
    const base = { key: endpoint, tracker, endpoint };
    events.emit('request', { ...base, method: 'GET', url: 'http://x/a', probe: false });
    return {
      tracker,
      retry(error: ClientEvents['retry']['error'], attemptMs?: number) {
        tracker.attempt();
        tracker.attempt();
        events.emit('retry', {
          ...base,
          attempts: 1,
          delay: 1,
          reason: 'backoff',
          error,
          attemptMs,
        });
      },
      /** The attempt that ends the flight took `ms` (the client reports it as `attemptMs`). */
      succeed() {
        tracker.succeed(now + ms);
        events.emit('success', { ...base, response: {} as never, attemptMs: ms });
      },
      /** `attemptMs: null`: the last attempt got no response (a timeout, a network error). */
      fail(error: unknown, attemptMs: number | null = ms) {
        // Its attempt was made (a flight that made none counts no attempt error).
        if (tracker.attempts === 0) tracker.attempt();
        tracker.fail(now + ms, error);
        events.emit('error', { ...base, error, attemptMs: attemptMs ?? undefined });
      },
      cancel(final: boolean) {
        if (final) tracker.cancel(now + ms);
        events.emit('cancel', { ...base, final });
      },
      join() {
        events.emit('dedup', { key: endpoint, method: 'GET', url: 'x', consumers: 2, endpoint });
      },
    };
  }
  return {
    events,
    intel,
    off,
    flight,
    advance: (ms: number) => {
      now += ms;
    },
  };
}

describe('Intelligence', () => {
  it('counts each lifecycle event once, and derives requests / misses / rates on read', () => {
    const t = setup();
    const ok = t.flight('GET /a', 40);
    ok.join();
    ok.succeed();
    const retried = t.flight('GET /a', 60);
    retried.retry(errorOf.http(429));
    retried.succeed();
    t.flight('GET /a', 100).fail(errorOf.timeout(100));
    const cancelled = t.flight('GET /b');
    cancelled.join();
    cancelled.cancel(false);
    cancelled.cancel(true);
    hit(t.intel, { endpoint: 'GET /a' });
    hit(t.intel, { endpoint: 'GET /a' });
    t.events.emit('circuit-rejected', {
      endpoint: 'GET /a',
      method: 'GET',
      path: '/a',
      error: errorOf.circuitOpen('GET /a'),
    });

    expect(t.intel.endpoint('GET', '/a')).toEqual({
      method: 'GET',
      path: '/a',
      requests: 7, // 3 flights + 1 join + 2 hits + 1 rejection
      successes: 2,
      failures: 1,
      cacheHits: 2,
      cacheMisses: 5,
      dedupPrevented: 1,
      retriesPerformed: 1,
      retriesRecovered: 1,
      rateLimited: 1,
      timeouts: 1,
      cancels: 0,
      latency: { avg: 200 / 3, p50: 60, p95: 100, samples: 3 },
      circuit: 'open',
      circuitFailures: 5,
      circuitRejected: 1,
    });
    const { summary, endpoints } = t.intel.snapshot();
    expect(endpoints.map((e) => `${e.method} ${e.path}`)).toEqual(['GET /a', 'GET /b']);
    expect(summary).toEqual({
      totalRequests: 9,
      cacheHits: 2,
      cacheMisses: 7,
      deduplicated: 2,
      retriesPerformed: 1,
      retriesRecovered: 1,
      failures: 1,
      rateLimited: 1,
      timeouts: 1,
      cancels: 2,
      activeRequests: 0,
      cacheHitRate: 2 / 9,
      dedupRate: 2 / 9,
      retryRate: 1 / 9,
      failureRate: 1 / 9,
      rateLimitRate: 1 / 9,
      adaptive: {
        decisions: 0,
        concurrencyReductions: 0,
        concurrencyRecoveries: 0,
        throttles: 0,
        retryChanges: 0,
      },
      circuits: { open: 1, halfOpen: 0, closed: 2 },
      circuitRejected: 1,
    });
  });

  it('activeRequests: flights started and not ended (final cancels end them)', () => {
    const t = setup();
    const a = t.flight();
    const b = t.flight();
    t.flight();
    expect(t.intel.snapshot().summary.activeRequests).toBe(3);
    a.succeed();
    b.cancel(false);
    expect(t.intel.snapshot().summary.activeRequests).toBe(2);
    b.cancel(true);
    expect(t.intel.snapshot().summary.activeRequests).toBe(1);
    t.intel.reset(); // live state survives reset
    expect(t.intel.snapshot().summary.activeRequests).toBe(1);
  });

  it('latency samples are attempts that got a response: retried ones too, never timed-out ones', () => {
    const t = setup();
    const f = t.flight('GET /s', 30);
    f.retry(errorOf.http(503), 20);
    f.retry(errorOf.timeout(500)); // no response: no sample
    f.succeed();
    t.flight('GET /s').fail(errorOf.timeout(500), null);
    expect(t.intel.endpoint('GET', '/s')?.latency).toMatchObject({ samples: 2, avg: 25 });
  });

  it('a cancelled flight is not a failure and has no latency sample', () => {
    const t = setup();
    t.flight().cancel(true);
    t.flight().fail(errorOf.cancelled()); // the client never does this, but if it did
    const e = t.intel.endpoint('GET', '/a')!;
    expect(e.cancels).toBe(1);
    expect(e.latency.samples).toBe(1);
  });

  it('a job refused by the pre-start gate (circuit-rejected, then error with CircuitOpenError) is one rejected request, not a failure', () => {
    const t = setup();
    const error = errorOf.circuitOpen('GET /a');
    const flight = t.flight();
    t.events.emit('circuit-rejected', { endpoint: 'GET /a', method: 'GET', path: '/a', error });
    flight.fail(error);
    expect(t.intel.endpoint('GET', '/a')).toMatchObject({
      requests: 1,
      cacheMisses: 1,
      failures: 0,
      circuitRejected: 1,
      latency: { samples: 0 },
    });
    expect(t.intel.snapshot().summary.activeRequests).toBe(0);
  });

  it('endpoint() normalizes method case and ignores a query; unknown endpoints are undefined', () => {
    const t = setup();
    t.flight('GET /a').succeed();
    expect(t.intel.endpoint('get', '/a?x=1')?.successes).toBe(1);
    expect(t.intel.endpoint('GET', '/nope')).toBeUndefined();
    expect(t.intel.endpoint('POST', '/a')).toBeUndefined();
  });

  it('reset() forgets counters and samples', () => {
    const t = setup();
    const spec = { endpoint: 'GET /a' };
    t.flight().succeed();
    hit(t.intel, spec);
    t.intel.reset();
    expect(t.intel.endpoint('GET', '/a')).toBeUndefined();
    expect(t.intel.snapshot().summary.totalRequests).toBe(0);
    hit(t.intel, spec); // the lookup caches were cleared too: counted in a fresh record
    expect(t.intel.endpoint('GET', '/a')?.cacheHits).toBe(1);
    expect(t.intel.snapshot().endpoints).toHaveLength(1);
  });

  it('switching endpoints keeps counts apart (one-entry lookup caches)', () => {
    const t = setup();
    const a = { endpoint: 'GET /a' };
    const b = { endpoint: 'GET /b' };
    for (let i = 0; i < 3; i++) {
      hit(t.intel, a);
      hit(t.intel, a);
      hit(t.intel, b);
      hit(t.intel, { endpoint: 'GET /a' }); // another spec object, same endpoint
      t.flight('GET /b').succeed();
    }
    expect(t.intel.endpoint('GET', '/a')?.cacheHits).toBe(9);
    expect(t.intel.endpoint('GET', '/b')).toMatchObject({ cacheHits: 3, successes: 3 });
    // Hits counted on the fast path are added once, whatever reads them and how often.
    for (let i = 0; i < 5; i++) hit(t.intel, b);
    expect(t.intel.endpoint('GET', '/b')?.cacheHits).toBe(8);
    expect(t.intel.endpoint('GET', '/b')?.cacheHits).toBe(8);
    expect(t.intel.snapshot().summary.cacheHits).toBe(17);
    hit(t.intel, b);
    expect(t.intel.snapshot().summary.cacheHits).toBe(18);
  });

  it('disabled: subscribes to nothing and answers an empty snapshot', () => {
    const t = setup({ enabled: false });
    expect(t.events.listenerCount()).toBe(0);
    t.flight().succeed();
    expect(t.intel.snapshot().endpoints).toEqual([]);
    expect(t.intel.snapshot().summary).toMatchObject({
      totalRequests: 0,
      circuits: { open: 0, halfOpen: 0, closed: 0 },
    });
    expect(t.intel.recommends).toBe(false);
    expect(t.intel.recommend('GET /a')).toBeUndefined();
  });

  it('observe() returns an unsubscribe that removes every listener', () => {
    const t = setup();
    expect(t.events.listenerCount()).toBe(7);
    t.off();
    expect(t.events.listenerCount()).toBe(0);
  });

  it('recommends from the endpoint window only when a switch is on', () => {
    const plain = setup();
    for (let i = 0; i < 5; i++) plain.flight('GET /a', 200).succeed();
    expect(plain.intel.recommends).toBe(false);
    expect(plain.intel.recommend('GET /a')).toBeUndefined();

    const t = setup({ adaptiveTimeout: true });
    for (let i = 0; i < 4; i++) t.flight('GET /a', 200).succeed();
    expect(t.intel.recommend('GET /a')).toBeUndefined();
    t.flight('GET /a', 300).succeed();
    const rec = t.intel.recommend('GET /a');
    expect(rec).toEqual({ timeout: 900 });
    expect(t.intel.recommend('GET /a')).toBe(rec); // cached until the next sample
    expect(t.intel.recommend('GET /unknown')).toBeUndefined();
  });
});

describe('endpoint records are bounded', () => {
  it('keeps at most MAX_ENDPOINTS records, keeps busy ones, and the summary stays exact', () => {
    const { flight, intel } = setup();
    const total = MAX_ENDPOINTS + 500;
    for (let i = 0; i < total; i++) {
      flight(`GET /items/${i}`).succeed();
      flight('GET /hot').succeed(); // touched between every new endpoint: never evicted
    }
    const snap = intel.snapshot();
    expect(snap.endpoints.length).toBeLessThanOrEqual(MAX_ENDPOINTS);
    expect(snap.endpoints.find((e) => e.path === '/hot')?.successes).toBe(total);
    expect(snap.summary.totalRequests).toBe(total * 2);
    expect(snap.summary.failures).toBe(0);
    expect(intel.endpoint('GET', `/items/${total - 1}`)?.successes).toBe(1);
    expect(intel.endpoint('GET', '/items/0')).toBeUndefined();
    intel.reset();
    expect(intel.snapshot().summary.totalRequests).toBe(0);
  });
});
