/**
 * Audit of request observation (intelligence) and the adaptive engine through the public API:
 * option bounds, measurements under an injected clock that misbehaves, and what may or may not
 * become a sample. Each test pins a rule of the client spec or the core README.
 */
import { describe, expect, it } from 'vitest';
import {
  type Client,
  type ClientOptions,
  type Clock,
  createBaseClient,
  createClient,
  withAdaptive,
} from '../src/index';
import {
  type Answer,
  createFakeFetch,
  createTestClient,
  FakeClock,
  quickResponse,
} from './helpers';

/**
 * A client on a FakeClock (or a clock wrapping it) whose fetch answers call `n` after `ms` of
 * fake time with `status`. Listener errors are collected, not logged.
 */
function setup(
  options: ClientOptions,
  route: (n: number, path: string) => Answer,
  fake = new FakeClock(),
  clock: Clock = fake,
) {
  let n = 0;
  const fetch = createFakeFetch({
    handler: (call) => {
      const a = route(n++, new URL(call.url).pathname);
      return new Promise<Response>((resolve) => {
        fake.setTimeout(() => resolve(quickResponse(a.status ?? 200, {}, a.headers)), a.ms);
      });
    },
  });
  const listenerErrors: unknown[] = [];
  const client = createTestClient({
    baseURL: 'https://api.test',
    fetch: fetch.fetch,
    clock,
    circuitBreaker: { enabled: false },
    onError: (error) => listenerErrors.push(error),
    ...options,
    retry: {
      jitter: false,
      baseDelay: 10,
      ...(typeof options.retry === 'object' ? options.retry : {}),
    },
  });
  return { client, fake, fetch, listenerErrors };
}

/** A clock driven by `fake` whose `now()` answers `override` while it is set. */
function skewed(fake: FakeClock) {
  const clock = {
    override: undefined as number | undefined,
    now: () => clock.override ?? fake.now(),
    setTimeout: fake.setTimeout,
    clearTimeout: fake.clearTimeout,
  };
  return clock;
}

const adaptiveFlights = (client: Client) =>
  (client as unknown as { debug: { adaptiveFlights: number } }).debug.adaptiveFlights;

describe('adaptive window options are bounded', () => {
  it.each([
    ['latencyWindow', 2 ** 40],
    ['outcomeWindow', 2 ** 32],
    ['latencyWindow', 65_537],
    ['outcomeWindow', 65_537],
  ])('%s %d is a RangeError at creation, not a failure on the first request', (field, value) => {
    const pattern = new RegExp(`adaptive\\.${field}.* to 65536, got ${value}`);
    expect(() => createClient({ adaptive: { enabled: true, [field]: value } })).toThrow(RangeError);
    expect(() => createClient({ adaptive: { enabled: true, [field]: value } })).toThrow(pattern);
    expect(() => withAdaptive({ [field]: value })).toThrow(pattern);
    // Checked even while disabled, like every other adaptive option.
    expect(() => createClient({ adaptive: { enabled: false, [field]: value } })).toThrow(pattern);
  });

  it('the largest windows work', async () => {
    const t = setup(
      { cache: false, adaptive: { enabled: true, latencyWindow: 65_536, outcomeWindow: 65_536 } },
      () => ({ ms: 40 }),
    );
    const p = t.client.get('/a');
    await t.fake.advance(40);
    await p;
    expect(t.listenerErrors).toEqual([]);
    expect(t.client.adaptive().endpoint('GET', '/a')!.signals).toMatchObject({
      p95: 40,
      samples: 1,
    });
  });

  it('composed: the same bound through createBaseClient', () => {
    expect(() => createBaseClient({ features: [withAdaptive({ latencyWindow: 1e9 })] })).toThrow(
      /adaptive\.latencyWindow/,
    );
  });
});

