// Black-box acceptance tests of the spec's finer rules: limits at their boundaries, interest
// reference counting, probes versus the scheduler gate and the adaptive ceiling, rate budget
// over retries, per-host lane position, dedup trackers.
import { describe, expect, test } from 'vitest';
import { CancelledError, CircuitOpenError } from '../../src/index';
import { deferred, json, record, settle, setup } from './harness';

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

describe('Subscriber interest (spec: Cache records: reference-counted, cleaned up on unsubscribe)', () => {
  test('two subscriptions on a key: the key is refetched until both unsubscribe', async () => {
    const s = setup();
    const off1 = s.client.subscribe('GET /k' as never, () => {});
    const off2 = s.client.subscribe('GET /k' as never, () => {});
    await s.client.get('/k');
    off1();
    s.client.invalidate('/k');
    await ticks();
    expect(s.backend.calls).toHaveLength(2);
    off2();
    s.client.invalidate('/k');
    await ticks();
    expect(s.backend.calls).toHaveLength(2);
  });

  test('post-invalidation refetches are coalesced through dedup with a live read', async () => {
    const s = setup();
    s.client.subscribe('GET /k' as never, () => {});
    await s.client.get('/k');
    const d = deferred();
    s.backend.handler = () => d.promise;
    s.client.invalidate('/k');
    const reader = s.client.get('/k');
    await ticks();
    d.release(json({ v: 2 }));
    expect((await reader).data).toEqual({ v: 2 });
    expect(s.backend.calls).toHaveLength(2);
  });
});

describe('Trackers (spec: Request tracker: one per flight, lightweight mirrors for dedup consumers)', () => {
  test('a cancelled joiner gets its own tracker, cancelled, while the flight tracker succeeds', async () => {
    const s = setup();
    const d = deferred();
    s.backend.handler = () => d.promise;
    const trackers: Record<string, { state: string }> = {};
    s.client.on('request', (e) => {
      trackers.flight = e.tracker as never;
    });
    s.client.on('cancel', (e) => {
      trackers.joiner = e.tracker as never;
    });
    const owner = s.client.get('/t');
    const joiner = s.client.get('/t');
    await ticks();
    joiner.cancel();
    d.release(json({}));
    await owner;
    const j = await settle(joiner);
    expect(!j.ok && j.error instanceof CancelledError).toBe(true);
    expect(trackers.joiner).not.toBe(trackers.flight);
    expect(trackers.joiner?.state).toBe('cancelled');
    expect(trackers.flight?.state).toBe('success');
  });
});

describe('Half-open probes (spec: circuit rule 5)', () => {
  test('a queued probe skips the scheduler pre-start gate', async () => {
    const s = setup({
      scheduler: { concurrency: 1 },
      retry: false,
      circuitBreaker: { failureThreshold: 1, resetTimeout: 100 },
    });
    s.backend.handler = () => json({}, 500);
    await settle(s.client.get('/a'));
    await s.clock.advance(100);
    const d = deferred();
    s.backend.handler = (req) => (req.url.endsWith('/busy') ? d.promise : json({ probe: true }));
    const busy = s.client.get('/busy');
    await ticks();
    const probe = settle(s.client.get('/a'));
    await ticks();
    expect(s.client.circuitBreaker().status('GET', '/a').state).toBe('halfOpen');
    d.release(json({}));
    await busy;
    const o = await probe;
    expect(o.ok).toBe(true);
    expect(s.client.circuitBreaker().status('GET', '/a').state).toBe('closed');
  });

  test('a half-open probe bypasses the adaptive ceiling', async () => {
    const s = setup({
      scheduler: { concurrency: 2 },
      retry: false,
      cache: false,
      circuitBreaker: { failureThreshold: 2, resetTimeout: 1000 },
      adaptive: {
        enabled: true,
        concurrency: true,
        degradeSamples: 1,
        changeCooldown: 0,
        outcomeWindow: 2,
        latencyWindow: 4,
      },
    });
    s.backend.handler = (req) =>
      req.url.includes('hang') ? new Promise<Response>(() => {}) : json({}, 500);
    const hang = settle(s.client.get('/e?hang=1'));
    await ticks();
    await settle(s.client.get('/e?f=1'));
    await settle(s.client.get('/e?f=2'));
    expect(s.client.adaptive().endpoint('GET', '/e')?.effective).toBe(1);
    expect(s.client.circuitBreaker().status('GET', '/e').state).toBe('open');
    await s.clock.advance(1000);
    s.backend.handler = () => json({ probe: true });
    const probe = await settle(s.client.get('/e?probe=1'));
    expect(probe.ok).toBe(true);
    s.client.cancelAll();
    await hang;
  });
});

