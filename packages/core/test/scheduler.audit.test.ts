/**
 * Adversarial audit of the request scheduler, through the public API: lane order when jobs
 * start alone, rate-budget waits, pre-start circuit refusals, transparent-mode stats, re-entrant
 * listeners, bad arguments and state left behind.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { CancelledError, CircuitOpenError, createClient, HttpError, inspect } from '../src/index';
import { debugOf, jsonResponse, prng, recordEvents, settle } from './helpers';
import {
  answer,
  answerAll,
  calls,
  SCHEDULER_EVENTS,
  schedulerClient,
  timeline,
} from './scheduler.helpers';

/** Nothing running, queued or parked, no timer left, and the given end counts. */
function expectDrained(
  t: ReturnType<typeof schedulerClient>,
  ends: { completed?: number; rejected?: number },
) {
  expect(t.client.scheduler().stats()).toMatchObject({ active: 0, queued: 0, delayed: 0, ...ends });
  expect(t.clock.live).toBe(0);
}

/** Answers one call at a time (concurrency 1) until `total` calls were made and answered. */
async function drainOrder(t: ReturnType<typeof schedulerClient>, total: number) {
  while (t.fake.calls.length < total || t.fake.pending().length > 0) await answer(t);
  return calls(t);
}

describe('scheduler audit: lane order around jobs that started alone', () => {
  it('a normal job that started alone does not hand the next turn to low: high goes first', async () => {
    const t = schedulerClient({ concurrency: 1, priority: true });
    t.client.get('/normal');
    t.client.get('/low', { priority: 'low' });
    t.client.get('/high-a', { priority: 'high' });
    t.client.get('/high-b', { priority: 'high' });
    expect(await drainOrder(t, 4)).toEqual(['/normal', '/high-a', '/high-b', '/low']);
  });

  it('a high flood still serves low fifth: the lone first high job uses one of the four turns', async () => {
    const t = schedulerClient({ concurrency: 1, priority: true });
    for (let i = 0; i < 8; i++) t.client.get(`/high/${i}`, { priority: 'high' });
    t.client.get('/low', { priority: 'low' });
    const got = await drainOrder(t, 9);
    expect(got[4]).toBe('/low');
  });

  it('after a normal blocker, a full mix is served HHHHNNL from the first round', async () => {
    const t = schedulerClient({ concurrency: 1, priority: true });
    t.client.get('/blocker');
    for (let i = 0; i < 8; i++) t.client.get(`/h/${i}`, { priority: 'high' });
    for (let i = 0; i < 4; i++) t.client.get(`/n/${i}`);
    for (let i = 0; i < 2; i++) t.client.get(`/l/${i}`, { priority: 'low' });
    const got = (await drainOrder(t, 15)).slice(1);
    expect(got.map((u) => u[1]!.toUpperCase()).join('')).toBe('HHHHNNLHHHHNNL');
  });

  it('jobs that each started alone, from any lane, leave a fresh round for the queue behind them', async () => {
    const t = schedulerClient({ concurrency: 4, priority: true });
    for (const [i, p] of (['low', 'normal', 'high', 'low'] as const).entries()) {
      t.client.get(`/first/${i}`, { priority: p });
    }
    for (let i = 0; i < 8; i++) t.client.get(`/h/${i}`, { priority: 'high' });
    for (let i = 0; i < 4; i++) t.client.get(`/n/${i}`);
    for (let i = 0; i < 2; i++) t.client.get(`/l/${i}`, { priority: 'low' });
    // Answer the oldest call each time: one slot frees, one queued job starts.
    while (t.fake.calls.length < 18 || t.fake.pending().length > 0) await answer(t);
    const got = calls(t).slice(4);
    expect(got.map((u) => u[1]!.toUpperCase()).join('')).toBe('HHHHNNLHHHHNNL');
  });

  it('a high blocker is one of its round’s four high turns', async () => {
    const t = schedulerClient({ concurrency: 1, priority: true });
    t.client.get('/blocker', { priority: 'high' });
    for (let i = 0; i < 8; i++) t.client.get(`/h/${i}`, { priority: 'high' });
    for (let i = 0; i < 4; i++) t.client.get(`/n/${i}`);
    for (let i = 0; i < 2; i++) t.client.get(`/l/${i}`, { priority: 'low' });
    const got = await drainOrder(t, 15);
    expect(got.map((u) => (u === '/blocker' ? 'H' : u[1]!.toUpperCase())).join('')).toBe(
      'HHHHNNLHHHHNNLH',
    );
  });
});

