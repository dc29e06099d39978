import { describe, expect, it } from 'vitest';
import { createClient, type Priority } from '../src/index';
import { debugOf, FakeClock, jsonResponse, settle } from './helpers';
import { answer, answerAll, calls, schedulerClient, short, timeline } from './scheduler.helpers';

const EMPTY = { high: 0, normal: 0, low: 0 };

describe('scheduler: option validation', () => {
  it.each([
    [{ concurrency: 0 }, 'scheduler.concurrency'],
    [{ concurrency: 2.5 }, 'scheduler.concurrency'],
    [{ rateLimit: { requests: 0, interval: 100 } }, 'scheduler.rateLimit.requests'],
    [{ rateLimit: { requests: 2, interval: 0 } }, 'scheduler.rateLimit.interval'],
    [{ hosts: { 'a.test': 0 } }, 'scheduler.hosts["a.test"]'],
  ])('createClient(%j) throws a RangeError naming %s', (scheduler, field) => {
    const create = () => createClient({ fetch: async () => new Response(), scheduler });
    expect(create).toThrow(RangeError);
    expect(create).toThrow(field);
  });

  it('reads the options once: mutating them later changes nothing (no runtime reconfiguration)', async () => {
    const options = {
      concurrency: 1,
      hosts: { 'api.test': 1 } as Record<string, number>,
      rateLimit: { requests: 10, interval: 1000 },
    };
    const t = schedulerClient(options);
    options.concurrency = 5;
    options.hosts['api.test'] = 5;
    options.hosts['other.test'] = 1;
    options.rateLimit.requests = 1;
    for (const path of ['/a', '/b', '/c']) t.client.get(path);
    await t.clock.advance(0);
    expect(calls(t)).toEqual(['/a']);
    expect(t.client.scheduler().stats()).toMatchObject({ active: 1, queued: 2, delayed: 0 });
    await answerAll(t);
    expect(calls(t)).toEqual(['/a', '/b', '/c']);
  });

  it('validates even when disabled', () => {
    expect(() =>
      createClient({
        fetch: async () => new Response(),
        scheduler: { enabled: false, concurrency: 0 },
      }),
    ).toThrow(RangeError);
  });
});

describe('scheduler: concurrency', () => {
  it('caps simultaneous attempts and starts the next job as a slot frees', async () => {
    const t = schedulerClient({ concurrency: 2 });
    const all = [1, 2, 3, 4, 5].map((i) => t.client.get(`/c/${i}`));
    expect(calls(t)).toEqual(['/c/1', '/c/2']);
    expect(t.client.scheduler().stats()).toEqual({
      active: 2,
      queued: 3,
      delayed: 0,
      completed: 0,
      rejected: 0,
      lanes: { high: 0, normal: 3, low: 0 },
    });
    await answer(t, '/c/2');
    expect(calls(t)).toEqual(['/c/1', '/c/2', '/c/3']);
    expect(t.client.scheduler().stats()).toMatchObject({ active: 2, queued: 2, completed: 1 });
    await answerAll(t);
    await Promise.all(all);
    expect(t.client.scheduler().stats()).toEqual({
      active: 0,
      queued: 0,
      delayed: 0,
      completed: 5,
      rejected: 0,
      lanes: EMPTY,
    });
  });

  it('emits queued → dequeued → started for each job, with its lane position', async () => {
    const t = schedulerClient({ concurrency: 1 });
    t.client.get('/e/1');
    t.client.get('/e/2');
    t.client.get('/e/3');
    const queued = t.of('request-queued');
    expect(queued.map((q) => [short(q.url), q.position, q.priority])).toEqual([
      ['/e/1', 1, 'normal'],
      ['/e/2', 1, 'normal'],
      ['/e/3', 2, 'normal'],
    ]);
    expect(queued[1]).toMatchObject({ method: 'GET', key: t.client.resolve('GET', '/e/2').key });
    await answerAll(t);
    expect(timeline(t)).toEqual([
      'request-queued /e/1',
      'request-dequeued /e/1',
      'request-started /e/1',
      'request-queued /e/2',
      'request-queued /e/3',
      'request-dequeued /e/2',
      'request-started /e/2',
      'request-dequeued /e/3',
      'request-started /e/3',
    ]);
    // Each job's id is its flight's: the same across its events.
    const ids = new Set(t.of('request-started').map((e) => e.id));
    expect(ids.size).toBe(3);
  });

  it('does not give dedup joiners a slot', async () => {
    const t = schedulerClient({ concurrency: 1 });
    const a = t.client.get('/d');
    const b = t.client.get('/d');
    t.client.get('/other');
    expect(t.fake.calls.length).toBe(1);
    expect(t.of('dedup')).toHaveLength(1);
    expect(t.of('request-queued')).toHaveLength(2);
    expect(t.client.scheduler().stats()).toMatchObject({ active: 1, queued: 1 });
    await answerAll(t);
    expect((await a).status).toBe(200);
    expect((await b).status).toBe(200);
    expect(t.client.scheduler().stats()).toMatchObject({ completed: 2 });
  });
});

