import { describe, expect, it } from 'vitest';
import {
  type AdaptiveOptions,
  type Client,
  type ClientOptions,
  createClient,
  type EndpointAdaptiveState,
} from '../src/index';
import {
  type Answer,
  createFakeFetch,
  createTestClient,
  FakeClock,
  quickResponse,
  type RecordedEvent,
  recordEvents,
} from './helpers';

/**
 * A client on a FakeClock whose fetch answers each call after a delay the test controls, per
 * path, from the number of calls of that path in progress (so a backend can saturate).
 */
function setup(
  options: ClientOptions,
  route: (path: string, inProgress: number, n: number) => Answer,
) {
  const clock = new FakeClock();
  const inProgress = new Map<string, number>();
  let n = 0;
  const fake = createFakeFetch({
    handler: (call) => {
      const path = new URL(call.url).pathname;
      const now = (inProgress.get(path) ?? 0) + 1;
      inProgress.set(path, now);
      const answer = route(path, now, n++);
      return new Promise<Response>((resolve) => {
        clock.setTimeout(() => {
          inProgress.set(path, inProgress.get(path)! - 1);
          resolve(quickResponse(answer.status ?? 200, { path }, answer.headers));
        }, answer.ms);
      });
    },
  });
  const client = createTestClient({
    baseURL: 'https://api.test',
    fetch: fake.fetch,
    clock,
    circuitBreaker: { enabled: false },
    ...options,
    retry: {
      jitter: false,
      baseDelay: 100,
      ...(typeof options.retry === 'object' ? options.retry : {}),
    },
  });
  return { client, clock, fake };
}

/** `workers` callers looping on GET path?i=n until halted; failures are swallowed. */
function load(client: Client, path: string, workers: number) {
  let halted = false;
  let n = 0;
  const loops = Array.from({ length: workers }, async () => {
    while (!halted) await client.get(`${path}?i=${n++}`).catch(() => {});
  });
  return {
    halt: () => {
      halted = true;
    },
    done: Promise.all(loops),
  };
}

/** Halts every load, lets what is in flight finish, and waits for the callers. */
async function drain(clock: FakeClock, ...loads: ReturnType<typeof load>[]) {
  for (const l of loads) l.halt();
  await clock.runAll();
  await Promise.all(loads.map((l) => l.done));
}

const state = (client: Client, path: string): EndpointAdaptiveState | undefined =>
  client.adaptive().endpoint('GET', path);

const SMALL: AdaptiveOptions = {
  enabled: true,
  latencyWindow: 4,
  outcomeWindow: 4,
  degradeSamples: 2,
  recoverySamples: 2,
  changeCooldown: 1,
  highLatencyMs: 500,
  lowLatencyMs: 100,
};

