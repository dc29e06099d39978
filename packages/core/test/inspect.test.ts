import { describe, expect, it } from 'vitest';
import { type CacheChange, CacheStore, type Client, createBaseClient, inspect } from '../src/index';
import { watchCache } from '../src/internals';
import { debugOf, flush, jsonResponse, makeClient } from './helpers';

// inspect(client): read-only views for tooling. Each test drives a real client (fake fetch and
// clock) and checks that the views say what the client holds and does, and that reading them
// changes nothing.

describe('inspect(client).cache()', () => {
  it('lists each entry with its age, freshness, tags, subscribers, response and spec', async () => {
    const t = makeClient({ cache: { ttl: 1000 } }, { handler: () => jsonResponse([1, 2]) });
    const { client, clock } = t;
    await client.get('/todos', { tags: ['todos'] });
    const key = client.resolve('GET', '/todos').key;
    const off = client.subscribe(key, () => {});
    await clock.advance(400);

    const [entry, ...rest] = inspect(client).cache();
    expect(rest).toEqual([]);
    expect(entry).toMatchObject({
      key: 'GET /todos',
      path: '/todos',
      tags: ['todos'],
      age: 400,
      fresh: true,
      subscribers: 1,
      fetching: false,
    });
    expect(entry!.expiresAt - entry!.storedAt).toBe(1000);
    expect(entry!.response.data).toEqual([1, 2]);
    expect(entry!.response.headers.get('content-type')).toBe('application/json');
    expect(entry!.spec?.url).toBe('https://api.test/todos');

    // A predicate subscription that accepts the key counts too.
    const offAll = client.subscribe(
      () => true,
      () => {},
    );
    expect(inspect(client).cache()[0]!.subscribers).toBe(2);
    offAll();

    await clock.advance(700);
    off();
    expect(inspect(client).cache()[0]).toMatchObject({ age: 1100, fresh: false, subscribers: 0 });
  });

  it('says fetching while a read of the entry is in flight', async () => {
    const t = makeClient({ cache: { ttl: 100 } });
    const first = t.client.get('/a');
    t.fake.last().json({ v: 1 });
    await first;
    await t.clock.advance(200);
    const second = t.client.get('/a');
    expect(inspect(t.client).cache()[0]).toMatchObject({ fresh: false, fetching: true });
    t.fake.last().json({ v: 2 });
    await second;
    expect(inspect(t.client).cache()[0]).toMatchObject({ fresh: true, fetching: false });
  });

  it('leaves out entries due for collection, without collecting them', async () => {
    const t = makeClient(
      { cache: { ttl: 10, gcTime: 50 } },
      { handler: () => jsonResponse({ ok: true }) },
    );
    await t.client.get('/old');
    await t.clock.advance(100);
    expect(inspect(t.client).cache()).toEqual([]);
    expect(debugOf(t.client).cacheSize).toBe(1);
  });

  it('an entry written by hand with a key has no spec; the spec of a response refetches it', async () => {
    let n = 0;
    const t = makeClient({}, { handler: () => jsonResponse({ n: ++n }) });
    t.client.setCached('GET /by-hand', {
      data: 1,
      status: 200,
      statusText: 'OK',
      headers: new Headers(),
    });
    await t.client.get('/users');
    const views = inspect(t.client).cache();
    expect(views.map((v) => [v.key, v.spec === undefined])).toEqual([
      ['GET /by-hand', true],
      ['GET /users', false],
    ]);
    // A refetch keeps the entry until the new response replaces it.
    t.client.prefetch(views[1]!.spec!);
    expect(inspect(t.client).cache()[1]).toMatchObject({ fetching: true });
    expect(inspect(t.client).cache()[1]!.response.data).toEqual({ n: 1 });
    await flush();
    expect(inspect(t.client).cache()[1]!.response.data).toEqual({ n: 2 });
    expect(t.fake.calls).toHaveLength(2);
  });

  it('inspect of something that is not a client is a TypeError', () => {
    expect(() => inspect({} as Client)).toThrow(TypeError);
    expect(() => inspect({} as Client)).toThrow(
      'keel: `inspect(client)` must be a client made by createClient or createBaseClient, got an object',
    );
  });
});

