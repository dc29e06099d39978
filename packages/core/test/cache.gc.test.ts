import { describe, expect, test } from 'vitest';
import { CacheStore, createClient } from '../src/index';
import { debugOf, FakeClock, flush, makeClient } from './helpers';

const ok = (data: unknown) => ({ data, status: 200, statusText: 'OK', headers: new Headers() });

describe('cache.gcTime: expired and unwatched entries are collected', () => {
  test('distinct GETs no longer accumulate: the cache stays bounded by ttl + gcTime', async () => {
    // Before gcTime every expired entry was kept forever (1,000,000 distinct GETs held 826 MB).
    const t = makeClient(
      { cache: { ttl: 100, gcTime: 1000 } },
      { handler: () => Response.json({ ok: true }) },
    );
    let peak = 0;
    for (let i = 0; i < 20_000; i++) {
      await t.client.get(`/items/${i}`);
      await t.clock.advance(1);
      peak = Math.max(peak, debugOf(t.client).cacheSize);
    }
    // 1,100 writes happen within ttl + gcTime; the hand keeps at most about twice that.
    expect(peak).toBeLessThanOrEqual(2 * 1100 + 2);
    expect(debugOf(t.client).cacheSize).toBeLessThanOrEqual(2 * 1100 + 2);
  }, 30_000);

  test('the default gcTime is 5 minutes after expiry', async () => {
    const t = makeClient({}, { handler: () => Response.json(1) });
    await t.client.get('/a');
    const key = t.client.resolve('GET', '/a').key;
    await t.clock.advance(30_000 + 5 * 60_000 - 1);
    expect(t.client.getCached(key)).toBeDefined();
    await t.clock.advance(1);
    expect(t.client.getCached(key)).toBeUndefined();
  });

  test('a watched entry is kept past gcTime; gcTime counts again from the unsubscribe', async () => {
    const t = makeClient(
      { cache: { ttl: 100, gcTime: 1000 } },
      { handler: () => Response.json(1) },
    );
    const key = t.client.resolve('GET', '/w').key;
    const off = t.client.subscribe(key, () => {});
    await t.client.get('/w');
    await t.clock.advance(10_000);
    expect(t.client.getCached(key)).toBeDefined();
    off();
    await t.clock.advance(999);
    expect(t.client.getCached(key)).toBeDefined();
    await t.clock.advance(1);
    expect(t.client.getCached(key)).toBeUndefined();
    expect(debugOf(t.client).cacheSize).toBe(0);
  });

  test('a predicate subscription keeps what it matches, and leaves it gcTime to go', async () => {
    const t = makeClient(
      { cache: { ttl: 100, gcTime: 1000 } },
      { handler: () => Response.json(1) },
    );
    const off = t.client.subscribe(
      (k) => k.includes('/p'),
      () => {},
    );
    await t.client.get('/p');
    await t.client.get('/q');
    const p = t.client.resolve('GET', '/p').key;
    const q = t.client.resolve('GET', '/q').key;
    await t.clock.advance(1100);
    expect(t.client.getCached(p)).toBeDefined();
    expect(t.client.getCached(q)).toBeUndefined();
    off();
    await t.clock.advance(999);
    expect(t.client.getCached(p)).toBeDefined();
    await t.clock.advance(1);
    expect(t.client.getCached(p)).toBeUndefined();
  });

  test('stale-while-revalidate serves an expired entry within gcTime, not after it', async () => {
    let n = 0;
    const t = makeClient(
      { cache: { ttl: 100, gcTime: 1000, strategy: 'stale-while-revalidate' } },
      { handler: () => Response.json(++n) },
    );
    await t.client.get('/s');
    await t.clock.advance(1099);
    await expect(t.client.get('/s')).resolves.toMatchObject({ data: 1 }); // stale, refetching
    await flush();
    await t.clock.advance(1100);
    const p = t.client.get('/s');
    expect(t.of('cache-hit')).toHaveLength(1); // collected: a miss, the caller waits for data
    await expect(p).resolves.toMatchObject({ data: 3 });
  });

  test('gcTime Infinity keeps expired entries (until replaced, invalidated or evicted)', async () => {
    const t = makeClient(
      { cache: { ttl: 1, gcTime: Number.POSITIVE_INFINITY } },
      { handler: () => Response.json(1) },
    );
    for (let i = 0; i < 100; i++) {
      await t.client.get(`/k/${i}`);
      await t.clock.advance(10);
    }
    expect(debugOf(t.client).cacheSize).toBe(100);
  });

  test('invalidation does not report keys that were due for collection', async () => {
    const t = makeClient({ cache: { ttl: 100, gcTime: 100 } }, { handler: () => Response.json(1) });
    await t.client.get('/users/1');
    await t.clock.advance(150);
    await t.client.get('/users/2');
    await t.clock.advance(100);
    expect(t.client.invalidate('/users')).toEqual([t.client.resolve('GET', '/users/2').key]);
  });

  test('CacheStore: a write moves the hand; reads never return a collectable entry', async () => {
    const clock = new FakeClock();
    const store = new CacheStore(10, { clock, gcTime: 0 });
    store.set('GET https://a.test/1', ok(1));
    store.set('GET https://a.test/2', ok(2));
    await clock.advance(10);
    expect(store.get('GET https://a.test/1')).toBeUndefined();
    expect(store.size).toBe(1);
    store.set('GET https://a.test/3', ok(3));
    expect([...store.keys()]).toEqual(['GET https://a.test/3']);
    expect(new CacheStore().gcTime).toBe(300_000);
    expect(() => new CacheStore(1, { gcTime: -1 })).toThrow(RangeError);
    // Infinity is allowed (never collect), and the message says so.
    expect(new CacheStore(1, { gcTime: Infinity }).gcTime).toBe(Infinity);
    expect(() => new CacheStore(1, { gcTime: -1 })).toThrow(
      'keel: `cache.gcTime` must be a non-negative number of ms (or Infinity), got -1',
    );
  });
});

