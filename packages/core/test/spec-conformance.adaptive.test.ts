/**
 * Spec conformance, black box (see spec-conformance.test.ts): the adaptive engine as the client
 * spec (AdaptiveOptions, EndpointAdaptiveState / AdaptiveMetrics, the adaptive throttle table,
 * adaptive concurrency rules 1-8, events rule 3, the AdaptiveController, the Limits rows) and
 * issue #5 state it, for what adaptive*.test.ts did not pin: the documented defaults end to end,
 * the exact readout shapes, every rule-1 boundary through the client, the floor and ceiling, a
 * half-open probe passing a saturated adaptive ceiling, what is and is not a sample, reset in
 * the middle of things, and option values at and beyond their limits.
 *
 * Time is the client's injected clock (a FakeClock); the fetch answers each call after a
 * scripted delay on that clock, so every latency sample is exact. Windows close every
 * `outcomeWindow` samples (README "Adaptive engine", Windows).
 */
import { describe, expect, test } from 'vitest';
import { type AdaptiveOptions, type Client, type ClientOptions, createClient } from '../src/index';
import {
  type Answer,
  createFakeFetch,
  createTestClient,
  FakeClock,
  quickResponse,
} from './helpers';

/** Answers a call: after `ms` with `status`, or never ('hang', until its signal aborts). */
type Script = (path: string, query: string, n: number) => Answer | 'hang';

function setup(options: ClientOptions, script: Script) {
  const clock = new FakeClock();
  let n = 0;
  const fake = createFakeFetch({
    handler: (call) => {
      const url = new URL(call.url);
      const a = script(url.pathname, url.search, n++);
      if (a === 'hang') return undefined;
      return new Promise<Response>((resolve) => {
        clock.setTimeout(() => resolve(quickResponse(a.status ?? 200, {}, a.headers)), a.ms);
      });
    },
  });
  const client = createTestClient({
    baseURL: 'https://api.test',
    fetch: fake.fetch,
    clock,
    cache: { enabled: false },
    circuitBreaker: { enabled: false },
    retry: false,
    ...options,
  });
  let i = 0;
  /** Sends `count` GETs of `path` (distinct queries) and runs the clock until all settle. */
  const burst = async (path: string, count: number) => {
    const ps = Array.from({ length: count }, () => client.get(`${path}?i=${i++}`).catch(() => {}));
    await clock.runAll();
    await Promise.all(ps);
  };
  return { client, clock, fake, burst };
}

const state = (c: Client, path: string) => c.adaptive().endpoint('GET', path);
const ZERO_METRICS = {
  decisions: 0,
  concurrencyReductions: 0,
  concurrencyRecoveries: 0,
  throttles: 0,
  retryChanges: 0,
};

/** Small windows: a window is 4 samples, judged on the last 4 latencies. */
const SMALL: AdaptiveOptions = {
  enabled: true,
  latencyWindow: 4,
  outcomeWindow: 4,
  degradeSamples: 1,
  recoverySamples: 1,
  changeCooldown: 0,
  highLatencyMs: 500,
  lowLatencyMs: 100,
};

