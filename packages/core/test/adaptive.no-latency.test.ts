import { describe, expect, it } from 'vitest';
import type { AdaptiveOptions } from '../src/index';
import type { Clock } from '../src/internal/clock';
import { createFakeFetch, createTestClient, FakeClock, quickResponse } from './helpers';

/**
 * A client whose injected clock cannot tell time (`now()` is NaN; its timers still run on a
 * FakeClock): no attempt yields a latency sample, so p95 is unknown, and the adaptive engine may
 * judge a window on its error and 429 shares only (concurrency rule 1: healthy is "p95 <
 * lowLatencyMs", which no window without a latency can show).
 */
function setup(adaptive: AdaptiveOptions = {}) {
  const timers = new FakeClock();
  const clock: Clock = {
    now: () => Number.NaN,
    setTimeout: timers.setTimeout,
    clearTimeout: timers.clearTimeout,
  };
  let status = 500;
  const fake = createFakeFetch({
    handler: () =>
      new Promise<Response>((resolve) => {
        timers.setTimeout(() => resolve(quickResponse(status, {})), 10);
      }),
  });
  const client = createTestClient({
    baseURL: 'https://api.test',
    fetch: fake.fetch,
    clock,
    cache: { enabled: false },
    circuitBreaker: { enabled: false },
    retry: false,
    scheduler: { concurrency: 4 },
    adaptive: {
      enabled: true,
      concurrency: true,
      latencyWindow: 4,
      outcomeWindow: 4,
      degradeSamples: 1,
      recoverySamples: 1,
      changeCooldown: 0,
      ...adaptive,
    },
  });
  let i = 0;
  const burst = async (count: number) => {
    const ps = Array.from({ length: count }, () => client.get(`/a?i=${i++}`).catch(() => {}));
    await timers.runAll();
    await Promise.all(ps);
  };
  return {
    client,
    burst,
    answer: (s: number) => {
      status = s;
    },
  };
}

describe('adaptive windows without latency samples', () => {
  it('errors still reduce the ceiling, but plain successes never raise it', async () => {
    const t = setup();
    await t.burst(4); // one window of 500s: pressured on the error share alone
    const reduced = t.client.adaptive().endpoint('GET', '/a')!;
    expect(reduced.effective).toBe(3);
    expect(reduced.signals.samples).toBe(0);

    t.answer(200);
    await t.burst(12); // three windows of successes, none with a latency
    expect(t.client.adaptive().endpoint('GET', '/a')).toMatchObject({
      effective: 3,
      reason: 'no latency samples: holding ceiling 3',
    });
    expect(t.client.adaptive().metrics().concurrencyRecoveries).toBe(0);
  });

  it('says so in the strategy reason, and does not read an unknown p95 as fast', async () => {
    const t = setup({ staleWhileRevalidate: true });
    t.answer(200);
    await t.burst(4);
    expect(t.client.adaptive().endpoint('GET', '/a')).toMatchObject({
      effective: 4,
      health: 'good',
      reason: 'no latency samples: holding ceiling 4',
      strategyReason:
        'no latency samples and ceiling at the configured 4: reads use their configured strategy',
    });
  });
});
