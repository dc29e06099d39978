import { describe, expect, it, vi } from 'vitest';
import { disabledAdaptive } from '../features/disabled';
import { MAX_PROFILES } from './engine';
import { scripted } from './script.fixture';

const A = 'GET /a';
const B = 'GET /b';
/** The totals after playing A 'RRRFFF' and B 'SSS' with the rateLimit and retry switches on. */
const A_AND_B_TOTALS = {
  decisions: 4,
  concurrencyReductions: 2,
  concurrencyRecoveries: 1,
  throttles: 1,
  retryChanges: 2,
};

describe('concurrency: exact steps, streaks and cooldown', () => {
  it('drops by exactly 1 after degradeSamples consecutive pressured windows, not before', () => {
    const s = scripted();
    s.play(A, 'SS');
    expect(s.log).toEqual([]);
    expect(s.engine.state(A)).toMatchObject({
      effective: 4,
      reason:
        'p95 3000 ms >= highLatencyMs 2000 for 2 windows (degradeSamples 3): holding ceiling 4',
    });
    s.play(A, 'S');
    expect(s.log).toEqual([
      {
        type: 'ceiling',
        endpoint: A,
        window: 3,
        at: 120,
        from: 4,
        to: 3,
        reason: 'p95 3000 ms >= highLatencyMs 2000 for 3 windows: ceiling 4 → 3',
      },
    ]);
    expect(s.engine.ceiling(A)).toBe(3);
    expect(s.engine.state(A)).toMatchObject({ configured: 4, effective: 3, mode: 'reducing' });
  });

  it('paces further reductions by changeCooldown windows under sustained pressure', () => {
    const s = scripted({ changeCooldown: 2 }, 8);
    s.play(A, 'SSSS');
    expect(s.engine.state(A)!.reason).toBe(
      'p95 3000 ms >= highLatencyMs 2000 for 4 windows; cooling down (1 of changeCooldown 2 windows since the last change): holding ceiling 7',
    );
    s.play(A, 'SSS');
    expect(s.ceilings()).toEqual(['8→7@3', '7→6@5', '6→5@7']);

    const slow = scripted({ changeCooldown: 4 }, 8);
    slow.play(A, 'SSSSSSSSSSS');
    expect(slow.ceilings()).toEqual(['8→7@3', '7→6@7', '6→5@11']);

    const none = scripted({ changeCooldown: 0 }, 8);
    none.play(A, 'SSSSS');
    expect(none.ceilings()).toEqual(['8→7@3', '7→6@4', '6→5@5']);
  });

  it('a deadband or healthy window breaks the pressured streak', () => {
    const s = scripted();
    s.play(A, 'SSDSSFSS');
    expect(s.log).toEqual([]);
    expect(s.engine.state(A)!.reason).toBe(
      'p95 3000 ms >= highLatencyMs 2000 for 2 windows (degradeSamples 3): holding ceiling 4',
    );
    s.play(A, 'S');
    expect(s.ceilings()).toEqual(['4→3@9']);
  });

  it('reports a deadband window as holding', () => {
    const s = scripted();
    s.play(A, 'D');
    expect(s.engine.state(A)!.reason).toBe(
      'p95 1200 ms is in the deadband [lowLatencyMs 1000, highLatencyMs 2000): holding ceiling 4',
    );
  });

  it('never goes below minConcurrency and says so', () => {
    const s = scripted({ minConcurrency: 2 }, 4);
    s.play(A, 'SSSSSSSSS');
    expect(s.ceilings()).toEqual(['4→3@3', '3→2@5']);
    expect(s.engine.state(A)).toMatchObject({
      effective: 2,
      reason:
        'p95 3000 ms >= highLatencyMs 2000 for 9 windows, but the ceiling is at minConcurrency 2; the backend is saturated even at the floor',
      counters: { concurrencyReductions: 2, decisions: 2 },
    });
  });

  it('rises by exactly 1 after recoverySamples healthy windows, with the same cooldown, up to configured', () => {
    const s = scripted({ minConcurrency: 2 }, 4);
    s.play(A, 'SSSSS'); // 4→3@3, 3→2@5
    s.play(A, 'FF');
    expect(s.engine.state(A)!.reason).toBe(
      'p95 100 ms < lowLatencyMs 1000 for 2 windows (recoverySamples 3): holding ceiling 2',
    );
    s.play(A, 'F');
    expect(s.ceilings().slice(2)).toEqual(['2→3@8']);
    expect(s.log.at(-1)).toMatchObject({
      reason: 'p95 100 ms < lowLatencyMs 1000 for 3 windows: ceiling 2 → 3',
    });
    expect(s.engine.state(A)).toMatchObject({ mode: 'recovering', health: 'recovering' });
    s.play(A, 'F'); // cooling down
    expect(s.ceilings()).toHaveLength(3);
    s.play(A, 'FFFF');
    expect(s.ceilings().slice(2)).toEqual(['2→3@8', '3→4@10']);
    expect(s.engine.state(A)).toMatchObject({
      effective: 4,
      mode: 'nominal',
      health: 'good',
      reason: 'p95 100 ms < lowLatencyMs 1000 for 8 windows: ceiling at the configured 4',
      counters: { concurrencyReductions: 2, concurrencyRecoveries: 2, decisions: 4 },
    });
  });

  it('applies the cooldown between a reduction and a recovery', () => {
    const s = scripted({ changeCooldown: 5 });
    s.play(A, 'SSSFFF');
    expect(s.ceilings()).toEqual(['4→3@3']);
    s.play(A, 'FF');
    expect(s.ceilings()).toEqual(['4→3@3', '3→4@8']);
  });

  it('treats 429 and error shares as pressure and names the cause', () => {
    const r = scripted();
    r.play(A, 'RRR');
    expect(r.log[0]).toMatchObject({
      reason: '429 share 0.25 >= rateLimitRatio 0.2 for 3 windows: ceiling 4 → 3',
    });
    const e = scripted();
    e.play(A, 'SRE');
    expect(e.log[0]).toMatchObject({
      reason: 'error share 0.25 >= errorRatio 0.1 for 3 windows: ceiling 4 → 3',
    });
  });

  it('keeps endpoints isolated, sample by sample', () => {
    const s = scripted();
    for (let i = 0; i < 12; i++) {
      s.record(A, 3000, 'took');
      s.record(B, 100, 'took');
    }
    expect(s.ceilings(A)).toEqual(['4→3@3']);
    expect(s.ceilings(B)).toEqual([]);
    expect(s.engine.state(B)).toMatchObject({ effective: 4, health: 'good', mode: 'nominal' });
    expect(s.engine.ceiling(B)).toBe(4);
    expect(s.engine.ceiling('GET /never')).toBeUndefined();
  });

  it('makes no ceiling decision with the concurrency switch off or without a scheduler', () => {
    const off = scripted({ concurrency: false });
    off.play(A, 'SSSSSS');
    expect(off.log).toEqual([]);
    expect(off.engine.ceiling(A)).toBeUndefined();
    expect(off.engine.adaptsCeilings).toBe(false);
    expect(off.engine.state(A)).toMatchObject({
      configured: 4,
      effective: 4,
      health: 'good',
      reason: 'p95 3000 ms >= highLatencyMs 2000; concurrency switch off: ceiling not adapted',
    });
    const bare = scripted({}, null);
    bare.play(A, 'SSSS');
    expect(bare.log).toEqual([]);
    expect(bare.engine.state(A)).toMatchObject({
      configured: Number.POSITIVE_INFINITY,
      effective: Number.POSITIVE_INFINITY,
      reason:
        'p95 3000 ms >= highLatencyMs 2000; no scheduler, so the concurrency switch has nothing to adapt',
    });
  });

  it('never exceeds a configured concurrency below minConcurrency', () => {
    const s = scripted({ minConcurrency: 3 }, 2);
    s.play(A, 'SSSSFFFFF');
    expect(s.log).toEqual([]);
    expect(s.engine.state(A)!.effective).toBe(2);
  });
});