describe('scheduler audit: rate budget', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('every job that has a free slot but no budget is parked (delayed), not queued', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    const starts: number[] = [];
    const client = createClient({
      baseURL: 'https://api.test',
      cache: { enabled: false },
      fetch: async () => jsonResponse({}),
      scheduler: { concurrency: 8, rateLimit: { requests: 2, interval: 1000 } },
    });
    client.on('request-started', () => starts.push(Date.now()));
    const delayed: string[] = [];
    client.on('request-delayed', (e) => delayed.push(`${e.reason} ${e.delay}`));
    const all = Array.from({ length: 5 }, (_, i) => client.get(`/rl/${i}`));
    expect(client.scheduler().stats()).toMatchObject({ active: 2, queued: 0, delayed: 3 });
    expect(delayed).toEqual(['rate-limit 1000', 'rate-limit 1000', 'rate-limit 1000']);
    await vi.advanceTimersByTimeAsync(5000);
    await Promise.all(all);
    const t0 = starts[0]!;
    expect(starts.map((s) => s - t0)).toEqual([0, 0, 1000, 1000, 2000]);
    expect(client.scheduler().stats()).toMatchObject({
      active: 0,
      queued: 0,
      delayed: 0,
      completed: 5,
    });
    expect(vi.getTimerCount()).toBe(0);
  });

  it('parks at most as many jobs as there are free slots; the rest stay queued in order', async () => {
    const t = schedulerClient({ concurrency: 3, rateLimit: { requests: 1, interval: 100 } });
    for (let i = 0; i < 6; i++) t.client.get(`/r/${i}`);
    // One started, two free slots: two parked for budget, three queued behind them.
    expect(t.client.scheduler().stats()).toMatchObject({ active: 1, delayed: 2, queued: 3 });
    for (let i = 0; i < 8; i++) {
      await t.clock.advance(100);
      await answerAll(t);
    }
    expect(calls(t)).toEqual(['/r/0', '/r/1', '/r/2', '/r/3', '/r/4', '/r/5']);
    expect(t.client.scheduler().stats()).toMatchObject({ completed: 6, delayed: 0, queued: 0 });
    expect(t.clock.live).toBe(0);
  });

  it('cancelling every job parked for budget clears the budget timer', async () => {
    const t = schedulerClient({ concurrency: 4, rateLimit: { requests: 1, interval: 1000 } });
    const first = t.client.get('/r/0');
    const parked = [1, 2, 3].map((i) => t.client.get(`/r/${i}`));
    expect(t.client.scheduler().stats()).toMatchObject({ active: 1, delayed: 3 });
    const outcomes = parked.map((p) => settle(p));
    for (const p of parked) p.cancel();
    expect(t.client.scheduler().stats()).toMatchObject({ active: 1, delayed: 0, rejected: 3 });
    for (const r of await Promise.all(outcomes)) expect(r.state).toBe('rejected');
    await answer(t);
    await first;
    expect(t.clock.live).toBe(0);
  });

  it('jobs back from a rate wait keep lane order and FIFO, ahead of jobs that came later', async () => {
    const t = schedulerClient({
      concurrency: 4,
      priority: true,
      rateLimit: { requests: 1, interval: 100 },
    });
    t.client.get('/first', { priority: 'low' });
    for (let i = 0; i < 3; i++) t.client.get(`/l/${i}`, { priority: 'low' });
    expect(t.client.scheduler().stats()).toMatchObject({ active: 1, delayed: 3, queued: 0 });
    // Arrive while those wait: high ones go first by lane order, yet the low ones keep FIFO.
    for (let i = 0; i < 2; i++) t.client.get(`/h/${i}`, { priority: 'high' });
    t.client.get('/l/3', { priority: 'low' });
    for (let i = 0; i < 10; i++) {
      await t.clock.advance(100);
      await answerAll(t);
    }
    expect(calls(t)).toEqual(['/first', '/h/0', '/h/1', '/l/0', '/l/1', '/l/2', '/l/3']);
    const back = t.of('request-queued').filter((e) => /\/l\/[0-2]$/.test(e.url));
    // First queued with their lane places, then back from the wait at the head, in order.
    expect(back.slice(0, 6).map((e) => e.position)).toEqual([1, 1, 1, 1, 2, 3]);
    expect(t.clock.live).toBe(0);
  });

  it('a request-scheduled listener that cancels another job back from the same wait', async () => {
    const t = schedulerClient({ concurrency: 4, rateLimit: { requests: 1, interval: 100 } });
    const first = t.client.get('/r/0');
    const a = t.client.get('/r/1');
    const b = t.client.get('/r/2');
    const bOutcome = settle(b);
    const c = t.client.get('/r/3');
    t.client.on('request-scheduled', (e) => {
      if (e.url.endsWith('/r/1')) b.cancel();
    });
    await answer(t);
    await t.clock.advance(100);
    expect((await bOutcome).state).toBe('rejected');
    expect(calls(t)).toEqual(['/r/0', '/r/1']);
    expect(t.client.scheduler().stats()).toMatchObject({ active: 1, delayed: 1, rejected: 1 });
    await answerAll(t);
    await t.clock.advance(100);
    await answerAll(t);
    await Promise.all([first, a, c]);
    expect(calls(t)).toEqual(['/r/0', '/r/1', '/r/3']);
    expectDrained(t, { completed: 3, rejected: 1 });
  });

  it.each(['rate-limit', 'backoff'])(
    'a request-scheduled listener that cancels the job back from a %s wait: it ends delayed, never queued',
    async (reason) => {
      const rate = reason === 'rate-limit';
      const t = schedulerClient(
        { concurrency: 4, ...(rate ? { rateLimit: { requests: 1, interval: 100 } } : {}) },
        { retry: { attempts: 2, baseDelay: 100 } },
      );
      if (rate) void t.client.get('/r/0');
      const doomed = t.client.get('/r/1');
      const outcome = settle(doomed);
      t.client.on('request-scheduled', (e) => {
        if (e.url.endsWith('/r/1')) doomed.cancel();
      });
      if (rate) await answer(t);
      else await answer(t, '/r/1', jsonResponse({}, { status: 503 }));
      await t.clock.advance(100);
      expect((await outcome).state).toBe('rejected');
      // No request-dequeued for a job whose request-queued was never emitted.
      const mine = timeline(t).filter((line) => line.endsWith('/r/1'));
      expect(mine.slice(-3)).toEqual([
        'request-delayed /r/1',
        'request-scheduled /r/1',
        'request-rejected /r/1',
      ]);
      const count = (name: string) => mine.filter((line) => line.startsWith(`${name} `)).length;
      expect(count('request-dequeued')).toBe(count('request-queued'));
      await answerAll(t);
      expectDrained(t, { completed: rate ? 1 : 0, rejected: 1 });
    },
  );

  it('cancelling one of several jobs parked for budget keeps the timer for the others', async () => {
    const t = schedulerClient({ concurrency: 4, rateLimit: { requests: 1, interval: 1000 } });
    t.client.get('/r/0');
    const a = t.client.get('/r/1');
    const b = t.client.get('/r/2');
    const aOutcome = settle(a);
    a.cancel();
    expect((await aOutcome).state).toBe('rejected');
    expect(t.clock.live).toBe(1);
    await answer(t);
    await t.clock.advance(1000);
    expect(calls(t)).toEqual(['/r/0', '/r/2']);
    await answerAll(t);
    expect((await b).status).toBe(200);
    expect(t.clock.live).toBe(0);
  });

  it('a paused group’s job parked for budget goes back frozen; other work takes the budget', async () => {
    const t = schedulerClient({ concurrency: 4, rateLimit: { requests: 1, interval: 100 } });
    t.client.get('/r/0');
    const g = t.client.get('/g', { scheduler: { group: 'g' } });
    const o = t.client.get('/o');
    t.client.scheduler().pauseGroup('g');
    await answer(t);
    await t.clock.advance(100);
    await answerAll(t);
    await o;
    expect(calls(t)).toEqual(['/r/0', '/o']);
    expect(t.client.scheduler().stats()).toMatchObject({ queued: 1, delayed: 0, active: 0 });
    t.client.scheduler().resumeGroup('g');
    await t.clock.advance(100);
    await answerAll(t);
    expect((await g).status).toBe(200);
    expect(t.clock.live).toBe(0);
  });

  it('cancelAll while jobs are parked for budget leaves no timer and nothing live', async () => {
    const t = schedulerClient({ concurrency: 8, rateLimit: { requests: 2, interval: 1000 } });
    const all = Array.from({ length: 12 }, (_, i) => settle(t.client.get(`/r/${i}`)));
    expect(t.client.scheduler().stats()).toMatchObject({ active: 2, delayed: 6, queued: 4 });
    t.client.cancelAll();
    for (const r of await Promise.all(all)) expect(r.state).toBe('rejected');
    expectDrained(t, { rejected: 12 });
  });
});

