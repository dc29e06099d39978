/**
 * Spec conformance, black box (see spec-conformance.test.ts): the request scheduler as the client
 * spec (SchedulerOptions, SchedulerStats, scheduler job states, SchedulerController, the
 * `request-*` / `queue-*` events, Limits, Versioning 3) and issue #4 state it, for what the
 * scheduler.* suites did not pin: defaults, every stat at each point of a job's life, exact
 * payloads, cancellation in every job state by every means, unknown groups and selectors, option
 * values at and beyond their limits, and listeners that throw or call back into the client.
 * Public exports only, an injected fetch, vitest's fake timers (the default clock reads them).
 */
import { afterEach, beforeEach, describe, expect, test, vi } from 'vitest';
import {
  CancelledError,
  type Client,
  type ClientEventName,
  type ClientOptions,
  createClient,
  isAbortError,
  type SchedulerOptions,
} from '../src/index';
import { createTestClient } from './helpers';
import { BASE, SCHEDULER_EVENTS } from './spec-fixtures';

interface Call {
  path: string;
  signal: AbortSignal | undefined;
  answer(status?: number, headers?: Record<string, string>): void;
}

/**
 * A client on an injected fetch whose calls hang until the test answers them (or their signal
 * aborts), with every event of `names` recorded as [name, payload]. Retries: no jitter, 100 ms.
 */
function harness(options: ClientOptions = {}, names: ClientEventName[] = SCHEDULER_EVENTS) {
  const calls: Call[] = [];
  const fetch = (input: RequestInfo | URL, init: RequestInit = {}) =>
    new Promise<Response>((resolve, reject) => {
      const signal = init.signal ?? undefined;
      const url = new URL(String(input));
      calls.push({
        path: url.pathname + url.search,
        signal,
        answer: (status = 200, headers = {}) =>
          resolve(
            new Response(JSON.stringify({ path: url.pathname }), {
              status,
              headers: { 'content-type': 'application/json', ...headers },
            }),
          ),
      });
      if (signal?.aborted) reject(signal.reason);
      signal?.addEventListener('abort', () => reject(signal.reason), { once: true });
    });
  const client = createTestClient({
    baseURL: BASE,
    fetch,
    cache: { enabled: false },
    ...options,
    retry: { jitter: false, baseDelay: 100, ...(options.retry as object | undefined) },
  });
  const log: [ClientEventName, Record<string, unknown>][] = [];
  for (const name of names) {
    client.on(name, (payload) => log.push([name, payload as unknown as Record<string, unknown>]));
  }
  const paths = () => calls.map((c) => c.path);
  /** Answers the oldest unanswered call of `path` and lets the client react. */
  const answer = async (path: string, status = 200, headers: Record<string, string> = {}) => {
    const call = calls.find((c) => c.path === path && !answered.has(c));
    if (call === undefined) throw new Error(`no call of ${path}`);
    answered.add(call);
    call.answer(status, headers);
    await tick();
  };
  const answered = new Set<Call>();
  /** Answers every call not answered yet (new ones included) with 200. */
  const answerAll = async () => {
    for (let c = calls.find((x) => !answered.has(x)); c; c = calls.find((x) => !answered.has(x))) {
      await answer(c.path);
    }
  };
  return { client, calls, paths, answer, answerAll, log, names: () => log.map(([n]) => n) };
}

const tick = () => vi.advanceTimersByTimeAsync(0);

/** The outcome of a promise without throwing. */
const outcome = (p: Promise<unknown>) =>
  p.then(
    (value) => ({ ok: true as const, value }),
    (error: unknown) => ({ ok: false as const, error }),
  );

