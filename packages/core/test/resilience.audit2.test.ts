/**
 * Round 2 of the resilience audit: black-box checks through createClient (and, in the
 * core-composed project, createBaseClient + with*()) of the leads round 1 left: a same-key
 * request from a `circuit-half-open` listener, `retry: null`, a throwing `retryOn`, and
 * `prioritize` without lanes.
 */
import { describe, expect, test } from 'vitest';
import { CancelledError, createClient } from '../src/index';
import { harness, outcome, probeReady } from './circuit.fixture';
import { debugOf, makeClient, settle } from './helpers';

describe('circuit: requests made while the probe is being admitted', () => {
  test("from the probe's request listener: a same-key request joins the probe (rule 7)", async () => {
    const h = await probeReady();
    let inside: Promise<unknown> | undefined;
    const off = h.client.on('request', (e) => {
      if (e.probe) inside = h.client.get('/a');
    });
    const probe = h.client.get('/a');
    off();
    expect(h.count('dedup')).toBe(1);
    h.fake.last().json({ ok: true });
    expect((await outcome(probe)).ok).toBe(true);
    expect((await outcome(inside!)).ok).toBe(true);
    expect(h.callsTo('/a')).toHaveLength(4);
    expect(debugOf(h.client)).toMatchObject({ flights: 0, inflight: 0 });
  });
});

describe('retry: null', () => {
  test('is refused alike on the client and on a request: TypeError naming `retry`', async () => {
    const message = /keel: `retry` must be true, false or an object, got null/;
    const make = () => createClient({ fetch: async () => new Response(''), retry: null as never });
    expect(make).toThrow(TypeError);
    expect(make).toThrow(message);
    const t = makeClient();
    const out = await settle(t.client.get('/x', { retry: null as never }));
    expect((out as { reason: unknown }).reason).toBeInstanceOf(TypeError);
    expect((out as { reason: Error }).reason.message).toMatch(message);
    expect(t.fake.calls).toHaveLength(0);
  });
});

describe('retry: a throwing retryOn', () => {
  test('rejects the request with its error, and counts neither against the circuit nor as a retry', async () => {
    const bug = new Error('bug in retryOn');
    const h = harness({
      retry: {
        attempts: 3,
        retryOn: () => {
          throw bug;
        },
      },
    });
    h.answer('/a', 503);
    for (let i = 0; i < 5; i++) {
      const r = await outcome(h.client.get('/a'));
      expect((r as { error: unknown }).error).toBe(bug);
    }
    expect(h.callsTo('/a')).toHaveLength(5);
    expect(h.client.circuitBreaker().status('GET', '/a')).toMatchObject({
      state: 'closed',
      consecutiveFailures: 0,
    });
    expect(h.count('error')).toBe(5);
    expect(h.count('retry')).toBe(0);
    expect(h.client.intelligence().snapshot().summary.activeRequests).toBe(0);
  });

  test('a half-open probe ended by a throwing retryOn gives its slot back', async () => {
    let throwing = false;
    const h = harness({
      retry: {
        attempts: 2,
        retryOn: (s) => {
          if (throwing) throw new Error('bug');
          return s === 503;
        },
      },
    });
    h.answer('/a', 503);
    for (let i = 0; i < 3; i++) {
      const p = outcome(h.client.get('/a'));
      await h.clock.runAll();
      await p;
    }
    expect(h.client.circuitBreaker().status('GET', '/a').state).toBe('open');
    await h.clock.advance(1000);
    throwing = true;
    expect((await outcome(h.client.get('/a'))).ok).toBe(false);
    expect(h.client.circuitBreaker().status('GET', '/a').state).toBe('open');
    throwing = false;
    h.answer('/a', 200);
    // The window was not restarted: the next request probes at once, and closes the circuit.
    expect((await outcome(h.client.get('/a'))).ok).toBe(true);
    expect(h.client.circuitBreaker().status('GET', '/a').state).toBe('closed');
  });
});

describe('scheduler: prioritize without priority lanes', () => {
  test.each([
    ['no scheduler', {}],
    ['a scheduler without lanes', { scheduler: { concurrency: 2 } }],
  ])('%s: a RangeError that says how to enable lanes', (_name, options) => {
    const t = makeClient(options);
    const call = () => t.client.scheduler().prioritize('g', 'high');
    expect(call).toThrow(RangeError);
    expect(call).toThrow(/needs priority lanes.*scheduler: \{ priority: true \}/);
  });
});

describe('deadlines racing a cancel', () => {
  test('a flight cancelled just before its deadline fires ends with that cancel only', async () => {
    // Both deadlines fall due at the same instant; the first one's `error` listener cancels the
    // second flight, whose attempt has not unwound yet when its own deadline timer fires (a
    // clock that fires due timers in a row, as sync fake timers do).
    const t = makeClient({ deadline: 100 });
    const first = t.client.get('/first');
    const second = t.client.get('/second');
    first.catch(() => {});
    t.client.on('error', (e) => {
      if (e.key.endsWith('/first')) second.cancel();
    });
    const s = settle(second);
    await t.clock.advance(100);
    expect((await s) as { reason: unknown }).toMatchObject({ reason: expect.any(CancelledError) });
    const ends = t.events
      .filter(
        (e) => e.name !== 'request' && (e.payload as { key?: string }).key?.endsWith('/second'),
      )
      .map((e) => e.name);
    expect(ends).toEqual(['cancel']);
    expect(t.client.intelligence().snapshot().summary.activeRequests).toBe(0);
    expect(debugOf(t.client)).toMatchObject({ flights: 0, inflight: 0 });
    expect(t.clock.live).toBe(0);
  });
});

describe('scheduler: prioritize with listeners acting on the jobs it moves', () => {
  test('a request-prioritized listener cancelling a job still to be moved: no throw, the rest move', async () => {
    const t = makeClient({
      cache: { enabled: false },
      scheduler: { concurrency: 1, priority: true },
    });
    const running = t.client.get('/running');
    const queued = [1, 2, 3].map((n) => t.client.get(`/bg/${n}`, { scheduler: { group: 'bg' } }));
    const outcomes = queued.map((p) => settle(p));
    const off = t.client.on('request-prioritized', (e) => {
      if (e.key.endsWith('/bg/1')) queued[1]!.cancel();
    });
    expect(t.client.scheduler().prioritize('bg', 'high')).toBe(2);
    off();
    expect(t.of('request-prioritized').map((e) => e.key.slice(-5))).toEqual(['/bg/1', '/bg/3']);
    running.cancel();
    running.catch(() => {});
    for (let i = 0; i < 3; i++) {
      await t.clock.advance(0);
      for (const call of t.fake.pending()) call.json({});
    }
    const states = (await Promise.all(outcomes)).map((o) => o.state);
    expect(states).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(t.client.scheduler().stats()).toMatchObject({ active: 0, queued: 0 });
    expect(debugOf(t.client)).toMatchObject({ flights: 0, inflight: 0 });
  });
});
