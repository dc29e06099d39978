// Black-box acceptance tests: SchedulerOptions, SchedulerStats, scheduler job states,
// SchedulerController, request-* / queue-* events, Limits (concurrency, rate limit, host caps,
// lane selection 4:2:1), step 5-6 (retry wait releases the slot), Versioning 3.
import { describe, expect, test } from 'vitest';
import { CancelledError, CircuitOpenError, type Client } from '../../src/index';
import { ALL_EVENTS, type Backend, deferred, json, names, record, settle, setup } from './harness';

// The scheduler's events: the spec's request-* and queue-* names, from the harness's one list.
const SCHED: readonly string[] = ALL_EVENTS.filter(
  (e) => e.startsWith('request-') || e.startsWith('queue-'),
);

/** Holds every response until `releaseAll`. */
function gate(backend: Backend) {
  const waiting: ((r: Response) => void)[] = [];
  backend.handler = () => {
    const d = deferred();
    waiting.push(d.release);
    return d.promise;
  };
  return {
    get count() {
      return waiting.length;
    },
    releaseOne() {
      waiting.shift()?.(json({}));
    },
    releaseAll() {
      while (waiting.length) waiting.shift()?.(json({}));
    },
  };
}

const tick = () => new Promise((r) => setImmediate(r));
async function ticks(n = 5) {
  for (let i = 0; i < n; i++) await tick();
}

describe('Transparent mode (spec: SchedulerOptions, Events rule 1, Versioning 3)', () => {
  async function stream(client: Client, backend: Backend) {
    backend.handler = () => json({});
    const log = record(client);
    await client.get('/a');
    await client.get('/a');
    await client.post('/b', {});
    return names(log);
  }

  test('without the option or with enabled:false: no scheduler events, same event stream, zero stats', async () => {
    const plain = setup();
    const disabled = setup({ scheduler: { enabled: false, concurrency: 1 } });
    const a = await stream(plain.client, plain.backend);
    const b = await stream(disabled.client, disabled.backend);
    expect(b).toEqual(a);
    expect(a.some((n) => SCHED.includes(n))).toBe(false);
    for (const c of [plain.client, disabled.client]) {
      expect(c.scheduler().stats()).toEqual({
        active: 0,
        queued: 0,
        delayed: 0,
        completed: 0,
        rejected: 0,
        lanes: { high: 0, normal: 0, low: 0 },
      });
    }
  });
});

describe('Concurrency and stats (spec: SchedulerOptions.concurrency default 8, SchedulerStats)', () => {
  test('default concurrency 8: the ninth job queues until a slot frees', async () => {
    const s = setup({ scheduler: {}, cache: false });
    const g = gate(s.backend);
    const ps = Array.from({ length: 10 }, (_, i) => settle(s.client.get(`/j${i}`)));
    await ticks();
    expect(g.count).toBe(8);
    expect(s.client.scheduler().stats()).toMatchObject({
      active: 8,
      queued: 2,
      delayed: 0,
      lanes: { normal: 2 },
    });
    g.releaseOne();
    await ticks();
    expect(g.count).toBe(8);
    expect(s.client.scheduler().stats()).toMatchObject({ active: 8, queued: 1, completed: 1 });
    g.releaseAll();
    await ticks();
    g.releaseAll();
    await Promise.all(ps);
    expect(s.client.scheduler().stats()).toMatchObject({ active: 0, queued: 0, completed: 10 });
  });

  test('event order for a job that starts at once, with payload fields', async () => {
    const s = setup({ scheduler: { concurrency: 1 } });
    const log = record(s.client, ['request', ...SCHED, 'success']);
    await s.client.get('/x');
    expect(names(log)).toEqual([
      'request',
      'request-queued',
      'request-dequeued',
      'request-started',
      'success',
    ]);
    const q = log[1]!.payload;
    expect(q).toMatchObject({ key: 'GET /x', method: 'GET', priority: 'normal', position: 1 });
    expect(q.id).toBeDefined();
    expect(String(q.url)).toContain('/x');
    for (const e of log.slice(2, 4)) {
      expect(e.payload).toMatchObject({
        id: q.id,
        key: 'GET /x',
        method: 'GET',
        priority: 'normal',
      });
    }
  });

  test('only owners are scheduled: dedup joiners take no slot', async () => {
    const s = setup({ scheduler: { concurrency: 1 } });
    const g = gate(s.backend);
    const log = record(s.client, ['request-queued']);
    const ps = [s.client.get('/a'), s.client.get('/a'), s.client.get('/a')];
    await ticks();
    expect(log).toHaveLength(1);
    expect(s.client.scheduler().stats().active).toBe(1);
    g.releaseAll();
    await Promise.all(ps);
  });
});