const ZERO_STATS = {
  active: 0,
  queued: 0,
  delayed: 0,
  completed: 0,
  rejected: 0,
  lanes: { high: 0, normal: 0, low: 0 },
};

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe('SchedulerOptions', () => {
  test('scheduler: {} enables it with the defaults: concurrency 8 and one FIFO queue (priority ignored)', async () => {
    const h = harness({ scheduler: {} });
    const all = [1, 2, 3, 4, 5, 6, 7, 8, 9].map((i) => h.client.get(`/d/${i}`));
    all.push(h.client.get('/d/high', { priority: 'high' }));
    await tick();
    expect(h.calls).toHaveLength(8);
    expect(h.client.scheduler().stats()).toEqual({
      ...ZERO_STATS,
      active: 8,
      queued: 2,
      lanes: { high: 0, normal: 2, low: 0 },
    });
    const queued = h.log.filter(([n]) => n === 'request-queued').map(([, e]) => e);
    expect(queued.every((e) => e.priority === 'normal')).toBe(true);
    await h.answer('/d/1');
    // FIFO: /d/9 came before the (ignored) high one.
    expect(h.paths().slice(8)).toEqual(['/d/9']);
    await h.answerAll();
    await Promise.all(all);
    expect(h.client.scheduler().stats()).toEqual({ ...ZERO_STATS, completed: 10 });
  });

  test('enabled: false makes every other scheduler option inert (Versioning 3)', async () => {
    const h = harness({
      scheduler: {
        enabled: false,
        concurrency: 1,
        priority: true,
        hosts: { 'api.test': 1 },
        rateLimit: { requests: 1, interval: 10_000 },
      },
    });
    const all = [1, 2, 3].map((i) => h.client.get(`/t/${i}`, { scheduler: { group: 'g' } }));
    h.client.scheduler().pauseGroup('g');
    await tick();
    expect(h.calls).toHaveLength(3);
    await h.answerAll();
    await Promise.all(all);
    expect(h.log).toEqual([]);
    expect(h.client.scheduler().stats()).toEqual(ZERO_STATS);
    // Lanes exist on paper only: nothing is ever queued, so nothing moves.
    expect(h.client.scheduler().prioritize('g', 'high')).toBe(0);
  });

  test('huge limits work: concurrency and rateLimit.requests of 1e9 admit everything at once', async () => {
    const h = harness({
      scheduler: { concurrency: 1e9, rateLimit: { requests: 1e9, interval: 1 } },
    });
    const all = Array.from({ length: 50 }, (_, i) => h.client.get(`/h/${i}`));
    await tick();
    expect(h.calls).toHaveLength(50);
    await h.answerAll();
    await Promise.all(all);
    expect(h.client.scheduler().stats()).toMatchObject({ completed: 50, delayed: 0 });
  });

  const bad: [string, SchedulerOptions, 'RangeError' | 'TypeError', string][] = [
    ['concurrency 0', { concurrency: 0 }, 'RangeError', 'scheduler.concurrency'],
    ['concurrency -1', { concurrency: -1 }, 'RangeError', 'scheduler.concurrency'],
    ['concurrency NaN', { concurrency: Number.NaN }, 'RangeError', 'scheduler.concurrency'],
    ['concurrency Infinity', { concurrency: Infinity }, 'RangeError', 'scheduler.concurrency'],
    ['concurrency 1.5', { concurrency: 1.5 }, 'RangeError', 'scheduler.concurrency'],
    ['concurrency "8"', { concurrency: '8' as never }, 'TypeError', 'scheduler.concurrency'],
    ['concurrency null', { concurrency: null as never }, 'TypeError', 'scheduler.concurrency'],
    ['enabled null', { enabled: null as never }, 'TypeError', 'scheduler.enabled'],
    ['priority "yes"', { priority: 'yes' as never }, 'TypeError', 'scheduler.priority'],
    ['priority null', { priority: null as never }, 'TypeError', 'scheduler.priority'],
    ...[0, -1, Number.NaN, Infinity, 0.5].map(
      (requests) =>
        [
          `rateLimit.requests ${requests}`,
          { rateLimit: { requests, interval: 100 } },
          'RangeError',
          'scheduler.rateLimit.requests',
        ] as [string, SchedulerOptions, 'RangeError', string],
    ),
    ...[0, -1, Number.NaN, Infinity, 2 ** 31].map(
      (interval) =>
        [
          `rateLimit.interval ${interval}`,
          { rateLimit: { requests: 1, interval } },
          'RangeError',
          'scheduler.rateLimit.interval',
        ] as [string, SchedulerOptions, 'RangeError', string],
    ),
    ['rateLimit null', { rateLimit: null as never }, 'TypeError', 'scheduler.rateLimit'],
    [
      'rateLimit without requests',
      { rateLimit: { interval: 100 } as never },
      'TypeError',
      'scheduler.rateLimit.requests',
    ],
    ...[0, -1, Number.NaN, Infinity, 1.5].map(
      (cap) =>
        [
          `hosts cap ${cap}`,
          { hosts: { 'a.test': cap } },
          'RangeError',
          'scheduler.hosts["a.test"]',
        ] as [string, SchedulerOptions, 'RangeError', string],
    ),
    ['hosts null', { hosts: null as never }, 'TypeError', 'scheduler.hosts'],
  ];

  test.each(bad)('%s: createClient throws (%j) a %s naming %s', (_, scheduler, type, field) => {
    const make = () => createClient({ fetch: async () => new Response(''), scheduler });
    expect(make).toThrow(type === 'RangeError' ? RangeError : TypeError);
    expect(make).toThrow(field);
  });

  test('a non-object scheduler option is a TypeError', () => {
    for (const scheduler of [null, true, 8, 'on', []]) {
      expect(() => createClient({ scheduler: scheduler as never })).toThrow(TypeError);
    }
  });
});

