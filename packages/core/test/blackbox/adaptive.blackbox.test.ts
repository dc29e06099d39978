// Black-box acceptance tests: AdaptiveOptions, EndpointAdaptiveState, AdaptiveMetrics,
// AdaptiveController, the adaptive throttle table, adaptive concurrency rules 1-8, Events rule 3,
// Versioning 2. Windows (spec: "not shown") follow the README: a window closes after every
// `outcomeWindow` samples of the endpoint.
import { describe, expect, test } from 'vitest';
import type { AdaptiveOptions, ClientOptions } from '../../src/index';
import { json, names, record, settle, setup } from './harness';

type S = ReturnType<typeof setup>;

function adaptiveSetup(adaptive: AdaptiveOptions, extra: ClientOptions = {}): S {
  return setup({
    scheduler: { concurrency: 4 },
    adaptive: { enabled: true, outcomeWindow: 2, latencyWindow: 4, ...adaptive },
    cache: false,
    ...extra,
  });
}

/** `count` sequential requests to `path`, each answered `status` after `latency` ms. */
async function drive(s: S, path: string, latency: number, count: number, status = 200) {
  s.backend.handler = () =>
    new Promise<Response>((r) => {
      s.clock.setTimeout(() => r(json({}, status)), latency);
    });
  for (let i = 0; i < count; i++) {
    const p = settle(s.client.get(path, { retry: false }));
    await s.clock.advance(latency);
    await p;
  }
}

const effective = (s: S, path = '/e') => s.client.adaptive().endpoint('GET', path)?.effective;

describe('Absent or disabled (spec: Versioning 2)', () => {
  test('no adaptive block: snapshot {enabled:false, endpoints:{}}, zero metrics, nothing measured', async () => {
    const s = setup({ scheduler: { concurrency: 4 } });
    await drive(s, '/e', 5000, 4);
    expect(s.client.adaptive().snapshot()).toEqual({ enabled: false, endpoints: {} });
    expect(s.client.adaptive().metrics()).toEqual({
      decisions: 0,
      concurrencyReductions: 0,
      concurrencyRecoveries: 0,
      throttles: 0,
      retryChanges: 0,
    });
    expect(s.client.adaptive().endpoint('GET', '/e')).toBeUndefined();
  });

  test('enabled:false (the default) behaves identically: same event stream as no block', async () => {
    const a = setup({ scheduler: { concurrency: 4 } });
    const b = setup({
      scheduler: { concurrency: 4 },
      adaptive: { concurrency: true, rateLimit: true },
    });
    const la = record(a.client);
    const lb = record(b.client);
    await drive(a, '/e', 3000, 6);
    await drive(b, '/e', 3000, 6);
    expect(names(lb)).toEqual(names(la));
    expect(b.client.adaptive().snapshot()).toEqual({ enabled: false, endpoints: {} });
  });
});