describe('adaptive concurrency through the scheduler', () => {
  /** A backend that is fast with up to 2 calls in progress and slow (1 s) above. */
  const saturating =
    (fastAfter = Number.POSITIVE_INFINITY) =>
    (_: string, c: number, n: number) =>
      ({ ms: c <= 2 || n >= fastAfter ? 50 : 1000 }) as Answer;

  it('steps the ceiling down and up by exactly 1, and the scheduler applies it', async () => {
    const t = setup(
      {
        scheduler: { concurrency: 4 },
        cache: { enabled: false },
        adaptive: { ...SMALL, concurrency: true },
      },
      saturating(60),
    );
    const trace: number[] = [4];
    let running = 0;
    let violations = 0;
    t.client.on('request-started', () => {
      running++;
      if (running > state(t.client, '/slow')!.effective) violations++;
    });
    const settled = () => {
      running--;
      const effective = state(t.client, '/slow')?.effective;
      if (effective !== undefined && effective !== trace.at(-1)) trace.push(effective);
    };
    t.client.on('success', settled);
    t.client.on('error', settled);

    const work = load(t.client, '/slow', 8);
    await t.clock.advance(3000);
    expect(state(t.client, '/slow')).toMatchObject({
      configured: 4,
      effective: 2,
      mode: 'reducing',
      health: 'degraded',
      reason: 'p95 1000 ms >= highLatencyMs 500 for 3 windows: ceiling 3 → 2',
    });
    expect(state(t.client, '/slow')!.degradedSince).toBeGreaterThan(0);
    await t.clock.advance(20_000);
    await drain(t.clock, work);

    expect(violations).toBe(0);
    for (let i = 1; i < trace.length; i++) expect(Math.abs(trace[i]! - trace[i - 1]!)).toBe(1);
    expect(Math.min(...trace)).toBeGreaterThanOrEqual(1);
    expect(trace.slice(0, 3)).toEqual([4, 3, 2]);
    expect(trace.at(-1)).toBe(4); // fast again: recovered to the configured ceiling
    const m = t.client.adaptive().metrics();
    expect(m.concurrencyReductions).toBeGreaterThanOrEqual(2);
    expect(m.concurrencyRecoveries).toBe(m.concurrencyReductions);
    expect(t.client.intelligence().snapshot().summary.adaptive).toEqual(m);
    expect(state(t.client, '/slow')).toMatchObject({ mode: 'nominal', health: 'good' });
    expect(t.client.scheduler().stats()).toMatchObject({ active: 0, queued: 0, delayed: 0 });
  });

  it('keeps endpoints isolated', async () => {
    const t = setup(
      {
        scheduler: { concurrency: 8 },
        cache: { enabled: false },
        adaptive: { ...SMALL, concurrency: true },
      },
      (path, c) => ({ ms: path === '/slow' && c > 2 ? 1000 : 20 }),
    );
    const slow = load(t.client, '/slow', 4);
    const fast = load(t.client, '/fast', 2);
    await t.clock.advance(4000);
    expect(state(t.client, '/slow')!.effective).toBeLessThan(8);
    expect(state(t.client, '/fast')).toMatchObject({
      effective: 8,
      mode: 'nominal',
      health: 'good',
      counters: { decisions: 0 },
    });
    await drain(t.clock, slow, fast);
  });

  it('makes the same decisions for the same script (deterministic)', async () => {
    const run = async () => {
      const t = setup(
        {
          scheduler: { concurrency: 4 },
          cache: { enabled: false },
          adaptive: { ...SMALL, concurrency: true, rateLimit: true, retry: true },
        },
        (_, c, n) => ({ ms: c > 2 && n < 80 ? 900 : 40, status: n % 7 === 3 ? 429 : 200 }),
      );
      const log: string[] = [];
      const snap = () => log.push(JSON.stringify(t.client.adaptive().snapshot()));
      t.client.on('success', snap);
      t.client.on('error', snap);
      const work = load(t.client, '/d', 6);
      await t.clock.advance(15_000);
      await drain(t.clock, work);
      return log;
    };
    const first = await run();
    expect(first.length).toBeGreaterThan(50);
    expect(await run()).toEqual(first);
  });

  it('without a scheduler the concurrency switch changes nothing, and says so', async () => {
    const t = setup(
      { cache: { enabled: false }, adaptive: { ...SMALL, concurrency: true } },
      () => ({ ms: 1000 }),
    );
    const work = load(t.client, '/x', 4);
    await t.clock.advance(10_000);
    await drain(t.clock, work);
    expect(state(t.client, '/x')).toMatchObject({
      configured: Number.POSITIVE_INFINITY,
      effective: Number.POSITIVE_INFINITY,
      reason: expect.stringContaining('no scheduler'),
    });
    expect(t.client.adaptive().metrics().decisions).toBe(0);
  });

  it('reset forgets everything and lifts the ceiling', async () => {
    const t = setup(
      {
        scheduler: { concurrency: 4 },
        cache: { enabled: false },
        adaptive: { ...SMALL, concurrency: true },
      },
      () => ({ ms: 1000 }),
    );
    const work = load(t.client, '/slow', 4);
    await t.clock.advance(8000);
    expect(state(t.client, '/slow')!.effective).toBeLessThan(4);
    await drain(t.clock, work);
    t.client.adaptive().reset();
    expect(t.client.adaptive().snapshot()).toEqual({ enabled: true, endpoints: {} });
    expect(t.client.adaptive().metrics().decisions).toBe(0);
    const calls = t.fake.calls.length;
    const ps = [1, 2, 3, 4].map((i) => t.client.get(`/slow?again=${i}`));
    expect(t.fake.calls.length - calls).toBe(4); // all four start at once again
    await t.clock.runAll();
    await Promise.all(ps);
  });
});