describe('cache options', () => {
  test('maxEntries is part of CacheOptions and bounds the cache', async () => {
    const t = makeClient({ cache: { maxEntries: 2 } }, { handler: () => Response.json(1) });
    for (const p of ['/a', '/b', '/c']) await t.client.get(p);
    expect(debugOf(t.client).cacheSize).toBe(2);
  });

  test('createClient({ cache: false }) disables caching; a request may opt back in', async () => {
    const t = makeClient({ cache: false }, { handler: () => Response.json(1) });
    await t.client.get('/off');
    await t.client.get('/off');
    expect(t.fake.calls).toHaveLength(2);
    expect(debugOf(t.client).cacheSize).toBe(0);
    await t.client.get('/on', { cache: true });
    await t.client.get('/on', { cache: true });
    expect(t.fake.calls).toHaveLength(3);
    expect(createClient({ cache: true, fetch: async () => new Response('') })).toBeDefined();
  });

  test.each([
    [{ gcTime: -1 }, RangeError, /cache.gcTime/],
    [{ gcTime: Number.NaN }, RangeError, /cache.gcTime/],
    [{ gcTime: '5m' as never }, TypeError, /cache.gcTime/],
    [{ maxEntries: 0 }, RangeError, /cache.maxEntries/],
    [{ maxEntries: 1.5 }, RangeError, /cache.maxEntries/],
    [{ maxEntries: '9' as never }, TypeError, /cache.maxEntries/],
  ])('bad client cache option %j', (cache, type, message) => {
    const make = () => createClient({ cache, fetch: async () => new Response('') });
    expect(make).toThrow(type);
    expect(make).toThrow(message);
  });

  test('gcTime and maxEntries on a request are a TypeError saying where they go', async () => {
    const t = makeClient({}, { handler: () => Response.json(1) });
    // Plain JS: the types refuse both on a request (types.test-d.ts).
    await expect(t.client.get('/x', { cache: { gcTime: 1 } as never })).rejects.toThrow(
      'keel: `cache.gcTime` must be absent on a request (it is a client option: createClient({ cache: { gcTime } })), got 1',
    );
    await expect(t.client.get('/x', { cache: { maxEntries: 1 } as never })).rejects.toThrow(
      TypeError,
    );
    expect(t.fake.calls).toHaveLength(0);
  });
});
