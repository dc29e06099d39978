// Black-box acceptance tests: cache (pipeline step 2, rule 3, CacheOptions), dedup (step 3,
// rule 3), subscribe/invalidate (Endpoints: subscribe, invalidate, InvalidateTarget; Events rule 2).
import { describe, expect, test } from 'vitest';
import { CancelledError, HttpError } from '../../src/index';
import { deferred, json, names, record, settle, setup } from './harness';

describe('Cache (spec: step 2, rule 3, CacheOptions defaults)', () => {
  test('default cache is enabled, ttl 30000, cache-first: a fresh entry resolves from memory with cache-hit', async () => {
    const { client, backend, clock } = setup();
    const log = record(client, ['cache-hit', 'cache-write', 'request']);
    await client.get('/c');
    await clock.advance(29_999);
    const hit = await client.get('/c');
    expect(backend.calls).toHaveLength(1);
    expect(hit.data).toEqual({ ok: true });
    expect(names(log)).toEqual(['request', 'cache-write', 'cache-hit']);
    expect(log[2]!.payload.key).toBe(log[0]!.payload.key);
    expect(log[2]!.payload.tracker).toBeDefined();
    await clock.advance(1);
    await client.get('/c');
    expect(backend.calls).toHaveLength(2); // expired at ttl 30000
  });

  test('cache-write payload {key, response}', async () => {
    const { client } = setup();
    const log = record(client, ['cache-write']);
    const r = await client.get('/w');
    expect(log).toHaveLength(1);
    expect(log[0]!.payload.key).toEqual(expect.any(String));
    expect((log[0]!.payload.response as { data: unknown }).data).toEqual(r.data);
  });

  test('only GET responses are cached (spec: rule 3)', async () => {
    const { client, backend } = setup();
    await client.head('/h');
    await client.head('/h');
    await client.options('/o');
    await client.options('/o');
    await client.post('/p', {});
    await client.post('/p', {});
    expect(backend.calls).toHaveLength(6);
  });

  test('cache:false skips caching for this request (spec: RequestOptions.cache)', async () => {
    const { client, backend } = setup();
    await client.get('/n', { cache: false });
    await client.get('/n');
    expect(backend.calls).toHaveLength(2);
    await client.get('/n', { cache: false });
    expect(backend.calls).toHaveLength(3); // not read either
  });

  test('per-request ttl is honoured', async () => {
    const { client, backend, clock } = setup();
    await client.get('/t', { cache: { enabled: true, ttl: 100 } });
    await clock.advance(100);
    await client.get('/t', { cache: { enabled: true, ttl: 100 } });
    expect(backend.calls).toHaveLength(2);
  });

  test('stale-while-revalidate: a stale entry emits cache-hit, resolves at once and refetches in the background (revalidate)', async () => {
    const { client, backend, clock } = setup({
      cache: { enabled: true, ttl: 1000, strategy: 'stale-while-revalidate' },
    });
    let n = 0;
    backend.handler = () => json({ n: ++n });
    await client.get('/s');
    await clock.advance(1500);
    const log = record(client, ['cache-hit', 'revalidate']);
    const stale = await client.get('/s');
    expect(stale.data).toEqual({ n: 1 });
    await clock.advance(0);
    expect(backend.calls).toHaveLength(2);
    expect(names(log)).toEqual(['cache-hit', 'revalidate']);
    expect(log[1]!.payload.key).toBe(log[0]!.payload.key);
    expect((log[1]!.payload.response as { data: unknown }).data).toEqual({ n: 2 });
    const fresh = await client.get('/s');
    expect(fresh.data).toEqual({ n: 2 });
  });

  test('RequestOptions.cache.strategy wins over the client default (spec: rule 5)', async () => {
    const { client, backend, clock } = setup({ cache: { enabled: true, ttl: 1000 } });
    await client.get('/s');
    await clock.advance(2000);
    const p = client.get('/s', { cache: { enabled: true, strategy: 'stale-while-revalidate' } });
    await p;
    expect(backend.calls).toHaveLength(2); // background refresh started; answered stale at once
  });

  test('clearCache() drops every entry', async () => {
    const { client, backend } = setup();
    await client.get('/a');
    client.clearCache();
    await client.get('/a');
    expect(backend.calls).toHaveLength(2);
  });

  test('a fresh entry is served even while the circuit is open (spec: rule 4)', async () => {
    const { client, backend } = setup({
      circuitBreaker: { failureThreshold: 1, resetTimeout: 10_000 },
    });
    await client.get('/x?page=1');
    backend.handler = () => json({}, 500);
    await settle(client.get('/x?page=2', { retry: false }));
    expect(client.circuitBreaker().status('GET', '/x').state).toBe('open');
    const hit = await client.get('/x?page=1');
    expect(hit.data).toEqual({ ok: true });
  });
});