describe('SchedulerStats at each point of a job’s life', () => {
  test('queued, active, delayed (retry wait), back in its lane, completed (success or error), rejected', async () => {
    const h = harness({
      scheduler: { concurrency: 1, priority: true },
      retry: { attempts: 2 },
    });
    const stats = () => h.client.scheduler().stats();
    const a = outcome(h.client.get('/a'));
    const b = outcome(h.client.get('/b', { priority: 'low' }));
    await tick();
    expect(stats()).toEqual({
      ...ZERO_STATS,
      active: 1,
      queued: 1,
      lanes: { high: 0, normal: 0, low: 1 },
    });
    await h.answer('/a', 503); // parked for its retry wait: slot released, /b starts
    expect(stats()).toEqual({ ...ZERO_STATS, active: 1, delayed: 1 });
    await vi.advanceTimersByTimeAsync(100); // wait over: back in its lane behind running /b
    expect(stats()).toEqual({
      ...ZERO_STATS,
      active: 1,
      queued: 1,
      lanes: { high: 0, normal: 1, low: 0 },
    });
    await h.answer('/b', 404); // an error ends the job's full lifecycle too: completed
    expect((await b).ok).toBe(false);
    expect(stats()).toEqual({ ...ZERO_STATS, active: 1, completed: 1 });
    await h.answer('/a');
    expect((await a).ok).toBe(true);
    expect(stats()).toEqual({ ...ZERO_STATS, completed: 2 });
    const running = outcome(h.client.get('/c'));
    const dropped = h.client.get('/d', { priority: 'high' });
    await tick();
    dropped.cancel();
    await expect(dropped).rejects.toBeInstanceOf(CancelledError);
    expect(stats()).toEqual({ ...ZERO_STATS, active: 1, completed: 2, rejected: 1 });
    await h.answer('/c');
    await running;
    expect(stats()).toEqual({ ...ZERO_STATS, completed: 3, rejected: 1 });
  });

  test('stats() is a fresh object: changing one changes nothing', async () => {
    const h = harness({ scheduler: { concurrency: 1 } });
    const s = h.client.scheduler().stats();
    s.active = 99;
    s.lanes.high = 99;
    expect(h.client.scheduler().stats()).toEqual(ZERO_STATS);
  });

  test('cache hits and dedup joins take no slot and are no jobs', async () => {
    const h = harness({ scheduler: { concurrency: 1 }, cache: { enabled: true } });
    const first = h.client.get('/cached');
    await tick();
    await h.answer('/cached');
    await first;
    const blocker = outcome(h.client.get('/blocker'));
    const joiner = outcome(h.client.get('/blocker'));
    await tick();
    // The slot is taken; a fresh cache hit still answers at once.
    expect((await h.client.get('/cached')).status).toBe(200);
    expect(h.client.scheduler().stats()).toMatchObject({ active: 1, queued: 0, completed: 1 });
    await h.answer('/blocker');
    await Promise.all([blocker, joiner]);
    expect(h.client.scheduler().stats()).toMatchObject({ active: 0, completed: 2 });
    expect(h.names().filter((n) => n === 'request-queued')).toHaveLength(2);
  });
});

