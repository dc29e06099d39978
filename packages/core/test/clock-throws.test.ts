import { describe, expect, test } from 'vitest';
import type { ClientOptions } from '../src/index';
import { debugOf, type FakeClock, jsonResponse, makeClient, settle } from './helpers';

/**
 * An injected clock whose `setTimeout` throws (a broken fake, a timer quota) while a flight
 * starts: the caller gets a rejected promise, never a synchronous throw, and the flight leaves
 * the dedup map and the scheduler, so a later request for the same key runs instead of joining a
 * flight that never will.
 */
const quota = new Error('timer quota exceeded');

function setup(options: ClientOptions = {}) {
  const t = makeClient(options, { handler: () => jsonResponse({ ok: true }) });
  const real = t.clock.setTimeout;
  const state = { broken: false };
  (t.clock as FakeClock).setTimeout = (fn, ms) => {
    if (state.broken) throw quota;
    return real(fn, ms);
  };
  return { ...t, state };
}

/** `get` called with the clock broken: what it did (a throw, or the promise it returned). */
function getBroken(t: ReturnType<typeof setup>, url: string, options?: { deadline?: number }) {
  t.state.broken = true;
  try {
    return { promise: t.client.get(url, options) };
  } catch (error) {
    return { threw: error };
  } finally {
    t.state.broken = false;
  }
}

describe('a clock whose setTimeout throws while a flight starts', () => {
  test('the flight deadline timer: the caller is rejected, a later request for the key runs', async () => {
    const t = setup();
    const got = getBroken(t, '/a', { deadline: 1000 });
    expect(got.threw).toBeUndefined();
    expect(await settle(got.promise!)).toEqual({ state: 'rejected', reason: quota });
    expect(debugOf(t.client)).toMatchObject({ flights: 0, inflight: 0 });
    expect(t.of('error').map((e) => e.error)).toEqual([quota]);
    const later = await settle(t.client.get('/a', { deadline: 1000 }));
    expect(later.state).toBe('fulfilled');
    expect(t.fake.calls).toHaveLength(1);
    expect(t.clock.live).toBe(0);
  });

  test('the flight deadline timer: its `error` follows its `request` (intelligence counts no negative active)', async () => {
    const t = setup();
    const got = getBroken(t, '/a', { deadline: 1000 });
    await settle(got.promise!);
    expect(t.of('request')).toHaveLength(1);
    expect(t.of('error')).toHaveLength(1);
    // The `error` came with no `request` before it: activeRequests was -1 for good.
    expect(t.client.intelligence().snapshot().summary).toMatchObject({
      activeRequests: 0,
      totalRequests: 1,
      failures: 1,
    });
  });

  test('the scheduler gate (a rate-budget wait): rejected, out of the gate, the key runs later', async () => {
    const t = setup({ scheduler: { rateLimit: { requests: 1, interval: 1000 } } });
    expect((await settle(t.client.get('/first'))).state).toBe('fulfilled');
    const got = getBroken(t, '/a');
    expect(got.threw).toBeUndefined();
    expect(await settle(got.promise!)).toEqual({ state: 'rejected', reason: quota });
    expect(debugOf(t.client)).toMatchObject({ flights: 0, inflight: 0 });
    expect(t.client.scheduler().stats()).toMatchObject({ active: 0, queued: 0, delayed: 0 });
    const later = settle(t.client.get('/a'));
    await t.clock.advance(1000);
    expect((await later).state).toBe('fulfilled');
    expect(t.fake.calls.map((c) => new URL(c.url).pathname)).toEqual(['/first', '/a']);
    expect(t.clock.live).toBe(0);
  });

  test("a joiner's own deadline timer: the joiner is rejected, the flight answers its owner", async () => {
    const t = makeClient({}, {});
    const real = t.clock.setTimeout;
    let broken = false;
    (t.clock as FakeClock).setTimeout = (fn, ms) => {
      if (broken) throw quota;
      return real(fn, ms);
    };
    const owner = settle(t.client.get('/a'));
    broken = true;
    let joiner: ReturnType<typeof t.client.get> | undefined;
    expect(() => {
      joiner = t.client.get('/a', { deadline: 500 });
    }).not.toThrow();
    broken = false;
    expect(await settle(joiner!)).toEqual({ state: 'rejected', reason: quota });
    t.fake.last().json({ ok: true });
    expect((await owner).state).toBe('fulfilled');
    expect(debugOf(t.client)).toMatchObject({ flights: 0, inflight: 0 });
    expect(t.clock.live).toBe(0);
  });
});

