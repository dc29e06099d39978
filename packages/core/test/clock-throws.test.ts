import { describe, expect, test } from 'vitest';
import { type ClientOptions, isCancelledError } from '../src/index';
import {
  collectProcessFailures,
  collectUnhandledRejections,
  debugOf,
  type FakeFetchOptions,
  flush,
  jsonResponse,
  makeClient,
  settle,
  spiedSignal,
  track,
} from './helpers';

/**
 * An injected clock whose `setTimeout` throws (a broken fake, a timer quota) while a flight
 * starts: the caller gets a rejected promise, never a synchronous throw, and the flight leaves
 * the dedup map and the scheduler, so a later request for the same key runs instead of joining a
 * flight that never will.
 */
const quota = new Error('timer quota exceeded');

/**
 * A test client whose clock's `method` throws `error` while `state.broken` (a broken fake, a
 * timer quota). Its `clearTimeout` clears the timer first, then throws: what is left behind is
 * keel's doing.
 */
function hostileClock(
  method: 'now' | 'setTimeout' | 'clearTimeout',
  error: Error,
  options: ClientOptions = {},
  fetchOptions: FakeFetchOptions = {},
) {
  const t = makeClient(options, fetchOptions);
  const clock = t.clock as unknown as Record<typeof method, (...args: unknown[]) => unknown>;
  const real = clock[method];
  const state = { broken: false };
  clock[method] = (...args) => {
    const value = method === 'clearTimeout' || !state.broken ? real.apply(t.clock, args) : 0;
    if (state.broken) throw error;
    return value;
  };
  return { ...t, state };
}

/** `signal`, its removeEventListener made to remove the listener, then throw `error`. */
function throwOnRemove(signal: AbortSignal, error: Error): AbortSignal {
  const remove = signal.removeEventListener.bind(signal);
  signal.removeEventListener = ((...args: Parameters<typeof remove>) => {
    remove(...args);
    throw error;
  }) as typeof remove;
  return signal;
}

function setup(options: ClientOptions = {}) {
  return hostileClock('setTimeout', quota, options, { handler: () => jsonResponse({ ok: true }) });
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
    const t = hostileClock('setTimeout', quota);
    const owner = settle(t.client.get('/a'));
    t.state.broken = true;
    let joiner: ReturnType<typeof t.client.get> | undefined;
    expect(() => {
      joiner = t.client.get('/a', { deadline: 500 });
    }).not.toThrow();
    t.state.broken = false;
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
    const t = hostileClock('setTimeout', quota, rated);
    const a = settle(t.client.get('/a'));
    const b = settle(t.client.get('/b'));
    await t.clock.advance(0);
    t.state.broken = true;
    t.fake.last().json({ ok: true });
    const answered = await a;
    t.state.broken = false;
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
    const broken = new Error('clock broken');
    const t = hostileClock('now', broken, {}, { handler: () => jsonResponse({ ok: true }) });
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
    t.state.broken = true;
    let promise: Promise<unknown> | undefined;
    try {
      promise = t.client.get('/a', { signal: controller.signal });
    } finally {
      t.state.broken = false;
    }
    expect(await settle(promise)).toEqual({ state: 'rejected', reason: broken });
    expect(listeners).toBe(0);
    controller.abort();
    expect(t.of('cancel')).toHaveLength(0);
    expect(debugOf(t.client)).toMatchObject({ flights: 0, inflight: 0 });
  });
});

describe('a signal whose addEventListener and removeEventListener both throw', () => {
  test('the caller is rejected with what failed first (the attach), not the letting go', async () => {
    const t = makeClient({}, {});
    const controller = new AbortController();
    const attach = new Error('addEventListener');
    controller.signal.addEventListener = () => {
      throw attach;
    };
    controller.signal.removeEventListener = () => {
      throw new Error('removeEventListener');
    };
    const got = await settle(t.client.get('/a', { signal: controller.signal }));
    expect(got).toEqual({ state: 'rejected', reason: attach });
    expect(debugOf(t.client)).toMatchObject({ flights: 0, inflight: 0 });
  });
});

/**
 * A clock (or a caller's signal) that throws as a flight ends, after its response or failure
 * came: `#end` threw half way, so every caller of the flight stayed pending for good and the
 * attempt's promise was an unhandled rejection. The flight now fails with that error: each caller
 * is rejected with it, the flight ends once (`error` after its `request`), and no timer or signal
 * listener is left.
 */