describe('Scheduler limits (spec: Limits)', () => {
  test('rate limit is a budget over attempts: a retry needs budget too', async () => {
    const s = setup({
      scheduler: { rateLimit: { requests: 2, interval: 1000 } },
      retry: { baseDelay: 10, jitter: false },
      cache: false,
    });
    let first = true;
    s.backend.handler = (req) => {
      if (req.url.endsWith('/a') && first) {
        first = false;
        return json({}, 503);
      }
      return json({});
    };
    const starts: [string, number][] = [];
    s.client.on('request-started', (e) => starts.push([e.key, s.clock.now()]));
    const delayed: string[] = [];
    s.client.on('request-delayed', (e) => delayed.push(String(e.reason)));
    const t0 = s.clock.now();
    const a = s.client.get('/a');
    const b = s.client.get('/b');
    await s.clock.advance(10);
    expect(starts).toHaveLength(2);
    await s.clock.advance(990);
    await Promise.all([a, b]);
    expect(starts.map(([k, t]) => [k, t - t0])).toEqual([
      ['GET /a', 0],
      ['GET /b', 0],
      ['GET /a', 1000],
    ]);
    expect(delayed[0]).toBe('backoff');
    expect(delayed).toContain('rate-limit');
  });

  test('per-host cap: a job waiting for its host keeps its lane position', async () => {
    const s = setup({ scheduler: { concurrency: 2, hosts: { 'a.test': 1 } }, cache: false });
    const waits = new Map<string, (r: Response) => void>();
    s.backend.handler = (req) => new Promise<Response>((r) => waits.set(req.url, r));
    const order: string[] = [];
    s.client.on('request-started', (e) => order.push(String(e.url)));
    const ps = [
      s.client.get('https://a.test/1'),
      s.client.get('https://b.test/1'),
      s.client.get('https://a.test/2'),
      s.client.get('https://b.test/2'),
    ].map(settle);
    await ticks();
    expect(order).toEqual(['https://a.test/1', 'https://b.test/1']);
    waits.get('https://a.test/1')?.(json({}));
    await ticks();
    expect(order[2]).toBe('https://a.test/2');
    for (const r of waits.values()) r(json({}));
    await ticks();
    for (const r of waits.values()) r(json({}));
    await Promise.all(ps);
  });

  test('request-queued position is the 1-based place in the lane', async () => {
    const s = setup({ scheduler: { concurrency: 1 }, cache: false });
    s.backend.handler = () => new Promise<Response>(() => {});
    const log = record(s.client, ['request-queued']);
    const ps = [s.client.get('/1'), s.client.get('/2'), s.client.get('/3')].map(settle);
    await ticks();
    expect(log.map((l) => l.payload.position)).toEqual([1, 1, 2]);
    s.client.cancelAll();
    await Promise.all(ps);
  });
});

