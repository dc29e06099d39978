import { describe, expect, test } from 'vitest';
import {
  type ApiResponse,
  CacheStore,
  type CacheUpdate,
  inspect,
  type ListenerErrorContext,
} from '../src/index';
import { collectProcessFailures, flush, makeClient } from './helpers';

/**
 * A subscriber that writes the cache from its callback (`setCached`, `invalidate`): the nested
 * update used to reach the later subscribers before the outer one, so they saw update(new) then
 * update(old) and ended on a stale state (a mounted useQuery showing old data). Updates are
 * queued as events are: each reaches every subscriber before the next goes out.
 */

function res(data: unknown): ApiResponse {
  return { data, status: 200, statusText: 'OK', headers: new Headers() };
}

/** What a subscriber saw: `write:<data>`, `revalidate:<data>` or `invalidate`. */
function seen(u: CacheUpdate): string {
  return u.type === 'invalidate' ? 'invalidate' : `${u.type}:${String(u.response?.data)}`;
}

describe('subscriber updates are delivered in order', () => {
  const uncaught = collectProcessFailures('uncaughtException');

  test('a subscriber that calls setCached: every later subscriber sees the outer update first', () => {
    const t = makeClient();
    const key = t.client.resolve('GET', '/a').key;
    const logs: string[][] = [[], [], []];
    t.client.subscribe(key, (u) => {
      logs[0]!.push(seen(u));
      if (u.type === 'write' && u.response?.data === 1) t.client.setCached(key, res(2));
    });
    t.client.subscribe(key, (u) => logs[1]!.push(seen(u)));
    // A predicate subscription hears the same order.
    t.client.subscribe(
      (k) => k === key,
      (u) => logs[2]!.push(seen(u)),
    );
    t.client.setCached(key, res(1));
    expect(logs).toEqual([
      ['write:1', 'write:2'],
      ['write:1', 'write:2'],
      ['write:1', 'write:2'],
    ]);
    expect(t.client.getCached(key)?.data).toBe(2);
    expect(uncaught).toEqual([]);
  });

  test('a subscriber that invalidates: later subscribers end on the invalidation, as the cache does', () => {
    const t = makeClient();
    const key = t.client.resolve('GET', '/a').key;
    const logs: string[][] = [[], []];
    t.client.subscribe(key, (u) => {
      logs[0]!.push(seen(u));
      if (u.type === 'write') t.client.invalidate('/a', { refetch: false });
    });
    t.client.subscribe(key, (u) => logs[1]!.push(seen(u)));
    t.client.setCached(key, res(1));
    expect(logs).toEqual([
      ['write:1', 'invalidate'],
      ['write:1', 'invalidate'],
    ]);
    expect(t.client.getCached(key)).toBeUndefined();
  });

  test('nested writes several deep go out in the order they were made (FIFO)', () => {
    const t = makeClient();
    const key = t.client.resolve('GET', '/a').key;
    const logs: string[][] = [[], []];
    t.client.subscribe(key, (u) => {
      logs[0]!.push(seen(u));
      const n = u.type === 'write' ? (u.response?.data as number) : 0;
      // Two writes from one callback, and each of them writes again: 1 -> 2, 3 -> 4, 5 ...
      if (n === 1) {
        t.client.setCached(key, res(2));
        t.client.setCached(key, res(3));
      } else if (n === 2) t.client.setCached(key, res(4));
    });
    t.client.subscribe(key, (u) => logs[1]!.push(seen(u)));
    t.client.setCached(key, res(1));
    const order = ['write:1', 'write:2', 'write:3', 'write:4'];
    expect(logs).toEqual([order, order]);
    expect(t.client.getCached(key)?.data).toBe(4);
  });

  test('a subscriber unsubscribed mid-delivery hears nothing queued after; one added hears what is queued', () => {
    const t = makeClient();
    const key = t.client.resolve('GET', '/a').key;
    const logs: string[][] = [[], [], []];
    let offB = () => {};
    t.client.subscribe(key, (u) => {
      logs[0]!.push(seen(u));
      if (u.type === 'write' && u.response?.data === 1) {
        offB();
        t.client.subscribe(key, (v) => logs[2]!.push(seen(v)));
        t.client.setCached(key, res(2));
      }
    });
    offB = t.client.subscribe(key, (u) => logs[1]!.push(seen(u)));
    t.client.setCached(key, res(1));
    // B was subscribed when write:1 went out (each update goes to the subscribers of its start,
    // as an event does); the write queued after its unsubscribe goes to the subscribers then.
    expect(logs).toEqual([['write:1', 'write:2'], ['write:1'], ['write:2']]);
    t.client.setCached(key, res(3));
    expect(logs[1]).toEqual(['write:1']);
    expect(logs[2]).toEqual(['write:2', 'write:3']);
  });

  test('a subscriber added mid-delivery, none removed: it hears only the updates after', () => {
    const store = new CacheStore();
    const logs: string[][] = [[], [], []];
    let added = false;
    store.subscribe('k', (u) => {
      logs[0]!.push(seen(u));
      if (!added) {
        added = true;
        store.subscribe('k', (v) => logs[2]!.push(seen(v)));
      }
    });
    store.subscribe('k', (u) => logs[1]!.push(seen(u)));
    store.set('k', res(1));
    store.set('k', res(2));
    expect(logs).toEqual([['write:1', 'write:2'], ['write:1', 'write:2'], ['write:2']]);
  });

  test('a subscriber that writes then throws: reported once, the queue still drains in order', async () => {
    const reported: [unknown, ListenerErrorContext][] = [];
    const t = makeClient({ onError: (error, context) => reported.push([error, context]) });
    const key = t.client.resolve('GET', '/a').key;
    const boom = new Error('subscriber');
    const logs: string[][] = [[], []];
    t.client.subscribe(key, (u) => {
      logs[0]!.push(seen(u));
      if (u.type === 'write' && u.response?.data === 1) {
        t.client.setCached(key, res(2));
        throw boom;
      }
    });
    t.client.subscribe(key, (u) => logs[1]!.push(seen(u)));
    t.client.setCached(key, res(1));
    expect(logs).toEqual([
      ['write:1', 'write:2'],
      ['write:1', 'write:2'],
    ]);
    // Not stuck delivering: the next write goes out at once.
    t.client.setCached(key, res(3));
    expect(logs[1]).toEqual(['write:1', 'write:2', 'write:3']);
    await flush();
    expect(reported).toEqual([[boom, { source: 'subscriber', key }]]);
    expect(uncaught).toEqual([]);
  });

  test('a response stored while a subscriber writes (the flight end) keeps the order too', async () => {
    const t = makeClient({}, { handler: () => Response.json({ v: 'server' }) });
    const key = t.client.resolve('GET', '/a').key;
    const logs: string[][] = [[], []];
    t.client.subscribe(key, (u) => {
      logs[0]!.push(u.type === 'invalidate' ? 'invalidate' : u.type);
      // An optimistic layer that rewrites every server answer by hand.
      if (u.type === 'write' && (u.response?.data as { v: string } | undefined)?.v === 'server') {
        t.client.setCached(key, res({ v: 'local' }));
      }
    });
    t.client.subscribe(key, (u) =>
      logs[1]!.push(
        u.type === 'invalidate'
          ? 'invalidate'
          : `${u.type}:${(u.response?.data as { v: string } | undefined)?.v}`,
      ),
    );
    await t.client.get('/a');
    expect(logs[1]).toEqual(['write:server', 'write:local']);
    expect(t.client.getCached<{ v: string }>(key)?.data.v).toBe('local');
  });

  test('a standalone CacheStore orders its updates the same way', () => {
    const store = new CacheStore();
    const logs: string[][] = [[], []];
    store.subscribe('k', (u) => {
      logs[0]!.push(seen(u));
      if (u.type === 'write' && u.response?.data === 1) store.set('k', res(2));
    });
    store.subscribe('k', (u) => logs[1]!.push(seen(u)));
    store.set('k', res(1));
    expect(logs).toEqual([
      ['write:1', 'write:2'],
      ['write:1', 'write:2'],
    ]);
    expect(store.get('k')?.response.data).toBe(2);
  });
});