describe('an injected clock that misbehaves never makes a latency up', () => {
  const options = (scheduled: boolean): ClientOptions => ({
    cache: false,
    intelligence: { adaptiveTimeout: true },
    adaptive: { enabled: true, latencyWindow: 4, outcomeWindow: 2, rateLimit: true, retry: true },
    ...(scheduled ? { scheduler: { concurrency: 2 } } : {}),
  });

  /** 12 requests, every other attempt a 503 (retried); `now()` is `bad` around some of them. */
  async function run(scheduled: boolean, bad: number) {
    const fake = new FakeClock();
    const clock = skewed(fake);
    const t = setup(
      options(scheduled),
      (n) => ({ ms: 100, status: n % 2 ? 200 : 503 }),
      fake,
      clock,
    );
    for (let i = 0; i < 12; i++) {
      const p = t.client.get(`/a?i=${i}`).catch(() => {});
      if (i % 3 === 1) clock.override = bad; // at the end of the attempt
      await fake.advance(50);
      if (i % 3 === 2) clock.override = bad; // from the start of the next attempt
      await fake.runAll();
      clock.override = undefined;
      await p;
    }
    return t;
  }

  it.each([
    [false, Number.NaN],
    [true, Number.NaN],
    [false, Number.POSITIVE_INFINITY],
    [true, Number.POSITIVE_INFINITY],
  ])(
    'scheduled %s, now() = %d: every flight leaves `active`, no sample is made up',
    async (s, bad) => {
      const t = await run(s, bad);
      expect(t.listenerErrors).toEqual([]);
      expect(adaptiveFlights(t.client)).toBe(0);
      const state = t.client.adaptive().endpoint('GET', '/a')!;
      expect(state.signals.active).toBe(0);
      for (const v of [state.signals.avg, state.signals.p50, state.signals.p95]) {
        expect(Number.isFinite(v)).toBe(true);
      }
      const stats = t.client.intelligence().endpoint('GET', '/a')!;
      for (const v of [stats.latency.avg, stats.latency.p50, stats.latency.p95]) {
        expect(Number.isFinite(v)).toBe(true);
      }
      // Every real sample took 100 ms: the recommendation is 3 x 100, not 60 s from an Infinity.
      expect(stats.latency.p95).toBe(100);
      expect(t.client.resolve('GET', '/a').timeout).toBe(300);
      expect(state.signals.p95).toBe(100);
    },
  );

  it('a clock stepping back is no 0 ms sample for the engine (nor for intelligence)', async () => {
    const fake = new FakeClock();
    const clock = skewed(fake);
    const t = setup(
      { cache: false, adaptive: { enabled: true, latencyWindow: 4, outcomeWindow: 2 } },
      () => ({ ms: 100 }),
      fake,
      clock,
    );
    const p = t.client.get('/a');
    await fake.advance(50);
    clock.override = fake.now() - 60_000; // the wall clock is set back a minute mid-attempt
    await fake.advance(50);
    await p;
    clock.override = undefined;
    const q = t.client.get('/a?2');
    await fake.advance(100);
    await q;
    expect(t.client.intelligence().endpoint('GET', '/a')!.latency).toMatchObject({
      samples: 1,
      p50: 100,
    });
    const { signals } = t.client.adaptive().endpoint('GET', '/a')!;
    expect(signals).toMatchObject({ samples: 1, p50: 100, p95: 100, active: 0 });
  });
});

describe('adaptive profiles stay bounded when endpoints carry ids', () => {
  it('endpoints left throttled by 429s do not pile up past 2,000; a dropped ceiling is lifted', async () => {
    const t = setup(
      {
        cache: false,
        retry: false,
        scheduler: { concurrency: 4 },
        adaptive: {
          enabled: true,
          concurrency: true,
          rateLimit: true,
          retry: true,
          latencyWindow: 4,
          outcomeWindow: 2,
          degradeSamples: 1,
          changeCooldown: 0,
          highLatencyMs: 500,
          lowLatencyMs: 100,
        },
      },
      (_n, path) => (path === '/hot' || path === '/warm' ? { ms: 1000 } : { ms: 5, status: 429 }),
    );
    // /hot and /warm are slow: their ceilings step down from 4.
    for (let i = 0; i < 4; i++) {
      const ps = [1, 2].flatMap((j) => [
        t.client.get(`/hot?r=${i}&j=${j}`),
        t.client.get(`/warm?r=${i}&j=${j}`),
      ]);
      await t.fake.runAll();
      await Promise.all(ps);
    }
    expect(t.client.adaptive().endpoint('GET', '/hot')!.effective).toBeLessThan(4);
    const warm = t.client.adaptive().endpoint('GET', '/warm')!.effective;
    expect(warm).toBeLessThan(4);
    // Then 3,000 endpoints with ids, each answered 429 twice: a throttled profile each. /warm
    // is still called now and then; /hot is not.
    for (let batch = 0; batch < 30; batch++) {
      const ps: Promise<unknown>[] = [t.client.get(`/warm?batch=${batch}`)];
      for (let i = 0; i < 100; i++) {
        const path = `/items/${batch * 100 + i}`;
        ps.push(
          t.client.get(`${path}?a`).catch(() => {}),
          t.client.get(`${path}?b`).catch(() => {}),
        );
      }
      await t.fake.runAll();
      await Promise.all(ps);
    }
    const last = t.client.adaptive().endpoint('GET', '/items/2999')!;
    expect(last.retryMode).toBe('throttled'); // each of them did have state
    const kept = Object.keys(t.client.adaptive().snapshot().endpoints).length;
    expect(kept).toBeLessThanOrEqual(2000);
    expect(t.client.adaptive().metrics().throttles).toBe(3000); // the totals stay exact
    // /warm, in use, kept its state; /hot was idle all along: its profile went, and with it the
    // scheduler's cap.
    expect(t.client.adaptive().endpoint('GET', '/warm')!.effective).toBeLessThan(4);
    expect(t.client.adaptive().endpoint('GET', '/hot')).toBeUndefined();
    const calls = t.fetch.calls.length;
    const ps = [1, 2, 3, 4].map((i) => t.client.get(`/hot?again=${i}`));
    expect(t.fetch.calls.length - calls).toBe(4);
    await t.fake.runAll();
    await Promise.all(ps);
  });
});