describe('a clock or signal that throws as a flight ends', () => {
  const unhandled = collectUnhandledRejections();
  const broken = new Error('clock broken');

  /** A client whose clock's `now` or `clearTimeout` throws while `state.broken`. */
  const hostile = (method: 'now' | 'clearTimeout', options?: ClientOptions) =>
    hostileClock(method, broken, options);

  /**
   * Answers the pending fetch (`{ok: true}`, or a failure with `status`) with the clock broken
   * until the flight has had time to end.
   */
  async function answerBroken(t: ReturnType<typeof hostile>, status?: number) {
    t.state.broken = true;
    if (status === undefined) t.fake.last().json({ ok: true });
    else t.fake.last().json({ no: 1 }, { status });
    for (let i = 0; i < 5; i++) await flush();
    t.state.broken = false;
  }

  test('`now` throws after the response: owner and joiner are rejected with it, nothing is left', async () => {
    const t = hostile('now');
    const owner = track(t.client.get('/a'));
    const joiner = track(t.client.get('/a'));
    await t.clock.advance(0);
    await answerBroken(t);
    expect(owner.current).toEqual({ state: 'rejected', reason: broken });
    expect(joiner.current).toEqual({ state: 'rejected', reason: broken });
    expect(t.events.map((e) => e.name)).toEqual(['request', 'dedup', 'error']);
    expect(t.of('error')[0]!.error).toBe(broken);
    expect(debugOf(t.client)).toMatchObject({ flights: 0, inflight: 0, cacheSize: 0 });
    expect(unhandled).toEqual([]);
    // The key is free: a later request runs and is answered.
    const later = track(t.client.get('/a'));
    await t.clock.advance(0);
    t.fake.last().json({ ok: 2 });
    await t.clock.advance(0);
    expect(later.current).toMatchObject({ state: 'fulfilled', value: { data: { ok: 2 } } });
    expect(t.clock.live).toBe(0);
  });

  test('`clearTimeout` throws clearing the deadline timer: callers rejected, no timer left', async () => {
    const t = hostile('clearTimeout');
    const owner = track(t.client.get('/a', { deadline: 5000 }));
    await t.clock.advance(0);
    expect(t.clock.live).toBe(1);
    await answerBroken(t);
    expect(owner.current).toEqual({ state: 'rejected', reason: broken });
    expect(t.of('error').map((e) => e.error)).toEqual([broken]);
    expect(t.of('success')).toHaveLength(0);
    expect(debugOf(t.client)).toMatchObject({ flights: 0, inflight: 0 });
    expect(t.clock.live).toBe(0);
    expect(unhandled).toEqual([]);
  });

  test("`clearTimeout` throws clearing a joiner's own deadline: that joiner gets it, the others their answer", async () => {
    const t = hostile('clearTimeout');
    const spied = spiedSignal();
    const owner = track(t.client.get('/a'));
    const joiner = track(t.client.get('/a', { deadline: 5000, signal: spied.signal }));
    const other = track(t.client.get('/a', { signal: spiedSignal().signal }));
    await t.clock.advance(0);
    expect(spied.live()).toBe(1);
    await answerBroken(t);
    expect(owner.current).toMatchObject({ state: 'fulfilled', value: { data: { ok: true } } });
    expect(joiner.current).toEqual({ state: 'rejected', reason: broken });
    expect(other.current).toMatchObject({ state: 'fulfilled' });
    // Its signal was let go as well, and its timer cleared.
    expect(spied.live()).toBe(0);
    expect(t.clock.live).toBe(0);
    expect(unhandled).toEqual([]);
  });

  test('a signal whose removeEventListener throws: that caller gets the error, its timer is still cleared', async () => {
    const t = makeClient({}, {});
    const spied = spiedSignal();
    const boom = new Error('removeEventListener');
    throwOnRemove(spied.signal, boom);
    const owner = track(t.client.get('/a', { signal: spied.signal, deadline: 5000 }));
    const joiner = track(t.client.get('/a'));
    await t.clock.advance(0);
    t.fake.last().json({ ok: true });
    await t.clock.advance(0);
    expect(owner.current).toEqual({ state: 'rejected', reason: boom });
    expect(joiner.current).toMatchObject({ state: 'fulfilled', value: { data: { ok: true } } });
    expect(t.of('success')).toHaveLength(1);
    expect(t.clock.live).toBe(0);
    expect(unhandled).toEqual([]);
  });

  test('`now` throws as a failed flight ends (no retry): the caller gets the clock error', async () => {
    const t = hostile('now', { retry: false });
    const owner = track(t.client.get('/a'));
    await t.clock.advance(0);
    await answerBroken(t, 500);
    expect(owner.current).toEqual({ state: 'rejected', reason: broken });
    expect(t.of('error')).toHaveLength(1);
    expect(debugOf(t.client)).toMatchObject({ flights: 0, inflight: 0 });
    expect(unhandled).toEqual([]);
  });

  // Intelligence ages its samples by the time of the event that ends the flight: it read the
  // clock again in its `error` listener, which threw there too and was reported to `onError` as
  // an app's `error` listener failing (the request's rejection already carries that error).
  test('`now` throws as a failed flight ends: intelligence counts it, onError hears no listener', async () => {
    const reported: unknown[][] = [];
    const t = hostile('now', {
      retry: false,
      onError: (error, context) => reported.push([error, context]),
    });
    const owner = track(t.client.get('/a'));
    await t.clock.advance(10);
    await answerBroken(t, 500);
    expect(owner.current).toEqual({ state: 'rejected', reason: broken });
    expect(reported).toEqual([]);
    expect(t.client.intelligence().snapshot().summary).toMatchObject({
      activeRequests: 0,
      failures: 1,
    });
  });

  // The adaptive observer read the clock again in its `error` listener: it threw there, was
  // reported as that listener failing, and the flight was never forgotten (its maps kept it).
  test('`now` throws as a flight ends: the adaptive observer forgets it, onError hears no listener', async () => {
    const reported: unknown[][] = [];
    const t = hostile('now', {
      retry: false,
      adaptive: { enabled: true },
      onError: (error, context) => reported.push([error, context]),
    });
    const owner = track(t.client.get('/a'));
    await t.clock.advance(10);
    await answerBroken(t, 500);
    expect(owner.current).toEqual({ state: 'rejected', reason: broken });
    expect(reported).toEqual([]);
    expect(debugOf(t.client)).toMatchObject({ flights: 0, adaptiveFlights: 0 });
  });

  // Its end time is NaN then (the clock could not tell it): taken as a sample's time, it made
  // the pace NaN, and no quiet spell aged the samples for about two windows.
  test('`now` throws as a flight ends: a quiet hour after it still ages the samples', async () => {
    const t = hostile('now', { retry: false, cache: false });
    const answer = async (status?: number) => {
      const p = settle(t.client.get('/a'));
      await t.clock.advance(1000);
      if (status) await answerBroken(t, status);
      else t.fake.last().json({ ok: true });
      await p;
    };
    for (let i = 0; i < 32; i++) await answer(); // a window: the pace is known (a minute)
    await answer(500);
    await t.clock.advance(3_600_000);
    await answer();
    expect(t.client.intelligence().endpoint('GET', '/a')!.latency.samples).toBe(1);
  });

  test('`now` throws as a mutation ends: rejected, and a later read still works', async () => {
    const t = hostile('now');
    const post = track(t.client.post('/a', { x: 1 }));
    await t.clock.advance(0);
    await answerBroken(t);
    expect(post.current).toEqual({ state: 'rejected', reason: broken });
    expect(t.of('error')).toHaveLength(1);
    expect(debugOf(t.client)).toMatchObject({ flights: 0, inflight: 0 });
    expect(unhandled).toEqual([]);
  });
});

