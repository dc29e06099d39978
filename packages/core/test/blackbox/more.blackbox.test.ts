// Black-box acceptance tests: further spec rules (circuit rule 3 with timeouts, SWR on a fresh
// entry, segment-aware mutation invalidation, rate-budget park payload, adaptive SWR sharing the
// degraded flag, throttle trigger).
import { describe, expect, test } from 'vitest';
import {
  CancelledError,
  computeDelay,
  createClient,
  resolveRetryOptions,
  TimeoutError,
} from '../../src/index';
import { json, names, record, settle, setup } from './harness';

const ticks = async (n = 5) => {
  for (let i = 0; i < n; i++) await new Promise((r) => setImmediate(r));
};

type S = ReturnType<typeof setup>;
async function drive(s: S, path: string, latency: number, count: number, status = 200) {
  s.backend.handler = () =>
    new Promise<Response>((r) => {
      s.clock.setTimeout(() => r(json({}, status)), latency);
    });
  for (let i = 0; i < count; i++) {
    const p = settle(s.client.get(`${path}?i=${i}`, { retry: false, cache: false }));
    await s.clock.advance(latency);
    await p;
  }
}

describe('Circuit rule 3 with timeouts', () => {
  test('three timed-out attempts of one request count once', async () => {
    const s = setup({ timeout: 100, retry: { attempts: 3, baseDelay: 10, jitter: false } });
    s.backend.handler = () => new Promise<Response>(() => {});
    const p = settle(s.client.get('/t'));
    for (let i = 0; i < 5; i++) await s.clock.advance(110);
    expect((await p).ok).toBe(false);
    expect(s.backend.calls).toHaveLength(3);
    expect(s.client.circuitBreaker().status('GET', '/t').consecutiveFailures).toBe(1);
  });
});

describe('Cache details (spec: step 2, step 6)', () => {
  test('a fresh entry under stale-while-revalidate is served without any refetch', async () => {
    const s = setup({ cache: { enabled: true, ttl: 1000, strategy: 'stale-while-revalidate' } });
    await s.client.get('/f');
    await s.clock.advance(500);
    await s.client.get('/f');
    await ticks();
    expect(s.backend.calls).toHaveLength(1);
  });

  test('no cache-write for a GET with cache:false or for a mutation', async () => {
    const s = setup();
    const log = record(s.client, ['cache-write']);
    await s.client.get('/n', { cache: false });
    await s.client.post('/m', {});
    await s.client.put('/m', {});
    expect(log).toHaveLength(0);
  });

  test('a mutation on /users/7 invalidates /users/7 and its children, not its parent /users', async () => {
    const s = setup();
    for (const u of ['/users', '/users/7', '/users/7/posts', '/users/70']) await s.client.get(u);
    const log = record(s.client, ['invalidate']);
    await s.client.patch('/users/7', { name: 'x' });
    expect(names(log)).toEqual(['invalidate']);
    expect((log[0]!.payload.keys as string[]).sort()).toEqual([
      'GET /users/7',
      'GET /users/7/posts',
    ]);
  });
});

describe('Rate budget park (spec: request-delayed {reason: ParkReason, delay})', () => {
  test('the job past the budget is parked with reason rate-limit and the wait until budget frees', async () => {
    const s = setup({ scheduler: { rateLimit: { requests: 2, interval: 1000 } }, cache: false });
    const log = record(s.client, ['request-delayed']);
    const ps = [s.client.get('/1'), s.client.get('/2'), s.client.get('/3')];
    await s.clock.advance(300);
    expect(log).toHaveLength(1);
    expect(log[0]!.payload).toMatchObject({ key: 'GET /3', reason: 'rate-limit', delay: 1000 });
    expect(s.client.scheduler().stats()).toMatchObject({ delayed: 1, active: 0 });
    await s.clock.advance(700);
    await Promise.all(ps);
  });
});

describe('Adaptive degraded flag and throttle trigger (spec: rule 6, throttle table)', () => {
  test('with concurrency and SWR switches, an endpoint degraded by a reduced ceiling reads with SWR', async () => {
    const s = setup({
      scheduler: { concurrency: 4 },
      adaptive: {
        enabled: true,
        concurrency: true,
        staleWhileRevalidate: true,
        degradeSamples: 1,
        changeCooldown: 0,
        outcomeWindow: 2,
        latencyWindow: 4,
      },
    });
    await drive(s, '/e', 10, 2, 500);
    const st = s.client.adaptive().endpoint('GET', '/e')!;
    expect(st.effective).toBe(3);
    expect(st.health).toBe('degraded');
    expect(st.strategy).toBe('stale-while-revalidate');
  });

  test('README choice: only 429 pressure throttles; a latency-pressured window does not', async () => {
    const s = setup({
      adaptive: { enabled: true, rateLimit: true, retry: true, outcomeWindow: 2, latencyWindow: 4 },
    });
    await drive(s, '/e', 5000, 4);
    expect(s.client.adaptive().endpoint('GET', '/e')!.retryMode).toBe('nominal');
    expect(s.client.adaptive().metrics().throttles).toBe(0);
  });
});

