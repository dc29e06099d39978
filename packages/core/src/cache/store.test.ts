import { describe, expect, test, vi } from 'vitest';
import { FakeClock } from '../../test/helpers';
import { resolveClientOptions } from '../config';
import { resolveRequest } from '../request/resolve';
import type { ApiResponse, CacheUpdate } from '../types/client';
import { compileTarget } from './match';
import { CacheStore } from './store';

const res = (data: unknown): ApiResponse => ({
  data,
  status: 200,
  statusText: 'OK',
  headers: new Headers(),
});
const key = (path: string) => `GET https://a.test${path}`;

describe('CacheStore', () => {
  test('constructor(defaultTtl?) defaults to 30000 and validates', () => {
    expect(new CacheStore().defaultTtl).toBe(30000);
    expect(new CacheStore(5).defaultTtl).toBe(5);
    expect(() => new CacheStore(-1)).toThrow(RangeError);
    expect(() => new CacheStore(Number.NaN)).toThrow(/`defaultTtl`/);
  });

  test('set/get with ttl from the default or the write', () => {
    const clock = new FakeClock();
    const store = new CacheStore(1000, { clock });
    const a = store.set(key('/a'), res(1));
    expect(a.storedAt).toBe(clock.now());
    expect(a.expiresAt).toBe(clock.now() + 1000);
    expect(store.set(key('/b'), res(2), { ttl: 5 }).expiresAt).toBe(clock.now() + 5);
    expect(store.get(key('/a'))?.response.data).toBe(1);
    expect(store.has(key('/a'))).toBe(true);
    expect(store.has(key('/zzz'))).toBe(false);
    expect(store.size).toBe(2);
  });

  test('isFresh follows the clock; stale entries are kept', async () => {
    const clock = new FakeClock();
    const store = new CacheStore(100, { clock });
    const entry = store.set(key('/a'), res(1));
    expect(store.isFresh(entry)).toBe(true);
    await clock.advance(100);
    expect(store.isFresh(entry)).toBe(false);
    expect(store.get(key('/a'))).toBe(entry);
  });

  test('path and origin are derived from the key when no spec is given', () => {
    const entry = new CacheStore().set('GET https://a.test/users/7?x=1 |h a:b', res(1));
    expect(entry.path).toBe('/users/7');
    expect(entry.origin).toBe('https://a.test');
  });

  test('with a spec, path and origin come from its canonical URL as parsing would give them', () => {
    const config = resolveClientOptions({ fetch: async () => new Response('') });
    for (const url of [
      'https://a.test/users/7?x=1',
      'http://a.test:8080/x',
      'HTTPS://A.test:443/y',
      'http://[::1]:3000/z',
      'https://user:pw@a.test/private',
      'http://127.1/ip',
    ]) {
      const spec = resolveRequest(config, 'GET', url, undefined);
      const entry = new CacheStore().set(spec.key, res(1), { spec });
      const parsed = new URL(url);
      expect(entry.path, url).toBe(parsed.pathname);
      expect(entry.origin, url).toBe(parsed.origin);
    }
  });

  test('maxEntries evicts the least recently written entry', () => {
    const store = new CacheStore(1000, { maxEntries: 2 });
    store.set(key('/a'), res(1));
    store.set(key('/b'), res(2));
    store.set(key('/a'), res(3)); // rewrite moves /a to the end
    store.set(key('/c'), res(4));
    expect([...store.keys()]).toEqual([key('/a'), key('/c')]);
  });

  test('delete and clear', () => {
    const store = new CacheStore();
    store.set(key('/a'), res(1));
    store.set(key('/b'), res(1));
    expect(store.delete(key('/a'))).toBe(true);
    expect(store.delete(key('/a'))).toBe(false);
    store.clear();
    expect(store.size).toBe(0);
  });

  test('removeMatching returns removed entries (path and tags)', () => {
    const store = new CacheStore();
    store.set(key('/users'), res(1));
    store.set(key('/users/7'), res(1));
    store.set(key('/users-x'), res(1));
    store.set(key('/posts'), res(1), { tags: ['feed'] });
    expect(store.removeMatching(compileTarget('/users')).map((e) => e.key)).toEqual([
      key('/users'),
      key('/users/7'),
    ]);
    expect(store.removeMatching(compileTarget(['feed'])).map((e) => e.key)).toEqual([
      key('/posts'),
    ]);
    expect([...store.keys()]).toEqual([key('/users-x')]);
  });

  // A store without keyBase (every `new CacheStore()`) gave a relative key (`GET /users/7`, what
  // createFingerprint and a client write for a relative URL) the path `/`: path invalidation
  // missed it.
  test('a relative key has its own path: path invalidation finds it without keyBase', () => {
    const store = new CacheStore();
    expect(store.set('GET /users/7', res(1))).toMatchObject({ path: '/users/7', origin: '' });
    expect(store.set('GET /users?x=1', res(1))).toMatchObject({ path: '/users', origin: '' });
    expect(store.set('GET users/1', res(1))).toMatchObject({ path: '/users/1', origin: '' });
    store.set(key('/users/8'), res(1));
    store.set('GET /posts', res(1));
    expect(store.removeMatching(compileTarget('/users')).map((e) => e.key)).toEqual([
      'GET /users/7',
      'GET /users?x=1',
      'GET users/1',
      key('/users/8'),
    ]);
    expect([...store.keys()]).toEqual(['GET /posts']);
  });

  test("an entry's tags are its own: neither the written array nor a predicate's CacheMeta can change them", () => {
    const store = new CacheStore();
    const tags = ['feed'];
    store.set(key('/posts'), res(1), { tags });
    tags.push('other');
    const spec = resolveRequest(resolveClientOptions({}), 'GET', 'https://a.test/t', {
      tags: ['t1'],
    });
    store.set(key('/t'), res(2), { spec });
    const seen: string[][] = [];
    store.removeMatching(
      compileTarget((meta) => {
        seen.push([...meta.tags]);
        meta.tags.push('x');
        return false;
      }),
    );
    expect(seen).toEqual([['feed'], ['t1']]);
    expect(store.get(key('/posts'))!.tags).toEqual(['feed']);
    expect(store.get(key('/t'))!.tags).toEqual(['t1']);
    expect(store.removeMatching(compileTarget(['other', 'x'])).map((e) => e.key)).toEqual([]);
    expect(store.removeMatching(compileTarget(['t1'])).map((e) => e.key)).toEqual([key('/t')]);
  });

  test('subscribe by key: write updates, unsubscribe, reference-counted interest', () => {
    const store = new CacheStore();
    const seen: CacheUpdate[] = [];
    const listener = (u: CacheUpdate) => seen.push(u);
    const off1 = store.subscribe(key('/a'), listener);
    const off2 = store.subscribe(key('/a'), listener);
    expect(store.hasInterest(key('/a'))).toBe(true);
    expect(store.subscriptionCount).toBe(2);
    store.set(key('/a'), res(1));
    expect(seen).toHaveLength(2);
    expect(seen[0]).toMatchObject({ type: 'write', key: key('/a'), response: { data: 1 } });
    off1();
    off1(); // idempotent: must not drop the second subscription
    expect(store.hasInterest(key('/a'))).toBe(true);
    off2();
    expect(store.hasInterest(key('/a'))).toBe(false);
    expect(store.subscriptionCount).toBe(0);
    store.set(key('/a'), res(2));
    expect(seen).toHaveLength(2);
  });

  test('subscribe by predicate: only accepted keys, interest follows the predicate', () => {
    const store = new CacheStore();
    const listener = vi.fn();
    const off = store.subscribe((k) => k.includes('/users'), listener);
    store.set(key('/users/1'), res(1));
    store.set(key('/posts'), res(1));
    expect(listener).toHaveBeenCalledTimes(1);
    expect(store.hasInterest(key('/users/9'))).toBe(true);
    expect(store.hasInterest(key('/posts'))).toBe(false);
    off();
    expect(store.hasInterest(key('/users/9'))).toBe(false);
    expect(store.subscriptionCount).toBe(0);
  });

  test('subscriberCount counts every subscription; hasInterest asks predicates until one says yes', () => {
    const store = new CacheStore();
    const asked: string[] = [];
    const predicate = (name: string, accepts: (k: string) => boolean) => (k: string) => {
      asked.push(`${name} ${k}`);
      return accepts(k);
    };
    store.subscribe(key('/a'), () => {});
    store.subscribe(key('/a'), () => {});
    store.subscribe(
      predicate('p1', (k) => k.endsWith('/b')),
      () => {},
    );
    store.subscribe(
      predicate('p2', () => false),
      () => {},
    );
    store.subscribe(
      predicate('p3', () => true),
      () => {},
    );
    expect(store.subscriberCount(key('/a'))).toBe(3);
    expect(store.subscriberCount(key('/b'))).toBe(2);
    expect(store.subscriberCount(key('/c'))).toBe(1);
    expect(asked.splice(0)).toEqual([
      `p1 ${key('/a')}`,
      `p2 ${key('/a')}`,
      `p3 ${key('/a')}`,
      `p1 ${key('/b')}`,
      `p2 ${key('/b')}`,
      `p3 ${key('/b')}`,
      `p1 ${key('/c')}`,
      `p2 ${key('/c')}`,
      `p3 ${key('/c')}`,
    ]);
    expect([key('/a'), key('/b'), key('/c')].map((k) => store.hasInterest(k))).toEqual([
      true,
      true,
      true,
    ]);
    // An exact-key subscription answers alone; otherwise the first predicate that accepts does.
    expect(asked).toEqual([
      `p1 ${key('/b')}`,
      `p1 ${key('/c')}`,
      `p2 ${key('/c')}`,
      `p3 ${key('/c')}`,
    ]);
    expect(store.subscriberCount(key('/none'))).toBe(1);
  });

  test('a throwing listener or predicate does not break other subscribers; onError gets it', async () => {
    const errors: unknown[] = [];
    const contexts: unknown[] = [];
    const store = new CacheStore(30000, {
      onError: (e, context) => {
        errors.push(e);
        contexts.push(context);
      },
    });
    const uncaught: unknown[] = [];
    const onUncaught = (e: unknown) => uncaught.push(e);
    process.on('uncaughtException', onUncaught);
    try {
      const good = vi.fn();
      store.subscribe(key('/a'), () => {
        throw new Error('listener');
      });
      store.subscribe(() => {
        throw new Error('predicate');
      }, vi.fn());
      store.subscribe(key('/a'), good);
      store.set(key('/a'), res(1));
      expect(good).toHaveBeenCalledTimes(1);
      expect(errors.map((e) => (e as Error).message).sort()).toEqual(['listener', 'predicate']);
      expect(contexts).toContainEqual({ source: 'subscriber', key: key('/a') });
      expect(contexts).toContainEqual({ source: 'matcher', key: key('/a') });
      await new Promise((r) => setTimeout(r, 0));
      expect(uncaught).toEqual([]);
    } finally {
      process.off('uncaughtException', onUncaught);
    }
  });

  test('bad set arguments are TypeErrors / RangeErrors naming them; nothing is written', () => {
    // They were used as given: ttl NaN stored an entry that no read found, ttl -5 one that was
    // born expired, tags 'abc' the tags a, b and c, a missing response an entry without one.
    const store = new CacheStore(1000, { clock: new FakeClock() });
    const bad: [string, () => unknown, ErrorConstructor, RegExp][] = [
      ['key', () => store.set(5 as never, res(1)), TypeError, /`key`/],
      ['response', () => store.set(key('/r'), undefined as never), TypeError, /`response`/],
      ['ttl NaN', () => store.set(key('/n'), res(1), { ttl: Number.NaN }), RangeError, /`ttl`/],
      ['ttl -5', () => store.set(key('/m'), res(1), { ttl: -5 }), RangeError, /`ttl`/],
      ['ttl string', () => store.set(key('/s'), res(1), { ttl: '5' as never }), TypeError, /`ttl`/],
      [
        'tags string',
        () => store.set(key('/t'), res(1), { tags: 'abc' as never }),
        TypeError,
        /`tags`/,
      ],
      [
        'tags [5]',
        () => store.set(key('/u'), res(1), { tags: [5] as never }),
        TypeError,
        /`tags\[0\]`/,
      ],
      [
        'storedAt NaN',
        () => store.set(key('/v'), res(1), { storedAt: Number.NaN }),
        RangeError,
        /`storedAt`/,
      ],
    ];
    for (const [what, write, type, message] of bad) {
      expect(write, what).toThrow(type);
      expect(write, what).toThrow(message);
    }
    expect(store.size).toBe(0);
    expect(store.set(key('/ok'), res(1), { ttl: 0, tags: [], storedAt: 0 }).expiresAt).toBe(0);
  });

  test('bad subscribe arguments are TypeErrors', () => {
    const store = new CacheStore();
    expect(() => store.subscribe(key('/a'), 5 as never)).toThrow(TypeError);
    expect(() => store.subscribe(5 as never, () => {})).toThrow(TypeError);
  });

  test('notify delivers revalidate and invalidate updates', () => {
    const store = new CacheStore();
    const seen: CacheUpdate[] = [];
    store.subscribe(key('/a'), (u) => seen.push(u));
    store.set(key('/a'), res(1), { update: 'revalidate' });
    store.notify({ type: 'invalidate', key: key('/a') });
    expect(seen.map((u) => u.type)).toEqual(['revalidate', 'invalidate']);
    expect(seen[1]!.response).toBeUndefined();
  });

  test('watch: each watcher hears every change; one that unwatches while told skips no other', () => {
    const reported: unknown[] = [];
    const store = new CacheStore(1000, { onError: (error) => reported.push(error) });
    const first: string[] = [];
    const second: string[] = [];
    const offFirst = store.watch((change) => {
      first.push(change.type);
      offFirst();
    });
    const offSecond = store.watch((change) => {
      second.push(change.type);
      if (change.type === 'clear') throw new Error('tool bug');
    });
    store.set(key('/a'), res(1));
    store.delete(key('/a'));
    store.clear();
    expect(first).toEqual(['write']);
    expect(second).toEqual(['write', 'remove', 'clear']);
    expect(reported).toEqual([new Error('tool bug')]);
    offSecond();
    offSecond();
    store.set(key('/b'), res(2));
    expect(second).toHaveLength(3);
    // Watched again after every watcher left: heard again.
    const third: string[] = [];
    store.watch((change) => third.push(change.type));
    store.set(key('/c'), res(3));
    expect(third).toEqual(['write']);
    expect(store.subscriptionCount).toBe(0);
  });

  // The store tells a change only while someone watches, checked as the change is made: a
  // removal or a clear made before a watcher came (here while an update is being delivered, so
  // its change would queue) is not told to it later; one made while watched still is.
  test('watch: a removal or a clear made while nobody watched is never told to a later watcher', () => {
    const store = new CacheStore(1000);
    store.set(key('/b'), res(0));
    const heard: string[] = [];
    store.subscribe(key('/a'), () => {
      store.delete(key('/b'));
      store.clear();
      store.watch((change) => heard.push(change.type));
    });
    store.set(key('/a'), res(1));
    expect(heard).toEqual([]);
    store.set(key('/c'), res(2));
    store.clear();
    expect(heard).toEqual(['write', 'clear']);
  });
});

describe('CacheStore.hasInterest called with an extra argument (map, filter)', () => {
  test('answers yes or no whatever follows the key', () => {
    const store = new CacheStore();
    store.subscribe('GET https://a.test/x', () => {});
    store.subscribe(
      (k) => k.endsWith('/x'),
      () => {},
    );
    // map passes the index (then the array) after the key.
    expect(['GET https://a.test/x', 'GET https://a.test/y'].map(store.hasInterest, store)).toEqual([
      true,
      false,
    ]);
  });
});
