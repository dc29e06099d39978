import { describe, expect, test } from 'vitest';
import { HttpError, TimeoutError } from '../src/index';
import { debugOf, expectRefusedOption, flush, makeClient, settle, track } from './helpers';
import { schedulerClient } from './scheduler.helpers';

const reasonOf = (p: { current: unknown }) => (p.current as { reason: unknown }).reason;

describe('deadline: a total budget across attempts, waits and queueing', () => {
  test('a server that never answers: default options plus a deadline end it at the deadline', async () => {
    // Without a deadline this waited for undici's 300 s headers timeout x 3 attempts (908 s).
    const t = makeClient({ deadline: 5000 });
    const p = track(t.client.get('/hang'));
    await t.clock.advance(4999);
    expect(p.current.state).toBe('pending');
    await t.clock.advance(1);
    const err = reasonOf(p) as TimeoutError;
    expect(err).toBeInstanceOf(TimeoutError);
    expect(err).toMatchObject({
      kind: 'deadline',
      timeout: 5000,
      method: 'GET',
      url: 'https://api.test/hang',
    });
    expect(t.fake.calls).toHaveLength(1);
    expect(t.fake.calls[0]!.signal?.aborted).toBe(true);
    // a failure, not a cancellation: `error`, counted as a timeout
    expect(t.of('error')).toHaveLength(1);
    expect(t.of('cancel')).toHaveLength(0);
    expect(t.client.intelligence().endpoint('GET', '/hang')).toMatchObject({
      failures: 1,
      timeouts: 1,
    });
    expect(t.clock.live).toBe(0);
    expect(debugOf(t.client)).toMatchObject({ flights: 0, inflight: 0 });
  });

  test('it spans attempts and retry waits; the per-attempt timeout alone does not bound them', async () => {
    const t = makeClient({ timeout: 1000, deadline: 2500 });
    const p = track(t.client.get('/slow'));
    // attempt 1: 0..1000, wait 100, attempt 2: 1100..2100, wait 200, attempt 3 from 2300
    await t.clock.advance(2499);
    expect(t.fake.calls).toHaveLength(3);
    expect(p.current.state).toBe('pending');
    await t.clock.advance(1);
    expect(reasonOf(p)).toMatchObject({ name: 'TimeoutError', kind: 'deadline' });
    expect(t.fake.calls.every((c) => c.signal?.aborted)).toBe(true);
    expect(t.clock.live).toBe(0);
  });

  test('a retry wait that would end past the deadline fails at once with the last error', async () => {
    const t = makeClient(
      { deadline: 5000 },
      { handler: () => new Response('busy', { status: 503, headers: { 'retry-after': '10' } }) },
    );
    const p = track(t.client.get('/busy'));
    await flush();
    const err = reasonOf(p) as HttpError;
    expect(err).toBeInstanceOf(HttpError);
    expect(err.retryAfter).toBe(10_000);
    expect(t.of('retry')).toHaveLength(0);
    expect(t.clock.live).toBe(0);
  });

  test('time queued in the scheduler counts: a job still waiting for a slot fails in time', async () => {
    const t = schedulerClient({ concurrency: 1 });
    const first = track(t.client.get('/first'));
    const second = track(t.client.get('/second', { deadline: 1000 }));
    await t.clock.advance(1000);
    expect(reasonOf(second)).toMatchObject({ name: 'TimeoutError', kind: 'deadline' });
    expect(t.fake.calls.map((c) => new URL(c.url).pathname)).toEqual(['/first']);
    expect(t.client.scheduler().stats()).toMatchObject({ active: 1, queued: 0, completed: 1 });
    t.fake.calls[0]!.json('ok');
    await t.clock.advance(0);
    expect(first.current.state).toBe('fulfilled');
    expect(t.fake.calls).toHaveLength(1); // the expired job never started
    expect(t.client.scheduler().stats()).toMatchObject({ active: 0, queued: 0, completed: 2 });
  });

  test('a deadline that ran out in the queue is a failure, not a timeout: no attempt timed out', async () => {
    const t = schedulerClient({ concurrency: 1 });
    const first = track(t.client.get('/first'));
    const second = track(t.client.get('/second', { deadline: 1000 }));
    await t.clock.advance(1000);
    expect(reasonOf(second)).toMatchObject({ name: 'TimeoutError', kind: 'deadline' });
    expect(t.client.intelligence().endpoint('GET', '/second')).toMatchObject({
      failures: 1,
      timeouts: 0,
    });
    t.fake.calls[0]!.json('ok');
    await t.clock.advance(0);
    expect(first.current.state).toBe('fulfilled');
  });

  test('a deadline that ran out between attempts (queued after a retry wait) is no timeout', async () => {
    // /a: a 503, its retry wait (100 ms), then queued behind /b, which holds the only slot: the
    // deadline runs out with no attempt running. The 503 was counted by its `retry`; no attempt
    // timed out.
    const t = schedulerClient({ concurrency: 1 }, { deadline: 1000 });
    const a = track(t.client.get('/a'));
    await t.clock.advance(0);
    t.fake.calls[0]!.text('busy', { status: 503 });
    await t.clock.advance(0);
    const b = track(t.client.get('/b', { deadline: 0 }));
    await t.clock.advance(1000);
    expect(t.fake.calls.map((c) => new URL(c.url).pathname)).toEqual(['/a', '/b']);
    const err = reasonOf(a) as TimeoutError;
    expect(err).toMatchObject({ name: 'TimeoutError', kind: 'deadline' });
    expect(t.client.intelligence().endpoint('GET', '/a')).toMatchObject({
      failures: 1,
      retriesPerformed: 1,
      timeouts: 0,
    });
    // What the request was waiting to retry after.
    expect(err.cause).toMatchObject({ name: 'HttpError', status: 503 });
    t.fake.calls[1]!.json('ok');
    await t.clock.advance(0);
    expect(b.current.state).toBe('fulfilled');
  });

  test('a deadline that cuts a running attempt short, after retries, counts that attempt', async () => {
    const t = makeClient({ timeout: 1000, deadline: 2500 });
    const p = track(t.client.get('/slow'));
    await t.clock.advance(2500); // two attempts timed out (retried), the third cut by the deadline
    const err = reasonOf(p) as TimeoutError;
    expect(err).toMatchObject({ kind: 'deadline' });
    expect(err.cause).toBeUndefined();
    expect(t.client.intelligence().endpoint('GET', '/slow')).toMatchObject({
      failures: 1,
      retriesPerformed: 2,
      timeouts: 3,
    });
  });

  test('a job parked for rate budget fails in time, freeing the budget timer', async () => {
    const t = schedulerClient(
      { concurrency: 4, rateLimit: { requests: 1, interval: 1000 } },
      {},
      { handler: () => Response.json('ok') },
    );
    await t.client.get('/one');
    const p = track(t.client.get('/two', { deadline: 500 }));
    await t.clock.advance(0);
    expect(t.client.scheduler().stats()).toMatchObject({ delayed: 1 });
    await t.clock.advance(500);
    expect(reasonOf(p)).toMatchObject({ kind: 'deadline' });
    expect(t.client.scheduler().stats()).toMatchObject({ delayed: 0, completed: 2, rejected: 0 });
    expect(t.fake.calls).toHaveLength(1);
    expect(t.clock.live).toBe(0);
  });

  test('with a scheduler, a retry wait past the deadline fails at once too', async () => {
    const t = schedulerClient(
      { concurrency: 1 },
      { deadline: 150, retry: { baseDelay: 100, attempts: 5 } },
      { handler: () => new Response('', { status: 503 }) },
    );
    const p = track(t.client.get('/parked'));
    await t.clock.advance(150); // 503 at 0, wait 100, 503 at 100: the next wait (200) is past it
    expect(reasonOf(p)).toBeInstanceOf(HttpError);
    expect(t.fake.calls).toHaveLength(2);
    expect(t.client.scheduler().stats()).toMatchObject({ active: 0, delayed: 0, completed: 1 });
    expect(t.clock.live).toBe(0);
  });

  test('a request deadline overrides the client one; 0 means none', async () => {
    const t = makeClient({ deadline: 1000 });
    const longer = track(t.client.get('/a', { deadline: 3000 }));
    const none = track(t.client.get('/b', { deadline: 0 }));
    await t.clock.advance(2999);
    expect(longer.current.state).toBe('pending');
    await t.clock.advance(1);
    expect(reasonOf(longer)).toMatchObject({ kind: 'deadline', timeout: 3000 });
    await t.clock.advance(60_000);
    expect(none.current.state).toBe('pending');
    t.client.cancelAll();
  });

  test('a joiner with a shorter deadline leaves alone; the flight goes on for the owner', async () => {
    const t = makeClient();
    const owner = track(t.client.get('/shared'));
    const joiner = track(t.client.get('/shared', { deadline: 100 }));
    expect(t.of('dedup')).toHaveLength(1);
    await t.clock.advance(100);
    expect(reasonOf(joiner)).toMatchObject({ kind: 'deadline', timeout: 100 });
    expect(owner.current.state).toBe('pending');
    t.fake.last().json('late');
    await flush();
    expect(owner.current).toMatchObject({ state: 'fulfilled', value: { data: 'late' } });
    expect(t.clock.live).toBe(0);
  });

  test("a joiner shares the flight's deadline when that ends first", async () => {
    const t = makeClient();
    const owner = track(t.client.get('/d', { deadline: 100 }));
    const joiner = track(t.client.get('/d', { deadline: 1000 }));
    await t.clock.advance(100);
    expect(reasonOf(owner)).toMatchObject({ kind: 'deadline', timeout: 100 });
    expect(reasonOf(joiner)).toBe(reasonOf(owner));
    expect(t.clock.live).toBe(0);
  });

  test('an answer in time clears the deadline timer', async () => {
    const t = makeClient({ deadline: 1000 }, { handler: () => Response.json(1) });
    await t.client.get('/ok');
    await t.client.post('/ok', 1);
    expect(t.clock.live).toBe(0);
  });

  test('the circuit breaker counts a deadline as a failure', async () => {
    const t = makeClient({ deadline: 10, circuitBreaker: { failureThreshold: 2 } });
    for (let i = 0; i < 2; i++) {
      const p = settle(t.client.get(`/cb?i=${i}`));
      await t.clock.advance(10);
      expect((await p).state).toBe('rejected');
    }
    expect(t.client.circuitBreaker().status('GET', '/cb').state).toBe('open');
  });

  test.each([
    [-1, RangeError],
    [2 ** 31, RangeError],
    [Number.NaN, RangeError],
    ['5s', TypeError],
  ])('deadline %s is refused, naming it', (value, type) =>
    expectRefusedOption({ deadline: value as number }, type, /deadline/),
  );
});
