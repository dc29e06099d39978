import { describe, expect, it } from 'vitest';
import { CancelledError, type ClientOptions } from '../src/index';
import { debugOf, jsonResponse, makeClient, settle, type TestClient } from './helpers';
import {
  answer,
  answerAll,
  calls,
  SCHEDULER_EVENTS,
  schedulerClient,
  short,
  timeline,
} from './scheduler.helpers';

const g = (group: string) => ({ scheduler: { group } });

describe('scheduler: groups', () => {
  it('pauseGroup freezes the group’s queued jobs; running ones finish; resumeGroup re-admits them', async () => {
    const t = schedulerClient({ concurrency: 1 });
    const all = [
      t.client.get('/g/1', g('g')),
      t.client.get('/g/2', g('g')),
      t.client.get('/p/1'),
      t.client.get('/g/3', g('g')),
      t.client.get('/p/2'),
    ];
    t.client.scheduler().pauseGroup('g');
    t.client.scheduler().pauseGroup('g'); // already paused: no second event
    expect(t.of('queue-paused')).toEqual([{ group: 'g' }]);
    await answer(t, '/g/1'); // running work finishes
    await answerAll(t);
    expect(calls(t)).toEqual(['/g/1', '/p/1', '/p/2']);
    expect(t.client.scheduler().stats()).toMatchObject({ active: 0, queued: 2, completed: 3 });
    // A new job of the paused group waits too; other work goes on.
    all.push(t.client.get('/g/4', g('g')), t.client.get('/p/3'));
    expect(calls(t)).toEqual(['/g/1', '/p/1', '/p/2', '/p/3']);
    await answerAll(t);
    t.client.scheduler().resumeGroup('g');
    expect(t.of('queue-resumed')).toEqual([{ group: 'g' }]);
    await answerAll(t);
    expect(calls(t).slice(4)).toEqual(['/g/2', '/g/3', '/g/4']);
    await Promise.all(all);
    expect(t.client.scheduler().stats()).toMatchObject({ completed: 7, queued: 0 });
  });

  it('cancelGroup rejects queued, parked and running jobs of the group with CancelledError', async () => {
    const t = schedulerClient({ concurrency: 2 }, { retry: { attempts: 3, baseDelay: 100 } });
    const parked = t.client.get('/g/parked', g('g'));
    const running = t.client.get('/g/running', g('g'));
    const queued = t.client.get('/g/queued', g('g'));
    const other = t.client.get('/other');
    await answer(t, '/g/parked', jsonResponse({}, { status: 503 }));
    expect(calls(t)).toEqual(['/g/parked', '/g/running', '/g/queued']);
    // parked (retry wait), running, and queued behind them: /other
    expect(t.client.scheduler().stats()).toMatchObject({ active: 2, queued: 1, delayed: 1 });
    const runningCall = t.fake.pending().find((c) => short(c.url) === '/g/running')!;
    const mark = t.events.length;

    t.client.cancelGroup('g');

    for (const p of [parked, running, queued]) {
      const r = await settle(p);
      expect(r.state).toBe('rejected');
      expect((r as { reason: unknown }).reason).toBeInstanceOf(CancelledError);
      expect(String((r as { reason: Error }).reason.message)).toContain('"g"');
    }
    expect(runningCall.signal?.aborted).toBe(true);
    const after = t.events.slice(mark);
    expect(after.filter((e) => e.name === 'request-rejected').map((e) => e.payload)).toEqual([
      expect.objectContaining({ reason: 'cancelled', url: 'https://api.test/g/parked' }),
      expect.objectContaining({ reason: 'cancelled', url: 'https://api.test/g/running' }),
      expect.objectContaining({ reason: 'cancelled', url: 'https://api.test/g/queued' }),
    ]);
    // Only /other started after the cancel: no job of the group started just to be dropped.
    expect(
      after
        .filter((e) => e.name === 'request-started')
        .map((e) => short((e.payload as { url: string }).url)),
    ).toEqual(['/other']);
    expect(t.client.scheduler().stats()).toMatchObject({
      active: 1,
      queued: 0,
      delayed: 0,
      rejected: 3,
    });
    expect(t.clock.live).toBe(0);
    await answerAll(t);
    expect((await other).status).toBe(200);
    expect(debugOf(t.client).flights).toBe(0);
  });

  it('a group cancel also rejects joiners and internal refetches of its flights', async () => {
    const t = schedulerClient({ concurrency: 1 });
    const owner = t.client.get('/j', g('g'));
    const joiner = t.client.get('/j', g('g'));
    t.client.cancelGroup('g');
    expect((await settle(owner)).state).toBe('rejected');
    expect((await settle(joiner)).state).toBe('rejected');
    expect(t.of('cancel').map((e) => e.final)).toEqual([false, true]);
    expect(t.of('request-rejected')).toHaveLength(1);
  });

  // Chaos lead, decided (README, Groups): a read in flight is one job, in its starter's group for
  // as long as it lives. A joiner that named no group stays in it after the starter left: the
  // job's queue place, pause and slot are the group's, so its cancel is too.
  it('a joiner stays in the group of the job it joined after the starter left: paused and cancelled with it', async () => {
    const t = schedulerClient({ concurrency: 1 });
    const blocker = settle(t.client.get('/b'));
    const owner = t.client.get('/j', g('g'));
    const joiner = settle(t.client.get('/j'));
    owner.cancel();
    expect((await settle(owner)).state).toBe('rejected');
    // The flight lives on for the joiner, still queued in group g: pausing g holds it.
    expect(t.client.scheduler().stats()).toMatchObject({ active: 1, queued: 1, rejected: 0 });
    t.client.scheduler().pauseGroup('g');
    await answer(t, '/b');
    expect(await blocker).toMatchObject({ state: 'fulfilled' });
    expect(calls(t)).toEqual(['/b']);
    t.client.cancelGroup('g');
    expect(await joiner).toMatchObject({ reason: expect.any(CancelledError) });
    expect(String(((await joiner) as { reason: Error }).reason.message)).toContain('"g"');
    expect(t.of('request-rejected')).toHaveLength(1);
    expect(t.client.scheduler().stats()).toMatchObject({ active: 0, queued: 0, rejected: 1 });
    expect(debugOf(t.client)).toMatchObject({ flights: 0, inflight: 0 });
    t.client.scheduler().resumeGroup('g');
  });

  it('cancelGroup of an unknown group, pause/resume of an idle group: harmless', () => {
    const t = schedulerClient({});
    t.client.cancelGroup('nobody');
    t.client.scheduler().resumeGroup('nobody');
    expect(t.of('queue-resumed')).toEqual([]);
    expect(() => t.client.scheduler().pauseGroup(3 as never)).toThrow(TypeError);
  });
});