describe('retry throttle (the throttle table)', () => {
  it('one 429-pressured window throttles; recoverySamples clean windows release', () => {
    const s = scripted({ concurrency: false, rateLimit: true, retry: true });
    s.play(A, 'R');
    expect(s.log).toEqual([
      {
        type: 'retry',
        endpoint: A,
        window: 1,
        at: 40,
        mode: 'throttled',
        multiplier: 2,
        reason:
          '429 share 0.25 >= rateLimitRatio 0.2: throttled, retry base delay x2 (at most maxBackoffMs 10000)',
      },
    ]);
    expect(s.engine.state(A)).toMatchObject({
      retryMode: 'throttled',
      retryMultiplier: 2,
      health: 'throttled',
      counters: { throttles: 1, retryChanges: 1, decisions: 1 },
    });
    expect(s.engine.retryScale(A, 1000)).toEqual({ baseDelayFactor: 2, maxBaseDelay: 10000 });
    // The cap never pushes the base delay below the request's own.
    expect(s.engine.retryScale(A, 20000)).toEqual({ baseDelayFactor: 2, maxBaseDelay: 20000 });

    s.play(A, 'FF');
    expect(s.engine.state(A)!.retryReason).toBe(
      '429 share 0 < rateLimitRatio 0.2 for 2 windows (recoverySamples 3): still throttled',
    );
    s.play(A, 'R'); // resets the clean streak
    expect(s.engine.state(A)!.retryReason).toBe(
      '429 share 0.25 >= rateLimitRatio 0.2: still throttled',
    );
    s.play(A, 'FFE'); // an error window is still clean of 429s
    expect(s.log).toHaveLength(2);
    expect(s.log[1]).toMatchObject({
      type: 'retry',
      window: 7,
      mode: 'nominal',
      multiplier: 1,
      reason: '429 share 0 < rateLimitRatio 0.2 for 3 windows: back to nominal backoff',
    });
    expect(s.engine.state(A)).toMatchObject({
      retryMode: 'nominal',
      retryMultiplier: 1,
      health: 'good',
      counters: { throttles: 1, retryChanges: 2, decisions: 1 },
    });
    expect(s.engine.retryScale(A, 1000)).toBeUndefined();
  });

  it('without the retry switch, throttles without scaling backoff', () => {
    const s = scripted({ concurrency: false, rateLimit: true });
    s.play(A, 'R');
    expect(s.engine.state(A)).toMatchObject({
      retryMode: 'throttled',
      retryMultiplier: 1,
      retryReason:
        '429 share 0.25 >= rateLimitRatio 0.2: throttled, retry switch off, so backoff is unchanged',
      counters: { throttles: 1, retryChanges: 0, decisions: 1 },
    });
    expect(s.engine.retryScale(A, 1000)).toBeUndefined();
  });

  it('uses backoffFactor and maxBackoffMs as given', () => {
    const s = scripted({ rateLimit: true, retry: true, backoffFactor: 3, maxBackoffMs: 2500 });
    s.play(A, 'R');
    expect(s.engine.retryScale(A, 1000)).toEqual({ baseDelayFactor: 3, maxBaseDelay: 2500 });
  });

  it('does nothing with the rateLimit switch off', () => {
    const s = scripted({ concurrency: false, retry: true });
    s.play(A, 'RRRR');
    expect(s.log).toEqual([]);
    expect(s.engine.state(A)).toMatchObject({
      retryMode: 'nominal',
      retryMultiplier: 1,
      retryReason: 'rateLimit switch off: backoff not adapted',
    });
  });
});