describe('scheduler event payloads', () => {
  test('every event carries exactly its spec fields; one id per job across its events', async () => {
    const h = harness({ scheduler: { concurrency: 1, priority: true }, retry: { attempts: 2 } }, [
      ...SCHEDULER_EVENTS,
      'request',
    ]);
    const run = outcome(h.client.get('/run', { scheduler: { group: 'g' } }));
    const moved = outcome(h.client.get('/moved', { priority: 'low', scheduler: { group: 'g' } }));
    await tick();
    h.client.scheduler().pauseGroup('g');
    expect(h.client.scheduler().prioritize('g', 'high')).toBe(1);
    h.client.scheduler().resumeGroup('g');
    await h.answer('/run', 503, { 'retry-after': '1' }); // parked: /moved starts
    await vi.advanceTimersByTimeAsync(1000); // back in a lane
    h.client.cancelGroup('g');
    await Promise.all([run, moved]);

    const requests = h.log.filter(([n]) => n === 'request').map(([, e]) => e);
    const idOf = new Map<string, unknown>();
    const base = (url: string, priority: string) => {
      const request = requests.find((r) => r.url === `${BASE}${url}`)!;
      return { id: idOf.get(url), key: request.key, method: 'GET', url: request.url, priority };
    };
    for (const [name, e] of h.log) {
      if (name === 'request-queued' && !idOf.has(String(e.url).slice(BASE.length))) {
        idOf.set(String(e.url).slice(BASE.length), e.id);
      }
    }
    expect(new Set(idOf.values()).size).toBe(2);
    expect(h.log.filter(([n]) => n !== 'request')).toEqual([
      ['request-queued', { ...base('/run', 'normal'), position: 1 }],
      ['request-dequeued', base('/run', 'normal')],
      ['request-started', base('/run', 'normal')],
      ['request-queued', { ...base('/moved', 'low'), position: 1 }],
      ['queue-paused', { group: 'g' }],
      ['request-prioritized', { ...base('/moved', 'high'), from: 'low', to: 'high' }],
      ['queue-resumed', { group: 'g' }],
      ['request-delayed', { ...base('/run', 'normal'), reason: 'retry-after', delay: 1000 }],
      ['request-dequeued', base('/moved', 'high')],
      ['request-started', base('/moved', 'high')],
      ['request-scheduled', base('/run', 'normal')],
      ['request-queued', { ...base('/run', 'normal'), position: 1 }],
      ['request-dequeued', base('/run', 'normal')],
      ['request-rejected', { ...base('/run', 'normal'), reason: 'cancelled' }],
      ['request-rejected', { ...base('/moved', 'high'), reason: 'cancelled' }],
    ]);
  });

  test('request-delayed for a backoff and for rate budget says why and for how long', async () => {
    const h = harness({
      scheduler: { concurrency: 2, rateLimit: { requests: 1, interval: 1000 } },
      retry: { attempts: 2 },
    });
    const a = outcome(h.client.get('/a'));
    await tick();
    await vi.advanceTimersByTimeAsync(400);
    const b = outcome(h.client.get('/b')); // a free slot, no budget until t = 1000
    await tick();
    const delayed = () => h.log.filter(([n]) => n === 'request-delayed').map(([, e]) => e);
    expect(delayed()).toEqual([
      expect.objectContaining({ url: `${BASE}/b`, reason: 'rate-limit', delay: 600 }),
    ]);
    expect(h.client.scheduler().stats()).toMatchObject({ active: 1, delayed: 1, queued: 0 });
    await h.answer('/a', 500);
    expect(delayed()[1]).toEqual(
      expect.objectContaining({ url: `${BASE}/a`, reason: 'backoff', delay: 100 }),
    );
    await vi.advanceTimersByTimeAsync(10_000);
    for (const c of h.calls) c.answer();
    await tick();
    await Promise.all([a, b]);
    expect(h.paths()).toEqual(['/a', '/b', '/a']);
  });
});