describe('Lanes (spec: SchedulerOptions.priority, Limits: lane selection)', () => {
  test('priority:false is a single FIFO and RequestOptions.priority is ignored', async () => {
    const s = setup({ scheduler: { concurrency: 1 }, cache: false });
    const g = gate(s.backend);
    const order: string[] = [];
    s.client.on('request-started', (e) => order.push(e.key));
    const ps = [
      s.client.get('/0'),
      s.client.get('/1', { priority: 'low' }),
      s.client.get('/2', { priority: 'high' }),
      s.client.get('/3'),
    ].map(settle);
    for (let i = 0; i < 6; i++) {
      await ticks();
      g.releaseAll();
    }
    await Promise.all(ps);
    expect(order).toEqual(['GET /0', 'GET /1', 'GET /2', 'GET /3']);
  });

  test('priority:true: weighted round-robin 4:2:1, FIFO within a lane', async () => {
    const s = setup({ scheduler: { concurrency: 1, priority: true }, cache: false });
    const g = gate(s.backend);
    const order: string[] = [];
    s.client.on('request-started', (e) =>
      order.push(String(e.priority)[0]!.toUpperCase() + e.key.slice(4)),
    );
    // block the single slot first so the queue fills
    const blocker = settle(s.client.get('/block', { priority: 'low' }));
    await ticks();
    const ps: Promise<unknown>[] = [];
    for (let i = 0; i < 8; i++) ps.push(settle(s.client.get(`/h${i}`, { priority: 'high' })));
    for (let i = 0; i < 4; i++) ps.push(settle(s.client.get(`/n${i}`, { priority: 'normal' })));
    for (let i = 0; i < 2; i++) ps.push(settle(s.client.get(`/l${i}`, { priority: 'low' })));
    await ticks();
    expect(s.client.scheduler().stats().lanes).toEqual({ high: 8, normal: 4, low: 2 });
    for (let i = 0; i < 20; i++) {
      g.releaseAll();
      await ticks(2);
    }
    await blocker;
    await Promise.all(ps);
    expect(
      order
        .slice(1)
        .map((x) => x[0])
        .join(''),
    ).toBe('HHHHNNLHHHHNNL');
    expect(order.slice(1).filter((x) => x[0] === 'H')).toEqual(
      Array.from({ length: 8 }, (_, i) => `H/h${i}`),
    );
  });

  test('prioritize(selector, priority) moves queued jobs of a group or key, returns the count, emits request-prioritized {from, to}', async () => {
    const s = setup({ scheduler: { concurrency: 1, priority: true }, cache: false });
    const g = gate(s.backend);
    const log = record(s.client, ['request-prioritized']);
    const ps = [
      settle(s.client.get('/block')),
      settle(s.client.get('/t1', { priority: 'low', scheduler: { group: 'thumbs' } })),
      settle(s.client.get('/t2', { priority: 'low', scheduler: { group: 'thumbs' } })),
      settle(s.client.get('/k', { priority: 'low' })),
    ];
    await ticks();
    expect(s.client.scheduler().prioritize('thumbs', 'high')).toBe(2);
    expect(s.client.scheduler().prioritize('GET /k', 'normal')).toBe(1);
    expect(s.client.scheduler().stats().lanes).toEqual({ high: 2, normal: 1, low: 0 });
    expect(log).toHaveLength(3);
    expect(log[0]!.payload).toMatchObject({
      from: 'low',
      to: 'high',
      priority: 'high',
      key: 'GET /t1',
    });
    for (let i = 0; i < 10; i++) {
      g.releaseAll();
      await ticks(2);
    }
    await Promise.all(ps);
  });

  test('prioritize requires priority:true', () => {
    const s = setup({ scheduler: {} });
    expect(() => s.client.scheduler().prioritize('g', 'high')).toThrow();
  });
});