describe('stale-while-revalidate (shared degraded flag)', () => {
  it('p95 >= swrLatencyMs engages SWR; recoverySamples faster windows release it', () => {
    const s = scripted({ concurrency: false, staleWhileRevalidate: true });
    s.play(A, 'W');
    expect(s.engine.strategy(A)).toBe('stale-while-revalidate');
    expect(s.engine.state(A)).toMatchObject({
      strategy: 'stale-while-revalidate',
      strategyReason: 'p95 1700 ms >= swrLatencyMs 1500: reads use stale-while-revalidate',
      health: 'degraded',
      degradedSince: 40,
    });
    s.play(A, 'FF');
    expect(s.engine.state(A)).toMatchObject({
      strategy: 'stale-while-revalidate',
      health: 'recovering',
      degradedSince: 40,
      strategyReason:
        'p95 100 ms < swrLatencyMs 1500 for 2 windows (recoverySamples 3): reads still use stale-while-revalidate',
    });
    s.play(A, 'F');
    expect(s.engine.strategy(A)).toBeUndefined();
    const state = s.engine.state(A)!;
    expect(state).not.toHaveProperty('strategy');
    expect(state).not.toHaveProperty('degradedSince');
    expect(state.health).toBe('good');
    expect(s.log.map((d) => d.type === 'strategy' && `${d.strategy}@${d.window}`)).toEqual([
      'stale-while-revalidate@1',
      'undefined@4',
    ]);
    // Strategy changes are not counted as decisions.
    expect(s.engine.metrics().decisions).toBe(0);
  });

  it('a ceiling reduction marks the endpoint degraded, so reads use SWR too', () => {
    const s = scripted({ staleWhileRevalidate: true });
    s.play(A, 'RRR');
    expect(s.log.map((d) => d.type)).toEqual(['ceiling', 'strategy']);
    expect(s.engine.state(A)).toMatchObject({
      strategy: 'stale-while-revalidate',
      strategyReason: 'ceiling reduced to 3 of 4: reads use stale-while-revalidate',
      degradedSince: 120,
    });
    s.play(A, 'FFF');
    expect(s.ceilings()).toEqual(['4→3@3', '3→4@6']);
    expect(s.engine.strategy(A)).toBeUndefined();
    expect(s.engine.state(A)!.degradedSince).toBeUndefined();
  });

  it('never recommends SWR with the switch off, though reductions still mark degraded', () => {
    const s = scripted();
    s.play(A, 'WWWSSS');
    expect(s.engine.strategy(A)).toBeUndefined();
    expect(s.engine.state(A)).toMatchObject({
      health: 'degraded',
      degradedSince: 240,
      strategyReason: 'staleWhileRevalidate switch off: strategy not adapted',
    });
  });
});