describe('Adaptive concurrency (spec: rules 1-8)', () => {
  test('rule 2/4: pressured windows (p95 >= highLatencyMs 2000) drop the ceiling by exactly 1 per decision, never below minConcurrency', async () => {
    const s = adaptiveSetup({ concurrency: true, degradeSamples: 1, changeCooldown: 0 });
    const seen: number[] = [];
    for (let w = 0; w < 6; w++) {
      await drive(s, '/e', 2000, 2);
      seen.push(effective(s)!);
    }
    expect(seen).toEqual([3, 2, 1, 1, 1, 1]);
    const st = s.client.adaptive().endpoint('GET', '/e')!;
    expect(st).toMatchObject({
      endpoint: 'GET /e',
      configured: 4,
      effective: 1,
      mode: 'reducing',
      health: 'degraded',
    });
    expect(typeof st.reason).toBe('string');
    expect(st.reason.length).toBeGreaterThan(0);
    expect(typeof st.degradedSince).toBe('number');
    expect(s.client.adaptive().metrics()).toMatchObject({ concurrencyReductions: 3, decisions: 3 });
    expect(s.client.intelligence().snapshot().summary.adaptive).toEqual(
      s.client.adaptive().metrics(),
    );
  });

  test('rule 3/4: healthy windows (p95 < lowLatencyMs 1000) raise it by exactly 1, never above the configured concurrency', async () => {
    const s = adaptiveSetup({
      concurrency: true,
      degradeSamples: 1,
      recoverySamples: 1,
      changeCooldown: 0,
    });
    await drive(s, '/e', 3000, 4);
    expect(effective(s)).toBe(2);
    const seen: number[] = [];
    // the latency ring (4) must first be refilled with fast samples
    for (let w = 0; w < 5; w++) {
      await drive(s, '/e', 10, 2);
      seen.push(effective(s)!);
    }
    // README: p95 is over the last latencyWindow (4) samples, so the first fast window still
    // holds two slow samples (pressured: one more step down); then one step up per healthy window
    expect(seen).toEqual([1, 2, 3, 4, 4]);
    expect(s.client.adaptive().endpoint('GET', '/e')).toMatchObject({
      configured: 4,
      mode: 'nominal',
      health: 'good',
    });
    expect(s.client.adaptive().metrics().concurrencyRecoveries).toBe(3);
  });

  test('rule 2: degradeSamples (default 3) consecutive pressured windows before a reduction', async () => {
    const s = adaptiveSetup({ concurrency: true, changeCooldown: 0 });
    await drive(s, '/e', 2500, 4);
    expect(effective(s)).toBe(4);
    await drive(s, '/e', 2500, 2);
    expect(effective(s)).toBe(3);
  });

  test('rule 1: deadband between lowLatencyMs and highLatencyMs: nothing changes', async () => {
    const s = adaptiveSetup({
      concurrency: true,
      degradeSamples: 1,
      recoverySamples: 1,
      changeCooldown: 0,
    });
    await drive(s, '/e', 1500, 10);
    expect(effective(s)).toBe(4);
    expect(s.client.adaptive().metrics().decisions).toBe(0);
  });

  test('rule 1: error share >= errorRatio is pressure', async () => {
    const s = adaptiveSetup({ concurrency: true, degradeSamples: 1, changeCooldown: 0 });
    await drive(s, '/e', 10, 2, 500);
    expect(effective(s)).toBe(3);
  });

  test('rule 2: changeCooldown (default 2) windows between two decisions', async () => {
    const s = adaptiveSetup({ concurrency: true, degradeSamples: 1 });
    const seen: number[] = [];
    for (let w = 0; w < 5; w++) {
      await drive(s, '/e', 2000, 2);
      seen.push(effective(s)!);
    }
    expect(seen).toEqual([3, 3, 2, 2, 1]);
  });

  test('rule 5: endpoints are isolated', async () => {
    const s = adaptiveSetup({ concurrency: true, degradeSamples: 1, changeCooldown: 0 });
    await drive(s, '/e', 3000, 4);
    await drive(s, '/f', 10, 4);
    expect(effective(s, '/e')).toBe(2);
    expect(effective(s, '/f')).toBe(4);
  });

  test('the reduced ceiling is applied by the scheduler to that endpoint', async () => {
    const s = adaptiveSetup({
      concurrency: true,
      degradeSamples: 1,
      changeCooldown: 0,
      minConcurrency: 1,
    });
    await drive(s, '/e', 3000, 6);
    expect(effective(s)).toBe(1);
    const waiting: ((r: Response) => void)[] = [];
    s.backend.handler = () => new Promise<Response>((r) => waiting.push(r));
    const ps = [s.client.get('/e?a'), s.client.get('/e?b'), s.client.get('/f')].map(settle);
    for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
    expect(s.backend.calls.slice(-2).map((c) => new URL(c.url).pathname)).toEqual(['/e', '/f']);
    expect(waiting).toHaveLength(2);
    s.client.cancelAll();
    await Promise.all(ps);
  });

  test('minConcurrency is the floor', async () => {
    const s = adaptiveSetup({
      concurrency: true,
      degradeSamples: 1,
      changeCooldown: 0,
      minConcurrency: 3,
    });
    await drive(s, '/e', 3000, 10);
    expect(effective(s)).toBe(3);
  });

  test('rule 7: decisions are deterministic: the same history gives the same state', async () => {
    async function run() {
      const s = adaptiveSetup({
        concurrency: true,
        rateLimit: true,
        retry: true,
        degradeSamples: 1,
      });
      const script = [3000, 10, 2500, 2500, 10, 10, 1500, 3000, 3000, 10];
      for (const ms of script) await drive(s, '/e', ms, 1, ms === 2500 ? 429 : 200);
      const snap = s.client.adaptive().snapshot();
      return JSON.stringify({ snap, m: s.client.adaptive().metrics() }, (_k, v) =>
        typeof v === 'number' && v > 1e5 ? 'T' : v,
      );
    }
    expect(await run()).toBe(await run());
  });

  test('rule 8: reset() forgets all learned profiles', async () => {
    const s = adaptiveSetup({ concurrency: true, degradeSamples: 1, changeCooldown: 0 });
    await drive(s, '/e', 3000, 4);
    expect(effective(s)).toBe(2);
    s.client.adaptive().reset();
    expect(s.client.adaptive().snapshot().endpoints).toEqual({});
    await drive(s, '/e', 10, 1);
    expect(effective(s)).toBe(4);
  });

  test('EndpointAdaptiveState carries every spec field', async () => {
    const s = adaptiveSetup({ concurrency: true });
    await drive(s, '/e', 10, 2);
    const st = s.client.adaptive().endpoint('GET', '/e?q=1')!;
    for (const k of [
      'endpoint',
      'configured',
      'effective',
      'mode',
      'health',
      'reason',
      'retryMultiplier',
      'retryMode',
      'retryReason',
      'strategyReason',
      'signals',
      'counters',
    ]) {
      expect(st, k).toHaveProperty(k);
    }
    expect(st).toMatchObject({
      mode: 'nominal',
      health: 'good',
      retryMode: 'nominal',
      retryMultiplier: 1,
    });
    expect(st.strategy).toBeUndefined();
    expect(Object.keys(st.signals).sort()).toEqual(
      ['active', 'avg', 'errorRatio', 'p50', 'p95', 'rateLimitRatio', 'samples'].sort(),
    );
    expect(s.client.adaptive().snapshot()).toMatchObject({
      enabled: true,
      endpoints: { 'GET /e': expect.any(Object) },
    });
  });

  test('cache hits are not measured (Events rule 3)', async () => {
    const s = setup({
      scheduler: { concurrency: 4 },
      adaptive: { enabled: true, outcomeWindow: 2, latencyWindow: 4 },
    });
    await s.client.get('/c');
    for (let i = 0; i < 5; i++) await s.client.get('/c');
    expect(s.client.adaptive().endpoint('GET', '/c')!.signals.samples).toBe(1);
  });
});