describe('scheduler audit: pre-start circuit gate', () => {
  it('a job refused at the gate is counted rejected (dropped by the scheduler), not completed', async () => {
    const t = schedulerClient(
      { concurrency: 1 },
      { circuitBreaker: { failureThreshold: 1, resetTimeout: 60_000 }, retry: { attempts: 1 } },
    );
    const bad = settle(t.client.get('/fail?n=bad'));
    const queued = settle(t.client.get('/fail?n=ok'));
    await answer(t, '/fail?n=bad', jsonResponse({}, { status: 500 }));
    expect((await bad).state).toBe('rejected');
    const r = await queued;
    expect((r as { reason: unknown }).reason).toBeInstanceOf(CircuitOpenError);
    expect(t.client.scheduler().stats()).toMatchObject({ completed: 1, rejected: 1, active: 0 });
    // No request-rejected: that event is for cancellations.
    expect(t.of('request-rejected')).toEqual([]);
  });
});

describe('scheduler audit: transparent mode stats', () => {
  it('stay all zeros however many requests run, fail, join, hit the cache or are cancelled', async () => {
    for (const scheduler of [undefined, { enabled: false }]) {
      const t = schedulerClient(
        scheduler,
        { cache: { ttl: 60_000 }, circuitBreaker: { failureThreshold: 1, resetTimeout: 60_000 } },
        {
          handler: (c) =>
            c.url.includes('/hang')
              ? undefined
              : jsonResponse({ ok: true }, { status: c.url.includes('/gone') ? 500 : 200 }),
        },
      );
      await Promise.all([t.client.get('/plain'), t.client.get('/plain')]); // one owner, one joiner
      await t.client.get('/plain'); // a cache hit
      expect((await settle(t.client.get('/gone', { retry: false }))).state).toBe('rejected');
      expect((await settle(t.client.get('/gone'))).state).toBe('rejected'); // circuit open
      const hang = t.client.get('/hang');
      hang.cancel();
      await settle(hang);
      // The spec: "behaves exactly like a client without a scheduler", which has no jobs.
      expect(t.client.scheduler().stats()).toEqual({
        active: 0,
        queued: 0,
        delayed: 0,
        completed: 0,
        rejected: 0,
        lanes: { high: 0, normal: 0, low: 0 },
      });
      expect(t.events.filter((e) => e.name.startsWith('request-'))).toEqual([]);
    }
  });
});