describe('scheduler: prioritize', () => {
  it('moves queued jobs of a group to another lane and returns how many moved', async () => {
    const t = schedulerClient({ concurrency: 1, priority: true });
    t.client.get('/blocker', { priority: 'low' });
    t.client.get('/n/1');
    t.client.get('/bg/1', { priority: 'low', ...g('bg') });
    t.client.get('/n/2');
    t.client.get('/bg/2', { priority: 'low', ...g('bg') });
    t.client.get('/bg/3', { priority: 'high', ...g('bg') }); // already high: not moved
    expect(t.client.scheduler().prioritize('bg', 'high')).toBe(2);
    expect(
      t.of('request-prioritized').map((e) => [short(e.url), e.from, e.to, e.priority]),
    ).toEqual([
      ['/bg/1', 'low', 'high', 'high'],
      ['/bg/2', 'low', 'high', 'high'],
    ]);
    expect(t.client.scheduler().stats().lanes).toEqual({ high: 3, normal: 2, low: 0 });
    await answerAll(t);
    // Moved jobs join the back of the high lane in their arrival order.
    expect(calls(t).slice(1)).toEqual(['/bg/3', '/bg/1', '/bg/2', '/n/1', '/n/2']);
  });

  it('moves a job by its request key', async () => {
    const t = schedulerClient({ concurrency: 1, priority: true });
    t.client.get('/blocker', { priority: 'low' });
    t.client.get('/a');
    t.client.get('/b');
    const key = t.client.resolve('GET', '/b').key;
    expect(t.client.scheduler().prioritize(key, 'high')).toBe(1);
    expect(t.client.scheduler().prioritize('no-such-key', 'high')).toBe(0);
    await answerAll(t);
    expect(calls(t)).toEqual(['/blocker', '/b', '/a']);
  });

  it('leaves running and parked jobs alone', async () => {
    const t = schedulerClient({ concurrency: 1, priority: true }, { retry: { attempts: 2 } });
    t.client.get('/x', { priority: 'low', ...g('x') });
    expect(t.client.scheduler().prioritize('x', 'high')).toBe(0);
    await answer(t, '/x', jsonResponse({}, { status: 503 }));
    expect(t.client.scheduler().stats().delayed).toBe(1);
    expect(t.client.scheduler().prioritize('x', 'high')).toBe(0);
  });

  it('requires priority:true, and a valid lane', () => {
    const t = schedulerClient({ concurrency: 1 });
    expect(() => t.client.scheduler().prioritize('g', 'high')).toThrow(/priority: true/);
    const p = schedulerClient({ priority: true });
    expect(() => p.client.scheduler().prioritize('g', 'urgent' as never)).toThrow(RangeError);
  });
});