/**
 * A per-attempt `timeout`: the attempt clears its timer as its response or failure comes. A
 * clock whose `clearTimeout` threw there left the attempt's promise unsettled (its callers
 * pending for good) and made an unhandled rejection. The request now fails with the clock's
 * error, which is not an attempt's failure: it is not retried as a network error would be.
 */
describe("a clock whose `clearTimeout` throws as an attempt's timeout is cleared", () => {
  const unhandled = collectUnhandledRejections();
  const broken = new Error('clock broken');

  const hostileClear = () => hostileClock('clearTimeout', broken);

  test('the response comes: the caller is rejected with the clock error, nothing is left', async () => {
    const t = hostileClear();
    const owner = track(t.client.get('/a', { timeout: 5000 }));
    await t.clock.advance(0);
    t.state.broken = true;
    t.fake.last().json({ ok: true });
    for (let i = 0; i < 5; i++) await flush();
    t.state.broken = false;
    expect(owner.current).toEqual({ state: 'rejected', reason: broken });
    expect(t.of('error').map((e) => e.error)).toEqual([broken]);
    expect(t.of('success')).toHaveLength(0);
    expect(debugOf(t.client)).toMatchObject({ flights: 0, inflight: 0, cacheSize: 0 });
    expect(t.clock.live).toBe(0);
    expect(unhandled).toEqual([]);
  });

  test('the fetch fails: rejected with the clock error, not retried as a network error', async () => {
    const t = hostileClear();
    const owner = track(t.client.get('/a', { timeout: 5000 }));
    await t.clock.advance(0);
    t.state.broken = true;
    t.fake.last().fail();
    for (let i = 0; i < 5; i++) await flush();
    t.state.broken = false;
    await t.clock.advance(60_000);
    expect(owner.current).toEqual({ state: 'rejected', reason: broken });
    expect(t.fake.calls).toHaveLength(1);
    expect(t.of('retry')).toHaveLength(0);
    expect(t.of('error').map((e) => e.error)).toEqual([broken]);
    expect(debugOf(t.client)).toMatchObject({ flights: 0, inflight: 0 });
    expect(t.clock.live).toBe(0);
    expect(unhandled).toEqual([]);
  });
});