describe('measurement, readout, metrics and reset', () => {
  it('counts active attempts between started and ended; a cancelled one is no sample', () => {
    const s = scripted({ latencyWindow: 4, outcomeWindow: 2 });
    s.engine.started(A, 0);
    s.engine.started(A, 0);
    expect(s.engine.state(A)!.signals.active).toBe(2);
    s.engine.ended(A, 250, 'took', 0);
    s.engine.ended(A, 999, undefined, 0);
    s.engine.ended(A, 5, undefined, 0); // never below zero
    expect(s.engine.state(A)!.signals).toEqual({
      avg: 250,
      p50: 250,
      p95: 250,
      samples: 1,
      errorRatio: 0,
      rateLimitRatio: 0,
      active: 0,
    });
  });

  it('reads signals as a sliding view between window closes', () => {
    const s = scripted({ outcomeWindow: 4, latencyWindow: 8 });
    s.record(A, 100, 'error');
    s.record(A, 300, 'rateLimited');
    expect(s.engine.state(A)).toMatchObject({
      reason: 'no window closed yet: ceiling 4',
      signals: { avg: 200, p50: 100, p95: 300, samples: 2, errorRatio: 0.5, rateLimitRatio: 0.5 },
    });
  });

  it('reports exactly the EndpointAdaptiveState fields', () => {
    const s = scripted({ staleWhileRevalidate: true });
    s.play(A, 'SSS');
    expect(Object.keys(s.engine.state(A)!).sort()).toEqual(
      [
        'configured',
        'counters',
        'degradedSince',
        'effective',
        'endpoint',
        'health',
        'mode',
        'reason',
        'retryMode',
        'retryMultiplier',
        'retryReason',
        'signals',
        'strategy',
        'strategyReason',
      ].sort(),
    );
    expect(Object.keys(s.engine.state(A)!.signals).sort()).toEqual(
      ['active', 'avg', 'errorRatio', 'p50', 'p95', 'rateLimitRatio', 'samples'].sort(),
    );
  });

  it('sums the counters over endpoints: decisions = reductions + recoveries + throttles', () => {
    const s = scripted({ rateLimit: true, retry: true });
    s.play(A, 'RRRFFF'); // throttle@1, 4→3@3, 3→4@6, release@6
    s.play(B, 'SSS');
    expect(s.engine.metrics()).toEqual(A_AND_B_TOTALS);
    expect(s.engine.state(B)!.counters).toEqual({
      decisions: 1,
      concurrencyReductions: 1,
      concurrencyRecoveries: 0,
      throttles: 0,
      retryChanges: 0,
    });
    expect(s.engine.reducedEndpoints()).toEqual([B]);
  });

  it('reset forgets profiles and counters', () => {
    const s = scripted({ rateLimit: true });
    s.play(A, 'SSSR');
    s.engine.reset();
    expect(s.engine.snapshot()).toEqual({ enabled: true, endpoints: {} });
    expect(s.engine.metrics().decisions).toBe(0);
    expect(s.engine.ceiling(A)).toBeUndefined();
    expect(s.engine.state(A)).toBeUndefined();
    s.play(A, 'SS');
    expect(s.engine.state(A)).toMatchObject({ effective: 4, retryMode: 'nominal' });
  });

  it('exposes an AdaptiveController', () => {
    const s = scripted();
    s.play(A, 'SSS');
    const onReset = vi.fn(() => expect(s.engine.reducedEndpoints()).toEqual([A]));
    const c = s.engine.facade(onReset);
    expect(c.endpoint('get', '/a?page=2')).toEqual(s.engine.state(A));
    expect(c.endpoint('GET', '/b')).toBeUndefined();
    expect(c.snapshot().enabled).toBe(true);
    expect(Object.keys(c.snapshot().endpoints)).toEqual([A]);
    expect(c.metrics().concurrencyReductions).toBe(1);
    c.reset();
    expect(onReset).toHaveBeenCalledOnce();
    expect(c.snapshot().endpoints).toEqual({});
  });

  it('the disabled controller reports nothing', () => {
    expect(disabledAdaptive.snapshot()).toEqual({ enabled: false, endpoints: {} });
    expect(disabledAdaptive.endpoint('GET', '/a')).toBeUndefined();
    expect(disabledAdaptive.metrics()).toEqual({
      decisions: 0,
      concurrencyReductions: 0,
      concurrencyRecoveries: 0,
      throttles: 0,
      retryChanges: 0,
    });
  });
});