describe('scheduler: cancellation', () => {
  it('a caller cancel of a queued job rejects it at once; it never starts', async () => {
    const t = schedulerClient({ concurrency: 1 });
    t.client.get('/1');
    const two = t.client.get('/2');
    two.cancel();
    expect(t.client.scheduler().stats()).toMatchObject({ queued: 0, rejected: 1 });
    expect(timeline(t).slice(-3)).toEqual([
      'request-queued /2',
      'request-dequeued /2',
      'request-rejected /2',
    ]);
    expect((await settle(two)).state).toBe('rejected');
    await answerAll(t);
    expect(calls(t)).toEqual(['/1']);
  });

  it('a caller cancel of a running job frees its slot at once', async () => {
    const t = schedulerClient({ concurrency: 1 });
    const one = t.client.get('/1');
    const two = t.client.get('/2');
    one.cancel();
    expect(t.client.scheduler().stats()).toMatchObject({ active: 1, queued: 0, rejected: 1 });
    expect(timeline(t).slice(-2)).toEqual(['request-dequeued /2', 'request-started /2']);
    expect((await settle(one)).state).toBe('rejected');
    await answerAll(t);
    expect(calls(t)).toEqual(['/1', '/2']);
    expect((await two).status).toBe(200);
  });

  it('cancelAll drains the scheduler: nothing starts, every job is rejected', async () => {
    const t = schedulerClient(
      { concurrency: 2, rateLimit: { requests: 3, interval: 1000 } },
      { retry: { attempts: 2 } },
    );
    const all = Array.from({ length: 8 }, (_, i) => t.client.get(`/c/${i}`));
    const settled = Promise.allSettled(all);
    await answer(t, '/c/0', jsonResponse({}, { status: 503 })); // parked for backoff
    await answer(t, '/c/1'); // its slot goes to /c/3, which must wait for rate budget
    expect(t.client.scheduler().stats()).toMatchObject({ active: 1, delayed: 2, queued: 4 });
    expect(t.of('request-delayed').map((e) => e.reason)).toEqual(['backoff', 'rate-limit']);
    const mark = t.events.length;
    t.client.cancelAll();
    expect(t.events.slice(mark).filter((e) => e.name === 'request-started')).toEqual([]);
    expect(t.client.scheduler().stats()).toMatchObject({
      active: 0,
      queued: 0,
      delayed: 0,
      rejected: 7,
      completed: 1,
    });
    expect(t.clock.live).toBe(0);
    const results = await settled;
    expect(results.filter((r) => r.status === 'rejected')).toHaveLength(7);
    await t.clock.advance(0); // the aborted attempts unwind
    expect(debugOf(t.client).flights).toBe(0);
  });

  it('leaves no timer, flight or listener behind after many jobs with cancels and retries', async () => {
    const t = schedulerClient(
      {
        concurrency: 3,
        priority: true,
        hosts: { 'api.test': 2 },
        rateLimit: { requests: 5, interval: 200 },
      },
      { retry: { attempts: 2, baseDelay: 30 } },
      { handler: (c) => (c.index % 7 === 3 ? jsonResponse({}, { status: 503 }) : undefined) },
    );
    const all: Promise<unknown>[] = [];
    for (let i = 0; i < 300; i++) {
      const p = t.client.get(`/m/${i}`, {
        priority: (['high', 'normal', 'low'] as const)[i % 3],
        ...(i % 5 === 0 ? g('five') : {}),
      });
      all.push(p.catch(() => undefined));
      if (i % 11 === 0) p.cancel();
    }
    t.client.cancelGroup('five');
    for (
      let i = 0;
      i < 400 &&
      t.client.scheduler().stats().completed + t.client.scheduler().stats().rejected < 300;
      i++
    ) {
      for (const c of t.fake.pending()) c.respond(jsonResponse({}));
      await t.clock.advance(50);
    }
    await Promise.all(all);
    const s = t.client.scheduler().stats();
    expect(s.completed + s.rejected).toBe(300);
    expect(s).toMatchObject({ active: 0, queued: 0, delayed: 0 });
    expect(t.clock.live).toBe(0);
    expect(debugOf(t.client)).toMatchObject({ flights: 0, inflight: 0 });
  });
});