describe('adaptive measurement ends with every flight', () => {
  const adaptiveFlights = (client: Client) =>
    (client as unknown as { debug: { adaptiveFlights: number } }).debug.adaptiveFlights;

  it.each([
    ['scheduler', { scheduler: { concurrency: 1 } }, 'rejected', 1],
    ['transparent', {}, 'fulfilled', 2], // no scheduler: cancelGroup has nothing to cancel
  ] as const)(
    'cancellations leave nothing behind (%s)',
    async (_, extra, groupOutcome, samples) => {
      const t = setup(
        { ...extra, cache: { enabled: false }, adaptive: { ...SMALL, concurrency: true } },
        () => ({ ms: 100 }),
      );
      const running = t.client.get('/c?i=1');
      const owner = t.client.get('/c?i=2');
      const joiner = t.client.get('/c?i=2');
      const grouped = t.client.get('/c?i=3', { scheduler: { group: 'g' } });
      const later = t.client.get('/c?i=4');
      const kept = t.client.get('/c?i=5');
      const outcomes = [running, owner, joiner, grouped, later, kept].map((p) =>
        p.then(
          () => 'fulfilled',
          () => 'rejected',
        ),
      );
      owner.cancel(); // the owner leaves first: the joiner's cancel ends the flight
      joiner.cancel();
      t.client.cancelGroup('g');
      await t.clock.advance(50);
      running.cancel();
      later.cancel();
      await t.clock.runAll();
      expect(await Promise.all(outcomes)).toEqual([
        'rejected',
        'rejected',
        'rejected',
        groupOutcome,
        'rejected',
        'fulfilled',
      ]);
      expect(adaptiveFlights(t.client)).toBe(0);
      expect(state(t.client, '/c')!.signals).toMatchObject({ active: 0, samples });
    },
  );
});