describe('aging: samples from before a quiet spell', () => {
  const HOUR = 3_600_000;
  // latencyWindow 8 holds two windows of 4: p95 spans the last two windows.
  const smoothed = { latencyWindow: 8, outcomeWindow: 4 };

  it('p95 is over the last two windows while samples keep coming...', () => {
    const s = scripted(smoothed);
    s.play(A, 'SS');
    s.play(A, 'F'); // 4 slow and 4 fast samples: p95 3000 ms, the third pressured window
    expect(s.ceilings()).toEqual(['4→3@3']);
  });

  it('...but after a quiet hour the next window is judged on its own samples', () => {
    const s = scripted(smoothed);
    s.play(A, 'SS');
    s.clock.advance(HOUR);
    s.play(A, 'F');
    expect(s.ceilings()).toEqual([]);
    expect(s.engine.state(A)).toMatchObject({
      effective: 4,
      reason: 'p95 100 ms < lowLatencyMs 1000 for 1 window: ceiling at the configured 4',
      signals: { p95: 100, samples: 4, errorRatio: 0 },
    });
  });

  it('outcomes of the window left unfinished before the spell are dropped with it', () => {
    const s = scripted({ ...smoothed, rateLimit: true });
    s.play(A, 'FF');
    for (let i = 0; i < 3; i++) s.record(A, 100, 'rateLimited');
    s.clock.advance(HOUR);
    for (let i = 0; i < 4; i++) s.record(A, 100, 'took');
    // Without aging this window would hold three 429s (share 0.75): throttled.
    expect(s.engine.state(A)).toMatchObject({
      retryMode: 'nominal',
      signals: { samples: 4, rateLimitRatio: 0 },
    });
    expect(s.log).toEqual([]);
  });

  it('decisions taken stand: a quiet spell ages samples, not the ceiling', () => {
    const s = scripted(smoothed);
    s.play(A, 'SSS');
    s.clock.advance(HOUR);
    expect(s.engine.ceiling(A)).toBe(3);
    s.play(A, 'F');
    expect(s.engine.ceiling(A)).toBe(3);
  });

  it('quiet is measured against the endpoint’s own pace, and is a minute at least', () => {
    // One sample every 10 minutes: a window takes 40 minutes, so a 10-minute gap is no spell
    // and p95 keeps spanning two windows.
    const slowPace = scripted(smoothed);
    slowPace.play(A, 'SSF', 10 * 60_000);
    expect(slowPace.ceilings()).toEqual(['4→3@3']);
    // Windows of 40 ms: a gap under a minute is no spell either...
    const under = scripted(smoothed);
    under.play(A, 'SS');
    under.clock.advance(59_000);
    under.play(A, 'F');
    expect(under.ceilings()).toEqual(['4→3@3']);
    // ...and one over it is.
    const over = scripted(smoothed);
    over.play(A, 'SS');
    over.clock.advance(61_000);
    over.play(A, 'F');
    expect(over.ceilings()).toEqual([]);
  });

  it('a pace that slows for good is learned after one window, not aged out forever', () => {
    const s = scripted(smoothed);
    s.play(A, 'FF'); // windows of 40 ms
    // From now on one sample every 2 minutes: the first gap is a spell (the fast windows go),
    // the window it starts is not aged (no pace known yet), and its 8-minute span is the pace.
    s.play(A, 'SSS', 120_000);
    expect(s.ceilings()).toEqual(['4→3@5']);
    expect(s.engine.state(A)!.signals.samples).toBe(8);
  });

  it.each([Number.NaN, Number.POSITIVE_INFINITY])('a clock gone to %d ages nothing', (bad) => {
    const s = scripted(smoothed);
    s.play(A, 'SS');
    s.clock.advance(bad);
    s.play(A, 'F');
    expect(s.ceilings()).toEqual(['4→3@3']);
  });
});