/**
 * A flight that ends starts the next queued one, which waits for rate budget: the clock's
 * setTimeout throwing there ends that next flight with the error, never the one that finished
 * (its callers are answered) nor the controller call that freed the slot.
 */
describe('a clock whose setTimeout throws as a finished slot starts a job that waits for budget', () => {
  const rated = { scheduler: { concurrency: 1, rateLimit: { requests: 1, interval: 1000 } } };

  test('the finished flight answers its caller; the next one is rejected with the error', async () => {
    const t = makeClient(rated, {});
    const real = t.clock.setTimeout;
    let broken = false;
    (t.clock as FakeClock).setTimeout = (fn, ms) => {
      if (broken) throw quota;
      return real(fn, ms);
    };
    const a = settle(t.client.get('/a'));
    const b = settle(t.client.get('/b'));
    await t.clock.advance(0);
    broken = true;
    t.fake.last().json({ ok: true });
    const answered = await a;
    broken = false;
    expect(answered.state).toBe('fulfilled');
    expect(await b).toEqual({ state: 'rejected', reason: quota });
    expect(debugOf(t.client)).toMatchObject({ flights: 0, inflight: 0 });
    expect(t.client.scheduler().stats()).toMatchObject({ active: 0, queued: 0, delayed: 0 });
    expect(t.fake.calls).toHaveLength(1);
    expect(t.clock.live).toBe(0);
  });

  test('resumeGroup does not throw; the resumed job is rejected with the error', async () => {
    const t = setup({ scheduler: { rateLimit: { requests: 1, interval: 1000 } } });
    expect((await settle(t.client.get('/first'))).state).toBe('fulfilled');
    t.client.scheduler().pauseGroup('g');
    const b = settle(t.client.get('/b', { scheduler: { group: 'g' } }));
    await t.clock.advance(0);
    expect(t.client.scheduler().stats()).toMatchObject({ queued: 1 });
    t.state.broken = true;
    expect(() => t.client.scheduler().resumeGroup('g')).not.toThrow();
    t.state.broken = false;
    expect(await b).toEqual({ state: 'rejected', reason: quota });
    expect(debugOf(t.client)).toMatchObject({ flights: 0, inflight: 0 });
    expect(t.client.scheduler().stats()).toMatchObject({ active: 0, queued: 0, delayed: 0 });
    expect(t.clock.live).toBe(0);
  });
});

describe('a clock whose now() throws as a flight starts', () => {
  test('the caller is rejected and its signal keeps no listener: a later abort announces no cancel', async () => {
    const t = makeClient({}, { handler: () => jsonResponse({ ok: true }) });
    const broken = new Error('clock broken');
    const real = t.clock.now.bind(t.clock);
    let breakNow = false;
    (t.clock as FakeClock).now = () => {
      if (breakNow) throw broken;
      return real();
    };
    const controller = new AbortController();
    let listeners = 0;
    const add = controller.signal.addEventListener.bind(controller.signal);
    const remove = controller.signal.removeEventListener.bind(controller.signal);
    controller.signal.addEventListener = ((...args: Parameters<typeof add>) => {
      listeners++;
      return add(...args);
    }) as typeof add;
    controller.signal.removeEventListener = ((...args: Parameters<typeof remove>) => {
      listeners--;
      return remove(...args);
    }) as typeof remove;
    breakNow = true;
    let promise: Promise<unknown> | undefined;
    try {
      promise = t.client.get('/a', { signal: controller.signal });
    } finally {
      breakNow = false;
    }
    expect(await settle(promise)).toEqual({ state: 'rejected', reason: broken });
    expect(listeners).toBe(0);
    controller.abort();
    expect(t.of('cancel')).toHaveLength(0);
    expect(debugOf(t.client)).toMatchObject({ flights: 0, inflight: 0 });
  });
});