describe('invalidate event (spec: emitted when invalidate removes entries)', () => {
  test('an invalidate that removes nothing returns [] and emits no invalidate event', async () => {
    const s = setup();
    const log = record(s.client, ['invalidate']);
    expect(s.client.invalidate('/nothing')).toEqual([]);
    expect(log).toHaveLength(0);
  });
});

describe('Adaptive latency span (spec: Events rule 3)', () => {
  test('measured from request-started: time queued for a slot is not latency', async () => {
    const s = setup({ scheduler: { concurrency: 1 }, adaptive: { enabled: true }, cache: false });
    s.backend.handler = (req) =>
      new Promise<Response>((r) => {
        s.clock.setTimeout(() => r(json({})), req.url.endsWith('/busy') ? 5000 : 10);
      });
    const busy = s.client.get('/busy');
    const q = s.client.get('/q');
    await s.clock.advance(5000);
    await busy;
    await s.clock.advance(10);
    await q;
    expect(s.client.adaptive().endpoint('GET', '/q')!.signals).toMatchObject({
      samples: 1,
      p95: 10,
    });
  });

  test('a retry wait ends the sample (request-delayed); the wait itself is not latency', async () => {
    const s = setup({
      scheduler: { concurrency: 1 },
      adaptive: { enabled: true },
      cache: false,
      retry: { baseDelay: 1000, jitter: false },
    });
    let n = 0;
    s.backend.handler = () =>
      new Promise<Response>((r) => {
        const status = ++n === 1 ? 503 : 200;
        s.clock.setTimeout(() => r(json({}, status)), 20);
      });
    const p = s.client.get('/r');
    await s.clock.advance(20);
    await s.clock.advance(1000);
    await s.clock.advance(20);
    await p;
    const sig = s.client.adaptive().endpoint('GET', '/r')!.signals;
    expect(sig.samples).toBe(2);
    expect(sig.p95).toBe(20);
    expect(sig.errorRatio).toBe(0.5);
  });

  test('transparent mode: measured from request to success', async () => {
    const s = setup({ adaptive: { enabled: true }, cache: false });
    s.backend.handler = () =>
      new Promise<Response>((r) => {
        s.clock.setTimeout(() => r(json({})), 30);
      });
    const p = s.client.get('/t');
    await s.clock.advance(30);
    await p;
    expect(s.client.adaptive().endpoint('GET', '/t')!.signals).toMatchObject({
      samples: 1,
      p95: 30,
      avg: 30,
    });
  });
});

describe('Timeout is per attempt (spec: RequestOptions.timeout "per-attempt")', () => {
  test('time spent queued in the scheduler does not count against the timeout', async () => {
    const s = setup({ scheduler: { concurrency: 1 }, cache: false, retry: false });
    let release!: (r: Response) => void;
    s.backend.handler = (req) =>
      req.url.endsWith('/busy')
        ? new Promise<Response>((r) => {
            release = r;
          })
        : json({ ok: 1 });
    const busy = s.client.get('/busy');
    const q = settle(s.client.get('/q', { timeout: 100 }));
    await s.clock.advance(500);
    release(json({}));
    await busy;
    await s.clock.advance(0);
    const o = await q;
    expect(o.ok).toBe(true);
  });
});

describe('Lightweight trackers (spec: Request tracker)', () => {
  test('a cache hit carries its own tracker in state success; cancel() after settling is a no-op', async () => {
    const s = setup();
    await s.client.get('/a');
    const log = record(s.client, ['cache-hit', 'cancel']);
    const p = s.client.get('/a');
    await p;
    p.cancel();
    await ticks();
    expect((log[0]!.payload.tracker as { state: string }).state).toBe('success');
    expect(names(log)).toEqual(['cache-hit']);
  });
});

describe('Rate limit window (spec: at most `requests` attempts per `interval` ms; README: any interval, sliding)', () => {
  test('starts at 0 and 600 with a budget of 2 per 1000: the third waits for the first to age out', async () => {
    const s = setup({ scheduler: { rateLimit: { requests: 2, interval: 1000 } }, cache: false });
    const t0 = s.clock.now();
    const starts: number[] = [];
    s.client.on('request-started', () => starts.push(s.clock.now() - t0));
    const a = s.client.get('/a');
    await s.clock.advance(600);
    const b = s.client.get('/b');
    const c = s.client.get('/c');
    const d = s.client.get('/d');
    await s.clock.advance(2000);
    await Promise.all([a, b, c, d]);
    expect(starts).toEqual([0, 600, 1000, 1600]);
  });
});