describe('scheduler audit: groups', () => {
  it('cancelGroup cancels a running and a queued job of the group, and nothing else', async () => {
    const t = schedulerClient({ concurrency: 1 });
    const hold = settle(t.client.get('/hold', { scheduler: { group: 'g1' } }));
    const next = settle(t.client.get('/next', { scheduler: { group: 'g1' } }));
    const survivor = t.client.get('/survivor', { scheduler: { group: 'g2' } });
    t.client.scheduler().cancelGroup('g1');
    for (const p of [hold, next]) {
      expect(((await p) as { reason: unknown }).reason).toBeInstanceOf(CancelledError);
    }
    await answerAll(t);
    expect((await survivor).status).toBe(200);
    expect(t.client.scheduler().stats()).toMatchObject({ rejected: 2, completed: 1 });
    expect(calls(t)).toEqual(['/hold', '/survivor']);
  });

  it('a retry-after wait parks the job; pause + cancel of its group rejects it and its timer goes', async () => {
    const t = schedulerClient({ concurrency: 1 }, { retry: { attempts: 2 } });
    const flaky = settle(t.client.get('/flaky', { scheduler: { group: 'g' } }));
    await answer(t, '/flaky', jsonResponse({}, { status: 429, headers: { 'retry-after': '1' } }));
    expect(t.of('request-delayed')[0]).toMatchObject({ reason: 'retry-after', delay: 1000 });
    const doomed = settle(t.client.get('/doomed', { scheduler: { group: 'g' } }));
    t.client.scheduler().pauseGroup('g');
    t.client.scheduler().cancelGroup('g');
    await doomed;
    expect((await flaky).state).toBe('rejected');
    expect(
      t
        .of('request-rejected')
        .map((e) => new URL(e.url).pathname)
        .sort(),
    ).toEqual(['/doomed', '/flaky']);
    t.client.scheduler().resumeGroup('g');
    expect(t.of('queue-resumed')).toEqual([{ group: 'g' }]);
    expectDrained(t, { rejected: 2 });
    expect(debugOf(t.client)).toMatchObject({ flights: 0 });
  });
});

