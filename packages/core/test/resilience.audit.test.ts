/**
 * Black-box checks of the resilience layer as a user sees it (retry, timeouts and deadlines,
 * cancellation racing retries and queue places, the circuit breaker, the scheduler, intelligence
 * and the adaptive engine), written from the spec and issue #11 after the rewrite of the request
 * path. Runs against createClient and (core-composed project) createBaseClient + with*().
 */
import { describe, expect, test } from 'vitest';
import {
  CancelledError,
  CircuitOpenError,
  createBaseClient,
  createClient,
  HttpError,
  isCancelledError,
  isCircuitOpenError,
  TimeoutError,
} from '../src/index';
import { debugOf, FAKE_EPOCH, flush, makeClient, settle, startServer, track } from './helpers';

const status = (s: number, headers?: Record<string, string>) =>
  new Response(`status ${s}`, { status: s, headers });

describe('retry: Retry-After and backoff edges', () => {
  test('a Retry-After date in the past retries at once (delay 0), not with backoff', async () => {
    const past = new Date(FAKE_EPOCH - 60_000).toUTCString();
    let n = 0;
    const t = makeClient(
      {},
      { handler: () => (n++ === 0 ? status(503, { 'retry-after': past }) : Response.json(1)) },
    );
    const p = track(t.client.get('/past'));
    await t.clock.advance(0);
    expect(t.of('retry')[0]).toMatchObject({ delay: 0, reason: 'retry-after' });
    expect(t.fake.calls).toHaveLength(2);
    expect(p.current.state).toBe('fulfilled');
  });

  test('an unparsable Retry-After falls back to backoff', async () => {
    let n = 0;
    const t = makeClient(
      {},
      { handler: () => (n++ === 0 ? status(503, { 'retry-after': 'soon' }) : Response.json(1)) },
    );
    const p = track(t.client.get('/bad-ra'));
    await t.clock.advance(100);
    expect(t.of('retry')[0]).toMatchObject({ delay: 100, reason: 'backoff' });
    expect(p.current.state).toBe('fulfilled');
  });

  test('exponential growth is capped by maxDelay; jitter stays within [d/2, d]', async () => {
    for (const r of [0, 0.999999]) {
      const t = makeClient(
        { random: () => r, retry: { attempts: 6, jitter: true, baseDelay: 100, maxDelay: 500 } },
        { handler: () => status(500) },
      );
      t.client.get('/j').catch(() => {});
      await t.clock.runAll();
      const delays = t.of('retry').map((e) => e.delay);
      const full = [100, 200, 400, 500, 500];
      delays.forEach((d, i) => {
        expect(d).toBeGreaterThanOrEqual(full[i]! / 2);
        expect(d).toBeLessThanOrEqual(full[i]!);
      });
    }
  });

  test('a 4xx other than 408/429 is not retried; 408 is', async () => {
    const t = makeClient({}, { handler: () => status(404) });
    await expect(t.client.get('/nf')).rejects.toMatchObject({ status: 404 });
    expect(t.fake.calls).toHaveLength(1);
    let n = 0;
    const u = makeClient({}, { handler: () => (n++ === 0 ? status(408) : Response.json(1)) });
    const p = track(u.client.get('/to'));
    await u.clock.runAll();
    expect(p.current.state).toBe('fulfilled');
    expect(u.fake.calls).toHaveLength(2);
  });

  test('retryOn gets the status and the error and can retry a 404', async () => {
    const seen: unknown[] = [];
    let n = 0;
    const t = makeClient(
      {
        retry: {
          retryOn: (s, e) => {
            seen.push([s, (e as Error).name]);
            return s === 404;
          },
        },
      },
      { handler: () => (n++ === 0 ? status(404) : Response.json(1)) },
    );
    const p = track(t.client.get('/r404'));
    await t.clock.runAll();
    expect(p.current.state).toBe('fulfilled');
    expect(seen).toEqual([[404, 'HttpError']]);
  });

  test('a PATCH answered 503 without Retry-After is sent once; with Retry-After it is retried', async () => {
    const t = makeClient({}, { handler: () => status(503) });
    await expect(t.client.patch('/p', { a: 1 })).rejects.toBeInstanceOf(HttpError);
    expect(t.fake.calls).toHaveLength(1);
    let n = 0;
    const u = makeClient(
      {},
      {
        handler: () => (n++ === 0 ? status(503, { 'retry-after': '1' }) : Response.json(1)),
      },
    );
    const p = track(u.client.patch('/p', { a: 1 }));
    await u.clock.runAll();
    expect(p.current.state).toBe('fulfilled');
    expect(u.fake.calls).toHaveLength(2);
  });

  test('a POST whose attempt timed out is not retried (it may have been processed)', async () => {
    const t = makeClient({ timeout: 50 });
    const p = track(t.client.post('/slow-post', { a: 1 }));
    await t.clock.advance(50);
    await t.clock.runAll();
    expect(p.current.state).toBe('rejected');
    expect((p.current as { reason: unknown }).reason).toBeInstanceOf(TimeoutError);
    expect(t.fake.calls).toHaveLength(1);
  });
});