describe('Adaptive option defaults at their boundaries (spec: AdaptiveOptions)', () => {
  const base = {
    enabled: true,
    concurrency: true,
    degradeSamples: 1,
    recoverySamples: 1,
    changeCooldown: 0,
    outcomeWindow: 2,
    latencyWindow: 4,
  };

  test('highLatencyMs 2000: p95 1999 is not pressured, 2000 is', async () => {
    const a = setup({ scheduler: { concurrency: 4 }, adaptive: base });
    await drive(a, '/e', 1999, 2);
    expect(a.client.adaptive().endpoint('GET', '/e')?.effective).toBe(4);
    const b = setup({ scheduler: { concurrency: 4 }, adaptive: base });
    await drive(b, '/e', 2000, 2);
    expect(b.client.adaptive().endpoint('GET', '/e')?.effective).toBe(3);
  });

  test('lowLatencyMs 1000: p95 999 is healthy (recovers), 1000 is deadband (holds)', async () => {
    for (const [ms, expected] of [
      [999, 4],
      [1000, 2],
    ] as const) {
      // 3 -> (ring still holds the slow samples: p95 3000) 2 -> then healthy +1 per window, or held
      const s = setup({ scheduler: { concurrency: 4 }, adaptive: base });
      await drive(s, '/e', 3000, 2);
      await drive(s, '/e', ms, 6);
      expect(s.client.adaptive().endpoint('GET', '/e')?.effective, String(ms)).toBe(expected);
    }
  });

  test('rateLimitRatio 0.2: one 429 in five outcomes throttles', async () => {
    const s = setup({ adaptive: { enabled: true, rateLimit: true, outcomeWindow: 5 } });
    await drive(s, '/e', 10, 4);
    await drive(s, '/e', 10, 1, 429);
    expect(s.client.adaptive().endpoint('GET', '/e')?.retryMode).toBe('throttled');
  });

  test('errorRatio 0.1: one error in ten outcomes is pressure; none is not', async () => {
    const s = setup({ scheduler: { concurrency: 4 }, adaptive: { ...base, outcomeWindow: 10 } });
    await drive(s, '/e', 10, 9);
    await drive(s, '/e', 10, 1, 500);
    expect(s.client.adaptive().endpoint('GET', '/e')?.effective).toBe(3);
  });

  test('maxBackoffMs 10000 caps the throttled base delay', async () => {
    const s = setup({
      adaptive: { enabled: true, rateLimit: true, retry: true, outcomeWindow: 2 },
    });
    await drive(s, '/e', 10, 2, 429);
    let n = 0;
    s.backend.handler = () => (++n === 1 ? json({}, 503) : json({}));
    const log = record(s.client, ['retry']);
    const p = s.client.get('/e', { retry: { baseDelay: 8000, jitter: false }, cache: false });
    await s.clock.advance(10_000);
    await p;
    expect(log[0]?.payload.delay).toBe(10_000);
  });

  test('swrLatencyMs 1500: p95 1499 does not flip reads to SWR', async () => {
    const s = setup({
      adaptive: { enabled: true, staleWhileRevalidate: true, outcomeWindow: 2, latencyWindow: 4 },
    });
    await drive(s, '/s', 1499, 2);
    expect(s.client.adaptive().endpoint('GET', '/s')?.strategy).toBeUndefined();
  });

  test('a request cache.strategy wins over the adaptive SWR recommendation (spec: rule 5)', async () => {
    const s = setup({
      adaptive: { enabled: true, staleWhileRevalidate: true, outcomeWindow: 2, latencyWindow: 4 },
      cache: { enabled: true, ttl: 100 },
    });
    await drive(s, '/s', 2000, 2);
    expect(s.client.adaptive().endpoint('GET', '/s')?.strategy).toBe('stale-while-revalidate');
    s.backend.handler = () => json({ v: 1 });
    await s.client.get('/s');
    await s.clock.advance(200);
    s.backend.handler = () => json({ v: 2 });
    const r = await s.client.get('/s', { cache: { enabled: true, strategy: 'cache-first' } });
    expect(r.data).toEqual({ v: 2 });
  });

  test('transparent mode: latency measured from request; throttling still applies without a scheduler', async () => {
    const s = setup({
      adaptive: { enabled: true, rateLimit: true, outcomeWindow: 2, latencyWindow: 4 },
    });
    await drive(s, '/e', 700, 2, 429);
    const st = s.client.adaptive().endpoint('GET', '/e');
    expect(st?.retryMode).toBe('throttled');
    expect(st?.signals.p95).toBe(700);
    expect(st?.signals.samples).toBe(2);
  });
});

describe('Intelligence timeouts vs the client default (spec: rule 5; README: may tighten, not loosen)', () => {
  test('a tighter recommendation beats the client default timeout', async () => {
    const s = setup({ intelligence: { adaptiveTimeout: true }, timeout: 10_000, retry: false });
    await drive(s, '/t', 200, 5);
    s.backend.handler = () => new Promise<Response>(() => {});
    const p = settle(s.client.get('/t', { cache: false }));
    await s.clock.advance(600);
    expect((await p).ok).toBe(false);
  });

  test('activeRequests counts flights in progress', async () => {
    const s = setup();
    s.backend.handler = () => new Promise<Response>(() => {});
    const p = settle(s.client.get('/x'));
    await ticks();
    expect(s.client.intelligence().snapshot().summary.activeRequests).toBe(1);
    s.client.cancelAll();
    await p;
    expect(s.client.intelligence().snapshot().summary.activeRequests).toBe(0);
  });
});

describe('Circuit open blocks before the scheduler (spec: step 4 before step 5)', () => {
  test('an open circuit rejects at admission: no scheduler event', async () => {
    const s = setup({ scheduler: {}, retry: false, circuitBreaker: { failureThreshold: 1 } });
    s.backend.handler = () => json({}, 500);
    await settle(s.client.get('/a'));
    const log = record(s.client);
    const o = await settle(s.client.get('/a', { cache: false }));
    expect(!o.ok && o.error instanceof CircuitOpenError).toBe(true);
    expect(log.map((l) => l.event)).toEqual(['circuit-rejected']);
  });
});