describe('Dedup (spec: step 3, rule 3, dedup event)', () => {
  test('concurrent identical GETs share one flight; dedup {key, method, url, consumers}', async () => {
    const { client, backend } = setup();
    const d = deferred();
    backend.handler = () => d.promise;
    const log = record(client, ['dedup', 'request']);
    const a = client.get('/d');
    const b = client.get('/d');
    const c = client.get('/d');
    await new Promise((r) => setImmediate(r));
    d.release(json({ v: 1 }));
    const all = await Promise.all([a, b, c]);
    expect(backend.calls).toHaveLength(1);
    expect(all.map((r) => r.data)).toEqual([{ v: 1 }, { v: 1 }, { v: 1 }]);
    expect(names(log)).toEqual(['request', 'dedup', 'dedup']);
    const dd = log[1]!.payload;
    expect(dd.key).toBe(log[0]!.payload.key);
    expect(dd.method).toBe('GET');
    expect(dd.url).toEqual(expect.any(String));
    expect(dd.consumers).toBe(2);
    expect(log[2]!.payload.consumers).toBe(3);
  });

  test('query order does not matter for the key; query values do', async () => {
    const { client, backend } = setup({ cache: false });
    const d = deferred();
    backend.handler = () => d.promise.then(() => json({}));
    const a = client.get('/q?a=1&b=2');
    const b = client.get('/q?b=2&a=1');
    const c = client.get('/q?a=2');
    await new Promise((r) => setImmediate(r));
    d.release(json({}));
    await Promise.all([a, b]);
    await settle(c);
    expect(backend.calls).toHaveLength(2);
  });

  test('HEAD and OPTIONS take part in dedup; mutations are never coalesced', async () => {
    const { client, backend } = setup();
    const d = deferred();
    backend.handler = (req) =>
      req.method === 'HEAD' || req.method === 'OPTIONS' ? d.promise : json({});
    const h = [client.head('/h'), client.head('/h'), client.options('/o'), client.options('/o')];
    const m = [
      client.post('/m', { a: 1 }),
      client.post('/m', { a: 1 }),
      client.put('/m', 1),
      client.put('/m', 1),
    ];
    await new Promise((r) => setImmediate(r));
    d.release(new Response(null, { status: 200 }));
    await Promise.all(m);
    await settle(Promise.all(h));
    const methods = backend.calls.map((c) => c.method).sort();
    expect(methods.filter((x) => x === 'POST')).toHaveLength(2);
    expect(methods.filter((x) => x === 'PUT')).toHaveLength(2);
    expect(methods.filter((x) => x === 'HEAD')).toHaveLength(1);
    expect(methods.filter((x) => x === 'OPTIONS')).toHaveLength(1);
  });

  test('joiners receive the same error', async () => {
    const { client, backend } = setup();
    const d = deferred();
    backend.handler = () => d.promise;
    const a = settle(client.get('/e', { retry: false }));
    const b = settle(client.get('/e', { retry: false }));
    await new Promise((r) => setImmediate(r));
    d.release(json({}, 404));
    const [ra, rb] = await Promise.all([a, b]);
    expect(ra.ok || rb.ok).toBe(false);
    if (!ra.ok && !rb.ok) {
      expect(ra.error).toBeInstanceOf(HttpError);
      expect(rb.error).toBeInstanceOf(HttpError);
    }
  });

  test('cancelling one consumer rejects only that consumer; the flight goes on for the others', async () => {
    const { client, backend } = setup();
    const d = deferred();
    backend.handler = () => d.promise;
    const a = client.get('/x');
    const b = client.get('/x');
    await new Promise((r) => setImmediate(r));
    a.cancel();
    d.release(json({ v: 1 }));
    const [ra, rb] = await Promise.all([settle(a), settle(b)]);
    expect(ra.ok).toBe(false);
    if (!ra.ok) expect(ra.error).toBeInstanceOf(CancelledError);
    expect(rb.ok).toBe(true);
    expect(backend.calls[0]?.signal?.aborted).toBe(false);
  });

  test('the network attempt is aborted when no consumer is left', async () => {
    const { client, backend } = setup();
    backend.handler = () => new Promise<Response>(() => {});
    const a = client.get('/x');
    const b = client.get('/x');
    await new Promise((r) => setImmediate(r));
    a.cancel();
    b.cancel();
    await Promise.all([settle(a), settle(b)]);
    expect(backend.calls[0]?.signal?.aborted).toBe(true);
  });

  test('cancelAll() cancels every caller and aborts every flight', async () => {
    const { client, backend } = setup();
    backend.handler = () => new Promise<Response>(() => {});
    const ps = [client.get('/a'), client.get('/b'), client.post('/c', {})].map(settle);
    await new Promise((r) => setImmediate(r));
    client.cancelAll();
    const outs = await Promise.all(ps);
    for (const o of outs) {
      expect(o.ok).toBe(false);
      if (!o.ok) expect(o.error).toBeInstanceOf(CancelledError);
    }
    expect(backend.calls.every((c) => c.signal?.aborted)).toBe(true);
  });
});