describe('Adaptive throttle (spec: throttle table)', () => {
  test('nominal -> throttled after one pressured (429) window; retry base delay x backoffFactor; throttles rises', async () => {
    const s = adaptiveSetup({ rateLimit: true, retry: true, recoverySamples: 2 }, { cache: false });
    await drive(s, '/e', 10, 2, 429);
    const st = s.client.adaptive().endpoint('GET', '/e')!;
    expect(st).toMatchObject({ retryMode: 'throttled', retryMultiplier: 2, health: 'throttled' });
    expect(s.client.adaptive().metrics()).toMatchObject({ throttles: 1, retryChanges: 1 });
    // the scaled backoff: baseDelay 100 x 2 = 200 (no jitter, no Retry-After)
    let n = 0;
    s.backend.handler = () => (++n === 1 ? json({}, 503) : json({}));
    const log = record(s.client, ['retry']);
    const p = s.client.get('/e', { retry: { baseDelay: 100, jitter: false } });
    await s.clock.advance(200);
    await p;
    expect(log[0]!.payload.delay).toBe(200);
  });

  test('the adapted base delay is capped at maxBackoffMs', async () => {
    const s = adaptiveSetup({
      rateLimit: true,
      retry: true,
      backoffFactor: 10,
      maxBackoffMs: 5000,
    });
    await drive(s, '/e', 10, 2, 429);
    let n = 0;
    s.backend.handler = () => (++n === 1 ? json({}, 503) : json({}));
    const log = record(s.client, ['retry']);
    const p = s.client.get('/e', { retry: { baseDelay: 1000, maxDelay: 30_000, jitter: false } });
    await s.clock.advance(5000);
    await p;
    expect(log[0]!.payload.delay).toBe(5000);
  });

  test('a server Retry-After still wins over the adapted backoff (Errors 4)', async () => {
    const s = adaptiveSetup({ rateLimit: true, retry: true });
    await drive(s, '/e', 10, 2, 429);
    let n = 0;
    s.backend.handler = () => (++n === 1 ? json({}, 503, { 'retry-after': '1' }) : json({}));
    const log = record(s.client, ['retry']);
    const p = s.client.get('/e', { retry: { baseDelay: 100, jitter: false } });
    await s.clock.advance(1000);
    await p;
    expect(log[0]!.payload.delay).toBe(1000);
  });

  test('without the retry switch, throttling does not scale the backoff', async () => {
    const s = adaptiveSetup({ rateLimit: true });
    await drive(s, '/e', 10, 2, 429);
    expect(s.client.adaptive().endpoint('GET', '/e')!.retryMode).toBe('throttled');
    let n = 0;
    s.backend.handler = () => (++n === 1 ? json({}, 503) : json({}));
    const log = record(s.client, ['retry']);
    const p = s.client.get('/e', { retry: { baseDelay: 100, jitter: false } });
    await s.clock.advance(100);
    await p;
    expect(log[0]!.payload.delay).toBe(100);
  });

  test('throttled -> nominal after recoverySamples clean windows; multiplier returns to 1', async () => {
    const s = adaptiveSetup({ rateLimit: true, retry: true, recoverySamples: 2 });
    await drive(s, '/e', 10, 2, 429);
    await drive(s, '/e', 10, 2);
    expect(s.client.adaptive().endpoint('GET', '/e')!.retryMode).toBe('throttled');
    await drive(s, '/e', 10, 2);
    expect(s.client.adaptive().endpoint('GET', '/e')).toMatchObject({
      retryMode: 'nominal',
      retryMultiplier: 1,
    });
    expect(s.client.adaptive().metrics().retryChanges).toBe(2);
  });

  test('without the rateLimit switch 429 pressure never throttles', async () => {
    const s = adaptiveSetup({ retry: true });
    await drive(s, '/e', 10, 4, 429);
    expect(s.client.adaptive().endpoint('GET', '/e')!.retryMode).toBe('nominal');
  });
});