describe('scheduler: lanes', () => {
  /** Drives a client with concurrency 1: answers one call at a time, returns the call order. */
  async function drainOrder(
    t: ReturnType<typeof schedulerClient>,
    total: number,
  ): Promise<string[]> {
    while (t.fake.calls.length < total || t.fake.pending().length > 0) await answer(t);
    return calls(t);
  }

  it('serves high / normal / low by weighted round-robin 4:2:1, exactly, FIFO within a lane', async () => {
    const t = schedulerClient({ concurrency: 1, priority: true });
    // A low blocker takes the slot; the cursor then starts a fresh round at `high`.
    t.client.get('/blocker', { priority: 'low' });
    const counts: Record<Priority, number> = { high: 40, normal: 20, low: 10 };
    const order: Priority[] = [];
    // A deterministic interleaving of arrivals: lane order must not depend on it.
    let seed = 7;
    const left = { ...counts };
    while (left.high + left.normal + left.low > 0) {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      const p = (['high', 'normal', 'low'] as const)[seed % 3]!;
      if (left[p] === 0) continue;
      left[p]--;
      order.push(p);
    }
    const n: Record<Priority, number> = { high: 0, normal: 0, low: 0 };
    for (const p of order) t.client.get(`/${p}/${n[p]++}`, { priority: p });
    expect(t.client.scheduler().stats().lanes).toEqual({ high: 40, normal: 20, low: 10 });

    const got = (await drainOrder(t, 71)).slice(1);
    expect(got.map((u) => u[1]!.toUpperCase()).join('')).toBe('HHHHNNL'.repeat(10));
    for (const p of ['high', 'normal', 'low'] as const) {
      const lane = got.filter((u) => u.startsWith(`/${p}/`));
      expect(lane).toEqual(Array.from({ length: counts[p] }, (_, i) => `/${p}/${i}`));
    }
    const started = t.of('request-started');
    expect(started.slice(1, 8).map((e) => e.priority)).toEqual([
      'high',
      'high',
      'high',
      'high',
      'normal',
      'normal',
      'low',
    ]);
  });

  it('requests that each carry their own URL and priority (the cache on, as by default): 4:2:1, FIFO, nothing left over', async () => {
    const t = schedulerClient({ concurrency: 1, priority: true }, { cache: { ttl: 60_000 } });
    t.client.get('/job?i=blocker', { priority: 'low' });
    const cycle = ['high', 'normal', 'low'] as const;
    const all = Array.from({ length: 210 }, (_, i) =>
      t.client.get(`/job?i=${i}`, { priority: cycle[i % 3] }),
    );
    expect(t.client.scheduler().stats().lanes).toEqual({ high: 70, normal: 70, low: 70 });
    const got = (await drainOrder(t, 211)).slice(1).map((u) => Number(u.slice('/job?i='.length)));
    // While every lane has jobs, each round serves 4 high, 2 normal, 1 low.
    const lanes = got.map((i) => cycle[i % 3]![0]!.toUpperCase()).join('');
    expect(lanes.slice(0, 7 * 17)).toBe('HHHHNNL'.repeat(17));
    for (const p of cycle) {
      const lane = got.filter((i) => cycle[i % 3] === p);
      expect(lane).toEqual([...lane].sort((a, b) => a - b));
      expect(lane).toHaveLength(70);
    }
    await Promise.all(all);
    expect(t.clock.live).toBe(0);
    expect(debugOf(t.client)).toMatchObject({ flights: 0, inflight: 0 });
    // Each answer was cached under its own key: the same URL again is a hit, not a job.
    t.client.get('/job?i=42', { priority: 'low' });
    expect(t.fake.calls).toHaveLength(211);
  });

  it('hands an empty lane’s turn on (uneven mix)', async () => {
    const t = schedulerClient({ concurrency: 1, priority: true });
    t.client.get('/blocker', { priority: 'low' });
    for (let i = 0; i < 6; i++) t.client.get(`/h/${i}`, { priority: 'high' });
    for (let i = 0; i < 5; i++) t.client.get(`/l/${i}`, { priority: 'low' });
    const got = (await drainOrder(t, 12)).slice(1);
    // Round 1: 4 high, no normal, 1 low; round 2: 2 high, 1 low; then low alone.
    expect(got.map((u) => u[1]).join('')).toBe('hhhhlhhllll');
  });

  it('without priority:true, is one FIFO and ignores RequestOptions.priority', async () => {
    const t = schedulerClient({ concurrency: 1 });
    t.client.get('/blocker');
    t.client.get('/1', { priority: 'low' });
    t.client.get('/2', { priority: 'high' });
    t.client.get('/3', { priority: 'normal' });
    t.client.get('/4', { priority: 'high' });
    expect(t.client.scheduler().stats().lanes).toEqual({ high: 0, normal: 4, low: 0 });
    expect(await drainOrder(t, 5)).toEqual(['/blocker', '/1', '/2', '/3', '/4']);
    expect(new Set(t.of('request-queued').map((e) => e.priority))).toEqual(new Set(['normal']));
  });
});