describe('scheduler audit: retry waits', () => {
  it('a Retry-After park frees the slot for other work; the retry fails with HttpError', async () => {
    const t = schedulerClient(
      { concurrency: 1 },
      { retry: { attempts: 2 } },
      {
        handler: (c) =>
          c.url.includes('/limited')
            ? jsonResponse({}, { status: 429, headers: { 'retry-after': '4' } })
            : jsonResponse({ ok: true }),
      },
    );
    const limited = settle(t.client.get('/limited'));
    const other = t.client.get('/other');
    await t.clock.advance(0);
    expect(calls(t)).toEqual(['/limited', '/other']);
    expect(t.client.scheduler().stats().active).toBe(0);
    await t.clock.advance(4000);
    const r = await limited;
    expect((r as { reason: unknown }).reason).toBeInstanceOf(HttpError);
    await other;
    expect(calls(t).filter((u) => u === '/limited')).toHaveLength(2);
    expect(t.clock.live).toBe(0);
  });
});

describe('scheduler audit: edges', () => {
  it('a deadline that runs out while the job is queued frees its place; stats count it completed', async () => {
    const t = schedulerClient({ concurrency: 1 });
    const first = t.client.get('/first');
    const late = settle(t.client.get('/late', { deadline: 500 }));
    const after = t.client.get('/after');
    expect(t.client.scheduler().stats()).toMatchObject({ active: 1, queued: 2 });
    await t.clock.advance(500);
    const r = await late;
    expect((r as { reason: Error }).reason.name).toBe('TimeoutError');
    expect(t.client.scheduler().stats()).toMatchObject({ active: 1, queued: 1, completed: 1 });
    await answerAll(t);
    await Promise.all([first, after]);
    expect(calls(t)).toEqual(['/first', '/after']);
    expectDrained(t, { completed: 3, rejected: 0 });
  });

  it('a throwing scheduler listener is reported and the job still runs', async () => {
    const errors: unknown[] = [];
    const t = schedulerClient({ concurrency: 1 }, { onError: (e) => errors.push(e) });
    t.client.on('request-started', () => {
      throw new Error('listener boom');
    });
    t.client.on('request-queued', () => {
      throw new Error('listener boom');
    });
    const a = t.client.get('/a');
    const b = t.client.get('/b');
    await answerAll(t);
    await Promise.all([a, b]);
    expect(errors.length).toBe(4);
    expectDrained(t, { completed: 2 });
  });

  it('a request-queued listener that pauses the job’s own group keeps it from starting', async () => {
    const t = schedulerClient({ concurrency: 2 });
    t.client.on('request-queued', (e) => {
      if (e.url.endsWith('/g')) t.client.scheduler().pauseGroup('g');
    });
    const g = t.client.get('/g', { scheduler: { group: 'g' } });
    const o = t.client.get('/o');
    expect(calls(t)).toEqual(['/o']);
    expect(t.client.scheduler().stats()).toMatchObject({ active: 1, queued: 1 });
    t.client.scheduler().resumeGroup('g');
    await answerAll(t);
    await Promise.all([g, o]);
    expectDrained(t, { completed: 2 });
  });

  it('a request-started listener that submits, prioritizes and cancels keeps the counts right', async () => {
    const t = schedulerClient({ concurrency: 1, priority: true });
    const spawned: Promise<unknown>[] = [];
    let n = 0;
    t.client.on('request-started', () => {
      if (n++ > 3) return;
      const p = t.client.get(`/spawn/${n}`, { priority: 'low', scheduler: { group: 's' } });
      spawned.push(settle(p));
      t.client.scheduler().prioritize('s', 'high');
      if (n === 2) p.cancel();
    });
    const a = t.client.get('/a');
    await answerAll(t);
    await a;
    await Promise.all(spawned);
    const s = t.client.scheduler().stats();
    expect(s.completed + s.rejected).toBe(1 + spawned.length);
    expect(s.rejected).toBe(1);
    expectDrained(t, {});
  });

  it('prioritize by request key moves only that job; to its own lane moves nothing', async () => {
    const t = schedulerClient({ concurrency: 1, priority: true });
    t.client.get('/blocker');
    t.client.get('/x', { priority: 'low' });
    t.client.get('/y', { priority: 'low' });
    const key = t.client.resolve('GET', '/y').key;
    expect(t.client.scheduler().prioritize(key, 'low')).toBe(0);
    expect(t.client.scheduler().prioritize(key, 'high')).toBe(1);
    expect(t.of('request-prioritized')).toEqual([
      expect.objectContaining({ key, from: 'low', to: 'high', priority: 'high' }),
    ]);
    expect(t.client.scheduler().stats().lanes).toEqual({ high: 1, normal: 0, low: 1 });
    await answerAll(t);
    expect(calls(t)).toEqual(['/blocker', '/y', '/x']);
  });

  it('prioritize by request key takes the key in any spelling a hand-written key may have', async () => {
    const t = schedulerClient({ concurrency: 1, priority: true });
    t.client.get('/blocker');
    t.client.get('/x', { priority: 'low' });
    t.client.get('/y', { params: { b: 1, a: 2 }, priority: 'low' });
    t.client.get('/y', { params: { b: 1, a: 2 }, priority: 'low', headers: { 'X-A': '1' } });
    // The key is `GET /y?a=2&b=1`: absolute, the query in another order, a lower-case method.
    expect(t.client.scheduler().prioritize('get https://API.test:443/y?b=1&a=2', 'high')).toBe(1);
    expect(t.client.scheduler().prioritize('GET /y?b=1&a=2 |h x-a:1', 'high')).toBe(1);
    expect(t.of('request-prioritized').map((e) => e.key)).toEqual([
      'GET /y?a=2&b=1',
      'GET /y?a=2&b=1 |h x-a:1',
    ]);
    // A group name that is not a key still matches as written.
    t.client.get('/z', { priority: 'low', scheduler: { group: 'GET bulk |x' } });
    expect(t.client.scheduler().prioritize('GET bulk |x', 'high')).toBe(1);
    await answerAll(t);
    expect(calls(t)).toEqual(['/blocker', '/y?b=1&a=2', '/y?b=1&a=2', '/z', '/x']);
  });

  it('rejects bad controller arguments with typed errors, and leaves no state behind', () => {
    const t = schedulerClient({ concurrency: 1, priority: true });
    const s = t.client.scheduler();
    for (const bad of [undefined, 1, null, {}]) {
      expect(() => s.pauseGroup(bad as never)).toThrow(TypeError);
      expect(() => s.resumeGroup(bad as never)).toThrow(TypeError);
      expect(() => s.cancelGroup(bad as never)).toThrow(TypeError);
      expect(() => t.client.cancelGroup(bad as never)).toThrow(TypeError);
      expect(() => s.prioritize(bad as never, 'high')).toThrow(TypeError);
    }
    expect(() => s.prioritize('g', 'urgent' as never)).toThrow(RangeError);
    expect(() => s.prioritize('g', undefined as never)).toThrow();
    s.pauseGroup('idle');
    s.resumeGroup('idle');
    expect(inspect(t.client).scheduler().pausedGroups).toEqual([]);
    expect(t.events).toEqual([
      { name: 'queue-paused', payload: { group: 'idle' } },
      { name: 'queue-resumed', payload: { group: 'idle' } },
    ]);
  });

  it('per-host caps: an uncapped host is not limited by another host’s cap', async () => {
    const t = schedulerClient({ concurrency: 3, hosts: { 'a.test': 1 } });
    for (let i = 0; i < 3; i++) t.client.get(`https://a.test/${i}`);
    for (let i = 0; i < 3; i++) t.client.get(`https://b.test/${i}`);
    expect(calls(t)).toEqual(['a.test/0', 'b.test/0', 'b.test/1']);
    await answerAll(t);
    expect(calls(t)).toHaveLength(6);
    expectDrained(t, { completed: 6 });
  });
});