describe('adaptive retry throttle', () => {
  const options = (adaptive: AdaptiveOptions = {}): ClientOptions => ({
    cache: { enabled: false },
    retry: { attempts: 3, baseDelay: 100 },
    adaptive: {
      enabled: true,
      rateLimit: true,
      retry: true,
      latencyWindow: 4,
      outcomeWindow: 2,
      recoverySamples: 2,
      ...adaptive,
    },
  });

  it('scales the retry base delay by backoffFactor while throttled, then releases', async () => {
    const t = setup(options(), (path) => ({ ms: 10, status: path === '/rl' ? 429 : 200 }));
    const delays: number[] = [];
    t.client.on('retry', (e) => delays.push(e.delay));
    const a = t.client.get('/rl?i=1').catch((e) => e);
    const b = t.client.get('/rl?i=2').catch((e) => e);
    await t.clock.runAll();
    await Promise.all([a, b]);
    // Two 429 attempts close a window: throttled from the third retry decision on.
    expect(delays).toEqual([100, 100, 400, 400]);
    expect(state(t.client, '/rl')).toMatchObject({
      retryMode: 'throttled',
      retryMultiplier: 2,
      health: 'throttled',
      retryReason: '429 share 1 >= rateLimitRatio 0.2: still throttled',
    });
    // Clean windows: two successes per window, two windows.
    for (let i = 0; i < 4; i++) {
      const p = t.client.get(`/rl-ok?i=${i}`);
      await t.clock.runAll();
      await p;
    }
    expect(state(t.client, '/rl')!.retryMode).toBe('throttled'); // other endpoints do not release it
    const ok = setup(options(), (_, __, n) => ({ ms: 10, status: n < 2 ? 429 : 200 }));
    await Promise.all(
      [1, 2, 3, 4, 5, 6].map(async (i) => {
        const p = ok.client.get(`/e?i=${i}`);
        await ok.clock.runAll();
        await p;
      }),
    );
    expect(state(ok.client, '/e')).toMatchObject({
      retryMode: 'nominal',
      retryMultiplier: 1,
      counters: { throttles: 1, retryChanges: 2, decisions: 1 },
    });
    expect(ok.client.intelligence().snapshot().summary.adaptive).toEqual(
      ok.client.adaptive().metrics(),
    );
  });

  it('caps the scaled base delay at maxBackoffMs', async () => {
    const t = setup(options({ maxBackoffMs: 150 }), () => ({ ms: 10, status: 429 }));
    const delays: number[] = [];
    t.client.on('retry', (e) => delays.push(e.delay));
    const ps = [1, 2].map((i) => t.client.get(`/c?i=${i}`).catch(() => {}));
    await t.clock.runAll();
    await Promise.all(ps);
    expect(delays).toEqual([100, 100, 300, 300]); // base min(100 x 2, 150) = 150, doubled
  });

  it('a server Retry-After still wins over the adapted backoff', async () => {
    const t = setup(options(), () => ({ ms: 10, status: 429, headers: { 'retry-after': '3' } }));
    const delays: number[] = [];
    t.client.on('retry', (e) => delays.push(e.delay));
    const ps = [1, 2].map((i) => t.client.get(`/ra?i=${i}`).catch(() => {}));
    await t.clock.runAll();
    await Promise.all(ps);
    expect(state(t.client, '/ra')!.retryMode).toBe('throttled');
    expect(delays).toEqual([3000, 3000, 3000, 3000]);
  });

  it('with the scheduler, an attempt ends at its retry park (request-delayed)', async () => {
    const t = setup({ ...options(), scheduler: { concurrency: 2 } }, () => ({
      ms: 10,
      status: 429,
    }));
    const delays: number[] = [];
    t.client.on('retry', (e) => delays.push(e.delay));
    const ps = [1, 2].map((i) => t.client.get(`/s?i=${i}`).catch(() => {}));
    await t.clock.runAll();
    await Promise.all(ps);
    expect(delays).toEqual([100, 100, 400, 400]);
    expect(state(t.client, '/s')!.signals).toMatchObject({ samples: 4, p95: 10, active: 0 });
  });
});

describe('adaptive stale-while-revalidate', () => {
  const options: ClientOptions = {
    cache: { ttl: 1000 },
    adaptive: {
      enabled: true,
      staleWhileRevalidate: true,
      swrLatencyMs: 500,
      latencyWindow: 4,
      outcomeWindow: 2,
    },
  };

  it('serves a degraded endpoint stale-while-revalidate; request options still win', async () => {
    const t = setup(options, () => ({ ms: 800 }));
    const hits: boolean[] = [];
    t.client.on('cache-hit', (e) => hits.push(e.stale));
    // Before any window closes, option-less specs are memoized (no recommendation applies).
    expect(t.client.resolve('GET', '/s?i=1')).toBe(t.client.resolve('GET', '/s?i=1'));
    const ps = [1, 2].map((i) => t.client.get(`/s?i=${i}`));
    await t.clock.advance(800);
    await Promise.all(ps);
    expect(state(t.client, '/s')).toMatchObject({
      strategy: 'stale-while-revalidate',
      strategyReason: 'p95 800 ms >= swrLatencyMs 500: reads use stale-while-revalidate',
      health: 'degraded',
    });
    expect(t.client.resolve('GET', '/s?i=1').cache!.strategy).toBe('stale-while-revalidate');

    await t.clock.advance(2000); // both entries expired
    const calls = t.fake.calls.length;
    const stale = await t.client.get('/s?i=1'); // answered at once from the stale entry
    expect(stale.data).toEqual({ path: '/s' });
    expect(hits).toEqual([true]);
    expect(t.fake.calls.length).toBe(calls + 1); // ...plus a background refresh

    const explicit = t.client.get('/s?i=2', { cache: { strategy: 'cache-first' } });
    expect(t.fake.calls.length).toBe(calls + 2); // the request option wins: a network read
    await t.clock.runAll();
    await explicit;
    expect(hits).toEqual([true]);
  });

  it('cache-first as usual while the endpoint is healthy', async () => {
    const t = setup(options, () => ({ ms: 50 }));
    const ps = [1, 2].map((i) => t.client.get(`/h?i=${i}`));
    await t.clock.runAll();
    await Promise.all(ps);
    expect(state(t.client, '/h')!.strategy).toBeUndefined();
    await t.clock.advance(2000);
    const calls = t.fake.calls.length;
    const p = t.client.get('/h?i=1');
    expect(t.fake.calls.length).toBe(calls + 1);
    await t.clock.runAll();
    await p;
  });
});