describe('the documented defaults, end to end', () => {
  test('windows of 32 samples; 3 pressured windows (p95 >= 2000) drop 8 -> 7; cooldown 2; 3 healthy windows (p95 < 1000) raise it back', async () => {
    let ms = 2000; // p95 exactly at highLatencyMs: pressured
    const t = setup({ scheduler: {}, adaptive: { enabled: true, concurrency: true } }, () => ({
      ms,
    }));
    await t.burst('/slow', 31);
    expect(state(t.client, '/slow')).toMatchObject({
      configured: 8,
      effective: 8,
      reason: 'no window closed yet: ceiling 8',
    });
    await t.burst('/slow', 1); // the 32nd sample closes window 1
    expect(state(t.client, '/slow')!.reason).toBe(
      'p95 2000 ms >= highLatencyMs 2000 for 1 window (degradeSamples 3): holding ceiling 8',
    );
    await t.burst('/slow', 63);
    expect(state(t.client, '/slow')!.effective).toBe(8);
    await t.burst('/slow', 1); // window 3
    const reduced = state(t.client, '/slow')!;
    expect(reduced).toMatchObject({
      configured: 8,
      effective: 7,
      mode: 'reducing',
      health: 'degraded',
      degradedSince: t.clock.now(),
      counters: { ...ZERO_METRICS, decisions: 1, concurrencyReductions: 1 },
    });
    expect(reduced.reason).toBe('p95 2000 ms >= highLatencyMs 2000 for 3 windows: ceiling 8 → 7');
    // The scheduler applies it: 8 requests, 7 start.
    const calls = t.fake.calls.length;
    const eight = Array.from({ length: 8 }, (_, i) => t.client.get(`/slow?x=${i}`));
    await t.clock.advance(0);
    expect(t.fake.calls.length - calls).toBe(7);
    expect(t.client.scheduler().stats()).toMatchObject({ active: 7, queued: 1 });
    await t.clock.runAll();
    await Promise.all(eight);
    // 8 of window 4 so far; window 4 closes pressured, inside the cooldown (1 of 2 windows).
    await t.burst('/slow', 24);
    expect(state(t.client, '/slow')).toMatchObject({ effective: 7 });
    expect(state(t.client, '/slow')!.reason).toContain('cooling down (1 of changeCooldown 2');
    // Fast now (999 ms < lowLatencyMs 1000). p95 is over the last 64 latencies (two windows):
    // window 5 still counts window 4's slow ones, is pressured, and the cooldown is over.
    ms = 999;
    await t.burst('/slow', 32);
    expect(state(t.client, '/slow')!.reason).toBe(
      'p95 2000 ms >= highLatencyMs 2000 for 5 windows: ceiling 7 → 6',
    );
    await t.burst('/slow', 64); // windows 6 and 7: healthy, streak 2 of recoverySamples 3
    expect(state(t.client, '/slow')).toMatchObject({
      effective: 6,
      mode: 'reducing',
      health: 'recovering',
    });
    await t.burst('/slow', 32); // window 8: +1
    expect(state(t.client, '/slow')).toMatchObject({ effective: 7, mode: 'recovering' });
    await t.burst('/slow', 32); // window 9: cooling down
    expect(state(t.client, '/slow')!.effective).toBe(7);
    await t.burst('/slow', 32); // window 10: back to the configured ceiling
    expect(state(t.client, '/slow')).toMatchObject({
      configured: 8,
      effective: 8,
      mode: 'nominal',
      health: 'good',
      counters: {
        ...ZERO_METRICS,
        decisions: 4,
        concurrencyReductions: 2,
        concurrencyRecoveries: 2,
      },
    });
    expect(state(t.client, '/slow')!.degradedSince).toBeUndefined();
    expect(t.client.adaptive().metrics()).toEqual(state(t.client, '/slow')!.counters);
    expect(t.client.intelligence().snapshot().summary.adaptive).toEqual(
      t.client.adaptive().metrics(),
    );
  });

  test('stale-while-revalidate engages at p95 >= swrLatencyMs 1500, not at 1499', async () => {
    for (const [ms, engaged] of [
      [1500, true],
      [1499, false],
    ] as const) {
      const t = setup(
        { cache: { enabled: true }, adaptive: { enabled: true, staleWhileRevalidate: true } },
        () => ({ ms }),
      );
      await t.burst('/s', 32);
      expect(state(t.client, '/s')!.strategy).toBe(engaged ? 'stale-while-revalidate' : undefined);
      expect(t.client.resolve('GET', '/s').cache?.strategy ?? 'cache-first').toBe(
        engaged ? 'stale-while-revalidate' : 'cache-first',
      );
    }
  });

  test('enabled: true alone measures and explains, but changes nothing', async () => {
    const t = setup({ scheduler: { concurrency: 2 }, adaptive: { enabled: true } }, (_, __, n) => ({
      ms: 5000,
      status: n % 2 === 0 ? 429 : 503,
    }));
    await t.burst('/x', 128);
    expect(state(t.client, '/x')).toMatchObject({
      configured: 2,
      effective: 2,
      retryMode: 'nominal',
      retryMultiplier: 1,
      reason: expect.stringContaining('concurrency switch off'),
      retryReason: 'rateLimit switch off: backoff not adapted',
      strategyReason: 'staleWhileRevalidate switch off: strategy not adapted',
      signals: { samples: 64, p95: 5000, errorRatio: 0.5, rateLimitRatio: 0.5 },
      counters: ZERO_METRICS,
    });
    expect(state(t.client, '/x')!.strategy).toBeUndefined();
  });
});