// After the clock stepped back the view said fresh (age 0) while the next read went to the
// network: the README's rule (stored after `now` is not fresh) was the client's only.
describe('inspect(client).cache() after the clock stepped back', () => {
  it('an entry stored after now is not fresh, in the view and in a CacheStore', async () => {
    const t = makeClient({}, { handler: () => jsonResponse(1) });
    await t.client.get('/back');
    await t.clock.advance(-5000);
    expect(inspect(t.client).cache()[0]).toMatchObject({ fresh: false, age: 0 });
    const store = new CacheStore(30_000, { clock: t.clock });
    store.set('k', { data: 1, status: 200, statusText: 'OK', headers: new Headers() });
    expect(store.isFresh(store.get('k')!)).toBe(true);
    await t.clock.advance(-1);
    expect(store.isFresh(store.get('k')!)).toBe(false);
    await t.client.get('/back');
    expect(t.fake.calls).toHaveLength(2);
  });
});

describe('inspect(client).watchCache()', () => {
  it('hears writes, removals and clears, by response, by hand and by invalidation', async () => {
    const t = makeClient({}, { handler: () => jsonResponse([]) });
    const { client } = t;
    const changes: CacheChange[] = [];
    const off = inspect(client).watchCache((change) => changes.push(change));
    await client.get('/a');
    client.setCached('GET /b', { data: 1, status: 200, statusText: 'OK', headers: new Headers() });
    client.setCached('GET /b', undefined);
    client.invalidate('/a');
    await client.get('/c');
    client.clearCache();
    // A write carries its response too (the subscribers' update, passed through).
    expect(changes).toMatchObject([
      { type: 'write', key: 'GET /a' },
      { type: 'write', key: 'GET /b' },
      { type: 'remove', key: 'GET /b' },
      { type: 'remove', key: 'GET /a' },
      { type: 'write', key: 'GET /c' },
      { type: 'clear' },
    ]);
    off();
    await client.get('/d');
    expect(changes).toHaveLength(6);
  });

  // A stale-while-revalidate refresh was told as a bare `{ type: 'write', key }`: the README's
  // "a response's write also carries its response" held for first writes only.
  it("a revalidation's write carries its response, as a first write's does", async () => {
    let n = 0;
    const t = makeClient(
      { cache: { ttl: 10, strategy: 'stale-while-revalidate' } },
      { handler: () => jsonResponse({ n: ++n }) },
    );
    const changes: CacheChange[] = [];
    inspect(t.client).watchCache((change) => changes.push(change));
    await t.client.get('/r');
    await t.clock.advance(20);
    await t.client.get('/r');
    await flush();
    const writes = changes.filter((c) => c.type === 'write');
    expect(writes).toHaveLength(2);
    expect(writes.map((w) => (w as { response?: { data: unknown } }).response?.data)).toEqual([
      { n: 1 },
      { n: 2 },
    ]);
  });

  it('hears a clear once the reads it cut off no longer count as fetching', async () => {
    const t = makeClient({}, { handler: () => jsonResponse([]) });
    const { client } = t;
    await client.get('/a');
    const key = client.resolve('GET', '/a').key;
    client.prefetch(client.resolve('GET', '/a'));
    expect(client.isFetching(key)).toBe(true);
    const seen: [string, boolean][] = [];
    const off = inspect(client).watchCache((change) => {
      seen.push([change.type, client.isFetching(key)]);
    });
    client.clearCache();
    expect(seen).toEqual([['clear', false]]);
    off();
    t.fake.last().json([1]);
    await flush();
  });

  it("internals' watchCache is the same watcher without the inspector; a foreign client has none", async () => {
    const t = makeClient({}, { handler: () => jsonResponse([]) });
    const changes: CacheChange[] = [];
    const off = watchCache(t.client, (change) => changes.push(change));
    await t.client.get('/a');
    t.client.invalidate('/a');
    await flush();
    expect(changes).toMatchObject([
      { type: 'write', key: 'GET /a' },
      { type: 'remove', key: 'GET /a' },
    ]);
    expect(t.fake.calls).toHaveLength(1);
    expect(debugOf(t.client).subscriptions).toBe(0);
    off();
    await t.client.get('/b');
    expect(changes).toHaveLength(2);
    const offForeign = watchCache({} as Client, () => changes.push({ type: 'clear' }));
    expect(offForeign).toBeTypeOf('function');
    offForeign();
  });

  // A React query store watches while mounted: a write must not build a change of its own.
  it('a write reaches a watcher as the update its subscribers got (no object built per write)', async () => {
    const t = makeClient({}, { handler: () => jsonResponse([1]) });
    const key = t.client.resolve('GET', '/a').key;
    const told: unknown[] = [];
    const watched: CacheChange[] = [];
    const offSub = t.client.subscribe(key, (update) => told.push(update));
    const off = watchCache(t.client, (change) => watched.push(change));
    await t.client.get('/a');
    expect(watched).toHaveLength(1);
    expect(watched[0]).toMatchObject({ type: 'write', key });
    expect(watched[0]).toBe(told[0]);
    off();
    offSub();
  });

  it('is no interest in any key: an invalidation refetches nothing for a watcher', async () => {
    const t = makeClient({}, { handler: () => jsonResponse([]) });
    const off = inspect(t.client).watchCache(() => {});
    await t.client.get('/a');
    t.client.invalidate('/a');
    await flush();
    expect(t.fake.calls).toHaveLength(1);
    expect(debugOf(t.client).subscriptions).toBe(0);
    off();
  });

  it('a watcher that throws is reported to onError and the write goes on', async () => {
    const reported: unknown[] = [];
    const t = makeClient(
      { onError: (error) => reported.push(error) },
      { handler: () => jsonResponse([]) },
    );
    inspect(t.client).watchCache(() => {
      throw new Error('tool bug');
    });
    await expect(t.client.get('/a')).resolves.toMatchObject({ status: 200 });
    expect(reported).toEqual([new Error('tool bug')]);
    expect(t.client.getCached('GET /a')).toBeDefined();
  });

  it('rejects a listener that is not a function', () => {
    const t = makeClient();
    expect(() => inspect(t.client).watchCache(5 as never)).toThrow(TypeError);
    // The one template of every check (issue #14): the name in backticks, the value shown.
    expect(() => inspect(t.client).watchCache(5 as never)).toThrow(
      'keel: `listener` must be a function, got 5',
    );
  });
});