describe('scheduler audit: host cap keys', () => {
  it.each(['https://api.test', 'api.test:8443', 'api.test/v1', '', 'user@api.test'])(
    'a `hosts` key that is no hostname (%j) is a RangeError, not a cap that never applies',
    (key) => {
      const create = () =>
        createClient({ fetch: async () => jsonResponse({}), scheduler: { hosts: { [key]: 1 } } });
      expect(create).toThrow(RangeError);
      expect(create).toThrow(/`scheduler\.hosts` must be keyed by hostname/);
    },
  );

  it('a Map of caps (its entries are no own properties) is a TypeError, not a client without caps', () => {
    const create = () =>
      createClient({
        fetch: async () => jsonResponse({}),
        scheduler: { hosts: new Map([['api.test', 1]]) as never },
      });
    expect(create).toThrow(TypeError);
    expect(create).toThrow(/`scheduler\.hosts` must be a plain object/);
  });

  it('a key is matched as URLs write hostnames: case, IDN (punycode) and bracketed IPv6', async () => {
    const t = schedulerClient({
      concurrency: 8,
      hosts: { 'BÜCHER.test': 1, '[::1]': 1, 'api.test:80': 1 },
    });
    for (let i = 0; i < 2; i++) {
      t.client.get(`https://bücher.test/${i}`);
      t.client.get(`http://[::1]:8080/${i}`);
      t.client.get(`http://api.test/${i}`);
    }
    expect(t.fake.calls).toHaveLength(3);
    await answerAll(t);
    expect(t.fake.calls).toHaveLength(6);
  });

  it('a fully qualified hostname (trailing dot) is the same host: one host, one cap', async () => {
    // `api.test.` and `api.test` name one host (DNS), which URLs keep apart: every spelling of it
    // (case, default port, userinfo, the root dot) shares one cap, whichever the key has.
    for (const key of ['api.test', 'api.test.', 'API.TEST.']) {
      const t = schedulerClient({ concurrency: 8, hosts: { [key]: 1 } });
      const urls = [
        'https://api.test/a',
        'https://api.test./b',
        'https://API.TEST.:443/c',
        'https://user:pw@api.test./d',
      ];
      for (const url of urls) t.client.get(url);
      expect(calls(t)).toEqual(['/a']);
      await answerAll(t);
      expect(t.fake.calls).toHaveLength(4);
      expectDrained(t, { completed: 4 });
    }
  });
});