describe('readout shapes (AdaptiveController)', () => {
  const FIELDS = [
    'configured',
    'counters',
    'effective',
    'endpoint',
    'health',
    'mode',
    'reason',
    'retryMode',
    'retryMultiplier',
    'retryReason',
    'signals',
    'strategyReason',
  ];

  test('EndpointAdaptiveState has exactly its fields; strategy and degradedSince appear once engaged', async () => {
    const t = setup(
      {
        scheduler: { concurrency: 4 },
        adaptive: { ...SMALL, concurrency: true, staleWhileRevalidate: true, swrLatencyMs: 400 },
      },
      (path) => ({ ms: path === '/slow' ? 600 : 10 }),
    );
    await t.burst('/fast', 4);
    const fast = state(t.client, '/fast')!;
    expect(Object.keys(fast).sort()).toEqual(FIELDS);
    expect(Object.keys(fast.signals).sort()).toEqual(
      ['active', 'avg', 'errorRatio', 'p50', 'p95', 'rateLimitRatio', 'samples'].sort(),
    );
    expect(Object.keys(fast.counters).sort()).toEqual(Object.keys(ZERO_METRICS).sort());
    expect(fast).toMatchObject({
      endpoint: 'GET /fast',
      configured: 4,
      effective: 4,
      mode: 'nominal',
      health: 'good',
      retryMultiplier: 1,
      retryMode: 'nominal',
      signals: {
        avg: 10,
        p50: 10,
        p95: 10,
        samples: 4,
        errorRatio: 0,
        rateLimitRatio: 0,
        active: 0,
      },
    });
    for (const key of ['reason', 'retryReason', 'strategyReason'] as const) {
      expect(typeof fast[key]).toBe('string');
      expect(fast[key].length).toBeGreaterThan(0);
    }
    await t.burst('/slow', 4);
    const slow = state(t.client, '/slow')!;
    expect(Object.keys(slow).sort()).toEqual([...FIELDS, 'degradedSince', 'strategy'].sort());
    expect(slow).toMatchObject({
      strategy: 'stale-while-revalidate',
      degradedSince: t.clock.now(),
      effective: 3,
      configured: 4,
    });
  });

  test('snapshot() maps endpoint keys to states; endpoint() ignores the query and the method’s case; unknown -> undefined', async () => {
    const t = setup({ adaptive: SMALL }, () => ({ ms: 10 }));
    expect(t.client.adaptive().snapshot()).toEqual({ enabled: true, endpoints: {} });
    expect(t.client.adaptive().endpoint('GET', '/a')).toBeUndefined();
    await t.burst('/a', 2);
    const post = t.client.post('/a', {});
    await t.clock.runAll();
    await post;
    const snap = t.client.adaptive().snapshot();
    expect(snap.enabled).toBe(true);
    expect(Object.keys(snap.endpoints).sort()).toEqual(['GET /a', 'POST /a']);
    expect(snap.endpoints['GET /a']).toEqual(t.client.adaptive().endpoint('GET', '/a'));
    expect(t.client.adaptive().endpoint('get', '/a?page=2')).toEqual(snap.endpoints['GET /a']);
    expect(t.client.adaptive().endpoint('GET', 'https://api.test/a?x')).toEqual(
      snap.endpoints['GET /a'],
    );
    expect(t.client.adaptive().endpoint('DELETE', '/a')).toBeUndefined();
    expect(t.client.adaptive().metrics()).toEqual(ZERO_METRICS);
    // Readouts are copies: changing one changes nothing.
    const s = t.client.adaptive().endpoint('GET', '/a')!;
    s.effective = -1;
    s.counters.decisions = 99;
    snap.endpoints['GET /a']!.signals.samples = 99;
    t.client.adaptive().metrics().decisions = 99;
    expect(t.client.adaptive().endpoint('GET', '/a')).toMatchObject({
      counters: { decisions: 0 },
      signals: { samples: 2 },
    });
    expect(t.client.adaptive().metrics().decisions).toBe(0);
  });

  test('bad endpoint() arguments are typed errors', () => {
    const t = setup({ adaptive: SMALL }, () => ({ ms: 10 }));
    expect(() => t.client.adaptive().endpoint(undefined as never, '/a')).toThrow(TypeError);
    expect(() => t.client.adaptive().endpoint('GET', 7 as never)).toThrow(TypeError);
  });
});