describe('cancellation in every job state', () => {
  type State = 'queued' | 'paused' | 'active' | 'backoff' | 'retry-after' | 'rate-limit';
  type Means = 'cancel()' | 'signal' | 'cancelGroup' | 'client.cancelGroup' | 'cancelAll';
  const states: State[] = ['queued', 'paused', 'active', 'backoff', 'retry-after', 'rate-limit'];
  const means: Means[] = ['cancel()', 'signal', 'cancelGroup', 'client.cancelGroup', 'cancelAll'];
  const cases = states.flatMap((s) => means.map((m) => [s, m] as const));

  /** Puts the target job (group 'g') into `state`; a blocker outside the group holds the slot. */
  async function into(state: State) {
    const h = harness({
      scheduler: {
        concurrency: state === 'rate-limit' ? 2 : 1,
        ...(state === 'rate-limit' ? { rateLimit: { requests: 1, interval: 1000 } } : {}),
      },
      retry: { attempts: 3 },
    });
    const ctl = new AbortController();
    const opts = { scheduler: { group: 'g' }, signal: ctl.signal };
    let blocker: Promise<unknown> | undefined;
    let target: ReturnType<Client['get']>;
    if (state === 'queued' || state === 'paused' || state === 'rate-limit') {
      blocker = outcome(h.client.get('/blocker'));
      if (state === 'paused') h.client.scheduler().pauseGroup('g');
      target = h.client.get('/target', opts);
    } else {
      target = h.client.get('/target', opts);
      await tick();
      if (state === 'backoff') await h.answer('/target', 503);
      if (state === 'retry-after') await h.answer('/target', 503, { 'retry-after': '5' });
    }
    await tick();
    return { h, ctl, target, blocker };
  }

  test.each(cases)('%s job, cancelled by %s', async (state, by) => {
    const { h, ctl, target, blocker } = await into(state);
    const expected = {
      queued: { queued: 1 },
      paused: { queued: 1 },
      active: { active: 1 },
      backoff: { delayed: 1 },
      'retry-after': { delayed: 1 },
      'rate-limit': { delayed: 1 },
    }[state];
    const blocking = blocker === undefined ? {} : { active: 1 };
    expect(h.client.scheduler().stats()).toMatchObject({ ...expected, ...blocking });
    const callsBefore = h.calls.length;
    const mark = h.log.length;
    const result = outcome(target);

    if (by === 'cancel()') target.cancel();
    else if (by === 'signal') ctl.abort();
    else if (by === 'cancelGroup') h.client.scheduler().cancelGroup('g');
    else if (by === 'client.cancelGroup') h.client.cancelGroup('g');
    else h.client.cancelAll();

    const r = await result;
    expect(r.ok).toBe(false);
    const error = (r as { error: unknown }).error;
    expect(isAbortError(error)).toBe(true);
    if (by !== 'signal') expect(error).toBeInstanceOf(CancelledError);
    const rejected = h.log
      .slice(mark)
      .filter(([n, e]) => n === 'request-rejected' && e.url === `${BASE}/target`);
    expect(rejected.map(([, e]) => e.reason)).toEqual(['cancelled']);
    // cancelAll takes the blocker too; otherwise it keeps its slot.
    const blockerLeft = blocker !== undefined && by !== 'cancelAll';
    expect(h.client.scheduler().stats()).toEqual({
      ...ZERO_STATS,
      active: blockerLeft ? 1 : 0,
      rejected: blocker !== undefined && by === 'cancelAll' ? 2 : 1,
    });
    if (state === 'active') expect(h.calls[0]!.signal?.aborted).toBe(true);
    // Its wait (backoff, Retry-After, budget) is over: no timer is left behind.
    expect(vi.getTimerCount()).toBe(0);
    await vi.advanceTimersByTimeAsync(60_000);
    expect(h.calls.length).toBe(callsBefore);
    if (blockerLeft) {
      await h.answer('/blocker');
      expect(await blocker).toMatchObject({ ok: true });
      expect(h.client.scheduler().stats()).toEqual({ ...ZERO_STATS, completed: 1, rejected: 1 });
    }
  });

  test('cancelling a job that already ended changes nothing', async () => {
    const h = harness({ scheduler: { concurrency: 1 } });
    const p = h.client.get('/done', { scheduler: { group: 'g' } });
    await tick();
    await h.answer('/done');
    await p;
    const mark = h.log.length;
    p.cancel();
    h.client.cancelGroup('g');
    h.client.cancelAll();
    await tick();
    expect(h.log.slice(mark)).toEqual([]);
    expect(h.client.scheduler().stats()).toEqual({ ...ZERO_STATS, completed: 1 });
    await expect(p).resolves.toMatchObject({ status: 200 });
  });

  test('a job cancelled while queued never reaches fetch, and the next one takes its turn', async () => {
    const h = harness({ scheduler: { concurrency: 1 } });
    const a = outcome(h.client.get('/a'));
    const b = h.client.get('/b');
    const c = outcome(h.client.get('/c'));
    const cancelled = outcome(b);
    b.cancel();
    await h.answer('/a');
    await h.answer('/c');
    await Promise.all([a, c]);
    expect(((await cancelled) as { error: unknown }).error).toBeInstanceOf(CancelledError);
    expect(h.paths()).toEqual(['/a', '/c']);
  });
});