describe('cancellation racing retries and waits', () => {
  test('cancel() during a Retry-After wait rejects at once, makes no further attempt, leaves no timer', async () => {
    const t = makeClient({}, { handler: () => status(503, { 'retry-after': '30' }) });
    const p = t.client.get('/wait');
    const s = track(p);
    await flush();
    expect(t.of('retry')).toHaveLength(1);
    p.cancel();
    await flush();
    expect(s.current.state).toBe('rejected');
    expect((s.current as { reason: unknown }).reason).toBeInstanceOf(CancelledError);
    await t.clock.advance(60_000);
    expect(t.fake.calls).toHaveLength(1);
    expect(t.clock.live).toBe(0);
    expect(t.of('cancel')).toMatchObject([{ final: true }]);
    expect(t.of('error')).toHaveLength(0);
    expect(debugOf(t.client)).toMatchObject({ flights: 0, inflight: 0 });
  });

  test('an external signal aborted during a backoff wait rejects that caller; a joiner keeps waiting', async () => {
    let n = 0;
    const t = makeClient({}, { handler: () => (n++ === 0 ? status(503) : Response.json('ok')) });
    const ac = new AbortController();
    const owner = track(t.client.get('/sig', { signal: ac.signal }));
    await flush();
    const joiner = track(t.client.get('/sig'));
    ac.abort();
    await flush();
    expect(owner.current.state).toBe('rejected');
    expect(joiner.current.state).toBe('pending');
    await t.clock.advance(100);
    expect(joiner.current).toMatchObject({ state: 'fulfilled', value: { data: 'ok' } });
    expect(t.fake.calls).toHaveLength(2);
  });

  test('cancelAll during a retry wait settles every caller with CancelledError; nothing retries', async () => {
    const t = makeClient({}, { handler: () => status(500) });
    const a = track(t.client.get('/a'));
    const b = track(t.client.post('/b', 1, { retry: { methods: ['POST'] } }));
    await flush();
    expect(t.of('retry')).toHaveLength(2);
    t.client.cancelAll();
    await flush();
    for (const s of [a, b]) {
      expect(s.current.state).toBe('rejected');
      expect(isCancelledError((s.current as { reason: unknown }).reason)).toBe(true);
    }
    await t.clock.runAll();
    expect(t.fake.calls).toHaveLength(2);
    expect(t.clock.live).toBe(0);
  });

  test('cancel() while the attempt runs aborts its fetch signal', async () => {
    const t = makeClient();
    const p = t.client.get('/run');
    await flush();
    const call = t.fake.last();
    p.cancel();
    await expect(p).rejects.toBeInstanceOf(CancelledError);
    expect(call.signal?.aborted).toBe(true);
  });

  test('a deadline that runs out during a retry wait fails with TimeoutError(deadline), not cancel', async () => {
    const t = makeClient(
      { deadline: 250, retry: { attempts: 10 } },
      { handler: () => status(503) },
    );
    const p = track(t.client.get('/dl'));
    await t.clock.advance(1000);
    expect(p.current.state).toBe('rejected');
    const err = (p.current as { reason: unknown }).reason;
    // 0 ms: attempt 1, 100 ms: attempt 2, 300 ms would be past the deadline: fails at 100 ms with
    // the 503 (the wait cannot end in time).
    expect(err).toBeInstanceOf(HttpError);
    expect(t.fake.calls).toHaveLength(2);
    expect(t.of('cancel')).toHaveLength(0);
    expect(t.clock.live).toBe(0);
  });
});