describe('Groups (spec: SchedulerController, request-rejected, queue-paused/resumed)', () => {
  test('pauseGroup freezes queued work of the group; running requests finish; resumeGroup re-admits', async () => {
    const s = setup({ scheduler: { concurrency: 2 }, cache: false });
    const g = gate(s.backend);
    const log = record(s.client, ['queue-paused', 'queue-resumed']);
    const running = settle(s.client.get('/r', { scheduler: { group: 'g' } }));
    await ticks();
    s.client.scheduler().pauseGroup('g');
    const queued = settle(s.client.get('/q', { scheduler: { group: 'g' } }));
    const other = settle(s.client.get('/o'));
    await ticks();
    expect(g.count).toBe(2); // /r (running) and /o; /q frozen although a slot... was taken by /o
    g.releaseAll();
    await ticks();
    expect(g.count).toBe(0);
    expect((await running).ok).toBe(true);
    expect(s.client.scheduler().stats().queued).toBe(1);
    s.client.scheduler().resumeGroup('g');
    await ticks();
    expect(g.count).toBe(1);
    g.releaseAll();
    await Promise.all([queued, other]);
    expect(names(log)).toEqual(['queue-paused', 'queue-resumed']);
    expect(log[0]!.payload.group).toBe('g');
    expect(log[1]!.payload.group).toBe('g');
  });

  test('cancelGroup drops queued, parked and running jobs: CancelledError, rejected, request-rejected {reason: cancelled}', async () => {
    const s = setup({
      scheduler: { concurrency: 1 },
      cache: false,
      retry: { baseDelay: 1000, jitter: false },
    });
    let n = 0;
    s.backend.handler = (req) => {
      if (req.url.endsWith('/parked')) return json({}, 503);
      n++;
      return new Promise<Response>(() => {});
    };
    const parked = settle(s.client.get('/parked', { scheduler: { group: 'g' } }));
    await ticks();
    expect(s.client.scheduler().stats().delayed).toBe(1);
    const running = settle(s.client.get('/running', { scheduler: { group: 'g' } }));
    await ticks();
    const queued = settle(s.client.get('/queued', { scheduler: { group: 'g' } }));
    const other = settle(s.client.get('/other'));
    await ticks();
    expect(s.client.scheduler().stats()).toMatchObject({ active: 1, queued: 2, delayed: 1 });
    const log = record(s.client, ['request-rejected']);
    s.client.cancelGroup('g');
    const outs = await Promise.all([parked, running, queued]);
    for (const o of outs) {
      expect(o.ok).toBe(false);
      if (!o.ok) expect(o.error).toBeInstanceOf(CancelledError);
    }
    expect(log).toHaveLength(3);
    for (const l of log) expect(l.payload.reason).toBe('cancelled');
    await ticks();
    expect(s.client.scheduler().stats()).toMatchObject({
      active: 1,
      queued: 0,
      delayed: 0,
      rejected: 3,
    });
    expect(n).toBe(2); // /running then /other started
    s.client.cancelAll();
    await other;
  });

  test('client.cancelGroup is shorthand for scheduler().cancelGroup', async () => {
    const s = setup({ scheduler: { concurrency: 1 }, cache: false });
    gate(s.backend);
    const a = settle(s.client.get('/a'));
    const b = settle(s.client.get('/b', { scheduler: { group: 'x' } }));
    await ticks();
    s.client.scheduler().cancelGroup('x');
    const ob = await b;
    expect(!ob.ok && ob.error instanceof CancelledError).toBe(true);
    s.client.cancelAll();
    await a;
  });
});