/**
 * Cache watchers (`CacheStore.watch`, `inspect(client).watchCache`) were told at once, not
 * queued: a watcher that wrote the cache from its callback had its nested change reach the later
 * watchers (and the key's subscribers) before the outer one. Changes and updates now share the
 * subscribers' queue: each reaches every watcher and subscriber before the next goes out.
 */
describe('watcher changes are delivered in order', () => {
  test('a watcher that writes: every later watcher hears the outer change first', () => {
    const store = new CacheStore();
    const logs: string[][] = [[], []];
    store.watch((c) => {
      logs[0]!.push(`${c.type}:${'key' in c ? c.key : ''}`);
      if (c.type === 'write' && c.key === 'a') store.set('b', res(1));
    });
    store.watch((c) => logs[1]!.push(`${c.type}:${'key' in c ? c.key : ''}`));
    store.set('a', res(1));
    expect(logs).toEqual([
      ['write:a', 'write:b'],
      ['write:a', 'write:b'],
    ]);
  });

  test("a watcher that rewrites a key: the key's subscribers end on the value the cache holds", () => {
    const store = new CacheStore();
    const seenBy: string[] = [];
    store.watch((c) => {
      if (c.type === 'write' && store.get('k')?.response.data === 1) store.set('k', res(2));
    });
    store.subscribe('k', (u) => seenBy.push(seen(u)));
    store.set('k', res(1));
    expect(seenBy).toEqual(['write:1', 'write:2']);
    expect(store.get('k')?.response.data).toBe(2);
  });

  test('a watcher that writes as a subscriber removes: subscribers hear each change in turn', () => {
    const t = makeClient();
    const key = t.client.resolve('GET', '/a').key;
    const updates: string[] = [];
    t.client.subscribe(key, (u) => {
      updates.push(seen(u));
      if (u.type === 'write') t.client.invalidate('/a', { refetch: false });
    });
    const changes: string[] = [];
    let rewrote = false;
    inspect(t.client).watchCache((c) => {
      changes.push(c.type);
      // A tool that puts the entry back once it is removed.
      if (c.type === 'remove' && !rewrote) {
        rewrote = true;
        t.client.setCached(key, res(3));
      }
    });
    t.client.setCached(key, res(1));
    expect(changes).toEqual(['write', 'remove', 'write', 'remove']);
    expect(updates).toEqual(['write:1', 'invalidate', 'write:3', 'invalidate']);
    expect(t.client.getCached(key)).toBeUndefined();
  });
});