describe('scheduler: transparent mode', () => {
  /** One scripted scenario: reads, a dedup join, a retry, a cancel, a mutation, a group. */
  async function scenario(options: ClientOptions, groupCancel = true): Promise<TestClient> {
    const t = makeClient(
      { ...options, retry: { attempts: 2, baseDelay: 100 } },
      {
        handler: (call) =>
          call.url.endsWith('/flaky') && call.index < 3
            ? jsonResponse({ n: call.index }, { status: 503 })
            : jsonResponse({ n: call.index }),
      },
    );
    const all = [
      t.client.get('/a', { priority: 'high', ...g('g') }),
      t.client.get('/a'),
      t.client.get('/flaky'),
      t.client.get('/c', { priority: 'low' }),
      t.client.post('/p', { x: 1 }),
    ];
    const settled = Promise.allSettled(all);
    all[3]!.cancel();
    if (groupCancel) t.client.cancelGroup('g');
    await t.clock.advance(500);
    await settled;
    return t;
  }

  const shape = (t: TestClient) =>
    t.events.map((e) => {
      const p = e.payload as { key?: string; final?: boolean; delay?: number };
      return [e.name, p.key, p.final, p.delay];
    });

  it('emits exactly the event stream of a client without a scheduler, and no scheduler event', async () => {
    const none = await scenario({});
    const disabled = await scenario({ scheduler: { enabled: false, concurrency: 1 } });
    const disabledPriority = await scenario({ scheduler: { enabled: false, priority: true } });
    expect(shape(disabled)).toEqual(shape(none));
    expect(shape(disabledPriority)).toEqual(shape(none));
    expect(none.events.filter((e) => SCHEDULER_EVENTS.includes(e.name))).toEqual([]);
    expect(none.events.length).toBeGreaterThan(8);
    // Without a group cancel (a no-op in transparent mode), an enabled scheduler with room for
    // every job adds its own events around the same client events.
    const plain = await scenario({}, false);
    const enabled = await scenario({ scheduler: {} }, false);
    expect(shape(enabled).filter(([n]) => !SCHEDULER_EVENTS.includes(n as never))).toEqual(
      shape(plain),
    );
    expect(enabled.events.some((e) => SCHEDULER_EVENTS.includes(e.name))).toBe(true);
  });

  it('has a controller with zero stats and no-op group operations', () => {
    const t = makeClient({});
    const s = t.client.scheduler();
    expect(s).toBe(t.client.scheduler());
    t.client.get('/x', g('g'));
    expect(s.stats()).toEqual({
      active: 0,
      queued: 0,
      delayed: 0,
      completed: 0,
      rejected: 0,
      lanes: { high: 0, normal: 0, low: 0 },
    });
    s.pauseGroup('g');
    s.resumeGroup('g');
    t.client.cancelGroup('g');
    expect(t.fake.pending()).toHaveLength(1);
    expect(() => s.prioritize('g', 'high')).toThrow(/priority: true/);
    const p = makeClient({ scheduler: { enabled: false, priority: true } });
    expect(p.client.scheduler().prioritize('g', 'high')).toBe(0);
  });
});