describe('groups and selectors nobody knows', () => {
  test('pauseGroup of a group with no job yet: queue-paused, and its jobs queue frozen until resumeGroup', async () => {
    const h = harness({ scheduler: { concurrency: 4 } });
    h.client.scheduler().pauseGroup('later');
    expect(h.log).toEqual([['queue-paused', { group: 'later' }]]);
    const frozen = outcome(h.client.get('/f', { scheduler: { group: 'later' } }));
    const free = outcome(h.client.get('/free'));
    await tick();
    expect(h.paths()).toEqual(['/free']);
    expect(h.client.scheduler().stats()).toMatchObject({ active: 1, queued: 1 });
    h.client.scheduler().resumeGroup('later');
    await tick();
    expect(h.paths()).toEqual(['/free', '/f']);
    await h.answer('/free');
    await h.answer('/f');
    expect((await frozen).ok && (await free).ok).toBe(true);
    expect(h.names().filter((n) => n.startsWith('queue-'))).toEqual([
      'queue-paused',
      'queue-resumed',
    ]);
  });

  test('resumeGroup of a group never paused, twice-paused and twice-resumed groups: one event per change', () => {
    const h = harness({ scheduler: {} });
    const s = h.client.scheduler();
    s.resumeGroup('never');
    s.pauseGroup('g');
    s.pauseGroup('g');
    s.resumeGroup('g');
    s.resumeGroup('g');
    s.cancelGroup('nobody');
    h.client.cancelGroup('nobody');
    expect(h.log).toEqual([
      ['queue-paused', { group: 'g' }],
      ['queue-resumed', { group: 'g' }],
    ]);
    expect(s.stats()).toEqual(ZERO_STATS);
  });

  test('a paused group’s name does not pause the request key of the same string, nor other groups', async () => {
    const h = harness({ scheduler: { concurrency: 2 } });
    h.client.scheduler().pauseGroup('g');
    const other = outcome(h.client.get('/o', { scheduler: { group: 'h' } }));
    const plain = outcome(h.client.get('/g'));
    await tick();
    expect(h.paths()).toEqual(['/o', '/g']);
    await h.answer('/o');
    await h.answer('/g');
    await Promise.all([other, plain]);
  });

  test('prioritize of an unknown selector, or of running and parked jobs only, moves nothing and says nothing', async () => {
    const h = harness({ scheduler: { concurrency: 1, priority: true }, retry: { attempts: 2 } });
    const s = h.client.scheduler();
    expect(s.prioritize('nobody', 'high')).toBe(0);
    const parked = outcome(h.client.get('/p', { scheduler: { group: 'g' } }));
    await tick();
    await h.answer('/p', 503); // parked for its backoff
    const running = outcome(h.client.get('/r', { scheduler: { group: 'g' } }));
    await tick();
    expect(s.stats()).toMatchObject({ active: 1, delayed: 1, queued: 0 });
    expect(s.prioritize('g', 'high')).toBe(0);
    expect(s.prioritize(h.client.resolve('GET', '/r').key, 'low')).toBe(0);
    expect(s.prioritize('', 'low')).toBe(0);
    expect(h.names()).not.toContain('request-prioritized');
    await h.answer('/r');
    await vi.advanceTimersByTimeAsync(100);
    await h.answer('/p');
    await Promise.all([parked, running]);
  });

  test('bad controller arguments are typed errors; prioritize needs priority: true', () => {
    const lanes = harness({ scheduler: { priority: true } }).client.scheduler();
    const fifo = harness({ scheduler: {} }).client;
    const none = harness().client;
    for (const c of [fifo, none]) {
      expect(() => c.scheduler().prioritize('g', 'high')).toThrow(RangeError);
      expect(() => c.scheduler().prioritize('g', 'high')).toThrow(/priority: true/);
    }
    expect(() => lanes.prioritize('g', 'urgent' as never)).toThrow(RangeError);
    expect(() => lanes.prioritize(7 as never, 'high')).toThrow(TypeError);
    for (const c of [fifo, none]) {
      for (const bad of [undefined, null, 7, {}]) {
        expect(() => c.scheduler().pauseGroup(bad as never)).toThrow(TypeError);
        expect(() => c.scheduler().resumeGroup(bad as never)).toThrow(TypeError);
        expect(() => c.scheduler().cancelGroup(bad as never)).toThrow(TypeError);
        expect(() => c.cancelGroup(bad as never)).toThrow(TypeError);
      }
    }
  });

  test('a bad RequestOptions.priority or scheduler.group rejects the request with a typed error, nothing sent', async () => {
    const h = harness({ scheduler: { priority: true } });
    await expect(h.client.get('/x', { priority: 'urgent' as never })).rejects.toThrow(RangeError);
    await expect(h.client.get('/x', { scheduler: { group: 7 as never } })).rejects.toThrow(
      TypeError,
    );
    expect(h.calls).toHaveLength(0);
    expect(h.client.scheduler().stats()).toEqual(ZERO_STATS);
  });
});