describe('subscribe / invalidate (spec: Endpoints, InvalidateTarget, CacheUpdate, Events rule 2)', () => {
  async function filled() {
    const s = setup();
    for (const u of ['/users', '/users/7', '/users?x=1', '/users-x', '/other'])
      await s.client.get(u);
    return s;
  }

  test('a string targets the path with its children and query variants, segment-aware', async () => {
    const { client } = await filled();
    const log = record(client, ['invalidate']);
    const removed = client.invalidate('/users');
    expect(removed.sort()).toEqual(['GET /users', 'GET /users/7', 'GET /users?x=1'].sort());
    expect(names(log)).toEqual(['invalidate']);
    expect((log[0]!.payload.keys as string[]).sort()).toEqual(removed.sort());
    expect(log[0]!.payload.target).toBe('/users');
  });

  test('an array of strings targets tags', async () => {
    const { client } = setup();
    await client.get('/a', { tags: ['t1'] });
    await client.get('/b', { tags: ['t2'] });
    await client.get('/c');
    expect(client.invalidate(['t1', 't2']).sort()).toEqual(['GET /a', 'GET /b']);
  });

  test('a predicate over CacheMeta {key, tags, storedAt, expiresAt}', async () => {
    const { client, clock } = setup();
    await client.get('/a', { tags: ['x'] });
    const seen: unknown[] = [];
    const removed = client.invalidate((meta) => {
      seen.push(meta);
      return meta.tags.includes('x');
    });
    expect(removed).toEqual(['GET /a']);
    expect(seen[0]).toMatchObject({
      key: 'GET /a',
      tags: ['x'],
      storedAt: clock.now(),
      expiresAt: clock.now() + 30_000,
    });
  });

  test('subscribe listeners receive write / invalidate / revalidate for matched keys; unsubscribe stops them', async () => {
    const { client, backend } = setup();
    let n = 0;
    backend.handler = () => json({ n: ++n });
    const updates: { type: string; key: string; response?: unknown }[] = [];
    const off = client.subscribe(
      (key) => key === 'GET /s',
      (u) => updates.push(u),
    );
    await client.get('/s');
    await client.get('/other');
    client.invalidate('/s');
    await new Promise((r) => setImmediate(r));
    await new Promise((r) => setImmediate(r));
    expect(updates.map((u) => u.type)).toEqual(['write', 'invalidate', 'revalidate']);
    expect(updates[1]!.response).toBeUndefined();
    expect(updates[2]!.key).toBe('GET /s');
    expect((updates[2]!.response as { data: unknown }).data).toEqual({ n: 3 });
    off();
    await client.get('/s', { cache: false });
    client.invalidate('/s');
    await new Promise((r) => setImmediate(r));
    expect(updates).toHaveLength(3);
  });

  test('removed entries with subscribers are refetched and emit revalidate; refetch:false does not', async () => {
    const { client, backend } = setup();
    client.subscribe('GET /a' as never, () => {});
    await client.get('/a');
    const log = record(client, ['revalidate']);
    client.invalidate('/a', { refetch: false });
    await new Promise((r) => setImmediate(r));
    expect(backend.calls).toHaveLength(1);
    await client.get('/a');
    client.invalidate('/a');
    await new Promise((r) => setImmediate(r));
    await new Promise((r) => setImmediate(r));
    expect(backend.calls).toHaveLength(3);
    expect(names(log)).toEqual(['revalidate']);
  });

  test('successful mutations invalidate the request path and the request tags', async () => {
    const { client, backend } = setup();
    await client.get('/users/7');
    await client.get('/tagged', { tags: ['users'] });
    await client.get('/else');
    await client.post('/users', { a: 1 }, { tags: ['users'] });
    const before = backend.calls.length;
    await client.get('/users/7');
    await client.get('/tagged', { tags: ['users'] });
    await client.get('/else');
    expect(backend.calls.length - before).toBe(2);
  });

  test('a failed mutation does not invalidate', async () => {
    const { client, backend } = setup();
    await client.get('/users');
    backend.handler = (req) => (req.method === 'POST' ? json({}, 400) : json({}));
    await settle(client.post('/users', {}));
    const before = backend.calls.length;
    await client.get('/users');
    expect(backend.calls.length).toBe(before);
  });

  test('an invalidation during an in-flight read: the older response is not stored as fresh', async () => {
    const { client, backend } = setup();
    const d = deferred();
    backend.handler = () => d.promise;
    const p = client.get('/r');
    await new Promise((r) => setImmediate(r));
    client.invalidate('/r');
    d.release(json({ old: true }));
    await p;
    backend.handler = () => json({ new: true });
    const after = await client.get('/r');
    expect(after.data).toEqual({ new: true });
  });
});
