/**
 * The circuit-state table and its seven rules, end to end through the client (fake fetch,
 * FakeClock). One test per table row and per rule.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CancelledError } from '../src/errors/cancelled-error';
import { CircuitOpenError } from '../src/errors/circuit-open-error';
import { TimeoutError } from '../src/errors/timeout-error';
import type { ClientEvents } from '../src/types/events';
import { fail, harness, isHttpStatus, outcome } from './circuit.fixture';
import { flush } from './helpers';

let unhandled: unknown[] = [];
const onUnhandled = (reason: unknown) => unhandled.push(reason);
beforeEach(() => {
  unhandled = [];
  process.on('unhandledRejection', onUnhandled);
});
afterEach(async () => {
  await flush();
  process.off('unhandledRejection', onUnhandled);
  expect(unhandled).toEqual([]);
});

describe('circuit-state table', () => {
  it('closed + success: stays closed and resets the consecutive-failure counter to 0', async () => {
    const h = harness();
    await fail(h, '/a', 2);
    expect(h.client.circuitBreaker().status('GET', '/a')).toMatchObject({
      state: 'closed',
      consecutiveFailures: 2,
    });
    h.answer('/a', 200);
    expect((await outcome(h.client.get('/a'))).ok).toBe(true);
    expect(h.client.circuitBreaker().status('GET', '/a')).toEqual({
      endpoint: 'GET /a',
      state: 'closed',
      consecutiveFailures: 0,
      probing: false,
    });
    // Two more failures do not open it: the streak started again from 0.
    await fail(h, '/a', 2);
    expect(h.client.circuitBreaker().status('GET', '/a').state).toBe('closed');
    expect(h.count('circuit-open')).toBe(0);
  });

  it('closed + countable failure reaching failureThreshold: opens, emits circuit-open, sets openedAt', async () => {
    const h = harness();
    await fail(h, '/a', 2);
    expect(h.count('circuit-open')).toBe(0);
    await h.clock.advance(250);
    await fail(h, '/a', 1);
    const status = h.client.circuitBreaker().status('GET', '/a');
    expect(status).toEqual({
      endpoint: 'GET /a',
      state: 'open',
      consecutiveFailures: 3,
      openedAt: h.clock.now(),
      probing: false,
    });
    const opened = h.log.filter((e) => e.name === 'circuit-open');
    expect(opened.map((e) => e.payload)).toEqual([
      { endpoint: 'GET /a', method: 'GET', path: '/a' },
    ]);
  });

  it('open + request before resetTimeout: CircuitOpenError, circuit-rejected, no network call, no request/error event', async () => {
    const h = harness();
    await fail(h, '/a', 3);
    const calls = h.fake.calls.length;
    const before = h.log.length;
    await h.clock.advance(999);
    const r = await outcome(h.client.get('/a?page=2'));
    expect(r.ok).toBe(false);
    const error = (r as { error: unknown }).error;
    expect(error).toBeInstanceOf(CircuitOpenError);
    expect((error as CircuitOpenError).endpoint).toBe('GET /a');
    expect(h.fake.calls.length).toBe(calls);
    const after = h.log.slice(before);
    expect(after.map((e) => e.name)).toEqual(['circuit-rejected']);
    expect(after[0]!.payload).toEqual({ endpoint: 'GET /a', method: 'GET', path: '/a', error });
    expect(h.client.circuitBreaker().status('GET', '/a').state).toBe('open');
  });

  it('open + request once resetTimeout has elapsed: halfOpen, that request is the single probe, circuit-half-open', async () => {
    const h = harness();
    await fail(h, '/a', 3);
    await h.clock.advance(1000);
    h.answer('/a', 'hang');
    const before = h.log.length;
    const probe = h.client.get('/a');
    expect(h.client.circuitBreaker().status('GET', '/a')).toMatchObject({
      state: 'halfOpen',
      probing: true,
    });
    const after = h.log.slice(before);
    // The state change is announced before the probe's own `request` event.
    expect(after.map((e) => e.name)).toEqual(['circuit-half-open', 'request']);
    expect(after[0]!.payload).toEqual({ endpoint: 'GET /a', method: 'GET', path: '/a' });
    expect((after[1]!.payload as ClientEvents['request']).probe).toBe(true);
    expect(h.callsTo('/a')).toHaveLength(4);
    h.fake.last().json({ ok: true });
    expect((await outcome(probe)).ok).toBe(true);
  });

  it('halfOpen + probe succeeds: closed, circuit-closed', async () => {
    const h = harness();
    await fail(h, '/a', 3);
    await h.clock.advance(1000);
    h.answer('/a', 200);
    expect((await outcome(h.client.get('/a'))).ok).toBe(true);
    expect(h.client.circuitBreaker().status('GET', '/a')).toEqual({
      endpoint: 'GET /a',
      state: 'closed',
      consecutiveFailures: 0,
      probing: false,
    });
    expect(h.names((n) => n.startsWith('circuit-'))).toEqual([
      'circuit-open',
      'circuit-half-open',
      'circuit-closed',
    ]);
    // Closed again: the next request goes to the network.
    expect((await outcome(h.client.get('/a?again'))).ok).toBe(true);
    expect(h.callsTo('/a')).toHaveLength(5);
  });

  it('halfOpen + probe fails countably: open again, the reset window restarts, circuit-open', async () => {
    const h = harness();
    await fail(h, '/a', 3);
    const firstOpen = h.clock.now();
    await h.clock.advance(1500);
    h.answer('/a', 502);
    const r = await outcome(h.client.get('/a'));
    expect(isHttpStatus((r as { error: unknown }).error, 502)).toBe(true);
    const status = h.client.circuitBreaker().status('GET', '/a');
    expect(status).toMatchObject({ state: 'open', consecutiveFailures: 4, probing: false });
    expect(status.openedAt).toBe(firstOpen + 1500);
    expect(h.names((n) => n.startsWith('circuit-'))).toEqual([
      'circuit-open',
      'circuit-half-open',
      'circuit-open',
    ]);
    // Measured from the new openedAt: 999 ms later it still rejects, at 1000 ms it probes.
    await h.clock.advance(999);
    expect((await outcome(h.client.get('/a?x'))).ok).toBe(false);
    expect(h.callsTo('/a')).toHaveLength(4);
    h.answer('/a', 200);
    await h.clock.advance(1);
    expect((await outcome(h.client.get('/a?y'))).ok).toBe(true);
    expect(h.client.circuitBreaker().status('GET', '/a').state).toBe('closed');
  });

  it('halfOpen + another request while the probe is in flight: rejected as for open', async () => {
    const h = harness();
    await fail(h, '/a', 3);
    await h.clock.advance(1000);
    h.answer('/a', 'hang');
    const probe = h.client.get('/a?probe');
    const before = h.log.length;
    const other = await outcome(h.client.get('/a?other'));
    expect(other.ok).toBe(false);
    expect((other as { error: unknown }).error).toBeInstanceOf(CircuitOpenError);
    expect(h.log.slice(before).map((e) => e.name)).toEqual(['circuit-rejected']);
    expect(h.callsTo('/a')).toHaveLength(4);
    expect(h.client.circuitBreaker().status('GET', '/a').state).toBe('halfOpen');
    h.fake.last().json({});
    await probe;
  });

  it('any + reset(method, path): that circuit closed, others untouched; reset(): all closed', async () => {
    const h = harness();
    await fail(h, '/a', 3);
    await fail(h, '/b', 3);
    await h.clock.advance(1000);
    h.answer('/b', 'hang');
    const probeB = h.client.get('/b'); // /b is halfOpen
    const cb = h.client.circuitBreaker();
    cb.reset('get', '/a');
    expect(cb.status('GET', '/a')).toEqual({
      endpoint: 'GET /a',
      state: 'closed',
      consecutiveFailures: 0,
      probing: false,
    });
    expect(cb.status('GET', '/b').state).toBe('halfOpen');
    cb.reset();
    expect(cb.statuses().map((s) => [s.endpoint, s.state, s.consecutiveFailures])).toEqual([
      ['GET /a', 'closed', 0],
      ['GET /b', 'closed', 0],
    ]);
    h.answer('/a', 200);
    expect((await outcome(h.client.get('/a'))).ok).toBe(true);
    h.callsTo('/b').at(-1)!.json({});
    await probeB;
  });
});

describe('rules', () => {
  it('rule 1: exactly one probe is admitted among 100 racing requests', async () => {
    const h = harness();
    await fail(h, '/a', 3);
    await h.clock.advance(1000);
    h.answer('/a', 'hang');
    const calls = h.fake.calls.length;
    // Distinct queries: same circuit, different keys, so none of them dedups onto another.
    const racing = Array.from({ length: 100 }, (_, i) => outcome(h.client.get(`/a?i=${i}`)));
    expect(h.fake.calls.length).toBe(calls + 1);
    expect(h.count('circuit-half-open')).toBe(1);
    const probes = h.log.filter(
      (e) => e.name === 'request' && (e.payload as ClientEvents['request']).probe,
    );
    expect(probes).toHaveLength(1);
    h.fake.last().json({});
    const results = await Promise.all(racing);
    expect(results.filter((r) => r.ok)).toHaveLength(1);
    expect(
      results.filter((r) => !r.ok && (r as { error: unknown }).error instanceof CircuitOpenError),
    ).toHaveLength(99);
    expect(h.count('circuit-rejected')).toBe(99);
    expect(h.client.circuitBreaker().status('GET', '/a').state).toBe('closed');
  });

  // README, "Once per request": a flight admitted while the circuit was closed that ends after
  // it opened neither closes nor reopens it. One that ended after a probe had closed it again
  // counted toward a new streak: two old 503s reopened the circuit just closed.
  it('flights admitted before the circuit opened are stale once a probe closed it again', async () => {
    const h = harness({ circuitBreaker: { failureThreshold: 2, resetTimeout: 1000 } });
    h.answer('/a', 'hang');
    const old = [0, 1].map((i) => outcome(h.client.get(`/a?old=${i}`)));
    const oldCalls = h.fake.calls.slice(-2);
    await fail(h, '/a', 2);
    expect(h.client.circuitBreaker().status('GET', '/a').state).toBe('open');
    await h.clock.advance(1000);
    h.answer('/a', 200);
    await outcome(h.client.get('/a?probe'));
    expect(h.client.circuitBreaker().status('GET', '/a').state).toBe('closed');
    for (const call of oldCalls) call.json({ down: true }, { status: 503 });
    await Promise.all(old);
    expect(h.client.circuitBreaker().status('GET', '/a')).toMatchObject({
      state: 'closed',
      consecutiveFailures: 0,
    });
    expect(h.count('circuit-open')).toBe(1);
    // New flights count as before.
    await fail(h, '/a', 2);
    expect(h.client.circuitBreaker().status('GET', '/a').state).toBe('open');
  });

  describe('rule 2: what counts', () => {
    for (const answer of [500, 502, 503, 504, 429, 'network'] as const) {
      it(`${answer} is countable`, async () => {
        const h = harness();
        await fail(h, '/a', 3, answer);
        expect(h.client.circuitBreaker().status('GET', '/a').state).toBe('open');
      });
    }

    it('TimeoutError is countable', async () => {
      const h = harness({ timeout: 50 });
      h.answer('/a', 'hang');
      const pending = [0, 1, 2].map((i) => outcome(h.client.get(`/a?t=${i}`)));
      await h.clock.advance(50);
      const results = await Promise.all(pending);
      for (const r of results) expect((r as { error: unknown }).error).toBeInstanceOf(TimeoutError);
      expect(h.client.circuitBreaker().status('GET', '/a').state).toBe('open');
    });

    for (const answer of [400, 401, 403, 404, 408, 409, 422, 'parse'] as const) {
      it(`${answer} is not countable`, async () => {
        const h = harness();
        await fail(h, '/a', 10, answer);
        expect(h.client.circuitBreaker().status('GET', '/a')).toMatchObject({
          state: 'closed',
          consecutiveFailures: 0,
        });
      });
    }

    it('cancellation (cancel(), an aborted signal, cancelAll) is not countable', async () => {
      const h = harness();
      h.answer('/a', 'hang');
      for (let i = 0; i < 4; i++) {
        const p = h.client.get(`/a?c=${i}`);
        p.cancel();
        await outcome(p);
      }
      for (let i = 0; i < 4; i++) {
        const ac = new AbortController();
        const p = outcome(h.client.get(`/a?s=${i}`, { signal: ac.signal }));
        ac.abort();
        await p;
      }
      const all = [0, 1, 2, 3].map((i) => outcome(h.client.get(`/a?all=${i}`)));
      h.client.cancelAll();
      await Promise.all(all);
      expect(h.client.circuitBreaker().status('GET', '/a')).toMatchObject({
        state: 'closed',
        consecutiveFailures: 0,
      });
    });

    it('a non-countable error between countable ones neither counts nor breaks the streak', async () => {
      const h = harness();
      await fail(h, '/a', 2, 503);
      await fail(h, '/a', 1, 404);
      expect(h.client.circuitBreaker().status('GET', '/a').consecutiveFailures).toBe(2);
      await fail(h, '/a', 1, 503);
      expect(h.client.circuitBreaker().status('GET', '/a').state).toBe('open');
    });
  });

  describe('rule 3: once per request at the terminal flight outcome', () => {
    it('a request that fails after 3 attempts (retries) counts once', async () => {
      const h = harness({ retry: { attempts: 3, baseDelay: 10, jitter: false } });
      h.answer('/a', 503);
      const p = outcome(h.client.get('/a'));
      await h.clock.advance(10);
      // Still in its retry loop: nothing counted yet.
      expect(h.client.circuitBreaker().status('GET', '/a').consecutiveFailures).toBe(0);
      await h.clock.runAll();
      await p;
      expect(h.callsTo('/a')).toHaveLength(3);
      expect(h.count('retry')).toBe(2);
      expect(h.client.circuitBreaker().status('GET', '/a')).toMatchObject({
        state: 'closed',
        consecutiveFailures: 1,
      });
    });

    it('timeouts with retries count once per request', async () => {
      const h = harness({ timeout: 20, retry: { attempts: 2, baseDelay: 5, jitter: false } });
      h.answer('/a', 'hang');
      const p = outcome(h.client.get('/a'));
      await h.clock.runAll();
      expect((await p).ok).toBe(false);
      expect(h.callsTo('/a')).toHaveLength(2);
      expect(h.client.circuitBreaker().status('GET', '/a').consecutiveFailures).toBe(1);
    });

    it('dedup joiners do not double-count a failure', async () => {
      const h = harness({ cache: { enabled: true } });
      h.answer('/a', 'hang');
      const owner = outcome(h.client.get('/a'));
      const joiners = [1, 2, 3, 4, 5].map(() => outcome(h.client.get('/a')));
      expect(h.count('dedup')).toBe(5);
      h.fake.last().json({ down: true }, { status: 500 });
      await Promise.all([owner, ...joiners]);
      expect(h.client.circuitBreaker().status('GET', '/a')).toMatchObject({
        state: 'closed',
        consecutiveFailures: 1,
      });
    });

    it('a joiner cancelling leaves the owner to count its failure once', async () => {
      const h = harness({ cache: { enabled: true } });
      h.answer('/a', 'hang');
      const owner = outcome(h.client.get('/a'));
      const joiner = h.client.get('/a');
      joiner.cancel();
      h.fake.last().json({}, { status: 503 });
      await owner;
      await outcome(joiner);
      expect(h.client.circuitBreaker().status('GET', '/a').consecutiveFailures).toBe(1);
    });
  });

  it('rule 4: keyed by METHOD pathname; the query is ignored and other endpoints are untouched', async () => {
    const h = harness();
    h.answer('/a', 503);
    await outcome(h.client.get('/a?page=1'));
    await outcome(h.client.get('/a?page=2'));
    await outcome(h.client.get('/a?page=3&sort=x'));
    const cb = h.client.circuitBreaker();
    expect(cb.status('GET', '/a').state).toBe('open');
    expect(cb.status('GET', '/a?page=9').state).toBe('open');
    const other = await outcome(h.client.get('/b'));
    expect(other.ok).toBe(true);
    const post = await outcome(h.client.post('/a', { x: 1 }));
    expect(isHttpStatus((post as { error: unknown }).error, 503)).toBe(true);
    expect(cb.status('POST', '/a')).toMatchObject({ state: 'closed', consecutiveFailures: 1 });
    expect(cb.status('GET', '/b').state).toBe('closed');
    // The whole GET /a endpoint is rejected, whatever the query.
    expect(
      ((await outcome(h.client.get('/a?page=42'))) as { error: unknown }).error,
    ).toBeInstanceOf(CircuitOpenError);
  });

  it('rule 5: a queued job re-checks the circuit before it starts; a half-open probe skips that gate', async () => {
    const h = harness({
      scheduler: { concurrency: 1 },
      circuitBreaker: { failureThreshold: 1, resetTimeout: 1000 },
    });
    h.answer('/a', 'hang');
    const first = outcome(h.client.get('/a?1'));
    const queued = outcome(h.client.get('/a?2')); // admitted while closed, waits for the slot
    expect(h.callsTo('/a')).toHaveLength(1);
    h.fake.last().json({}, { status: 503 }); // opens the circuit (threshold 1)
    const [r1, r2] = await Promise.all([first, queued]);
    expect(isHttpStatus((r1 as { error: unknown }).error, 503)).toBe(true);
    expect((r2 as { error: unknown }).error).toBeInstanceOf(CircuitOpenError);
    expect(h.callsTo('/a')).toHaveLength(1); // the queued job never reached the network
    expect(h.client.circuitBreaker().status('GET', '/a').consecutiveFailures).toBe(1);
    // Intelligence counts the refused job as a circuit rejection, not as a failure.
    expect(h.client.intelligence().endpoint('GET', '/a')).toMatchObject({
      failures: 1,
      circuitRejected: 1,
    });

    // The probe waits behind another job; when the slot frees it starts although the circuit is
    // halfOpen (the pre-start gate would refuse any other job of the endpoint).
    await h.clock.advance(1000);
    h.answer('/b', 'hang');
    const blocker = outcome(h.client.get('/b'));
    h.answer('/a', 200);
    const probe = outcome(h.client.get('/a?probe'));
    expect(h.client.circuitBreaker().status('GET', '/a').state).toBe('halfOpen');
    h.callsTo('/b')[0]!.json({});
    await blocker;
    expect((await probe).ok).toBe(true);
    expect(h.client.circuitBreaker().status('GET', '/a').state).toBe('closed');
  });

  it('rule 6: an open circuit drops internal refetches silently (SWR refresh, post-invalidation refetch)', async () => {
    const h = harness({ cache: { enabled: true, ttl: 100, strategy: 'stale-while-revalidate' } });
    expect((await outcome(h.client.get('/a'))).ok).toBe(true);
    const seen: string[] = [];
    const off = h.client.subscribe(h.client.resolve('GET', '/a').key, (u) => seen.push(u.type));
    await fail(h, '/a', 3);
    expect(h.client.circuitBreaker().status('GET', '/a').state).toBe('open');
    await h.clock.advance(150); // the cached entry is stale now; the circuit is still open
    const calls = h.fake.calls.length;
    const before = h.log.length;
    const served = await outcome(h.client.get('/a'));
    expect(served.ok).toBe(true); // the stale copy is served while open
    await flush();
    expect(h.fake.calls.length).toBe(calls); // its background refresh was dropped
    h.client.invalidate('/a'); // a subscribed key is refetched: dropped too
    await flush();
    expect(h.fake.calls.length).toBe(calls);
    h.client.prefetch(h.client.resolve('GET', '/a?prefetch')); // and so is a prefetch
    await flush();
    expect(h.fake.calls.length).toBe(calls);
    const after = h.log.slice(before).map((e) => e.name);
    expect(after).toEqual(['cache-hit']);
    expect(after).not.toContain('circuit-rejected');
    expect(after).not.toContain('error');
    expect(seen).toEqual(['invalidate']);
    off();
  });

  it('rule 7: a dedup join onto the half-open probe is allowed and makes no second call', async () => {
    const h = harness({ cache: { enabled: true } });
    await fail(h, '/a', 3);
    await h.clock.advance(1000);
    h.answer('/a', 'hang');
    const probe = outcome(h.client.get('/a'));
    const before = h.log.length;
    const joiner = outcome(h.client.get('/a'));
    expect(h.log.slice(before).map((e) => e.name)).toEqual(['dedup']);
    expect(h.callsTo('/a')).toHaveLength(4);
    h.fake.last().json({ back: true });
    const [p, j] = await Promise.all([probe, joiner]);
    expect(p.ok && j.ok).toBe(true);
    expect(h.client.circuitBreaker().status('GET', '/a').state).toBe('closed');
    expect(h.count('circuit-rejected')).toBe(0);
  });
});

describe('bypass and probe slot', () => {
  it('a fresh cache hit is served while the circuit is open, without touching the guard', async () => {
    const h = harness({ cache: { enabled: true } });
    expect((await outcome(h.client.get('/a?cached'))).ok).toBe(true);
    await fail(h, '/a', 3);
    const calls = h.fake.calls.length;
    const r = await outcome(h.client.get('/a?cached'));
    expect(r.ok).toBe(true);
    expect(h.fake.calls.length).toBe(calls);
    expect(h.count('circuit-rejected')).toBe(0);
    expect(h.count('cache-hit')).toBe(1);
  });

  it('a cancelled probe releases its slot: open again with the same openedAt, the next request probes', async () => {
    const h = harness();
    await fail(h, '/a', 3);
    const openedAt = h.client.circuitBreaker().status('GET', '/a').openedAt;
    await h.clock.advance(1000);
    h.answer('/a', 'hang');
    const probe = h.client.get('/a');
    probe.cancel();
    await outcome(probe);
    expect(h.client.circuitBreaker().status('GET', '/a')).toMatchObject({
      state: 'open',
      openedAt,
      consecutiveFailures: 3,
      probing: false,
    });
    // No event claims a failure reopened it.
    expect(h.names((n) => n.startsWith('circuit-'))).toEqual(['circuit-open', 'circuit-half-open']);
    h.answer('/a', 200);
    expect((await outcome(h.client.get('/a?next'))).ok).toBe(true);
    expect(h.client.circuitBreaker().status('GET', '/a').state).toBe('closed');
  });

  it('a request the open circuit rejects never listens to its signal', async () => {
    const h = harness();
    await fail(h, '/a', 3);
    const signal = new AbortController().signal;
    let listened = 0;
    const add = signal.addEventListener.bind(signal);
    signal.addEventListener = ((...a: Parameters<AbortSignal['addEventListener']>) => {
      listened++;
      add(...a);
    }) as AbortSignal['addEventListener'];
    const r = await outcome(h.client.get('/a', { signal }));
    expect((r as { error: unknown }).error).toBeInstanceOf(CircuitOpenError);
    expect(listened).toBe(0);
    expect(h.count('circuit-rejected')).toBe(1);
  });

  it('an already-aborted signal wins over an open circuit: CancelledError, nothing rejected by the circuit', async () => {
    // README: an already-aborted signal rejects at once, before any work (the circuit included).
    const h = harness();
    await fail(h, '/a', 3);
    const controller = new AbortController();
    controller.abort();
    const r = await outcome(h.client.get('/a', { signal: controller.signal }));
    expect((r as { error: unknown }).error).toBeInstanceOf(CancelledError);
    expect(h.count('circuit-rejected')).toBe(0);
    expect(h.client.intelligence().endpoint('GET', '/a')?.circuitRejected ?? 0).toBe(0);
  });

  it('a probe whose signal throws as it is listened to gives its slot back: open, same openedAt, no half-open', async () => {
    const h = harness();
    await fail(h, '/a', 3);
    const openedAt = h.client.circuitBreaker().status('GET', '/a').openedAt;
    await h.clock.advance(1000);
    const boom = new Error('addEventListener');
    const signal = new AbortController().signal;
    signal.addEventListener = () => {
      throw boom;
    };
    expect(await outcome(h.client.get('/a', { signal }))).toEqual({ ok: false, error: boom });
    expect(h.client.circuitBreaker().status('GET', '/a')).toMatchObject({
      state: 'open',
      openedAt,
      probing: false,
    });
    expect(h.names((n) => n.startsWith('circuit-'))).toEqual(['circuit-open']);
    expect(h.fake.calls).toHaveLength(3);
    // Past resetTimeout already: the next request is the probe.
    h.answer('/a', 200);
    expect((await outcome(h.client.get('/a?next'))).ok).toBe(true);
    expect(h.names((n) => n.startsWith('circuit-'))).toEqual([
      'circuit-open',
      'circuit-half-open',
      'circuit-closed',
    ]);
  });

  it('a request made while the probe listens to its signal is refused: one probe', async () => {
    const h = harness();
    await fail(h, '/a', 3);
    await h.clock.advance(1000);
    h.answer('/a', 'hang');
    const signal = new AbortController().signal;
    const add = signal.addEventListener.bind(signal);
    let inner: Promise<unknown> | undefined;
    signal.addEventListener = ((...a: Parameters<AbortSignal['addEventListener']>) => {
      inner ??= outcome(h.client.get('/a?inner'));
      add(...a);
    }) as AbortSignal['addEventListener'];
    const probe = h.client.get('/a', { signal });
    expect(((await inner) as { error: unknown }).error).toBeInstanceOf(CircuitOpenError);
    expect(h.callsTo('/a')).toHaveLength(4);
    expect(h.client.circuitBreaker().status('GET', '/a')).toMatchObject({ probing: true });
    h.fake.last().json({ ok: true });
    expect((await outcome(probe)).ok).toBe(true);
    expect(h.client.circuitBreaker().status('GET', '/a').state).toBe('closed');
  });

  it('a probe whose deadline timer cannot be armed gives its slot back', async () => {
    const h = harness({ deadline: 5000 });
    await fail(h, '/a', 3);
    await h.clock.advance(1000);
    const boom = new Error('setTimeout');
    const setTimeout = h.clock.setTimeout;
    h.clock.setTimeout = () => {
      throw boom;
    };
    expect(await outcome(h.client.get('/a'))).toEqual({ ok: false, error: boom });
    h.clock.setTimeout = setTimeout;
    // It failed before its first attempt: nothing said about the endpoint, the slot is free.
    expect(h.client.circuitBreaker().status('GET', '/a')).toMatchObject({ state: 'open' });
    h.answer('/a', 200);
    expect((await outcome(h.client.get('/a?next'))).ok).toBe(true);
    expect(h.client.circuitBreaker().status('GET', '/a').state).toBe('closed');
  });

  it('a probe cancelled by its last joiner (owner left first) also releases the slot', async () => {
    const h = harness({ cache: { enabled: true } });
    await fail(h, '/a', 3);
    await h.clock.advance(1000);
    h.answer('/a', 'hang');
    const probe = h.client.get('/a');
    const joiner = h.client.get('/a');
    probe.cancel();
    expect(h.client.circuitBreaker().status('GET', '/a').state).toBe('halfOpen');
    joiner.cancel();
    await Promise.all([outcome(probe), outcome(joiner)]);
    expect(h.client.circuitBreaker().status('GET', '/a').state).toBe('open');
  });

  it('a probe answered with a non-countable error (404) closes the circuit: the endpoint is reachable', async () => {
    const h = harness();
    await fail(h, '/a', 3);
    await h.clock.advance(1000);
    h.answer('/a', 404);
    const r = await outcome(h.client.get('/a'));
    expect(isHttpStatus((r as { error: unknown }).error, 404)).toBe(true);
    expect(h.client.circuitBreaker().status('GET', '/a')).toMatchObject({
      state: 'closed',
      consecutiveFailures: 0,
    });
    expect(h.count('circuit-closed')).toBe(1);
  });

  it('a flight admitted while closed that ends after the circuit opened is stale: it does not close it', async () => {
    const h = harness();
    h.answer('/a', 'hang');
    const slow = outcome(h.client.get('/a?slow'));
    const slowCall = h.fake.last();
    await fail(h, '/a', 3);
    expect(h.client.circuitBreaker().status('GET', '/a').state).toBe('open');
    slowCall.json({ late: true });
    expect((await slow).ok).toBe(true);
    expect(h.client.circuitBreaker().status('GET', '/a').state).toBe('open');
    expect(h.count('circuit-closed')).toBe(0);
  });

  it('a mutation can be the probe too, and the circuit is per method', async () => {
    const h = harness();
    h.answer('/a', 503);
    for (let i = 0; i < 3; i++) await outcome(h.client.post('/a', { i }));
    expect(h.client.circuitBreaker().status('POST', '/a').state).toBe('open');
    expect((await outcome(h.client.post('/a', {}))).ok).toBe(false);
    await h.clock.advance(1000);
    h.answer('/a', 201);
    expect((await outcome(h.client.post('/a', {}))).ok).toBe(true);
    expect(h.client.circuitBreaker().status('POST', '/a').state).toBe('closed');
  });
});

describe('options and controller', () => {
  it('validates options once at creation, naming the field', async () => {
    const { createClient } = await import('../src/create-client');
    const fetch = async () => new Response('{}');
    expect(() => createClient({ fetch, circuitBreaker: { failureThreshold: 0 } })).toThrow(
      /`circuitBreaker\.failureThreshold` must be an integer >= 1, got 0/,
    );
    expect(() => createClient({ fetch, circuitBreaker: { failureThreshold: 1.5 } })).toThrow(
      RangeError,
    );
    expect(() => createClient({ fetch, circuitBreaker: { resetTimeout: -1 } })).toThrow(
      /`circuitBreaker\.resetTimeout` must be a finite non-negative number of ms, got -1/,
    );
    expect(() =>
      createClient({ fetch, circuitBreaker: { resetTimeout: Number.POSITIVE_INFINITY } }),
    ).toThrow(RangeError);
    expect(() =>
      createClient({ fetch, circuitBreaker: { enabled: 'yes' as unknown as boolean } }),
    ).toThrow(/`circuitBreaker\.enabled` must be true or false, got "yes"/);
  });

  it('options are read once: mutating the object after creation changes nothing', async () => {
    const opts = { failureThreshold: 3, resetTimeout: 1000 };
    const h = harness({ circuitBreaker: opts });
    opts.failureThreshold = 1;
    await fail(h, '/a', 2);
    expect(h.client.circuitBreaker().status('GET', '/a').state).toBe('closed');
  });

  it('enabled:false never rejects, and the controller still answers (all closed)', async () => {
    const h = harness({ circuitBreaker: { enabled: false, failureThreshold: 1 } });
    await fail(h, '/a', 20);
    expect(h.callsTo('/a')).toHaveLength(20);
    const cb = h.client.circuitBreaker();
    expect(cb.status('GET', '/a')).toEqual({
      endpoint: 'GET /a',
      state: 'closed',
      consecutiveFailures: 0,
      probing: false,
    });
    // As an absent breaker: status() keeps no circuit, statuses() is empty.
    expect(cb.statuses()).toEqual([]);
    cb.reset();
    expect(h.count('circuit-open')).toBe(0);
  });

  it('status() lazily creates a closed circuit; statuses() lists every circuit observed', async () => {
    const h = harness();
    const cb = h.client.circuitBreaker();
    expect(cb.statuses()).toEqual([]);
    expect(cb.status('delete', '/x?y=1')).toEqual({
      endpoint: 'DELETE /x',
      state: 'closed',
      consecutiveFailures: 0,
      probing: false,
    });
    await outcome(h.client.get('/a'));
    expect(cb.statuses().map((s) => s.endpoint)).toEqual(['DELETE /x', 'GET /a']);
    expect(() => cb.status(42 as unknown as string, '/a')).toThrow(TypeError);
  });

  it('reset(method) closes every circuit of that method', async () => {
    const h = harness();
    await fail(h, '/a', 3);
    await fail(h, '/b', 3);
    h.answer('/c', 503);
    for (let i = 0; i < 3; i++) await outcome(h.client.delete(`/c?${i}`));
    const cb = h.client.circuitBreaker();
    cb.reset('GET');
    expect(cb.statuses().map((s) => `${s.endpoint}:${s.state}`)).toEqual([
      'GET /a:closed',
      'GET /b:closed',
      'DELETE /c:open',
    ]);
  });

  it('an observer error listener already sees the open circuit', async () => {
    const h = harness();
    const states: string[] = [];
    h.client.on('error', () => states.push(h.client.circuitBreaker().status('GET', '/a').state));
    await fail(h, '/a', 3);
    expect(states).toEqual(['closed', 'closed', 'open']);
  });
});