describe('concurrency rules through the client', () => {
  test('rule 1 at each boundary: p95 = highLatencyMs, p95 = lowLatencyMs (deadband), error share = errorRatio, 429 share = rateLimitRatio; a 404 is no error', async () => {
    let answers: Answer[] = [];
    const t = setup(
      {
        scheduler: { concurrency: 4 },
        adaptive: { ...SMALL, concurrency: true, errorRatio: 0.25, rateLimitRatio: 0.5 },
      },
      (_, __, n) => answers[n % 4]!,
    );
    const window = async (next: Answer[]) => {
      answers = next;
      const before = t.fake.calls.length;
      const ps = next.map((_, i) => t.client.get(`/e?w=${before + i}`).catch(() => {}));
      // Each window's calls are numbered from a multiple of 4, so answers[n % 4] is theirs.
      expect(before % 4).toBe(0);
      await t.clock.runAll();
      await Promise.all(ps);
      return state(t.client, '/e')!.effective;
    };
    const ms = (x: number, status = 200) => ({ ms: x, status });
    const four = (a: Answer) => [a, a, a, a];
    expect(await window(four(ms(500)))).toBe(3); // p95 = highLatencyMs: pressured
    expect(await window(four(ms(100)))).toBe(3); // p95 = lowLatencyMs: deadband, nothing moves
    expect(state(t.client, '/e')!.reason).toContain('deadband');
    expect(await window(four(ms(99)))).toBe(4); // healthy
    expect(await window([ms(10, 503), ms(10), ms(10), ms(10)])).toBe(3); // 1 of 4 = errorRatio
    expect(await window(four(ms(10)))).toBe(4);
    expect(await window([ms(10, 429), ms(10, 429), ms(10), ms(10)])).toBe(3); // 2 of 4 = 0.5
    expect(await window(four(ms(10)))).toBe(4);
    expect(await window([ms(10, 429), ms(10), ms(10), ms(10)])).toBe(4); // 0.25 < 0.5: healthy
    expect(await window(four(ms(10, 404)))).toBe(4); // answered: healthy, no pressure
    expect(state(t.client, '/e')!.counters).toEqual({
      ...ZERO_METRICS,
      decisions: 6,
      concurrencyReductions: 3,
      concurrencyRecoveries: 3,
    });
  });

  test('rule 4: never below minConcurrency, never above the configured concurrency', async () => {
    const t = setup(
      {
        scheduler: { concurrency: 3 },
        adaptive: { ...SMALL, concurrency: true, minConcurrency: 2 },
      },
      (path) => ({ ms: path === '/slow' ? 1000 : 10 }),
    );
    let inFlight = 0;
    let most = 0;
    t.client.on('request-started', () => {
      most = Math.max(most, ++inFlight);
    });
    t.client.on('success', () => inFlight--);
    for (let i = 0; i < 5; i++) await t.burst('/slow', 4);
    expect(state(t.client, '/slow')).toMatchObject({ effective: 2, counters: { decisions: 1 } });
    expect(state(t.client, '/slow')!.reason).toContain('minConcurrency 2');
    most = 0;
    await t.burst('/slow', 6);
    expect(most).toBe(2);
    for (let i = 0; i < 5; i++) await t.burst('/fast', 4);
    expect(state(t.client, '/fast')).toMatchObject({ effective: 3, counters: ZERO_METRICS });

    // A floor above the configured concurrency: the configured one is the ceiling.
    const high = setup(
      {
        scheduler: { concurrency: 2 },
        adaptive: { ...SMALL, concurrency: true, minConcurrency: 5 },
      },
      () => ({ ms: 1000 }),
    );
    for (let i = 0; i < 3; i++) await high.burst('/x', 4);
    expect(state(high.client, '/x')).toMatchObject({
      configured: 2,
      effective: 2,
      counters: ZERO_METRICS,
    });
  });

  test('a floor above the configured concurrency: the reason names the ceiling it holds', async () => {
    const t = setup(
      {
        scheduler: { concurrency: 2 },
        adaptive: { ...SMALL, concurrency: true, minConcurrency: 5 },
      },
      () => ({ ms: 1000 }),
    );
    for (let i = 0; i < 5; i++) await t.burst('/x', 4);
    const s = state(t.client, '/x')!;
    expect(s).toMatchObject({ configured: 2, effective: 2, counters: ZERO_METRICS });
    expect(s.reason).toContain('the ceiling is at the configured 2 < minConcurrency 5');
  });

  test('circuit rule 5: a half-open probe passes the pre-start gate and a saturated adaptive ceiling', async () => {
    const t = setup(
      {
        scheduler: { concurrency: 2 },
        circuitBreaker: { failureThreshold: 2, resetTimeout: 1000 },
        adaptive: {
          ...SMALL,
          concurrency: true,
          outcomeWindow: 2,
          errorRatio: 0.5,
          highLatencyMs: 10_000,
          lowLatencyMs: 5000,
        },
      },
      (_, query) =>
        query.startsWith('?h') ? 'hang' : { ms: 10, status: query === '?f' ? 503 : 200 },
    );
    const events: string[] = [];
    t.client.on('circuit-open', () => events.push('circuit-open'));
    t.client.on('circuit-half-open', () => events.push('circuit-half-open'));
    const hang = t.client.get('/e?h');
    const hangResult = hang.catch((e: unknown) => e);
    const f1 = t.client.get('/e?f').catch(() => {});
    await t.clock.advance(10);
    const f2 = t.client.get('/e?f').catch(() => {});
    await t.clock.advance(10);
    await Promise.all([f1, f2]);
    expect(events).toEqual(['circuit-open']);
    // Two errors closed a window: ceiling 2 -> 1, held by the hanging request.
    expect(state(t.client, '/e')).toMatchObject({ effective: 1, signals: { active: 1 } });
    await t.clock.advance(1000);
    const calls = t.fake.calls.length;
    const probe = t.client.get('/e?p');
    await t.clock.advance(0);
    expect(events).toEqual(['circuit-open', 'circuit-half-open']);
    expect(t.fake.calls.length).toBe(calls + 1); // the probe started past the saturated ceiling
    await t.clock.advance(10);
    expect((await probe).status).toBe(200);
    expect(t.client.circuitBreaker().status('GET', '/e').state).toBe('closed');
    // Any other request of the endpoint waits for the ceiling.
    const next = t.client.get('/e?n');
    await t.clock.advance(0);
    expect(t.fake.calls.length).toBe(calls + 1);
    expect(t.client.scheduler().stats()).toMatchObject({ active: 1, queued: 1 });
    hang.cancel();
    await t.clock.advance(10);
    expect((await next).status).toBe(200);
    await hangResult;
  });
});