describe('inspect(client).flights()', () => {
  it('follows a flight: active, retry-wait with reason and delay, joined, then gone', async () => {
    const t = makeClient({ retry: { attempts: 3, baseDelay: 100 } });
    const { client, clock, fake } = t;
    const owner = client.get('/slow');
    const [flight] = inspect(client).flights();
    expect(flight).toMatchObject({
      key: 'GET /slow',
      method: 'GET',
      url: 'https://api.test/slow',
      endpoint: 'GET /slow',
      attempts: 1,
      consumers: 1,
      phase: { state: 'active' },
      probe: false,
      priority: 'normal',
      detached: false,
      deadlineAt: undefined,
    });
    // The tracker is the one the flight's events carry.
    expect(flight!.tracker).toBe(t.of('request')[0]!.tracker);

    const joiner = client.get('/slow');
    expect(inspect(client).flights()[0]!.consumers).toBe(2);

    fake.last().json({}, { status: 503 });
    await flush();
    const startedAt = clock.now();
    expect(inspect(client).flights()[0]!.phase).toEqual({
      state: 'retry-wait',
      reason: 'backoff',
      delay: 100,
      until: startedAt + 100,
    });
    expect(t.of('retry')[0]).toMatchObject({ reason: 'backoff', delay: 100 });

    await clock.advance(100);
    expect(inspect(client).flights()[0]).toMatchObject({ attempts: 2, phase: { state: 'active' } });
    fake.last().json({}, { status: 429, headers: { 'retry-after': '2' } });
    await flush();
    expect(inspect(client).flights()[0]!.phase).toMatchObject({
      state: 'retry-wait',
      reason: 'retry-after',
      delay: 2000,
    });
    expect(t.of('retry')[1]).toMatchObject({ reason: 'retry-after', delay: 2000 });

    await clock.advance(2000);
    fake.last().json({ ok: true });
    await Promise.all([owner, joiner]);
    expect(inspect(client).flights()).toEqual([]);
  });

  it('marks a flight detached once an invalidation lands while it is in flight', async () => {
    const t = makeClient({ deadline: 5000 });
    const read = t.client.get('/list');
    t.client.invalidate('/list');
    expect(inspect(t.client).flights()[0]).toMatchObject({
      detached: true,
      deadlineAt: t.clock.now() + 5000,
    });
    t.fake.last().json([]);
    await read;
  });

  it('with a scheduler: queued, paused, rate-wait, and the scheduler view', async () => {
    const t = makeClient({
      scheduler: {
        concurrency: 1,
        priority: true,
        hosts: { 'api.test': 1 },
        rateLimit: { requests: 2, interval: 1000 },
      },
    });
    const { client, fake } = t;
    const a = client.get('/a');
    const b = client.get('/b', { priority: 'high' });
    const c = client.get('/c', { scheduler: { group: 'thumbs' } });
    client.scheduler().pauseGroup('thumbs');
    expect(
      inspect(client)
        .flights()
        .map((f) => [f.key, f.phase, f.priority, f.group]),
    ).toEqual([
      ['GET /a', { state: 'active' }, 'normal', undefined],
      ['GET /b', { state: 'queued', paused: false }, 'high', undefined],
      ['GET /c', { state: 'queued', paused: true }, 'normal', 'thumbs'],
    ]);
    expect(inspect(client).scheduler()).toEqual({
      enabled: true,
      concurrency: 1,
      priorityLanes: true,
      stats: {
        active: 1,
        queued: 2,
        delayed: 0,
        completed: 0,
        rejected: 0,
        lanes: { high: 1, normal: 1, low: 0 },
      },
      rateLimit: { requests: 2, interval: 1000, used: 1 },
      hosts: [{ host: 'api.test', cap: 1, active: 1 }],
      pausedGroups: ['thumbs'],
    });

    // /a ends, /b starts (the second attempt of the window), /c stays paused.
    fake.last().json({});
    await a;
    await flush();
    expect(inspect(client).scheduler().rateLimit?.used).toBe(2);
    client.scheduler().resumeGroup('thumbs');
    fake.last().json({});
    await b;
    await flush();
    // No budget left in the window: /c is parked until it frees, and says since when.
    const parkedAt = t.clock.now();
    await t.clock.advance(300);
    expect(inspect(client).flights()[0]).toMatchObject({
      key: 'GET /c',
      phase: { state: 'rate-wait', since: parkedAt },
    });
    await t.clock.advance(700);
    expect(inspect(client).flights()[0]!.phase).toEqual({ state: 'active' });
    fake.last().json({});
    await c;
    expect(inspect(client).scheduler().stats).toMatchObject({ active: 0, completed: 3 });
  });

  // The view gave the request's own `priority`: `low` where the scheduler (and its events) ran
  // the job as `normal` (no lanes, or no scheduler), and the old lane after `prioritize`.
  it("a flight's priority is the lane it waits in: after prioritize, and normal without lanes", () => {
    const lanes = makeClient({ scheduler: { concurrency: 1, priority: true } });
    void lanes.client.get('/busy').catch(() => {});
    void lanes.client.get('/g', { priority: 'low', scheduler: { group: 'g' } }).catch(() => {});
    lanes.client.scheduler().prioritize('g', 'high');
    expect(
      inspect(lanes.client)
        .flights()
        .map((f) => [f.key, f.priority]),
    ).toEqual([
      ['GET /busy', 'normal'],
      ['GET /g', 'high'],
    ]);
    lanes.client.cancelAll();
    for (const options of [{ scheduler: { concurrency: 1, priority: false } }, {}]) {
      const t = makeClient(options);
      void t.client.get('/busy').catch(() => {});
      void t.client.get('/low', { priority: 'low' }).catch(() => {});
      expect(
        inspect(t.client)
          .flights()
          .map((f) => f.priority),
      ).toEqual(['normal', 'normal']);
      t.client.cancelAll();
    }
  });

  it('without a scheduler the view says so', () => {
    const t = makeClient();
    expect(inspect(t.client).scheduler()).toMatchObject({
      enabled: false,
      concurrency: Number.POSITIVE_INFINITY,
      rateLimit: undefined,
      hosts: [],
      pausedGroups: [],
    });
  });
});