describe('timer overflow and bad values, per request', () => {
  test.each([
    ['timeout', 2 ** 31],
    ['timeout', Number.POSITIVE_INFINITY],
    ['timeout', Number.NaN],
    ['timeout', -1],
    ['deadline', 2 ** 31],
    ['deadline', Number.NaN],
    ['deadline', -5],
  ])(
    'request %s %s rejects with a RangeError naming it and fetches nothing',
    async (name, value) => {
      const t = makeClient();
      const out = await settle(t.client.get('/x', { [name]: value }));
      const reason = (out as { reason: Error }).reason;
      expect(reason).toBeInstanceOf(RangeError);
      expect(reason.message).toContain(`\`${name}\``);
      expect(t.fake.calls).toHaveLength(0);
      expect(t.clock.live).toBe(0);
    },
  );

  test.each([
    ['baseDelay', 2 ** 31],
    ['maxDelay', Number.POSITIVE_INFINITY],
    ['maxRetryAfter', Number.NaN],
    ['attempts', 0],
    ['attempts', Number.POSITIVE_INFINITY],
  ])('request retry.%s %s rejects with a RangeError naming it', async (name, value) => {
    const t = makeClient();
    const out = await settle(t.client.get('/x', { retry: { [name]: value } }));
    const reason = (out as { reason: Error }).reason;
    expect(reason).toBeInstanceOf(RangeError);
    expect(reason.message).toContain(`\`retry.${name}\``);
    expect(t.fake.calls).toHaveLength(0);
  });

  test('a timeout of the largest timer value is armed as it is', async () => {
    const t = makeClient({ timeout: 2 ** 31 - 1 });
    const p = track(t.client.get('/big'));
    await flush();
    expect(t.clock.pendingDelays()).toEqual([2 ** 31 - 1]);
    t.fake.last().json(1);
    await flush();
    expect(p.current.state).toBe('fulfilled');
    expect(t.clock.live).toBe(0);
  });
});

describe('circuit breaker through the client', () => {
  const open = async (threshold = 2) => {
    const t = makeClient(
      {
        retry: { attempts: 1 },
        circuitBreaker: { failureThreshold: threshold, resetTimeout: 1000 },
      },
      { handler: () => status(503) },
    );
    for (let i = 0; i < threshold; i++) await t.client.get('/c').catch(() => {});
    return t;
  };

  test('CircuitOpenError names the endpoint, method and url; circuit-rejected carries it', async () => {
    const t = await open();
    const out = await settle(t.client.get('/c?page=2'));
    const err = (out as { reason: CircuitOpenError }).reason;
    expect(isCircuitOpenError(err)).toBe(true);
    expect(err).toBeInstanceOf(CircuitOpenError);
    expect(err.endpoint).toBe('GET /c');
    expect(err.method).toBe('GET');
    expect(err.url).toBe('https://api.test/c?page=2');
    expect(t.of('circuit-rejected')).toMatchObject([
      { endpoint: 'GET /c', method: 'GET', path: '/c', error: err },
    ]);
  });

  test('status(): openedAt while open, none when closed; probing only while half-open', async () => {
    const t = await open();
    const at = t.clock.now();
    expect(t.client.circuitBreaker().status('GET', '/c')).toEqual({
      endpoint: 'GET /c',
      state: 'open',
      consecutiveFailures: 2,
      openedAt: at,
      probing: false,
    });
    await t.clock.advance(1000);
    const probe = track(t.client.get('/c'));
    expect(t.client.circuitBreaker().status('GET', '/c')).toMatchObject({
      state: 'halfOpen',
      probing: true,
      openedAt: at,
    });
    await flush();
    expect(probe.current.state).toBe('rejected');
    const reopened = t.client.circuitBreaker().status('GET', '/c');
    expect(reopened).toMatchObject({ state: 'open', openedAt: at + 1000, probing: false });
    t.client.circuitBreaker().reset();
    const closed = t.client.circuitBreaker().status('GET', '/c');
    expect(closed).toEqual({
      endpoint: 'GET /c',
      state: 'closed',
      consecutiveFailures: 0,
      probing: false,
    });
  });

  test('the probe is retried within its own flight and its recovery closes the circuit', async () => {
    let n = 0;
    const t = makeClient(
      { retry: { attempts: 3 }, circuitBreaker: { failureThreshold: 1, resetTimeout: 1000 } },
      { handler: () => (n++ < 4 ? status(503) : Response.json('up')) },
    );
    t.client.get('/rp').catch(() => {});
    await t.clock.runAll();
    expect(t.client.circuitBreaker().status('GET', '/rp').state).toBe('open');
    await t.clock.advance(1000);
    const p = track(t.client.get('/rp'));
    await t.clock.runAll();
    expect(p.current).toMatchObject({ state: 'fulfilled', value: { data: 'up' } });
    expect(t.client.circuitBreaker().status('GET', '/rp').state).toBe('closed');
    expect(t.of('circuit-closed')).toHaveLength(1);
  });

  test('a cached copy is served while the circuit is open, stale under SWR too', async () => {
    let up = true;
    const t = makeClient(
      {
        retry: { attempts: 1 },
        circuitBreaker: { failureThreshold: 1, resetTimeout: 10_000 },
        cache: { ttl: 100, strategy: 'stale-while-revalidate' },
      },
      { handler: () => (up ? Response.json('cached') : status(503)) },
    );
    await t.client.get('/sw');
    up = false;
    await t.client.get('/other-url-same-endpoint?x=1').catch(() => {});
    await t.client.get('/sw', { cache: false }).catch(() => {});
    expect(t.client.circuitBreaker().status('GET', '/sw').state).toBe('open');
    await t.clock.advance(200);
    const calls = t.fake.calls.length;
    const hit = await t.client.get('/sw');
    expect(hit.data).toBe('cached');
    await flush();
    // The background refresh is dropped silently by the open circuit.
    expect(t.fake.calls).toHaveLength(calls);
    expect(t.of('circuit-rejected')).toHaveLength(0);
  });
});