describe('switches that need each other', () => {
  test('rule 6: a reduced ceiling marks the endpoint degraded, so its reads use SWR though p95 < swrLatencyMs', async () => {
    const t = setup(
      {
        cache: { enabled: true },
        scheduler: { concurrency: 4 },
        adaptive: { ...SMALL, concurrency: true, staleWhileRevalidate: true, swrLatencyMs: 60_000 },
      },
      () => ({ ms: 600 }),
    );
    await t.burst('/d', 4);
    expect(state(t.client, '/d')).toMatchObject({
      effective: 3,
      health: 'degraded',
      strategy: 'stale-while-revalidate',
      strategyReason: 'ceiling reduced to 3 of 4: reads use stale-while-revalidate',
    });
    expect(t.client.resolve('GET', '/d').cache?.strategy).toBe('stale-while-revalidate');
  });

  test('the concurrency switch with a disabled scheduler has nothing to adapt, and says so', async () => {
    const t = setup(
      { scheduler: { enabled: false }, adaptive: { ...SMALL, concurrency: true } },
      () => ({ ms: 600 }),
    );
    await t.burst('/n', 8);
    expect(state(t.client, '/n')).toMatchObject({
      configured: Number.POSITIVE_INFINITY,
      effective: Number.POSITIVE_INFINITY,
      counters: ZERO_METRICS,
      reason: expect.stringContaining('no scheduler'),
    });
  });

  test('with intelligence off, summary.adaptive still carries the engine’s counters', async () => {
    const t = setup(
      { intelligence: { enabled: false }, adaptive: { ...SMALL, rateLimit: true } },
      () => ({ ms: 10, status: 429 }),
    );
    await t.burst('/i', 4);
    expect(t.client.adaptive().metrics()).toMatchObject({ throttles: 1, decisions: 1 });
    expect(t.client.intelligence().snapshot().summary.adaptive).toEqual(
      t.client.adaptive().metrics(),
    );
  });
});