describe('inspect(client).circuits() and latencies()', () => {
  it('an open circuit says when its probe may go', async () => {
    const t = makeClient(
      { circuitBreaker: { failureThreshold: 1, resetTimeout: 3000 }, retry: { attempts: 1 } },
      { handler: () => jsonResponse({}, { status: 503 }) },
    );
    await t.client.get('/down').catch(() => {});
    const openedAt = t.clock.now();
    expect(inspect(t.client).circuits()).toEqual([
      {
        endpoint: 'GET /down',
        state: 'open',
        consecutiveFailures: 1,
        openedAt,
        probing: false,
        probeAt: openedAt + 3000,
      },
    ]);
  });

  it('after the clock stepped back before openedAt, probeAt is now: the next request probes', async () => {
    const t = makeClient(
      { circuitBreaker: { failureThreshold: 1, resetTimeout: 3000 }, retry: { attempts: 1 } },
      { handler: () => jsonResponse({}, { status: 503 }) },
    );
    await t.client.get('/down').catch(() => {});
    await t.clock.advance(-5000);
    const [circuit] = inspect(t.client).circuits();
    expect(circuit).toMatchObject({ state: 'open', probeAt: t.clock.now() });
    // What it reported is what the breaker does: this request is the probe, not refused.
    await t.client.get('/down').catch(() => {});
    expect(t.of('circuit-half-open')).toHaveLength(1);
    expect(t.fake.calls).toHaveLength(2);
  });

  it('latencies are the samples of an endpoint, oldest first', async () => {
    const t = makeClient();
    for (const ms of [30, 10, 20]) {
      const read = t.client.get(`/items?ms=${ms}`);
      await t.clock.advance(ms);
      t.fake.last().json({});
      await read;
    }
    expect(inspect(t.client).latencies('GET /items')).toEqual([30, 10, 20]);
    expect(inspect(t.client).latencies('GET /nothing')).toEqual([]);
  });

  it('latencies of no endpoint key is an error naming `endpoint`, with intelligence on or off', async () => {
    // `latencies(5)` (or a path without its method) answered [], as for an endpoint never seen.
    for (const intelligence of [{}, { enabled: false }]) {
      const t = makeClient({ intelligence }, { handler: () => jsonResponse({}) });
      await t.client.get('/items');
      const inspector = inspect(t.client);
      expect(() => inspector.latencies(5 as never)).toThrow(
        new TypeError('keel: `endpoint` must be a `METHOD pathname` string, got 5'),
      );
      expect(() => inspector.latencies(undefined as never)).toThrow(TypeError);
      expect(() => inspector.latencies('/items')).toThrow(
        new RangeError('keel: `endpoint` must be a `METHOD pathname` string, got "/items"'),
      );
    }
  });

  it('latencies are empty with intelligence off', async () => {
    const t = makeClient({ intelligence: { enabled: false } }, { handler: () => jsonResponse({}) });
    await t.client.get('/a');
    expect(inspect(t.client).latencies('GET /a')).toEqual([]);
  });

  it('a base client without the breaker and intelligence features: no circuits, no latencies', async () => {
    const t = makeClient({}, { handler: () => jsonResponse({}, { status: 503 }) });
    const client = createBaseClient({
      baseURL: 'https://api.test',
      fetch: t.fake.fetch,
      retry: { attempts: 1 },
    });
    for (let i = 0; i < 6; i++) await client.get('/down').catch(() => {});
    expect(inspect(client).circuits()).toEqual([]);
    expect(inspect(client).latencies('GET /down')).toEqual([]);
  });
});

describe('inspect(client).clock', () => {
  it("is the client's own clock, so a tool's ticks move with an injected one", async () => {
    const { client, clock } = makeClient();
    expect(inspect(client).clock).toBe(clock);
    let ticks = 0;
    const { clock: seen } = inspect(client);
    seen.setTimeout(() => ticks++, 1000);
    await clock.advance(999);
    expect(ticks).toBe(0);
    await clock.advance(1);
    expect(ticks).toBe(1);
  });

  it('is the system clock for a client given none', () => {
    const client = createBaseClient({ baseURL: 'https://api.test' });
    const { clock } = inspect(client);
    expect(typeof clock.now()).toBe('number');
    expect(Math.abs(clock.now() - Date.now())).toBeLessThan(60_000);
  });
});