describe('adaptive disabled (Versioning rule 2)', () => {
  /** One script touching every stage the engine could affect; returns a comparable log. */
  async function script(adaptive: AdaptiveOptions | undefined) {
    const options: ClientOptions = {
      scheduler: { concurrency: 2 },
      cache: { ttl: 500 },
      retry: { attempts: 3 },
      ...(adaptive === undefined ? {} : { adaptive }),
    };
    const t = setup(options, (path, _, n) => ({
      ms: path === '/slow' ? 2500 : 30,
      status: path === '/rl' && n % 2 === 0 ? 429 : 200,
    }));
    const { events } = recordEvents(t.client);
    const ps: Promise<unknown>[] = [];
    for (let i = 0; i < 6; i++) {
      ps.push(t.client.get(`/slow?i=${i}`).catch(() => {}));
      ps.push(t.client.get(`/rl?i=${i}`).catch(() => {}));
      ps.push(t.client.get('/same').catch(() => {}));
      await t.clock.advance(400);
    }
    await t.clock.runAll();
    await Promise.all(ps);
    return { t, log: events.map(normalize) };
  }

  it('absent or enabled:false: the same event stream, and nothing is measured', async () => {
    const none = await script(undefined);
    const off = await script({
      enabled: false,
      concurrency: true,
      rateLimit: true,
      retry: true,
      staleWhileRevalidate: true,
      latencyWindow: 4,
      outcomeWindow: 2,
    });
    expect(none.log.length).toBeGreaterThan(50);
    expect(off.log).toEqual(none.log);
    for (const { t } of [none, off]) {
      expect(t.client.adaptive().snapshot()).toEqual({ enabled: false, endpoints: {} });
      expect(t.client.adaptive().endpoint('GET', '/slow')).toBeUndefined();
      expect(t.client.adaptive().metrics()).toEqual({
        decisions: 0,
        concurrencyReductions: 0,
        concurrencyRecoveries: 0,
        throttles: 0,
        retryChanges: 0,
      });
      expect(t.client.intelligence().snapshot().summary.adaptive.decisions).toBe(0);
    }
    // The same script with the engine on does adapt (so the comparison above can fail).
    const on = await script({
      enabled: true,
      rateLimit: true,
      retry: true,
      latencyWindow: 4,
      outcomeWindow: 2,
    });
    expect(on.log).not.toEqual(none.log);
  });

  it('rejects bad adaptive options at createClient, naming the field', () => {
    expect(() => createClient({ adaptive: { enabled: true, errorRatio: 1.5 } })).toThrow(
      /adaptive\.errorRatio/,
    );
    expect(() => createClient({ adaptive: { lowLatencyMs: 5000 } })).toThrow(RangeError);
    expect(() => createClient({ adaptive: { outcomeWindow: 1 } })).toThrow(
      /adaptive\.outcomeWindow/,
    );
    expect(() => createClient({ adaptive: { minConcurrency: 0 } })).toThrow(
      /adaptive\.minConcurrency/,
    );
  });
});

/** An event reduced to comparable data (trackers, responses and errors by value). */
function normalize(e: RecordedEvent): unknown {
  return JSON.parse(
    JSON.stringify(e, (_k, v: unknown) => {
      if (v instanceof Headers) return [...v.entries()];
      if (v instanceof Error) return { name: v.name, message: v.message };
      if (typeof v === 'object' && v !== null && 'attempts' in v && 'state' in v) {
        const tr = v as { state: string; attempts: number; startedAt: number; endedAt: number };
        return { state: tr.state, attempts: tr.attempts, at: [tr.startedAt, tr.endedAt] };
      }
      return v;
    }),
  );
}