describe('the throttle table through the client', () => {
  const throttle = (extra: AdaptiveOptions = {}) =>
    ({
      ...SMALL,
      outcomeWindow: 2,
      rateLimit: true,
      recoverySamples: 2,
      ...extra,
    }) as AdaptiveOptions;

  test('rateLimit without retry: throttled after one 429 window, backoff unchanged, released after recoverySamples clean windows', async () => {
    let status = 429;
    const t = setup(
      { adaptive: throttle(), retry: { attempts: 2, baseDelay: 100, jitter: false } },
      () => ({ ms: 10, status }),
    );
    const delays: number[] = [];
    t.client.on('retry', (e) => delays.push(e.delay));
    await t.burst('/r', 1); // two 429 attempts: one window
    expect(state(t.client, '/r')).toMatchObject({
      retryMode: 'throttled',
      health: 'throttled',
      retryMultiplier: 1,
      counters: { ...ZERO_METRICS, throttles: 1, decisions: 1 },
    });
    await t.burst('/r', 1);
    expect(delays).toEqual([100, 100]); // no retry switch: backoff not scaled
    status = 200;
    await t.burst('/r', 2); // window 3: clean (1 of 2)
    expect(state(t.client, '/r')!.retryMode).toBe('throttled');
    await t.burst('/r', 2); // window 4: clean (2 of 2)
    expect(state(t.client, '/r')).toMatchObject({
      retryMode: 'nominal',
      health: 'good',
      retryMultiplier: 1,
      counters: { ...ZERO_METRICS, throttles: 1, decisions: 1 },
    });
  });

  test('retry + rateLimit: the multiplier is backoffFactor while throttled and 1 after; each change counts', async () => {
    let status = 429;
    const t = setup(
      {
        adaptive: throttle({ retry: true, backoffFactor: 3, maxBackoffMs: 10_000 }),
        retry: { attempts: 2, baseDelay: 100, jitter: false },
      },
      () => ({ ms: 10, status }),
    );
    const delays: number[] = [];
    t.client.on('retry', (e) => delays.push(e.delay));
    await t.burst('/r', 1); // two 429 attempts close a window: throttled from now on
    await t.burst('/r', 1);
    expect(delays).toEqual([100, 300]);
    expect(state(t.client, '/r')).toMatchObject({ retryMultiplier: 3, retryMode: 'throttled' });
    status = 200;
    await t.burst('/r', 4);
    expect(state(t.client, '/r')).toMatchObject({
      retryMultiplier: 1,
      retryMode: 'nominal',
      counters: { ...ZERO_METRICS, throttles: 1, decisions: 1, retryChanges: 2 },
    });
  });

  test('the defaults: backoffFactor 2, capped at maxBackoffMs 10000 (never below the request’s own base delay)', async () => {
    for (const [baseDelay, throttled] of [
      [3000, 6000],
      [6000, 10_000],
      [12_000, 12_000],
    ] as const) {
      const t = setup(
        {
          adaptive: { enabled: true, rateLimit: true, retry: true, outcomeWindow: 2 },
          retry: { attempts: 2, baseDelay, backoff: 'fixed', jitter: false },
        },
        () => ({ ms: 10, status: 429 }),
      );
      const delays: number[] = [];
      t.client.on('retry', (e) => delays.push(e.delay));
      await t.burst('/b', 1);
      await t.burst('/b', 1);
      expect(delays).toEqual([baseDelay, throttled]);
    }
  });

  test('latency or error pressure alone does not throttle; with the rateLimit switch off nothing throttles', async () => {
    const slow = setup({ adaptive: throttle() }, (_, __, n) => ({
      ms: 900,
      status: n % 2 ? 503 : 200,
    }));
    await slow.burst('/p', 8);
    expect(state(slow.client, '/p')).toMatchObject({
      retryMode: 'nominal',
      counters: ZERO_METRICS,
    });
    const off = setup({ adaptive: throttle({ rateLimit: false }) }, () => ({
      ms: 10,
      status: 429,
    }));
    await off.burst('/q', 8);
    expect(state(off.client, '/q')).toMatchObject({
      retryMode: 'nominal',
      health: 'good',
      counters: ZERO_METRICS,
      signals: { rateLimitRatio: 1 },
    });
  });
});