describe('intelligence counts what it observes', () => {
  test('retries, recoveries, 429s and timeouts are counted per attempt; failures once per request', async () => {
    let n = 0;
    const t = makeClient(
      { timeout: 50, retry: { attempts: 4 } },
      {
        handler: () => {
          n++;
          if (n === 1) return status(429);
          if (n === 2) return undefined; // times out
          if (n === 3) return status(503);
          return Response.json('ok');
        },
      },
    );
    const p = track(t.client.get('/i'));
    await t.clock.runAll();
    expect(p.current.state).toBe('fulfilled');
    const e = t.client.intelligence().endpoint('GET', '/i')!;
    expect(e).toMatchObject({
      method: 'GET',
      path: '/i',
      requests: 1,
      successes: 1,
      failures: 0,
      retriesPerformed: 3,
      retriesRecovered: 1,
      rateLimited: 1,
      timeouts: 1,
      cacheHits: 0,
      cacheMisses: 1,
    });
    const s = t.client.intelligence().snapshot().summary;
    expect(s).toMatchObject({
      totalRequests: 1,
      retriesPerformed: 3,
      retriesRecovered: 1,
      rateLimited: 1,
      timeouts: 1,
      retryRate: 3,
      rateLimitRate: 1,
      activeRequests: 0,
    });
  });

  test('cache hits, dedup joins, cancels and circuit rejections add up in requests', async () => {
    const t = makeClient(
      { retry: { attempts: 1 }, circuitBreaker: { failureThreshold: 1, resetTimeout: 10_000 } },
      {},
    );
    const owner = t.client.get('/k');
    const joiner = t.client.get('/k');
    await flush();
    expect(t.client.intelligence().snapshot().summary.activeRequests).toBe(1);
    joiner.catch(() => {});
    joiner.cancel();
    t.fake.last().json(1);
    await owner;
    await t.client.get('/k'); // fresh hit
    const failing = t.client.get('/down');
    await flush();
    t.fake.last().respond(status(500));
    await failing.catch(() => {});
    await t.client.get('/down').catch(() => {}); // circuit open: rejected
    const k = t.client.intelligence().endpoint('GET', '/k')!;
    expect(k).toMatchObject({ requests: 3, cacheHits: 1, dedupPrevented: 1, cancels: 1 });
    const down = t.client.intelligence().endpoint('GET', '/down')!;
    expect(down).toMatchObject({
      requests: 2,
      failures: 1,
      circuitRejected: 1,
      circuit: 'open',
      circuitFailures: 1,
    });
    const s = t.client.intelligence().snapshot().summary;
    expect(s).toMatchObject({
      totalRequests: 5,
      cacheHits: 1,
      cacheMisses: 4,
      deduplicated: 1,
      cancels: 1,
      failures: 1,
      circuitRejected: 1,
      circuits: { open: 1, halfOpen: 0, closed: 1 },
      activeRequests: 0,
    });
    expect(s.cacheHitRate).toBeCloseTo(1 / 5);
    expect(s.failureRate).toBeCloseTo(1 / 5);
  });

  test('adaptiveTimeout: 3 x p95 of answered attempts, clamped, never above the client timeout', async () => {
    /** A client whose endpoint `path` answered 5 requests after `ms` each. */
    const sampled = async (timeout: number, path: string, ms: number) => {
      const t = makeClient({ intelligence: { adaptiveTimeout: true }, timeout });
      for (let i = 0; i < 5; i++) {
        const p = t.client.get(`${path}?i=${i}`);
        await flush();
        await t.clock.advance(ms);
        t.fake.last().json(i);
        await p;
      }
      return t.client;
    };
    const a = await sampled(1000, '/a', 200);
    // p95 200 ms: 600 ms, under the client's 1000; a request's own timeout wins.
    expect(a.resolve('GET', '/a').timeout).toBe(600);
    expect(a.resolve('GET', '/a', { timeout: 5000 }).timeout).toBe(5000);
    expect((await sampled(300, '/b', 200)).resolve('GET', '/b').timeout).toBe(300);
    expect((await sampled(0, '/c', 1)).resolve('GET', '/c').timeout).toBe(100);
  });
});