describe('scheduler: per-host caps', () => {
  it('a saturated host does not block other hosts behind it', async () => {
    const t = schedulerClient({ concurrency: 4, hosts: { 'a.test': 1 } });
    t.client.get('https://a.test/1');
    t.client.get('https://a.test/2');
    t.client.get('https://a.test/3');
    t.client.get('https://b.test/1');
    t.client.get('https://b.test/2');
    expect(calls(t)).toEqual(['a.test/1', 'b.test/1', 'b.test/2']);
    expect(t.client.scheduler().stats()).toMatchObject({ active: 3, queued: 2 });
    // A later job for another host starts at once too.
    t.client.get('https://c.test/1');
    expect(calls(t)).toContain('c.test/1');
    await answer(t, 'a.test/1');
    expect(calls(t).filter((u) => u.startsWith('a.test'))).toEqual(['a.test/1', 'a.test/2']);
    expect(t.client.scheduler().stats()).toMatchObject({ queued: 1 });
  });

  it('the waiting job keeps its lane position for when its host frees', async () => {
    const t = schedulerClient({ concurrency: 2, hosts: { 'a.test': 1 } });
    t.client.get('https://a.test/1');
    t.client.get('https://b.test/1');
    t.client.get('https://a.test/2'); // waits for a.test
    t.client.get('https://b.test/2');
    t.client.get('https://b.test/3');
    await answer(t, 'b.test/1');
    // a.test/2 is skipped (host busy): b.test/2 takes the slot.
    expect(calls(t)).toEqual(['a.test/1', 'b.test/1', 'b.test/2']);
    await answer(t, 'a.test/1');
    // a.test/2 arrived before b.test/3: it goes first now that its host is free.
    expect(calls(t).slice(3)).toEqual(['a.test/2']);
    await answerAll(t);
    expect(calls(t).slice(4)).toEqual(['b.test/3']);
  });

  it('matches a cap by hostname, case-insensitively, across ports', async () => {
    const t = schedulerClient({ concurrency: 8, hosts: { 'X.test': 1 } });
    t.client.get('https://x.test:8080/1');
    t.client.get('https://X.TEST:9090/2');
    t.client.get('https://y.test:8443/1');
    expect(calls(t)).toEqual(['x.test:8080/1', 'y.test:8443/1']);
  });
});