describe('listeners that throw or call back into the client', () => {
  test('a throwing scheduler listener goes to onError; every job still runs and stats stay exact', async () => {
    const errors: unknown[] = [];
    const h = harness({
      scheduler: { concurrency: 1 },
      onError: (_error, context) => errors.push(context),
    });
    for (const name of SCHEDULER_EVENTS) {
      h.client.on(name, () => {
        throw new Error(`boom ${name}`);
      });
    }
    const a = outcome(h.client.get('/a', { scheduler: { group: 'g' } }));
    const b = outcome(h.client.get('/b', { scheduler: { group: 'g' } }));
    h.client.scheduler().pauseGroup('g');
    h.client.scheduler().resumeGroup('g');
    await h.answer('/a');
    h.client.cancelGroup('g');
    expect((await a).ok).toBe(true);
    expect((await b).ok).toBe(false);
    expect(h.client.scheduler().stats()).toEqual({ ...ZERO_STATS, completed: 1, rejected: 1 });
    expect(errors).toContainEqual({ source: 'event', event: 'request-queued' });
    expect(errors).toContainEqual({ source: 'event', event: 'queue-paused' });
    expect(errors).toContainEqual({ source: 'event', event: 'request-rejected' });
  });

  test('a request-rejected listener that submits into the cancelled group: the new job runs (it came after the cancel)', async () => {
    const h = harness({ scheduler: { concurrency: 1 } });
    let late: Promise<unknown> | undefined;
    h.client.on('request-rejected', () => {
      late ??= outcome(h.client.get('/late', { scheduler: { group: 'g' } }));
    });
    const a = outcome(h.client.get('/a', { scheduler: { group: 'g' } }));
    const b = outcome(h.client.get('/b', { scheduler: { group: 'g' } }));
    await tick();
    h.client.cancelGroup('g');
    await tick();
    expect(h.paths()).toEqual(['/a', '/late']);
    await h.answer('/late');
    expect(await late).toMatchObject({ ok: true });
    expect([(await a).ok, (await b).ok]).toEqual([false, false]);
    expect(h.client.scheduler().stats()).toEqual({ ...ZERO_STATS, completed: 1, rejected: 2 });
  });

  test('a queue-paused listener that resumes, and a request-started listener that cancels everything', async () => {
    const h = harness({ scheduler: { concurrency: 1 } });
    h.client.on('queue-paused', (e) => h.client.scheduler().resumeGroup(e.group!));
    h.client.scheduler().pauseGroup('g');
    const a = outcome(h.client.get('/a', { scheduler: { group: 'g' } }));
    await tick();
    expect(h.paths()).toEqual(['/a']);
    await h.answer('/a');
    expect((await a).ok).toBe(true);

    h.client.on('request-started', () => h.client.cancelAll());
    const b = outcome(h.client.get('/b'));
    const c = outcome(h.client.get('/c'));
    await tick();
    expect([(await b).ok, (await c).ok]).toEqual([false, false]);
    expect(h.client.scheduler().stats()).toEqual({ ...ZERO_STATS, completed: 1, rejected: 2 });
    expect(vi.getTimerCount()).toBe(0);
  });

  test('a request-queued listener that joins the same read makes no second job', async () => {
    const h = harness({ scheduler: { concurrency: 1 } }, [...SCHEDULER_EVENTS, 'dedup']);
    const joins: Promise<unknown>[] = [];
    h.client.on('request-queued', (e) => {
      if (joins.length === 0) joins.push(outcome(h.client.get(String(e.url))));
    });
    const a = outcome(h.client.get('/a'));
    await tick();
    await h.answer('/a');
    expect((await a).ok).toBe(true);
    expect(await joins[0]).toMatchObject({ ok: true });
    expect(h.calls).toHaveLength(1);
    expect(h.names().filter((n) => n === 'request-queued')).toHaveLength(1);
    expect(h.names()).toContain('dedup');
  });
});