describe('scheduler as a user drives it', () => {
  test('a queued job cancelled by its caller: request-queued, cancel, request-dequeued, request-rejected; stats move at once', async () => {
    const t = makeClient({ cache: { enabled: false }, scheduler: { concurrency: 1 } });
    const first = t.client.get('/one');
    const second = t.client.get('/two');
    await flush();
    expect(t.client.scheduler().stats()).toMatchObject({ active: 1, queued: 1 });
    const mark = t.events.length;
    second.cancel();
    await expect(second).rejects.toBeInstanceOf(CancelledError);
    const names = t.events.slice(mark).map((e) => e.name);
    expect(names).toEqual(['cancel', 'request-dequeued', 'request-rejected']);
    expect(t.client.scheduler().stats()).toMatchObject({
      active: 1,
      queued: 0,
      rejected: 1,
      lanes: { high: 0, normal: 0, low: 0 },
    });
    t.fake.last().json(1);
    await first;
    expect(t.client.scheduler().stats()).toMatchObject({ active: 0, completed: 1, rejected: 1 });
    expect(t.fake.calls).toHaveLength(1);
  });

  test('a retry wait parks the job without its slot; another job runs meanwhile', async () => {
    let n = 0;
    const t = makeClient(
      { cache: { enabled: false }, scheduler: { concurrency: 1 } },
      { handler: (c) => (c.url.endsWith('/flaky') && n++ === 0 ? status(503) : undefined) },
    );
    const flaky = track(t.client.get('/flaky'));
    const other = track(t.client.get('/other'));
    await t.clock.advance(0);
    expect(t.client.scheduler().stats()).toMatchObject({ active: 1, delayed: 1, queued: 0 });
    expect(t.fake.calls.map((c) => new URL(c.url).pathname)).toEqual(['/flaky', '/other']);
    await t.clock.advance(100);
    // The wait ended but the slot is taken: it queues.
    expect(t.client.scheduler().stats()).toMatchObject({ active: 1, delayed: 0, queued: 1 });
    t.fake.calls[1]!.json('other');
    await t.clock.advance(0);
    t.fake.calls[2]!.json('flaky');
    await t.clock.advance(0);
    expect(flaky.current.state).toBe('fulfilled');
    expect(other.current.state).toBe('fulfilled');
    expect(t.client.scheduler().stats()).toMatchObject({ active: 0, completed: 2 });
  });

  test('cancelGroup during a retry wait: CancelledError, request-rejected, no further attempt', async () => {
    const t = makeClient(
      { cache: { enabled: false }, scheduler: { concurrency: 2 } },
      { handler: () => status(503) },
    );
    const p = track(t.client.get('/g', { scheduler: { group: 'g' } }));
    await t.clock.advance(0);
    expect(t.client.scheduler().stats()).toMatchObject({ delayed: 1 });
    t.client.cancelGroup('g');
    await flush();
    expect(p.current.state).toBe('rejected');
    expect((p.current as { reason: unknown }).reason).toBeInstanceOf(CancelledError);
    expect(t.of('request-rejected')).toMatchObject([{ reason: 'cancelled' }]);
    await t.clock.runAll();
    expect(t.fake.calls).toHaveLength(1);
    expect(t.client.scheduler().stats()).toMatchObject({
      active: 0,
      queued: 0,
      delayed: 0,
      rejected: 1,
    });
    expect(t.clock.live).toBe(0);
  });

  test('a paused group keeps a job whose retry wait ends queued until resumed', async () => {
    let n = 0;
    const t = makeClient(
      { cache: { enabled: false }, scheduler: { concurrency: 2 } },
      { handler: () => (n++ === 0 ? status(503) : Response.json('ok')) },
    );
    const p = track(t.client.get('/pg', { scheduler: { group: 'g' } }));
    await t.clock.advance(0);
    t.client.scheduler().pauseGroup('g');
    await t.clock.advance(100);
    expect(t.fake.calls).toHaveLength(1);
    expect(t.client.scheduler().stats()).toMatchObject({ queued: 1, delayed: 0 });
    t.client.scheduler().resumeGroup('g');
    await t.clock.advance(0);
    expect(p.current.state).toBe('fulfilled');
    expect(t.of('queue-paused')).toEqual([{ group: 'g' }]);
    expect(t.of('queue-resumed')).toEqual([{ group: 'g' }]);
  });

  test('rate limit: a budget over attempts; the parked job holds no slot and retries use budget', async () => {
    const t = makeClient(
      {
        cache: { enabled: false },
        scheduler: { concurrency: 4, rateLimit: { requests: 2, interval: 1000 } },
      },
      { handler: () => Response.json(1) },
    );
    const ps = [1, 2, 3].map((i) => track(t.client.get(`/r${i}`)));
    await t.clock.advance(0);
    expect(t.fake.calls).toHaveLength(2);
    expect(t.client.scheduler().stats()).toMatchObject({ active: 0, delayed: 1, completed: 2 });
    expect(t.of('request-delayed')).toMatchObject([{ reason: 'rate-limit', delay: 1000 }]);
    await t.clock.advance(999);
    expect(t.fake.calls).toHaveLength(2);
    await t.clock.advance(1);
    expect(t.fake.calls).toHaveLength(3);
    expect(ps.every((p) => p.current.state === 'fulfilled')).toBe(true);
    expect(t.clock.live).toBe(0);
  });

  test('the scheduler controller works detached from the client (methods are bound)', () => {
    const t = makeClient({ scheduler: { priority: true } });
    const { stats, pauseGroup, resumeGroup, cancelGroup, prioritize } = t.client.scheduler();
    expect(stats().active).toBe(0);
    pauseGroup('x');
    resumeGroup('x');
    cancelGroup('x');
    expect(prioritize('x', 'high')).toBe(0);
    const { status: st, statuses, reset } = t.client.circuitBreaker();
    expect(st('GET', '/z').state).toBe('closed');
    expect(statuses()).toHaveLength(1);
    reset();
    const { snapshot, endpoint, reset: r2 } = t.client.intelligence();
    expect(snapshot().summary.totalRequests).toBe(0);
    expect(endpoint('GET', '/z')).toBeUndefined();
    r2();
  });
});