describe('what is measured (events rule 3)', () => {
  test('with a scheduler: from request-started, so queueing is no latency; cache hits and dedup joins are no samples', async () => {
    const t = setup(
      { scheduler: { concurrency: 1 }, cache: { enabled: true }, adaptive: SMALL },
      () => ({ ms: 100 }),
    );
    const a = t.client.get('/m?a');
    const b = t.client.get('/m?b'); // waits 100 ms for the slot
    const joiner = t.client.get('/m?b');
    await t.clock.runAll();
    await Promise.all([a, b, joiner]);
    expect(state(t.client, '/m')!.signals).toMatchObject({ samples: 2, p95: 100, avg: 100 });
    for (let i = 0; i < 5; i++) await t.client.get('/m?a'); // fresh cache hits
    expect(state(t.client, '/m')!.signals.samples).toBe(2);
  });

  test('transparent mode: from request; a retry wait is no latency; each attempt is a sample', async () => {
    const t = setup(
      { adaptive: SMALL, retry: { attempts: 2, baseDelay: 1000, jitter: false } },
      (_, __, n) => ({ ms: 50, status: n === 0 ? 503 : 200 }),
    );
    const p = t.client.get('/t');
    await t.clock.runAll();
    await p;
    expect(state(t.client, '/t')!.signals).toMatchObject({
      samples: 2,
      p95: 50,
      errorRatio: 0.5,
      active: 0,
    });
  });

  test('cancelled attempts are no samples and leave active at 0', async () => {
    const t = setup({ scheduler: { concurrency: 2 }, adaptive: SMALL }, () => 'hang');
    const ps = [t.client.get('/c?1'), t.client.get('/c?2'), t.client.get('/c?3')];
    const settled = ps.map((p) => p.catch(() => {}));
    await t.clock.advance(100);
    expect(state(t.client, '/c')!.signals.active).toBe(2);
    t.client.cancelAll();
    await Promise.all(settled);
    expect(state(t.client, '/c')!.signals).toMatchObject({ active: 0, samples: 0 });
  });
});

describe('reset() (rule 8)', () => {
  test('forgets profiles, counters and measurements in progress, and re-admits jobs held by a reduced ceiling', async () => {
    const t = setup(
      { scheduler: { concurrency: 2 }, adaptive: { ...SMALL, concurrency: true } },
      (_, query) => (query.startsWith('?h') ? 'hang' : { ms: 1000 }),
    );
    await t.burst('/r', 4);
    expect(state(t.client, '/r')!.effective).toBe(1);
    const hang = t.client.get('/r?h');
    const hangDone = hang.catch(() => {});
    const held = t.client.get('/r?queued');
    await t.clock.advance(0);
    expect(t.client.scheduler().stats()).toMatchObject({ active: 1, queued: 1 });
    t.client.adaptive().reset();
    await t.clock.advance(0);
    expect(t.client.scheduler().stats()).toMatchObject({ active: 2, queued: 0 });
    expect(t.client.adaptive().snapshot()).toEqual({ enabled: true, endpoints: {} });
    expect(t.client.adaptive().metrics()).toEqual(ZERO_METRICS);
    expect(t.client.intelligence().snapshot().summary.adaptive).toEqual(ZERO_METRICS);
    await t.clock.advance(1000);
    await held;
    // The attempt that was running at the reset is not recorded; the one started after is.
    expect(state(t.client, '/r')).toBeUndefined();
    hang.cancel();
    await hangDone;
    await t.burst('/r', 1);
    expect(state(t.client, '/r')!.signals.samples).toBe(1);
  });

  test('a success listener that resets the engine on every answer leaves it consistent', async () => {
    const t = setup(
      { scheduler: { concurrency: 2 }, adaptive: { ...SMALL, concurrency: true } },
      () => ({
        ms: 1000,
      }),
    );
    t.client.on('success', () => t.client.adaptive().reset());
    await t.burst('/z', 12);
    expect(t.client.adaptive().metrics()).toEqual(ZERO_METRICS);
    expect(t.client.scheduler().stats()).toMatchObject({ active: 0, queued: 0, completed: 12 });
  });
});