describe('a clock whose `now` throws as a retry starts its attempt', () => {
  const unhandled = collectUnhandledRejections();

  test('the flight ends with the error (not retried as a failed attempt); nothing is left', async () => {
    const broken = new Error('clock broken');
    const unavailable = { handler: () => jsonResponse({ no: 1 }, { status: 503 }) };
    const t = hostileClock('now', broken, {}, unavailable);
    const owner = track(t.client.get('/a'));
    await t.clock.advance(0);
    expect(t.of('retry')).toHaveLength(1);
    t.state.broken = true;
    await t.clock.advance(100);
    t.state.broken = false;
    expect(owner.current).toEqual({ state: 'rejected', reason: broken });
    expect(t.fake.calls).toHaveLength(1);
    expect(t.of('error').map((e) => e.error)).toEqual([broken]);
    expect(debugOf(t.client)).toMatchObject({ flights: 0, inflight: 0 });
    expect(t.clock.live).toBe(0);
    expect(unhandled).toEqual([]);
  });
});

describe('a clock whose `now` throws as an error response is read (its Retry-After)', () => {
  const unhandled = collectUnhandledRejections();

  // It was read inside the body reader, whose errors are the response's: the clock's error came
  // out as a NetworkError, was retried, and counted toward the circuit.
  test("the request fails with the clock's error: not retried, not a circuit failure; the body is let go", async () => {
    const broken = new Error('clock broken');
    let cancelled = 0;
    const unavailable = {
      handler: () =>
        new Response(
          new ReadableStream({
            start(c) {
              c.enqueue(new TextEncoder().encode('{"no":1}'));
            },
            cancel() {
              cancelled++;
            },
          }),
          { status: 503, headers: { 'content-type': 'application/json', 'retry-after': '1' } },
        ),
    };
    const t = hostileClock('now', broken, {}, unavailable);
    const owner = track(t.client.get('/a'));
    // The attempt is under way: its answer reads the broken clock.
    t.state.broken = true;
    await flush();
    t.state.broken = false;
    await flush();
    expect(owner.current).toEqual({ state: 'rejected', reason: broken });
    expect(t.fake.calls).toHaveLength(1);
    expect(t.of('retry')).toHaveLength(0);
    expect(t.client.circuitBreaker().status('GET', '/a').consecutiveFailures).toBe(0);
    expect(cancelled).toBe(1);
    expect(debugOf(t.client)).toMatchObject({ flights: 0, inflight: 0 });
    expect(t.clock.live).toBe(0);
    expect(unhandled).toEqual([]);
  });
});

describe('a clock whose `now` throws as a finished flight frees a slot for a rate-limited job', () => {
  const unhandled = collectUnhandledRejections();

  test('the finished flight and the next job are rejected with it; the scheduler is empty', async () => {
    const broken = new Error('clock broken');
    const t = hostileClock('now', broken, {
      scheduler: { concurrency: 1, rateLimit: { requests: 5, interval: 1000 } },
    });
    const a = track(t.client.get('/a'));
    const b = track(t.client.get('/b'));
    await t.clock.advance(0);
    expect(t.client.scheduler().stats()).toMatchObject({ active: 1, queued: 1 });
    t.state.broken = true;
    t.fake.last().json({ ok: true });
    for (let i = 0; i < 5; i++) await flush();
    t.state.broken = false;
    await t.clock.advance(0);
    expect(a.current).toEqual({ state: 'rejected', reason: broken });
    expect(b.current).toEqual({ state: 'rejected', reason: broken });
    expect(t.fake.calls).toHaveLength(1);
    expect(debugOf(t.client)).toMatchObject({ flights: 0, inflight: 0 });
    expect(t.client.scheduler().stats()).toMatchObject({ active: 0, queued: 0, delayed: 0 });
    expect(t.clock.live).toBe(0);
    expect(unhandled).toEqual([]);
  });
});