describe('re-entrant listeners racing cancellation', () => {
  test('a request made from a final `cancel` listener starts a new flight, not the one being torn down', async () => {
    const t = makeClient();
    const first = t.client.get('/again');
    first.catch(() => {});
    await flush();
    let again: Promise<unknown> | undefined;
    t.client.on('cancel', (e) => {
      if (e.final && again === undefined) again = t.client.get('/again');
    });
    first.cancel();
    expect(again).toBeDefined();
    const outcome = track(again!);
    await flush();
    expect(outcome.current.state).toBe('pending');
    expect(t.of('dedup')).toHaveLength(0);
    expect(t.fake.calls).toHaveLength(2);
    t.fake.last().json('fresh');
    await flush();
    expect(outcome.current).toMatchObject({ state: 'fulfilled', value: { data: 'fresh' } });
  });
});

describe('a stream request body goes out once', () => {
  const streamOf = (text: string) =>
    new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode(text));
        controller.close();
      },
    });

  test('a ReadableStream body reaches a real server; a failure is not retried (it cannot be replayed)', async () => {
    let status = 503;
    const bodies: string[] = [];
    const server = await startServer({
      '/upload': async (req, res) => {
        let body = '';
        for await (const chunk of req) body += chunk;
        bodies.push(body);
        res.statusCode = status;
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ body }));
      },
    });
    try {
      const client = createClient({ baseURL: server.url, retry: { baseDelay: 1, jitter: false } });
      const failed = await settle(client.put('/upload', streamOf('once')));
      const reason = (failed as { reason: HttpError }).reason;
      expect(reason).toBeInstanceOf(HttpError);
      expect(reason.status).toBe(503);
      expect(bodies).toEqual(['once']);
      status = 200;
      const ok = await client.put<{ body: string }>('/upload', streamOf('hello'));
      expect(ok.data).toEqual({ body: 'hello' });
      expect(bodies).toEqual(['once', 'hello']);
    } finally {
      await server.close();
    }
  });
});