describe('Parking (spec: step 6, job states, Limits: rate limit)', () => {
  test('a retry wait releases the slot (delayed, not active) and re-queues the job when the wait ends', async () => {
    const s = setup({
      scheduler: { concurrency: 1 },
      retry: { baseDelay: 1000, jitter: false },
      cache: false,
    });
    let n = 0;
    s.backend.handler = (req) =>
      req.url.endsWith('/flaky') && ++n === 1 ? json({}, 503) : json({});
    const log = record(s.client, ['retry', ...SCHED]);
    const flaky = s.client.get('/flaky');
    await ticks();
    expect(s.client.scheduler().stats()).toMatchObject({ active: 0, delayed: 1 });
    await s.client.get('/other'); // the released slot serves another job
    await s.clock.advance(1000);
    await flaky;
    const flakyEvents = log.filter((l) => l.payload.key === 'GET /flaky').map((l) => l.event);
    expect(flakyEvents).toEqual([
      'request-queued',
      'request-dequeued',
      'request-started',
      'retry',
      'request-delayed',
      'request-scheduled',
      'request-queued',
      'request-dequeued',
      'request-started',
    ]);
    const delayed = log.find((l) => l.event === 'request-delayed')!.payload;
    expect(delayed).toMatchObject({
      key: 'GET /flaky',
      method: 'GET',
      priority: 'normal',
      delay: 1000,
    });
    expect(delayed.reason).toEqual(expect.any(String));
  });

  test('rateLimit: at most `requests` attempts per `interval`; waiting jobs are parked and hold no slot', async () => {
    const s = setup({
      scheduler: { concurrency: 8, rateLimit: { requests: 2, interval: 1000 } },
      cache: false,
    });
    const starts: number[] = [];
    s.client.on('request-started', () => starts.push(s.clock.now()));
    const ps = Array.from({ length: 5 }, (_, i) => s.client.get(`/r${i}`));
    await ticks();
    expect(starts).toHaveLength(2);
    const st = s.client.scheduler().stats();
    expect(st.active).toBe(0); // the two finished already
    expect(st.delayed + st.queued).toBe(3);
    expect(st.delayed).toBeGreaterThan(0);
    await s.clock.advance(1000);
    expect(starts).toHaveLength(4);
    await s.clock.advance(1000);
    await Promise.all(ps);
    expect(starts).toHaveLength(5);
    const t0 = starts[0]!;
    expect(starts.map((t) => t - t0)).toEqual([0, 0, 1000, 1000, 2000]);
  });

  test('per-host caps: a saturated host does not block other hosts', async () => {
    const s = setup({ scheduler: { concurrency: 8, hosts: { 'a.test': 1 } }, cache: false });
    const g = gate(s.backend);
    const started: string[] = [];
    s.client.on('request-started', (e) => started.push(String(e.url)));
    const ps = [
      s.client.get('https://a.test/1'),
      s.client.get('https://a.test/2'),
      s.client.get('https://b.test/1'),
      s.client.get('https://b.test/2'),
    ].map(settle);
    await ticks();
    expect(g.count).toBe(3);
    expect(started.filter((u) => u.includes('a.test'))).toHaveLength(1);
    for (let i = 0; i < 5; i++) {
      g.releaseAll();
      await ticks();
    }
    await Promise.all(ps);
    expect(started.filter((u) => u.includes('a.test'))).toHaveLength(2);
  });
});

describe('Circuit pre-start gate (spec: circuit rule 5)', () => {
  test('a queued job re-checks the circuit before starting and is rejected if it opened meanwhile', async () => {
    const s = setup({
      scheduler: { concurrency: 1 },
      retry: false,
      cache: false,
      circuitBreaker: { failureThreshold: 1 },
    });
    const d = deferred();
    s.backend.handler = () => d.promise;
    const first = settle(s.client.get('/a?x=1'));
    const queued = settle(s.client.get('/a?x=2'));
    await ticks();
    const calls = s.backend.calls.length;
    d.release(json({}, 500));
    const [o1, o2] = await Promise.all([first, queued]);
    expect(o1.ok).toBe(false);
    expect(!o2.ok && o2.error instanceof CircuitOpenError).toBe(true);
    expect(s.backend.calls.length).toBe(calls);
    expect(s.client.scheduler().stats()).toMatchObject({ active: 0, queued: 0, delayed: 0 });
  });
});