describe('determinism (rule 7)', () => {
  it('the same signal history gives the same decision log and the same readout', () => {
    const script = 'SSSSRRFFFDFFFWWEEESSFFFFFFRFFFSSSSSSSSFFFFFFFFFF';
    const run = () => {
      const s = scripted({ rateLimit: true, retry: true, staleWhileRevalidate: true }, 6);
      for (let i = 0; i < script.length; i++) {
        s.play(A, script[i]!);
        s.play(B, script[script.length - 1 - i]!);
      }
      return { log: s.log, snapshot: s.engine.snapshot(), metrics: s.engine.metrics() };
    };
    const first = run();
    expect(first.log.length).toBeGreaterThan(10);
    expect(run()).toEqual(first);
  });
});

describe('bounded profiles (paths with ids)', () => {
  it('keeps at most MAX_PROFILES, dropping the oldest nominal ones and never one with state', () => {
    const s = scripted({ rateLimit: true, retry: true });
    s.play(A, 'RRRFFF'); // throttled and reduced, then recovered and released: nominal again
    s.play(B, 'SSS'); // reduced to 3: state the scheduler depends on
    const busy = 'GET /busy';
    s.engine.started(busy, 0); // an attempt running
    for (let i = 0; i < MAX_PROFILES * 2; i++) s.play(`GET /items/${i}`, 'F');

    const kept = Object.keys(s.engine.snapshot().endpoints);
    expect(kept.length).toBeLessThanOrEqual(MAX_PROFILES);
    expect(s.engine.state(A)).toBeUndefined();
    expect(s.engine.state(B)).toMatchObject({ effective: 3, mode: 'reducing' });
    expect(s.engine.ceiling(B)).toBe(3);
    expect(s.engine.state(busy)!.signals.active).toBe(1);
    expect(s.engine.reducedEndpoints()).toEqual([B]);
    // A's decisions are still in the totals after its profile went (the same totals as in
    // "sums the counters over endpoints" above, where nothing was dropped).
    expect(s.engine.metrics()).toEqual(A_AND_B_TOTALS);
    s.engine.reset();
    expect(s.engine.metrics().decisions).toBe(0);
  });

  it('drops profiles with state too once unused while MAX_PROFILES others came, lifting a ceiling', () => {
    const s = scripted({ rateLimit: true, retry: true });
    s.play(B, 'SSS'); // reduced to 3, then never used again
    const busy = 'GET /search';
    s.play(busy, 'SSS'); // reduced too, and used now and then below
    for (let i = 0; i < MAX_PROFILES * 3; i++) {
      s.play(`GET /items/${i}`, 'R'); // every id is left throttled
      if (i % 500 === 0) s.play(busy, 'S');
    }
    expect(Object.keys(s.engine.snapshot().endpoints).length).toBeLessThanOrEqual(
      MAX_PROFILES + 64,
    );
    expect(s.engine.state(B)).toBeUndefined();
    expect(s.engine.reducedEndpoints()).toEqual([busy]);
    // B's cap goes with it: a decision back to the configured ceiling, for the client to apply.
    expect(s.log.filter((d) => d.endpoint === B && d.type === 'ceiling').at(-1)).toMatchObject({
      from: 3,
      to: 4,
    });
    expect(s.engine.metrics().throttles).toBe(MAX_PROFILES * 3);
  });

  // The engine has no clock: fed from lifecycle listeners, it must not read one that may throw.
  it('a dropped profile decides at the time the attempt that dropped it was told', () => {
    const s = scripted({ rateLimit: true, retry: true });
    s.play(B, 'SSS');
    for (let i = 0; i < MAX_PROFILES * 2; i++) s.play(`GET /items/${i}`, 'R');
    const lifted = s.log.filter((d) => d.endpoint === B && d.type === 'ceiling').at(-1);
    expect(lifted).toMatchObject({ from: 3, to: 4 });
    expect(lifted!.at).toBeGreaterThan(0);
    expect(lifted!.at).toBeLessThanOrEqual(s.clock.now());
    expect(s.engine.state(B)).toBeUndefined();
  });
});