/**
 * One slot, a circuit that opens on the first 500: the second request waits in the queue and is
 * refused at the pre-start gate when the first one fails.
 */
function gateRefusalClient() {
  return makeClient(
    {
      cache: { enabled: false },
      retry: { attempts: 1 },
      scheduler: { concurrency: 1 },
      circuitBreaker: { failureThreshold: 1, resetTimeout: 10_000 },
    },
    { handler: () => status(500) },
  );
}

describe('every request ends with exactly one terminal event', () => {
  test('a job refused at the pre-start gate and cancelled by a circuit-rejected listener ends once', async () => {
    const t = gateRefusalClient();
    const first = t.client.get('/x?n=1');
    const queued = t.client.get('/x?n=2');
    t.client.on('circuit-rejected', () => queued.cancel());
    await expect(first).rejects.toBeInstanceOf(HttpError);
    await expect(queued).rejects.toBeInstanceOf(CancelledError);
    await flush();
    const tracker = t.of('request')[1]!.tracker;
    const terminal = t.events.filter(
      (e) =>
        (e.name === 'success' || e.name === 'error' || (e.name === 'cancel' && e.payload.final)) &&
        (e.payload as { tracker: unknown }).tracker === tracker,
    );
    expect(terminal.map((e) => e.name)).toEqual(['cancel']);
    expect(t.client.intelligence().snapshot().summary.activeRequests).toBe(0);
    expect(t.client.scheduler().stats()).toMatchObject({ active: 0, queued: 0, delayed: 0 });
    expect(t.fake.calls).toHaveLength(1);
  });
});

describe('a flight is never torn down before its owner is attached', () => {
  test('a caller that joins and cancels from the `request` listener leaves the owner its flight', async () => {
    const t = makeClient();
    let joiner: Promise<unknown> & { cancel(): void };
    t.client.on('request', () => {
      if (joiner !== undefined) return;
      joiner = t.client.get('/own');
      joiner.catch(() => {});
      joiner.cancel();
    });
    const owner = track(t.client.get('/own'));
    await flush();
    expect(owner.current.state).toBe('pending');
    expect(t.of('cancel')).toMatchObject([{ final: false }]);
    t.fake.last().json('mine');
    await flush();
    expect(owner.current).toMatchObject({ state: 'fulfilled', value: { data: 'mine' } });
    expect(t.client.intelligence().snapshot().summary.activeRequests).toBe(0);
  });

  test('cancelAll from the `request` listener cancels the new request once, and nothing is sent', async () => {
    const t = makeClient({ scheduler: { concurrency: 2 } });
    let once = false;
    t.client.on('request', () => {
      if (once) return;
      once = true;
      t.client.cancelAll();
    });
    const p = track(t.client.get('/all'));
    await flush();
    expect(p.current.state).toBe('rejected');
    expect((p.current as { reason: unknown }).reason).toBeInstanceOf(CancelledError);
    expect(t.of('cancel')).toMatchObject([{ final: true }]);
    expect(t.of('error')).toHaveLength(0);
    expect(t.fake.calls).toHaveLength(0);
    expect(debugOf(t.client)).toMatchObject({ flights: 0, inflight: 0 });
    expect(t.client.scheduler().stats()).toMatchObject({ active: 0, queued: 0, delayed: 0 });
    expect(t.client.intelligence().snapshot().summary.activeRequests).toBe(0);
  });
});