describe('AdaptiveOptions at and beyond their limits', () => {
  const bad: [keyof AdaptiveOptions, unknown, 'RangeError' | 'TypeError'][] = [
    ['enabled', 'yes', 'TypeError'],
    ['enabled', null, 'TypeError'],
    ['concurrency', 1, 'TypeError'],
    ['staleWhileRevalidate', null, 'TypeError'],
    ...(['highLatencyMs', 'lowLatencyMs', 'swrLatencyMs', 'maxBackoffMs'] as const).flatMap(
      (f) =>
        [
          [f, -1, 'RangeError'],
          [f, Number.NaN, 'RangeError'],
          [f, Infinity, 'RangeError'],
          [f, '100', 'TypeError'],
        ] as [keyof AdaptiveOptions, unknown, 'RangeError' | 'TypeError'][],
    ),
    ['maxBackoffMs', 2 ** 31, 'RangeError'],
    ...(['degradeSamples', 'recoverySamples', 'minConcurrency'] as const).flatMap(
      (f) =>
        [
          [f, 0, 'RangeError'],
          [f, -1, 'RangeError'],
          [f, 1.5, 'RangeError'],
          [f, Number.NaN, 'RangeError'],
          [f, Infinity, 'RangeError'],
        ] as [keyof AdaptiveOptions, unknown, 'RangeError' | 'TypeError'][],
    ),
    ['changeCooldown', -1, 'RangeError'],
    ['changeCooldown', Number.NaN, 'RangeError'],
    ...(['rateLimitRatio', 'errorRatio'] as const).flatMap(
      (f) =>
        [
          [f, -0.1, 'RangeError'],
          [f, 1.1, 'RangeError'],
          [f, Number.NaN, 'RangeError'],
          [f, Infinity, 'RangeError'],
        ] as [keyof AdaptiveOptions, unknown, 'RangeError' | 'TypeError'][],
    ),
    ['backoffFactor', 0.5, 'RangeError'],
    ['backoffFactor', 0, 'RangeError'],
    ['backoffFactor', Number.NaN, 'RangeError'],
    ['backoffFactor', Infinity, 'RangeError'],
    ['latencyWindow', 3, 'RangeError'],
    ['latencyWindow', 65_537, 'RangeError'],
    ['latencyWindow', 4.5, 'RangeError'],
    ['outcomeWindow', 1, 'RangeError'],
    ['outcomeWindow', 65_537, 'RangeError'],
    ['outcomeWindow', Number.NaN, 'RangeError'],
  ];

  test.each(bad)(
    'adaptive.%s = %s is a %s naming the field (also when disabled)',
    (field, value, type) => {
      for (const enabled of [true, false]) {
        const make = () =>
          createClient({
            fetch: async () => new Response(''),
            adaptive: { enabled, [field]: value } as AdaptiveOptions,
          });
        expect(make).toThrow(type === 'RangeError' ? RangeError : TypeError);
        expect(make).toThrow(`adaptive.${field}`);
      }
    },
  );

  test('the limits themselves are accepted', () => {
    const ok: AdaptiveOptions[] = [
      { latencyWindow: 4, outcomeWindow: 2 },
      { latencyWindow: 65_536, outcomeWindow: 65_536 },
      { rateLimitRatio: 0, errorRatio: 0 },
      { rateLimitRatio: 1, errorRatio: 1 },
      { changeCooldown: 0, backoffFactor: 1, maxBackoffMs: 0 },
      { highLatencyMs: 0, lowLatencyMs: 0, swrLatencyMs: 0 },
      { highLatencyMs: 700, lowLatencyMs: 700 },
    ];
    for (const options of ok) {
      expect(() =>
        createClient({
          fetch: async () => new Response(''),
          adaptive: { enabled: true, ...options },
        }),
      ).not.toThrow();
    }
  });

  test('lowLatencyMs above highLatencyMs, and a non-object block, are refused', () => {
    expect(() => createClient({ adaptive: { lowLatencyMs: 3000 } })).toThrow(
      /adaptive\.lowLatencyMs/,
    );
    for (const adaptive of [null, true, 'on', []]) {
      expect(() => createClient({ adaptive: adaptive as never })).toThrow(TypeError);
    }
  });

  test('errorRatio 0 means any error is pressure (not every window)', async () => {
    const t = setup(
      { scheduler: { concurrency: 4 }, adaptive: { ...SMALL, concurrency: true, errorRatio: 0 } },
      (_, __, n) => ({ ms: 10, status: n === 5 ? 503 : 200 }),
    );
    await t.burst('/z', 4); // healthy, at the configured ceiling
    expect(state(t.client, '/z')!.effective).toBe(4);
    await t.burst('/z', 4); // one error of four
    expect(state(t.client, '/z')!.effective).toBe(3);
  });
});
