import { describe, expect, it } from 'vitest';
import { errorOf } from '../errors/errors.fixture';
import { EventEmitter } from '../events/emitter';
import { Tracker } from '../tracker/tracker';
import type { ClientEvents } from '../types/events';
import { AGE_WINDOW } from './endpoint-record';
import { Intelligence, MAX_ENDPOINTS } from './intelligence';
import { resolveIntelligenceOptions } from './options';

/** A cache hit the way the client reports it (see HitTally). */
function hit(intel: Intelligence, spec: { endpoint: string }) {
  if (intel.hits.spec === spec) intel.hits.pending++;
  else intel.hits.switchTo(spec);
}

/** Intelligence fed synthetic lifecycle events, shaped the way the client emits them. */
function setup(options = {}) {
  const listenerErrors: unknown[] = [];
  const events = new EventEmitter<ClientEvents>({ onError: (error) => listenerErrors.push(error) });
  const intel = new Intelligence(resolveIntelligenceOptions(options), {
    circuits: {
      stateOf: (e) => (e === 'GET /a' ? 'open' : 'closed'),
      failuresOf: (e) => (e === 'GET /a' ? 5 : 0),
      counts: () => ({ open: 1, halfOpen: 0, closed: 2 }),
    },
    clock: {
      now: () => {
        if (broken) throw new Error('clock broken');
        return now;
      },
    },
  });
  let broken = false;
  const off = intel.observe(events);
  let now = 0;
  // A flight ends at the clock's time, as the client ends it (intelligence ages its samples by
  // the tracker's end); `ms` is its last attempt's duration, told as `attemptMs`.
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
        // The client schedules it at the time it read for the failed attempt.
        tracker.retry(now);
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
        tracker.succeed(now);
        events.emit('success', { ...base, response: {} as never, attemptMs: ms });
      },
      /** `attemptMs: null`: the last attempt got no response (a timeout, a network error). */
      fail(error: unknown, attemptMs: number | null = ms) {
        // Its attempt was made (a flight that made none counts no attempt error).
        if (tracker.attempts === 0) tracker.attempt();
        tracker.fail(now, error);
        events.emit('error', { ...base, error, attemptMs: attemptMs ?? undefined });
      },
      cancel(final: boolean) {
        if (final) tracker.cancel(now);
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
    /** The injected clock throws from now on, as a broken one may. */
    breakClock: () => {
      broken = true;
    },
    listenerErrors,
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

  it('a retry is sampled at the time its tracker has: a throwing clock breaks no listener', () => {
    const t = setup();
    t.advance(1000);
    const f = t.flight('GET /s', 30);
    t.breakClock();
    f.retry(errorOf.http(503), 20);
    f.succeed();
    expect(t.listenerErrors).toEqual([]);
    const r = t.intel.records.get('GET /s')!;
    expect(r).toMatchObject({ retriesPerformed: 1, successes: 1 });
    expect(r.latency.size).toBe(2);
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

describe('aging: samples from before a quiet spell', () => {
  const HOUR = 3_600_000;
  /** `n` flights of `ms` on GET /a, one every `step` ms of the clock. */
  function play(t: ReturnType<typeof setup>, n: number, ms: number, step = 1000) {
    for (let i = 0; i < n; i++) {
      t.advance(step);
      t.flight('GET /a', ms).succeed();
    }
  }
  const on = { adaptiveTimeout: true, adaptiveStaleWhileRevalidate: true };

  it('a recommendation does not rest on samples from before a quiet hour', () => {
    const t = setup(on);
    play(t, AGE_WINDOW, 1000); // a window of samples, one a second: the pace is a minute (the least)
    expect(t.intel.recommend('GET /a')).toEqual({
      timeout: 3000,
      strategy: 'stale-while-revalidate',
    });
    t.advance(HOUR);
    // The next request after the spell: the samples held are another moment's.
    expect(t.intel.recommend('GET /a')).toBeUndefined();
    // The sample that ends it drops them: p95 is over the new samples only.
    play(t, 1, 50);
    expect(t.intel.endpoint('GET', '/a')!.latency).toEqual({
      avg: 50,
      p50: 50,
      p95: 50,
      samples: 1,
    });
    expect(t.intel.recommend('GET /a')).toBeUndefined(); // fewer than 5 samples
    play(t, 4, 50);
    expect(t.intel.recommend('GET /a')).toEqual({ timeout: 150 });
    // Counters are history, not samples: they stand.
    expect(t.intel.endpoint('GET', '/a')!.successes).toBe(AGE_WINDOW + 5);
  });

  it('the recommendation read before the spell is not taken for the new samples', () => {
    const t = setup(on);
    play(t, AGE_WINDOW, 1000);
    expect(t.intel.recommend('GET /a')).toMatchObject({ timeout: 3000 }); // read: cached
    t.advance(HOUR);
    play(t, AGE_WINDOW, 50); // as many samples as before, none read in between
    expect(t.intel.recommend('GET /a')).toEqual({ timeout: 150 });
  });

  it('a gap under the endpoint’s pace, or under a minute, ages nothing', () => {
    // One sample every 10 minutes: a window takes 5 hours, so a 10-minute gap is no spell.
    const slow = setup(on);
    play(slow, AGE_WINDOW, 1000, 600_000);
    slow.advance(600_000);
    expect(slow.intel.recommend('GET /a')).toEqual({
      timeout: 3000,
      strategy: 'stale-while-revalidate',
    });
    play(slow, 1, 50, 0);
    expect(slow.intel.endpoint('GET', '/a')!.latency.samples).toBe(AGE_WINDOW + 1);
    // Windows of ~32 ms: a gap under a minute is no spell either...
    const under = setup(on);
    play(under, AGE_WINDOW, 1000, 1);
    under.advance(59_000);
    expect(under.intel.recommend('GET /a')).toMatchObject({ timeout: 3000 });
    play(under, 1, 50, 0);
    expect(under.intel.endpoint('GET', '/a')!.latency.samples).toBe(AGE_WINDOW + 1);
    // ...and one over it is.
    const over = setup(on);
    play(over, AGE_WINDOW, 1000, 1);
    over.advance(61_000);
    expect(over.intel.recommend('GET /a')).toBeUndefined();
    play(over, 1, 50, 0);
    expect(over.intel.endpoint('GET', '/a')!.latency.samples).toBe(1);
  });

  it('no pace is known until a window fills: then a pace that slows for good ages once', () => {
    const t = setup(on);
    play(t, AGE_WINDOW - 1, 1000);
    t.advance(HOUR);
    // Fewer samples than a window since the first: no pace known, nothing ages.
    expect(t.intel.recommend('GET /a')).toMatchObject({ timeout: 3000 });
    play(t, 1, 1000, 0); // the window fills (its span, an hour, is the pace)
    play(t, AGE_WINDOW, 1000, 120_000); // one every 2 minutes: within that pace
    expect(t.intel.endpoint('GET', '/a')!.latency.samples).toBe(2 * AGE_WINDOW);
    // Fast windows, then one sample every 2 minutes for good: the first gap ages the samples,
    // the window it starts is not aged (no pace known yet).
    const s = setup(on);
    play(s, AGE_WINDOW, 1000, 10);
    play(s, AGE_WINDOW, 1000, 120_000);
    expect(s.intel.endpoint('GET', '/a')!.latency.samples).toBe(AGE_WINDOW);
  });

  it('every attempt that ends is a sample to age by, one without a latency too', () => {
    const t = setup(on);
    play(t, AGE_WINDOW, 1000);
    t.advance(HOUR);
    // A timed-out attempt measures no latency, but it is the endpoint's first attempt after
    // the spell: the samples from before it go.
    t.flight('GET /a').fail(errorOf.timeout(1), null);
    expect(t.intel.endpoint('GET', '/a')!.latency.samples).toBe(0);
    expect(t.intel.recommend('GET /a')).toBeUndefined();
    t.flight('GET /a', 70).retry(errorOf.http(503), 70);
    expect(t.intel.endpoint('GET', '/a')!.latency).toMatchObject({ p95: 70, samples: 1 });
    // No pace known since (no window filled): an hour is no spell yet.
    t.advance(HOUR);
    t.flight('GET /a', 80).fail(errorOf.http(500));
    expect(t.intel.endpoint('GET', '/a')!.latency).toMatchObject({ p95: 80, samples: 2 });
  });

  it.each([Number.NaN, Number.POSITIVE_INFINITY])('a clock gone to %d ages nothing', (bad) => {
    const t = setup(on);
    play(t, AGE_WINDOW, 1000);
    t.advance(bad);
    expect(t.intel.recommend('GET /a')).toMatchObject({ timeout: 3000 });
    play(t, 1, 1000, 0);
    expect(t.intel.endpoint('GET', '/a')!.latency.samples).toBe(AGE_WINDOW + 1);
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