describe('a request made while a flight is being refused', () => {
  test('from a circuit-rejected listener, the same request is refused on its own, not joined to the refused job', async () => {
    const t = gateRefusalClient();
    const first = t.client.get('/y?n=1');
    const queued = t.client.get('/y?n=2');
    let again: Promise<unknown> | undefined;
    let asked = false;
    t.client.on('circuit-rejected', () => {
      if (asked) return;
      asked = true;
      again = t.client.get('/y?n=2');
    });
    await expect(first).rejects.toBeInstanceOf(HttpError);
    await expect(queued).rejects.toBeInstanceOf(CircuitOpenError);
    await expect(again).rejects.toBeInstanceOf(CircuitOpenError);
    expect(t.of('circuit-rejected')).toHaveLength(2);
    expect(t.of('dedup')).toHaveLength(0);
    expect(t.client.intelligence().endpoint('GET', '/y')).toMatchObject({
      requests: 3,
      circuitRejected: 2,
      dedupPrevented: 0,
    });
  });
});

describe('Retry-After in each HTTP-date form', () => {
  // 2024-01-01 is a Monday; the three forms RFC 9110 allows, for FAKE_EPOCH + 3 s.
  const forms = [
    ['IMF-fixdate', 'Mon, 01 Jan 2024 00:00:03 GMT'],
    ['RFC 850', 'Monday, 01-Jan-24 00:00:03 GMT'],
    ['asctime', 'Mon Jan  1 00:00:03 2024'],
  ] as const;

  test.each(forms)('%s is a time in UTC, whatever the local time zone', async (_, header) => {
    const zone = process.env.TZ;
    process.env.TZ = 'America/New_York';
    try {
      let n = 0;
      const t = makeClient(
        {},
        { handler: () => (n++ === 0 ? status(503, { 'retry-after': header }) : Response.json(1)) },
      );
      const p = track(t.client.get('/date'));
      await t.clock.advance(3000);
      expect(t.of('retry')[0]).toMatchObject({ delay: 3000, reason: 'retry-after' });
      expect(p.current.state).toBe('fulfilled');
    } finally {
      if (zone === undefined) delete process.env.TZ;
      else process.env.TZ = zone;
    }
  });
});

describe('controllers refuse bad arguments alike, with a feature, disabled or absent', () => {
  const fetch = async () => new Response('');
  const clients = {
    'createClient, features on': () =>
      createClient({ fetch, adaptive: { enabled: true }, scheduler: { priority: true } }),
    'createClient, features disabled': () =>
      createClient({ fetch, intelligence: { enabled: false }, circuitBreaker: { enabled: false } }),
    'createBaseClient, no feature': () => createBaseClient({ fetch }),
  };
  test.each(Object.entries(clients))('%s', async (_, make) => {
    const client = make();
    expect(() => client.intelligence().endpoint(5 as never, '/x')).toThrow(TypeError);
    expect(() => client.intelligence().endpoint('GET', 5 as never)).toThrow(/`path`/);
    expect(() => client.circuitBreaker().status(5 as never, '/x')).toThrow(/`method`/);
    expect(() => client.circuitBreaker().reset(5 as never)).toThrow(/`method`/);
    expect(() => client.circuitBreaker().reset('GET', 5 as never)).toThrow(/`path`/);
    expect(() => client.circuitBreaker().reset(undefined, '/x')).toThrow(TypeError);
    expect(() => client.adaptive().endpoint('', '/x')).toThrow(RangeError);
    expect(() => client.adaptive().endpoint('GET', null as never)).toThrow(/`path`/);
    expect(() => client.scheduler().cancelGroup(5 as never)).toThrow(TypeError);
    // Good arguments answer as usual.
    expect(client.intelligence().endpoint('GET', '/x')).toBeUndefined();
    expect(client.adaptive().endpoint('GET', '/x')).toBeUndefined();
    // A method no request can have is the RangeError a request gets, and creates no circuit.
    const refused = await client.request('FOO' as never, '/x').catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(RangeError);
    expect(() => client.circuitBreaker().status('FOO', '/x')).toThrow(refused as RangeError);
    expect(() => client.circuitBreaker().reset('FOO')).toThrow(RangeError);
    expect(() => client.intelligence().endpoint('FOO', '/x')).toThrow(RangeError);
    expect(() => client.adaptive().endpoint('FOO', '/x')).toThrow(RangeError);
    expect(client.circuitBreaker().statuses()).toEqual([]);
    client.circuitBreaker().reset('GET', '/x');
    client.circuitBreaker().reset('GET');
    client.circuitBreaker().reset();
  });
});