describe('prioritize meets other limits', () => {
  test('a moved job stays held by its paused group and by its saturated host; its new lane serves it when they free', async () => {
    const h = harness({
      scheduler: { concurrency: 4, priority: true, hosts: { 'capped.test': 1 } },
    });
    const capped = (i: number) => outcome(h.client.get(`https://capped.test/c/${i}`));
    const c1 = capped(1);
    const c2 = capped(2);
    h.client.scheduler().pauseGroup('g');
    const paused = outcome(h.client.get('/p', { priority: 'low', scheduler: { group: 'g' } }));
    await tick();
    expect(h.paths()).toEqual(['/c/1']);
    expect(h.client.scheduler().prioritize('g', 'high')).toBe(1);
    expect(
      h.client
        .scheduler()
        .prioritize(h.client.resolve('GET', 'https://capped.test/c/2').key, 'high'),
    ).toBe(1);
    await tick();
    expect(h.paths()).toEqual(['/c/1']);
    expect(h.client.scheduler().stats()).toMatchObject({
      active: 1,
      queued: 2,
      lanes: { high: 2, normal: 0, low: 0 },
    });
    const free = outcome(h.client.get('/free', { priority: 'low' }));
    await tick();
    expect(h.paths()).toEqual(['/c/1', '/free']);
    h.client.scheduler().resumeGroup('g');
    await tick();
    expect(h.paths()).toEqual(['/c/1', '/free', '/p']);
    await h.answer('/c/1');
    expect(h.paths()).toEqual(['/c/1', '/free', '/p', '/c/2']);
    await h.answerAll();
    expect((await Promise.all([c1, c2, paused, free])).every((r) => r.ok)).toBe(true);
    expect(h.client.scheduler().stats()).toEqual({ ...ZERO_STATS, completed: 4 });
  });
});

describe('rate limits at the edges', () => {
  test('a sub-millisecond interval admits one attempt per interval and ends every job', async () => {
    const h = harness({ scheduler: { rateLimit: { requests: 1, interval: 0.5 } } });
    const starts: number[] = [];
    h.client.on('request-started', () => starts.push(Date.now()));
    const all = [1, 2, 3, 4].map((i) => outcome(h.client.get(`/r/${i}`)));
    await vi.advanceTimersByTimeAsync(10);
    await h.answerAll();
    expect((await Promise.all(all)).every((r) => r.ok)).toBe(true);
    expect(h.client.scheduler().stats()).toEqual({ ...ZERO_STATS, completed: 4 });
    for (let i = 1; i < starts.length; i++) {
      expect(starts[i]! - starts[i - 1]!).toBeGreaterThanOrEqual(0.5);
    }
    expect(vi.getTimerCount()).toBe(0);
  });

  test('the longest interval: one attempt now, the next parked for the whole interval', async () => {
    const interval = 2 ** 31 - 1;
    const h = harness({ scheduler: { rateLimit: { requests: 1, interval } } });
    const a = outcome(h.client.get('/a'));
    const b = outcome(h.client.get('/b'));
    await tick();
    expect(h.paths()).toEqual(['/a']);
    const delayed = h.log.find(([n]) => n === 'request-delayed')![1];
    expect(delayed).toMatchObject({ reason: 'rate-limit', delay: interval });
    await h.answer('/a');
    await vi.advanceTimersByTimeAsync(interval - 1);
    expect(h.paths()).toEqual(['/a']);
    await vi.advanceTimersByTimeAsync(1);
    expect(h.paths()).toEqual(['/a', '/b']);
    await h.answer('/b');
    expect((await a).ok && (await b).ok).toBe(true);
  });
});