describe('SWR refresh reaches subscribers (spec: Events rule 2)', () => {
  test('a background refresh delivers a revalidate CacheUpdate with the new response', async () => {
    const s = setup({ cache: { enabled: true, ttl: 100, strategy: 'stale-while-revalidate' } });
    let n = 0;
    s.backend.handler = () => json({ n: ++n });
    await s.client.get('/s');
    const updates: { type: string; response?: { data: unknown } }[] = [];
    s.client.subscribe('GET /s' as never, (u) => updates.push(u as never));
    await s.clock.advance(200);
    await s.client.get('/s');
    await ticks();
    expect(updates.map((u) => u.type)).toEqual(['revalidate']);
    expect(updates[0]!.response?.data).toEqual({ n: 2 });
  });
});

describe('Prompt cancellation even when fetch ignores its signal (spec: 6.)', () => {
  test('cancel() and a timeout settle the caller although the fetch never settles', async () => {
    const s = setup({ retry: false });
    const client = createClient({
      baseURL: 'https://api.test',
      fetch: (() => new Promise<Response>(() => {})) as never,
      clock: s.clock,
      retry: false,
    });
    const p = client.get('/x');
    p.cancel();
    const o = await settle(p);
    expect(!o.ok && o.error instanceof CancelledError).toBe(true);
    const t = settle(client.get('/y', { timeout: 50 }));
    await s.clock.advance(50);
    const ot = await t;
    expect(!ot.ok && ot.error instanceof TimeoutError).toBe(true);
  });

  test('the per-attempt timeout also covers a body that never ends', async () => {
    const s = setup({ retry: false });
    s.backend.handler = () =>
      new Response(
        new ReadableStream({
          start(c) {
            c.enqueue(new TextEncoder().encode('{"a":'));
          },
        }),
        { headers: { 'content-type': 'application/json' } },
      );
    const p = settle(s.client.get('/body', { timeout: 100 }));
    await s.clock.advance(100);
    const o = await p;
    expect(!o.ok && o.error instanceof TimeoutError).toBe(true);
  });
});

describe('Request headers are part of the key (spec: createFingerprint({method, url, headers?, body?}))', () => {
  test('the same URL with different request headers is cached separately', async () => {
    const s = setup();
    await s.client.get('/h', { headers: { 'x-tenant': 'a' } });
    await s.client.get('/h', { headers: { 'x-tenant': 'b' } });
    await s.client.get('/h', { headers: { 'x-tenant': 'a' } });
    expect(s.backend.calls).toHaveLength(2);
  });
});

describe('Streaks are consecutive (spec: adaptive rules 2-3 "consecutive")', () => {
  test('a deadband window between two pressured windows breaks the degradeSamples streak', async () => {
    const s = setup({
      scheduler: { concurrency: 4 },
      adaptive: {
        enabled: true,
        concurrency: true,
        degradeSamples: 2,
        changeCooldown: 0,
        outcomeWindow: 4,
        latencyWindow: 4,
      },
      cache: false,
    });
    await drive(s, '/e', 3000, 4); // pressured (1)
    await drive(s, '/e', 1500, 4); // deadband: streak broken
    await drive(s, '/e', 3000, 4); // pressured (1)
    expect(s.client.adaptive().endpoint('GET', '/e')!.effective).toBe(4);
    await drive(s, '/e', 3000, 4); // pressured (2)
    expect(s.client.adaptive().endpoint('GET', '/e')!.effective).toBe(3);
  });
});

describe('Retry delay defaults in the client (spec: RetryOptions defaults; README formula)', () => {
  test('default jitter: the first retry waits between baseDelay/2 and baseDelay (random 0 gives 500)', async () => {
    const s = setup({ random: () => 0 });
    let n = 0;
    s.backend.handler = () => (++n === 1 ? json({}, 503) : json({}));
    const log = record(s.client, ['retry']);
    const p = s.client.get('/j');
    await s.clock.advance(500);
    await p;
    expect(log[0]!.payload.delay).toBe(500);
  });

  test('default maxDelay 30000 caps exponential growth', () => {
    const o = resolveRetryOptions({ jitter: false });
    expect(computeDelay({ ...o, attempts: 5 })).toBe(16_000);
    expect(computeDelay({ ...o, attempts: 6 })).toBe(30_000);
  });
});