/**
 * Cancelling a caller lets go of its deadline timer and signal listener, and reads the clock for
 * its `cancel` event. A `clearTimeout`, `removeEventListener` or `now` that threw there made
 * `cancel()` (or the signal's abort handler) throw half way: the caller was out of its flight
 * but never rejected, and a flight left with no caller was never aborted. The cancel now
 * completes: the caller gets its CancelledError, the flight is torn down as usual.
 */
describe('a clock or signal that throws while a caller is cancelled', () => {
  const unhandled = collectUnhandledRejections();
  const uncaught = collectProcessFailures('uncaughtException');
  const broken = new Error('broken');

  test('`cancel()` with a signal whose removeEventListener throws: rejected, the flight aborted', async () => {
    const t = makeClient({}, {});
    const signal = throwOnRemove(new AbortController().signal, broken);
    const promise = t.client.get('/a', { signal });
    const owner = track(promise);
    await t.clock.advance(0);
    expect(() => promise.cancel()).not.toThrow();
    await flush();
    expect(owner.current.state).toBe('rejected');
    expect(isCancelledError((owner.current as { reason: unknown }).reason)).toBe(true);
    expect(t.fake.last().signal?.aborted).toBe(true);
    expect(t.of('cancel')).toHaveLength(1);
    expect(debugOf(t.client)).toMatchObject({ flights: 0, inflight: 0 });
    expect(unhandled).toEqual([]);
  });

  test("a joiner's own deadline timer whose clearTimeout throws: its signal's abort cancels it", async () => {
    const t = hostileClock('clearTimeout', broken);
    const owner = track(t.client.get('/a'));
    const controller = new AbortController();
    const joiner = track(t.client.get('/a', { deadline: 5000, signal: controller.signal }));
    await t.clock.advance(0);
    t.state.broken = true;
    controller.abort();
    t.state.broken = false;
    await flush();
    expect(joiner.current.state).toBe('rejected');
    expect(isCancelledError((joiner.current as { reason: unknown }).reason)).toBe(true);
    expect(t.of('cancel')).toHaveLength(1);
    expect(uncaught).toEqual([]);
    t.fake.last().json({ ok: true });
    await t.clock.advance(0);
    expect(owner.current.state).toBe('fulfilled');
    expect(t.clock.live).toBe(0);
  });

  test('`now` throws as the last caller cancels: rejected, the flight aborted and gone', async () => {
    const t = hostileClock('now', broken);
    const promise = t.client.get('/a');
    const owner = track(promise);
    await t.clock.advance(0);
    t.state.broken = true;
    expect(() => promise.cancel()).not.toThrow();
    t.state.broken = false;
    await flush();
    expect(owner.current.state).toBe('rejected');
    expect(isCancelledError((owner.current as { reason: unknown }).reason)).toBe(true);
    expect(t.fake.last().signal?.aborted).toBe(true);
    expect(t.of('cancel')).toHaveLength(1);
    expect(debugOf(t.client)).toMatchObject({ flights: 0, inflight: 0 });
    expect(unhandled).toEqual([]);
  });

  // The caller gets its CancelledError: the clock's or signal's error, which no caller gets, is
  // reported to `onError` as a listener's would be, never dropped.
  test('`now` throws as a caller cancels: its error reaches onError as {source: cancel, key}', async () => {
    const reported: unknown[][] = [];
    const t = hostileClock('now', broken, {
      onError: (error, context) => reported.push([error, context]),
    });
    const promise = t.client.get('/a');
    await t.clock.advance(0);
    t.state.broken = true;
    promise.cancel();
    t.state.broken = false;
    await flush();
    expect(reported).toEqual([[broken, { source: 'cancel', key: t.of('request')[0]!.key }]]);
  });

  test('a signal whose removeEventListener throws as its caller cancels: reported to onError', async () => {
    const reported: unknown[][] = [];
    const t = makeClient({ onError: (error, context) => reported.push([error, context]) }, {});
    const controller = new AbortController();
    throwOnRemove(controller.signal, broken);
    const owner = track(t.client.get('/a', { signal: controller.signal }));
    await t.clock.advance(0);
    controller.abort();
    await flush();
    expect(isCancelledError((owner.current as { reason: unknown }).reason)).toBe(true);
    expect(reported).toEqual([[broken, { source: 'cancel', key: t.of('request')[0]!.key }]]);
  });
});