describe('scheduler audit: jobs parked for budget, other ends', () => {
  it('a deadline that runs out while parked for budget ends the job and keeps the timer for the rest', async () => {
    const t = schedulerClient({ concurrency: 4, rateLimit: { requests: 1, interval: 1000 } });
    const first = t.client.get('/r/0');
    const late = settle(t.client.get('/r/1', { deadline: 300 }));
    const other = t.client.get('/r/2');
    expect(t.client.scheduler().stats()).toMatchObject({ active: 1, delayed: 2 });
    await t.clock.advance(300);
    expect(((await late) as { reason: Error }).reason.name).toBe('TimeoutError');
    expect(t.client.scheduler().stats()).toMatchObject({ active: 1, delayed: 1, completed: 1 });
    await answer(t);
    await first;
    await t.clock.advance(700);
    await answerAll(t);
    await other;
    expect(calls(t)).toEqual(['/r/0', '/r/2']);
    expectDrained(t, { completed: 3 });
  });

  it('prioritize leaves a job parked for budget alone (it is not queued)', async () => {
    const t = schedulerClient({
      concurrency: 2,
      priority: true,
      rateLimit: { requests: 1, interval: 1000 },
    });
    t.client.get('/r/0');
    t.client.get('/r/1', { priority: 'low', scheduler: { group: 'g' } });
    expect(t.client.scheduler().stats()).toMatchObject({ delayed: 1, queued: 0 });
    expect(t.client.scheduler().prioritize('g', 'high')).toBe(0);
    expect(t.of('request-prioritized')).toEqual([]);
  });
});

describe('scheduler audit: the rate budget counts attempts', () => {
  it('a job cancelled by a request-dequeued listener as it leaves the queue spends no budget', async () => {
    const t = schedulerClient({ concurrency: 1, rateLimit: { requests: 2, interval: 1000 } });
    const first = t.client.get('/first');
    const doomed = t.client.get('/doomed');
    const outcome = settle(doomed);
    t.client.on('request-dequeued', (e) => {
      if (e.url.endsWith('/doomed')) doomed.cancel();
    });
    const next = t.client.get('/next');
    await answer(t, '/first');
    await first;
    expect((await outcome).state).toBe('rejected');
    // No attempt was made for /doomed: the second unit of budget went to /next, at once.
    expect(calls(t)).toEqual(['/first', '/next']);
    expect(t.of('request-delayed')).toEqual([]);
    await answerAll(t);
    expect((await next).status).toBe(200);
    expectDrained(t, { completed: 2, rejected: 1 });
  });
});

