import { describe, expect, test } from 'vitest';
import type { CacheUpdate } from '../src/index';
import { debugOf, flush, makeClient } from './helpers';

let n = 0;
const counter = () => () => Response.json({ n: ++n });

describe('cache', () => {
  test('only GET is cached', async () => {
    const { client, fake } = makeClient({}, { handler: counter() });
    for (const method of ['GET', 'HEAD', 'OPTIONS', 'DELETE', 'POST', 'PUT', 'PATCH'] as const) {
      await client.request(method, `/only-get/${method}`);
      await client.request(method, `/only-get/${method}`);
    }
    const counts: Record<string, number> = {};
    for (const c of fake.calls) counts[c.method] = (counts[c.method] ?? 0) + 1;
    expect(counts).toEqual({ GET: 1, HEAD: 2, OPTIONS: 2, DELETE: 2, POST: 2, PUT: 2, PATCH: 2 });
    expect(debugOf(client).cacheSize).toBe(1);
  });

  test('cache-first: a fresh entry is served without network and emits cache-hit', async () => {
    const t = makeClient({ cache: { ttl: 1000 } }, { handler: counter() });
    const first = await t.client.get('/cf');
    await t.clock.advance(999);
    const second = await t.client.get('/cf');
    expect(t.fake.calls).toHaveLength(1);
    expect(second).toBe(first);
    const key = t.client.resolve('GET', '/cf').key;
    expect(t.of('cache-write')).toEqual([{ key, response: first }]);
    expect(t.of('cache-hit')).toHaveLength(1);
    expect(t.of('cache-hit')[0]).toMatchObject({ key, stale: false });
    expect(t.of('cache-hit')[0]!.tracker.state).toBe('success');
    // a hit is not a flight: no request/success event for it
    expect(t.of('request')).toHaveLength(1);
    expect(t.of('success')).toHaveLength(1);
  });

  test('cache-first: an expired entry is refetched (no cache-hit)', async () => {
    const t = makeClient({ cache: { ttl: 1000 } }, { handler: counter() });
    const first = await t.client.get('/exp');
    await t.clock.advance(1000);
    const second = await t.client.get('/exp');
    expect(t.fake.calls).toHaveLength(2);
    expect(second.data).not.toEqual(first.data);
    expect(t.of('cache-hit')).toHaveLength(0);
    expect(t.of('cache-write')).toHaveLength(2);
  });

  test('per-request ttl applies to the entry it writes', async () => {
    const t = makeClient({ cache: { ttl: 1000 } }, { handler: counter() });
    await t.client.get('/ttl', { cache: { ttl: 50 } });
    await t.clock.advance(60);
    await t.client.get('/ttl');
    expect(t.fake.calls).toHaveLength(2);
  });

  test('a reader asking for a shorter ttl refetches an entry older than that', async () => {
    const t = makeClient({ cache: { ttl: 30_000 } }, { handler: counter() });
    await t.client.get('/reader');
    await t.clock.advance(5000);
    await t.client.get('/reader'); // default ttl: still fresh
    expect(t.fake.calls).toHaveLength(1);
    const r = await t.client.get('/reader', { cache: { ttl: 1000 } });
    expect(t.fake.calls).toHaveLength(2);
    expect(t.of('cache-write').at(-1)!.response).toBe(r);
  });

  test('stale-while-revalidate: serves the stale entry at once and refetches in the background', async () => {
    const t = makeClient({ cache: { ttl: 100, strategy: 'stale-while-revalidate' } });
    const key = t.client.resolve('GET', '/swr').key;
    const updates: CacheUpdate[] = [];
    t.client.subscribe(key, (u) => updates.push(u));
    const p1 = t.client.get('/swr');
    t.fake.last().json({ v: 1 });
    const first = await p1;
    await t.clock.advance(100);

    const stale = await t.client.get('/swr');
    expect(stale).toBe(first); // answered from memory, before the refetch settles
    expect(t.fake.calls).toHaveLength(2);
    expect(t.of('cache-hit').at(-1)).toMatchObject({ key, stale: true });

    // while the refetch is in flight, more stale reads are served and no second fetch starts
    expect(await t.client.get('/swr')).toBe(first);
    expect(t.fake.calls).toHaveLength(2);

    t.fake.last().json({ v: 2 });
    await flush();
    expect(t.of('revalidate')).toHaveLength(1);
    expect(t.of('revalidate')[0]).toMatchObject({ key, response: { data: { v: 2 } } });
    expect(updates.map((u) => u.type)).toEqual(['write', 'revalidate']);
    expect(updates[1]!.response?.data).toEqual({ v: 2 });

    const fresh = await t.client.get('/swr');
    expect(fresh.data).toEqual({ v: 2 });
    expect(t.fake.calls).toHaveLength(2);
  });

  test('stale-while-revalidate: a fresh entry is a plain hit with no refetch', async () => {
    const t = makeClient(
      { cache: { ttl: 100, strategy: 'stale-while-revalidate' } },
      { handler: counter() },
    );
    await t.client.get('/swr-fresh');
    await t.client.get('/swr-fresh');
    expect(t.fake.calls).toHaveLength(1);
    expect(t.of('cache-hit')[0]!.stale).toBe(false);
  });

  test('a failed background refetch keeps the stale entry and rejects nobody', async () => {
    const t = makeClient({
      cache: { ttl: 100, strategy: 'stale-while-revalidate' },
      retry: { attempts: 1 },
    });
    const p = t.client.get('/swr-fail');
    t.fake.last().json({ v: 1 });
    const first = await p;
    await t.clock.advance(200);
    expect(await t.client.get('/swr-fail')).toBe(first);
    t.fake.last().respond(new Response('down', { status: 500 }));
    await flush();
    expect(t.of('error')).toHaveLength(1);
    expect(t.of('revalidate')).toHaveLength(0);
    expect(await t.client.get('/swr-fail')).toBe(first);
  });

  test('cache:false skips reading and writing', async () => {
    const t = makeClient({}, { handler: counter() });
    await t.client.get('/nc');
    await t.client.get('/nc', { cache: false });
    expect(t.fake.calls).toHaveLength(2);
    const before = t.of('cache-write').length;
    await t.client.get('/nc2', { cache: false });
    expect(t.of('cache-write')).toHaveLength(before);
    await t.client.get('/nc2');
    expect(t.fake.calls).toHaveLength(4);
  });

  test('cache disabled on the client; cache:true or an object re-enables per request', async () => {
    const t = makeClient({ cache: { enabled: false } }, { handler: counter() });
    await t.client.get('/off');
    await t.client.get('/off');
    expect(t.fake.calls).toHaveLength(2);
    await t.client.get('/on', { cache: true });
    await t.client.get('/on', { cache: true });
    expect(t.fake.calls).toHaveLength(3);
    await t.client.get('/on2', { cache: { enabled: true, ttl: 10 } });
    await t.client.get('/on2', { cache: { enabled: true } });
    expect(t.fake.calls).toHaveLength(4);
  });

  test('priority: the request strategy beats the client default (SWR over cache-first)', async () => {
    const t = makeClient({ cache: { ttl: 100, strategy: 'cache-first' } }, { handler: counter() });
    const first = await t.client.get('/prio');
    await t.clock.advance(150);
    const r = await t.client.get('/prio', { cache: { strategy: 'stale-while-revalidate' } });
    expect(r).toBe(first); // stale entry served
    await flush();
    expect(t.fake.calls).toHaveLength(2); // and refetched in the background
  });

  test('priority: the request strategy beats the client default (cache-first over SWR)', async () => {
    const t = makeClient(
      { cache: { ttl: 100, strategy: 'stale-while-revalidate' } },
      { handler: counter() },
    );
    const first = await t.client.get('/prio2');
    await t.clock.advance(150);
    const r = await t.client.get('/prio2', { cache: { strategy: 'cache-first' } });
    expect(r).not.toBe(first); // waited for the network
    expect(t.fake.calls).toHaveLength(2);
    expect(t.of('cache-hit')).toHaveLength(0);
  });

  test('tags are stored with the entry (CacheMeta)', async () => {
    const t = makeClient({}, { handler: counter() });
    await t.client.get('/tagged', { tags: ['a', 'b'] });
    const metas: unknown[] = [];
    t.client.invalidate((meta) => {
      metas.push(meta);
      return false;
    });
    expect(metas).toEqual([
      {
        key: t.client.resolve('GET', '/tagged').key,
        tags: ['a', 'b'],
        storedAt: t.clock.now(),
        expiresAt: t.clock.now() + 30000,
      },
    ]);
  });

  test('clearCache() empties the cache: the next read goes to the network', async () => {
    const t = makeClient({}, { handler: counter() });
    await t.client.get('/clear1');
    await t.client.get('/clear2');
    expect(debugOf(t.client).cacheSize).toBe(2);
    t.client.clearCache();
    expect(debugOf(t.client).cacheSize).toBe(0);
    await t.client.get('/clear1');
    expect(t.fake.calls).toHaveLength(3);
  });

  test('clearCache() while a read is in flight: its response is not stored, nor joined later', async () => {
    const t = makeClient();
    const p = t.client.get('/clear-race');
    const a = t.fake.last();
    t.client.clearCache();
    const q = t.client.get('/clear-race');
    expect(t.fake.calls).toHaveLength(2); // no join onto the pre-clear flight
    a.json('before');
    await expect(p).resolves.toMatchObject({ data: 'before' });
    expect(debugOf(t.client).cacheSize).toBe(0);
    t.fake.last().json('after');
    await expect(q).resolves.toMatchObject({ data: 'after' });
    expect(t.client.getCached(t.client.resolve('GET', '/clear-race').key)?.data).toBe('after');
  });

  test('errors are not cached', async () => {
    const t = makeClient(
      { retry: { attempts: 1 } },
      { handler: () => new Response('x', { status: 404 }) },
    );
    await expect(t.client.get('/missing')).rejects.toMatchObject({ status: 404 });
    await expect(t.client.get('/missing')).rejects.toMatchObject({ status: 404 });
    expect(t.fake.calls).toHaveLength(2);
    expect(t.of('cache-write')).toHaveLength(0);
  });
});