describe('scheduler: rate limit', () => {
  it('starts at most `requests` attempts per window; the jobs waiting for budget are parked, holding no slot', async () => {
    const times: number[] = [];
    const t = schedulerClient(
      { concurrency: 8, rateLimit: { requests: 2, interval: 1000 } },
      {},
      { handler: () => void times.push(t.clock.now() - start) },
    );
    const start = t.clock.now();
    for (let i = 1; i <= 5; i++) t.client.get(`/r/${i}`);
    expect(calls(t)).toEqual(['/r/1', '/r/2']);
    // Each job with a free slot but no budget is parked (delayed), not queued.
    expect(t.client.scheduler().stats()).toMatchObject({ active: 2, queued: 0, delayed: 3 });
    expect(t.of('request-delayed')).toEqual(
      [3, 4, 5].map((i) =>
        expect.objectContaining({
          reason: 'rate-limit',
          delay: 1000,
          url: `https://api.test/r/${i}`,
        }),
      ),
    );
    await answer(t);
    await answer(t);
    // Slots are free, budget is not: nothing starts before the window ends.
    await t.clock.advance(999);
    expect(t.fake.calls.length).toBe(2);
    expect(t.client.scheduler().stats()).toMatchObject({ active: 0, queued: 0, delayed: 3 });
    await t.clock.advance(1);
    expect(calls(t)).toEqual(['/r/1', '/r/2', '/r/3', '/r/4']);
    await answerAll(t);
    await t.clock.advance(1000);
    await answerAll(t);
    expect(times).toEqual([0, 0, 1000, 1000, 2000]);
    expect(timeline(t).filter((l) => l.endsWith('/r/3'))).toEqual([
      'request-queued /r/3',
      'request-dequeued /r/3',
      'request-delayed /r/3',
      'request-scheduled /r/3',
      'request-queued /r/3',
      'request-dequeued /r/3',
      'request-started /r/3',
    ]);
    // Back from a rate wait, the job rejoins at the head of its lane.
    expect(t.of('request-queued').filter((e) => e.url.endsWith('/r/3'))[1]!.position).toBe(1);
    expect(t.client.scheduler().stats()).toMatchObject({ completed: 5, delayed: 0 });
    expect(t.clock.live).toBe(0);
  });

  it('a clock stepping back an hour delays a job waiting for budget by `interval` at most', async () => {
    const fake = new FakeClock();
    let offset = 0;
    // The client reads a wall clock that an NTP correction moves back; timers run on real time.
    const clock = { ...fake, now: () => fake.now() + offset };
    const starts: number[] = [];
    const client = createClient({
      baseURL: 'https://api.test',
      cache: { enabled: false },
      clock,
      scheduler: { rateLimit: { requests: 1, interval: 1000 } },
      fetch: async () => {
        starts.push(fake.now());
        return jsonResponse({});
      },
    });
    const t0 = fake.now();
    await client.get('/a');
    offset = -3_600_000;
    const b = settle(client.get('/b'));
    await fake.advance(1000);
    expect(starts.map((at) => at - t0)).toEqual([0, 1000]);
    expect((await b).state).toBe('fulfilled');
    expect(client.scheduler().stats()).toMatchObject({ active: 0, delayed: 0, completed: 2 });
    expect(fake.live).toBe(0);
  });

  it('counts retries against the budget', async () => {
    const times: number[] = [];
    const t = schedulerClient(
      { rateLimit: { requests: 2, interval: 1000 } },
      { retry: { attempts: 2, baseDelay: 100, jitter: false } },
      { handler: (c) => void times.push(t.clock.now() - start + (c.url.endsWith('/a') ? 0 : 0.5)) },
    );
    const start = t.clock.now();
    const a = t.client.get('/a');
    const b = t.client.get('/b');
    await answer(t, '/a', jsonResponse({}, { status: 503 }));
    await answer(t, '/b');
    // The retry wait (100 ms) ends inside the window: the second attempt waits for budget.
    await t.clock.advance(100);
    expect(t.fake.calls.length).toBe(2);
    expect(t.of('request-delayed').map((e) => [e.reason, e.delay])).toEqual([
      ['backoff', 100],
      ['rate-limit', 900],
    ]);
    await t.clock.advance(900);
    expect(t.fake.calls.length).toBe(3);
    await answerAll(t);
    expect((await a).status).toBe(200);
    await b;
    expect(times).toEqual([0, 0.5, 1000]);
  });

  it('keeps lane order under a rate limit', async () => {
    const t = schedulerClient({
      concurrency: 4,
      priority: true,
      rateLimit: { requests: 1, interval: 100 },
    });
    t.client.get('/blocker', { priority: 'low' });
    for (let i = 0; i < 5; i++) t.client.get(`/h/${i}`, { priority: 'high' });
    for (let i = 0; i < 2; i++) t.client.get(`/n/${i}`, { priority: 'normal' });
    for (let i = 0; i < 9; i++) {
      await t.clock.advance(100);
      await answerAll(t);
    }
    expect(calls(t).slice(1)).toEqual(['/h/0', '/h/1', '/h/2', '/h/3', '/n/0', '/n/1', '/h/4']);
  });
});