describe('scheduler: re-entrant callers', () => {
  // Chaos monkey (test/chaos/pipeline.chaos.test.ts, seed 4408): a request made from a `cancel`
  // listener joined the flight being group-cancelled, after the cancel loop had taken its
  // snapshot; the job was dropped (slot freed, `request-rejected`) while its attempt ran on.
  it('a request made from a cancel listener during cancelGroup starts its own flight, never past the cap', async () => {
    const t = schedulerClient({ concurrency: 1 }, { retry: false });
    const owner = settle(t.client.get('/x', g('g')));
    const joiner = settle(t.client.get('/x'));
    await t.clock.advance(0);
    expect(calls(t)).toEqual(['/x']);
    let late: Promise<unknown> | undefined;
    t.client.on('cancel', () => {
      late ??= t.client.get('/x');
    });
    t.client.cancelGroup('g');
    await t.clock.advance(0);
    // The cancelled flight's attempt is aborted before another one takes the only slot.
    expect(t.fake.calls[0]!.signal?.aborted).toBe(true);
    expect(t.fake.pending().length).toBeLessThanOrEqual(1);
    expect(calls(t)).toEqual(['/x', '/x']);
    expect(await owner).toMatchObject({ reason: expect.any(CancelledError) });
    expect(await joiner).toMatchObject({ reason: expect.any(CancelledError) });
    await answerAll(t);
    expect(await late).toMatchObject({ status: 200 });
    expect(t.client.scheduler().stats()).toMatchObject({ active: 0, completed: 1, rejected: 1 });
    expect(debugOf(t.client)).toMatchObject({ flights: 0, inflight: 0 });
  });

  it('a request made from a cancel listener during cancelAll does not keep the cancelled flight alive', async () => {
    const t = makeClient({ retry: false, cache: { enabled: false } });
    const first = settle(t.client.get('/x'));
    const second = settle(t.client.get('/x'));
    let late: Promise<unknown> | undefined;
    t.client.on('cancel', () => {
      late ??= t.client.get('/x');
    });
    t.client.cancelAll();
    await t.clock.advance(0);
    // Every flight that was live when cancelAll ran is aborted; the late request has its own.
    expect(t.fake.calls[0]!.signal?.aborted).toBe(true);
    expect(t.fake.calls).toHaveLength(2);
    expect(await first).toMatchObject({ reason: expect.any(CancelledError) });
    expect(await second).toMatchObject({ reason: expect.any(CancelledError) });
    t.fake.calls[1]!.json({ fresh: true });
    expect(await late).toMatchObject({ data: { fresh: true } });
    expect(debugOf(t.client)).toMatchObject({ flights: 0, inflight: 0 });
  });

  // Chaos lead: cancelGroup dropped, itself, a job whose flight was still live after the client
  // cancelled its callers. Since the flight leaves the dedup map before its callers are
  // cancelled, nothing can join it meanwhile, so that happens only for a flight already ending:
  // from a listener of its `success` or `error`, where the dropped job was counted rejected
  // (with `request-rejected`) though its attempt had ended and its outcome was reported.
  it.each(['success', 'error'] as const)(
    'cancelGroup from a %s listener: the ended job counts completed, never rejected',
    async (name) => {
      const t = schedulerClient({ concurrency: 1 }, { retry: { attempts: 1 } });
      const owner = settle(t.client.get('/x', g('g')));
      t.client.on(name, () => t.client.cancelGroup('g'));
      await t.clock.advance(0);
      await answer(t, '/x', jsonResponse({}, { status: name === 'success' ? 200 : 500 }));
      // Its caller was still attached: the cancel reaches it, as a `cancel()` would there.
      expect(await owner).toMatchObject({ reason: expect.any(CancelledError) });
      expect(t.of('request-rejected')).toEqual([]);
      expect(t.client.scheduler().stats()).toMatchObject({ active: 0, completed: 1, rejected: 0 });
      expect(debugOf(t.client)).toMatchObject({ flights: 0, inflight: 0 });
    },
  );

  it('cancelGroup from the final cancel listener of its own job rejects the job once', async () => {
    const t = schedulerClient({ concurrency: 1 }, { retry: { attempts: 1 } });
    const owner = t.client.get('/x', g('g'));
    const next = settle(t.client.get('/y'));
    await t.clock.advance(0);
    t.client.on('cancel', () => t.client.cancelGroup('g'));
    owner.cancel();
    expect((await settle(owner)).state).toBe('rejected');
    expect(t.fake.calls[0]!.signal?.aborted).toBe(true);
    expect(t.of('request-rejected')).toHaveLength(1);
    expect(t.client.scheduler().stats()).toMatchObject({ active: 1, rejected: 1 });
    await answerAll(t);
    expect(await next).toMatchObject({ value: { status: 200 } });
    expect(t.client.scheduler().stats()).toMatchObject({ active: 0, completed: 1, rejected: 1 });
  });

  it('a fetch that cancels a queued request and issues a new one as it starts leaves the scheduler consistent', async () => {
    let late: Promise<unknown> | undefined;
    let third: { cancel(): void } | undefined;
    const t = schedulerClient(
      { concurrency: 1 },
      {},
      {
        handler: (call) => {
          // Runs as /b is started by /a's completion: no attempt runs inside the dispatch loop,
          // so this re-enters a scheduler that has finished its own bookkeeping.
          if (short(call.url) === '/b') {
            third?.cancel();
            late = t.client.get('/d');
          }
          return undefined; // answered by the test
        },
      },
    );
    const a = t.client.get('/a');
    const b = t.client.get('/b');
    const c = t.client.get('/c');
    const cSettled = settle(c);
    third = c;
    expect(t.client.scheduler().stats()).toMatchObject({ active: 1, queued: 2 });
    await answer(t, '/a');
    expect(calls(t)).toEqual(['/a', '/b']);
    expect(t.client.scheduler().stats()).toMatchObject({
      active: 1,
      queued: 1,
      completed: 1,
      rejected: 1,
    });
    await answerAll(t);
    expect(calls(t)).toEqual(['/a', '/b', '/d']);
    expect(await cSettled).toMatchObject({
      state: 'rejected',
      reason: expect.any(CancelledError),
    });
    await Promise.all([a, b, late]);
    expect(t.client.scheduler().stats()).toMatchObject({
      active: 0,
      queued: 0,
      delayed: 0,
      completed: 3,
      rejected: 1,
    });
    expect(debugOf(t.client)).toMatchObject({ flights: 0, inflight: 0 });
  });

  it('a job cancelled by a request-started listener as it gets its slot makes no attempt', async () => {
    const t = schedulerClient({ concurrency: 1 });
    const a = t.client.get('/a');
    const b = t.client.get('/b');
    const bSettled = settle(b);
    const c = t.client.get('/c');
    const bKey = t.client.resolve('GET', '/b').key;
    t.client.on('request-started', (e) => {
      if (e.key === bKey) b.cancel();
    });
    await answer(t, '/a');
    await answerAll(t);
    expect(await bSettled).toMatchObject({
      state: 'rejected',
      reason: expect.any(CancelledError),
    });
    expect(calls(t)).toEqual(['/a', '/c']);
    await Promise.all([a, c]);
    expect(t.client.scheduler().stats()).toMatchObject({
      active: 0,
      queued: 0,
      delayed: 0,
      completed: 2,
      rejected: 1,
    });
    expect(debugOf(t.client)).toMatchObject({ flights: 0, inflight: 0 });
  });
});