describe('scheduler audit: re-entrant storm under a rate limit', () => {
  // Seeds 1..STORM_SEEDS (default 12) of the shared prng; run more locally: STORM_SEEDS=200.
  it.each(Array.from({ length: Number(process.env.STORM_SEEDS ?? 12) }, (_, i) => i + 1))(
    'seed %i: listeners that cancel, pause, resume, prioritize and submit keep every count',
    async (seed) => {
      const next = prng(seed);
      const rand = (n: number) => Math.floor(next() * n);
      const t = schedulerClient(
        {
          concurrency: 3,
          priority: true,
          hosts: { 'a.test': 1 },
          rateLimit: { requests: 2, interval: 100 },
        },
        { retry: { attempts: 2, baseDelay: 30 } },
        { handler: () => (rand(4) === 0 ? jsonResponse({}, { status: 503 }) : jsonResponse({})) },
      );
      const live: { p: Promise<unknown> & { cancel(): void } }[] = [];
      const outcomes: Promise<unknown>[] = [];
      const group = () => (rand(2) === 0 ? 'g1' : 'g2');
      const prios = ['high', 'normal', 'low'] as const;
      let made = 0;
      const submit = () => {
        const i = made++;
        const host = rand(2) === 0 ? 'https://a.test' : 'https://api.test';
        const p = t.client.get(`${host}/s/${i}`, {
          priority: prios[rand(3)],
          scheduler: rand(3) === 0 ? undefined : { group: group() },
        });
        live.push({ p });
        outcomes.push(settle(p));
      };
      const problems: string[] = [];
      let jobs = 0;
      t.client.on('request', () => jobs++);
      // Inside a listener, `request` events of jobs submitted meanwhile may still wait for their
      // delivery (after the event being delivered): the stats can be ahead of `jobs`, never
      // behind. Between deliveries (`settled`) they match exactly.
      const check = (name: string, settled = false) => {
        const s = t.client.scheduler().stats();
        const total = s.active + s.queued + s.delayed + s.completed + s.rejected;
        if (settled ? total !== jobs : total < jobs) {
          problems.push(`${name}: ${JSON.stringify(s)} vs ${jobs}`);
        }
        if (s.active > 3) problems.push(`${name}: active ${s.active}`);
      };
      for (const name of SCHEDULER_EVENTS) {
        t.client.on(name, () => {
          check(name);
          if (made >= 60) return;
          const r = rand(10);
          if (r === 0) live[rand(live.length)]?.p.cancel();
          else if (r === 1) t.client.scheduler().pauseGroup(group());
          else if (r === 2) t.client.scheduler().resumeGroup(group());
          else if (r === 3) t.client.scheduler().prioritize(group(), prios[rand(3)]!);
          else if (r === 4) submit();
          check(`${name} after`);
        });
      }
      // Hears every event after the storm's listeners: what re-entrancy reorders, it sees.
      const last = recordEvents(t.client, [...SCHEDULER_EVENTS]);
      for (let i = 0; i < 20; i++) submit();
      check('submitted', true);
      for (
        let round = 0;
        round < 200 &&
        t.fake.pending().length +
          t.client.scheduler().stats().queued +
          t.client.scheduler().stats().delayed >
          0;
        round++
      ) {
        for (const g of ['g1', 'g2']) t.client.scheduler().resumeGroup(g);
        await t.clock.advance(50);
        check(`round ${round}`, true);
      }
      await Promise.all(outcomes);
      expect(problems).toEqual([]);
      const s = t.client.scheduler().stats();
      expect(s.completed + s.rejected).toBe(jobs);
      expect(jobs).toBeGreaterThan(20);
      const delays = t.of('request-delayed');
      expect(delays.filter((e) => e.reason === 'rate-limit').length).toBeGreaterThan(5);
      expect(delays.some((e) => e.reason === 'backoff')).toBe(true);
      // As the first listener and the last hear them: every request-queued is matched by
      // exactly one later request-dequeued.
      for (const [who, events] of [
        ['first', t.events],
        ['last', last.events],
      ] as const) {
        const open = new Map<number, number>();
        for (const e of events) {
          if (e.name !== 'request-queued' && e.name !== 'request-dequeued') continue;
          const n = (open.get(e.payload.id) ?? 0) + (e.name === 'request-queued' ? 1 : -1);
          if (n < 0 || n > 1) problems.push(`${who}: ${e.name} ${e.payload.id}: ${n}`);
          open.set(e.payload.id, n);
        }
        if (![...open.values()].every((n) => n === 0)) problems.push(`${who}: a job left queued`);
      }
      expect(problems).toEqual([]);
      expectDrained(t, {});
      expect(debugOf(t.client)).toMatchObject({ flights: 0, inflight: 0 });
    },
  );
});