describe('scheduler: retry waits', () => {
  it('parks the job during backoff: the slot is released and it re-queues when the wait ends', async () => {
    const t = schedulerClient({ concurrency: 1 }, { retry: { attempts: 2, baseDelay: 100 } });
    const a = t.client.get('/a');
    const b = t.client.get('/b');
    await answer(t, '/a', jsonResponse({}, { status: 503 }));
    // /a waits 100 ms holding no slot; /b takes the slot meanwhile.
    expect(calls(t)).toEqual(['/a', '/b']);
    expect(t.client.scheduler().stats()).toMatchObject({ active: 1, queued: 0, delayed: 1 });
    await t.clock.advance(100);
    expect(t.client.scheduler().stats()).toMatchObject({ active: 1, queued: 1, delayed: 0 });
    await answer(t, '/b');
    expect(calls(t)).toEqual(['/a', '/b', '/a']);
    await answer(t, '/a');
    expect((await a).status).toBe(200);
    await b;
    expect(
      t.events
        .filter((e) => 'key' in e.payload && e.payload.key === t.client.resolve('GET', '/a').key)
        .map((e) => e.name)
        .filter((n) => n !== 'cache-write'),
    ).toEqual([
      'request',
      'request-queued',
      'request-dequeued',
      'request-started',
      'retry',
      'request-delayed',
      'request-scheduled',
      'request-queued',
      'request-dequeued',
      'request-started',
      'success',
    ]);
    expect(t.of('request-delayed')[0]).toMatchObject({ reason: 'backoff', delay: 100 });
    expect(t.client.scheduler().stats()).toMatchObject({ completed: 2, delayed: 0, active: 0 });
  });

  it('reports a Retry-After wait as reason retry-after', async () => {
    const t = schedulerClient({ concurrency: 1 }, { retry: { attempts: 2 } });
    const a = t.client.get('/ra');
    await answer(t, '/ra', jsonResponse({}, { status: 429, headers: { 'retry-after': '2' } }));
    expect(t.of('request-delayed')).toEqual([
      expect.objectContaining({ reason: 'retry-after', delay: 2000 }),
    ]);
    expect(t.client.scheduler().stats()).toMatchObject({ active: 0, delayed: 1 });
    await t.clock.advance(2000);
    await answer(t);
    expect((await a).status).toBe(200);
  });

  it('a cancel during the retry wait rejects the job and clears its timer', async () => {
    const t = schedulerClient({ concurrency: 1 }, { retry: { attempts: 3, baseDelay: 100 } });
    const a = t.client.get('/a');
    await answer(t, '/a', jsonResponse({}, { status: 500 }));
    expect(t.clock.live).toBe(1);
    a.cancel();
    expect(t.client.scheduler().stats()).toMatchObject({ delayed: 0, rejected: 1 });
    expect(t.clock.live).toBe(0);
    expect((await settle(a)).state).toBe('rejected');
    expect(t.of('request-rejected')).toEqual([
      expect.objectContaining({ reason: 'cancelled', url: 'https://api.test/a' }),
    ]);
  });
});

describe('scheduler: stats', () => {
  it('active + queued + delayed equals the live jobs at every scheduler event', async () => {
    const t = schedulerClient(
      { concurrency: 2, rateLimit: { requests: 3, interval: 500 } },
      { retry: { attempts: 2, baseDelay: 50 } },
    );
    let requests = 0;
    const problems: string[] = [];
    t.client.on('request', () => requests++);
    const check = (name: string) => () => {
      const s = t.client.scheduler().stats();
      const sum = s.active + s.queued + s.delayed + s.completed + s.rejected;
      if (sum !== requests) problems.push(`${name}: ${JSON.stringify(s)} vs ${requests} jobs`);
      if (s.queued !== s.lanes.high + s.lanes.normal + s.lanes.low) problems.push(`${name}: lanes`);
      if (s.active > 2) problems.push(`${name}: active ${s.active}`);
    };
    for (const name of [
      'request-queued',
      'request-dequeued',
      'request-started',
      'request-delayed',
      'request-scheduled',
      'request-rejected',
    ] as const) {
      t.client.on(name, check(name));
    }
    const all = Array.from({ length: 12 }, (_, i) => t.client.get(`/s/${i}`));
    const settled = Promise.allSettled(all);
    all[5]!.cancel();
    for (let i = 0; i < 30; i++) {
      const next = t.fake.pending()[0];
      if (next) {
        const fail = next.url.endsWith('/3') || next.url.endsWith('/7');
        next.respond(jsonResponse({}, { status: fail && next.index < 8 ? 503 : 200 }));
      }
      await t.clock.advance(100);
    }
    await settled;
    expect(problems).toEqual([]);
    expect(t.client.scheduler().stats()).toEqual({
      active: 0,
      queued: 0,
      delayed: 0,
      completed: 11,
      rejected: 1,
      lanes: EMPTY,
    });
    expect(t.clock.live).toBe(0);
  });
});