describe('Adaptive SWR (spec: rule 6)', () => {
  test('p95 >= swrLatencyMs (1500) marks the endpoint degraded and its reads use stale-while-revalidate', async () => {
    const s = setup({
      adaptive: { enabled: true, staleWhileRevalidate: true, outcomeWindow: 2, latencyWindow: 4 },
      cache: { enabled: true, ttl: 100 },
    });
    s.backend.handler = () =>
      new Promise<Response>((r) => {
        s.clock.setTimeout(() => r(json({ v: 'slow' })), 1500);
      });
    for (let i = 0; i < 2; i++) {
      const p = s.client.get('/s', { params: { i } });
      await s.clock.advance(1500);
      await p;
    }
    const st = s.client.adaptive().endpoint('GET', '/s')!;
    expect(st.strategy).toBe('stale-while-revalidate');
    expect(st.health).toBe('degraded');
    await s.clock.advance(200); // entries are stale now
    s.backend.handler = () => new Promise<Response>(() => {});
    const log = record(s.client, ['cache-hit']);
    const r = await s.client.get('/s', { params: { i: 0 } });
    expect(r.data).toEqual({ v: 'slow' });
    expect(log).toHaveLength(1);
    s.client.cancelAll();
  });
});

describe('Adaptive readout details (spec: EndpointAdaptiveState, AdaptiveMetrics, Limits: rings)', () => {
  test('degradedSince is the time of the first reduction; mode is recovering while climbing back', async () => {
    const s = adaptiveSetup({
      concurrency: true,
      degradeSamples: 1,
      recoverySamples: 1,
      changeCooldown: 0,
    });
    await drive(s, '/e', 3000, 1);
    await drive(s, '/e', 3000, 1);
    const firstReduction = s.clock.now();
    await drive(s, '/e', 3000, 2);
    expect(s.client.adaptive().endpoint('GET', '/e')!.degradedSince).toBe(firstReduction);
    await drive(s, '/e', 10, 6); // 2 -> 1 (ring), 2, 3
    const st = s.client.adaptive().endpoint('GET', '/e')!;
    expect(st.effective).toBe(3);
    expect(st.mode).toBe('recovering');
  });

  test('decisions = reductions + recoveries + throttles; releases are not decisions', async () => {
    const s = adaptiveSetup({
      concurrency: true,
      rateLimit: true,
      degradeSamples: 1,
      recoverySamples: 1,
      changeCooldown: 0,
    });
    await drive(s, '/e', 10, 2, 429); // throttle + reduction (429 share is pressure)
    await drive(s, '/e', 10, 2); // release + recovery
    const m = s.client.adaptive().metrics();
    expect(m.decisions).toBe(m.concurrencyReductions + m.concurrencyRecoveries + m.throttles);
    expect(m).toMatchObject({
      throttles: 1,
      concurrencyReductions: 1,
      concurrencyRecoveries: 1,
      decisions: 3,
    });
  });

  test('signals: outcome shares of the window (took / error / rateLimited)', async () => {
    const s = adaptiveSetup({}, { cache: false });
    s.backend.handler = () => json({});
    await drive(s, '/e', 10, 1, 429);
    await drive(s, '/e', 10, 1, 200);
    const sig = s.client.adaptive().endpoint('GET', '/e')!.signals;
    expect(sig.rateLimitRatio).toBe(0.5);
    expect(sig.errorRatio).toBe(0);
    expect(sig.samples).toBe(2);
    expect(sig.active).toBe(0);
  });

  test('default outcomeWindow 32: no decision before the 32nd sample', async () => {
    const s = setup({
      scheduler: { concurrency: 4 },
      adaptive: { enabled: true, concurrency: true, degradeSamples: 1, changeCooldown: 0 },
      cache: false,
    });
    await drive(s, '/e', 3000, 31);
    expect(effective(s)).toBe(4);
    await drive(s, '/e', 3000, 1);
    expect(effective(s)).toBe(3);
  });

  test('default latencyWindow 64: the latency ring holds the last 64 samples', async () => {
    const s = setup({ scheduler: { concurrency: 4 }, adaptive: { enabled: true }, cache: false });
    await drive(s, '/e', 5000, 10);
    await drive(s, '/e', 10, 64);
    const sig = s.client.adaptive().endpoint('GET', '/e')!.signals;
    expect(sig.samples).toBe(64);
    expect(sig.p95).toBe(10);
  });
});
