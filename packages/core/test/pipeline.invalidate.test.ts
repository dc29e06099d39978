import { describe, expect, test } from 'vitest';
import type { CacheUpdate } from '../src/index';
import { afterWrite, watchCache } from '../src/internals';
import { debugOf, flush, makeClient, type TestClient } from './helpers';

let seq = 0;
const counter = () => () => Response.json({ n: ++seq });

async function prime(t: TestClient, ...urls: string[]) {
  for (const url of urls) {
    const p = t.client.get(url);
    const call = t.fake.calls.at(-1);
    if (call && !call.done) call.json({ url });
    await p;
  }
}
const keyOf = (t: TestClient, url: string) => t.client.resolve('GET', url).key;

describe('subscribe', () => {
  test('by key: receives write for that key only; unsubscribe stops updates', async () => {
    const t = makeClient({}, { handler: counter() });
    const updates: CacheUpdate[] = [];
    const off = t.client.subscribe(keyOf(t, '/s/1'), (u) => updates.push(u));
    await t.client.get('/s/1');
    await t.client.get('/s/2');
    expect(updates).toHaveLength(1);
    expect(updates[0]).toMatchObject({ type: 'write', key: keyOf(t, '/s/1') });
    expect(updates[0]!.response?.status).toBe(200);
    off();
    t.client.clearCache();
    await t.client.get('/s/1');
    expect(updates).toHaveLength(1);
  });

  test('by predicate: receives updates for every accepted key', async () => {
    const t = makeClient({}, { handler: counter() });
    const keys: string[] = [];
    t.client.subscribe(
      (k) => k.includes('/p/'),
      (u) => keys.push(u.key),
    );
    await t.client.get('/p/1');
    await t.client.get('/q/1');
    await t.client.get('/p/2');
    expect(keys).toEqual([keyOf(t, '/p/1'), keyOf(t, '/p/2')]);
  });

  test('interest is reference-counted per key and cleaned up on unsubscribe', () => {
    const t = makeClient();
    const key = keyOf(t, '/rc');
    const offs = [
      t.client.subscribe(key, () => {}),
      t.client.subscribe(key, () => {}),
      t.client.subscribe(
        (k) => k === key,
        () => {},
      ),
    ];
    expect(debugOf(t.client).subscriptions).toBe(3);
    offs[0]!();
    offs[0]!(); // a second call is a no-op
    expect(debugOf(t.client).subscriptions).toBe(2);
    offs[1]!();
    offs[2]!();
    expect(debugOf(t.client).subscriptions).toBe(0);
  });
});

describe('invalidate', () => {
  test('a path is segment-aware: /users hits /users, /users/7, /users?x=1, not /users-x', async () => {
    const t = makeClient();
    await prime(t, '/users', '/users/7', '/users?x=1', '/users-x', '/other/users');
    const removed = t.client.invalidate('/users');
    expect(removed.sort()).toEqual(
      [keyOf(t, '/users'), keyOf(t, '/users/7'), keyOf(t, '/users?x=1')].sort(),
    );
    expect(debugOf(t.client).cacheSize).toBe(2);
    expect(t.client.getCached(keyOf(t, '/users-x'))).toBeDefined();
  });

  test('a relative path target works with a baseURL that has a path', async () => {
    const t = makeClient({ baseURL: 'https://api.test/v1' });
    await prime(t, '/users/1', '/posts');
    expect(t.client.invalidate('/users')).toEqual([keyOf(t, '/users/1')]);
    expect(t.client.invalidate('/v1/posts')).toEqual([keyOf(t, '/posts')]);
  });

  test('a relative path target is read as a request URL is: encoded, dot segments resolved', async () => {
    // The absolute form of a target was parsed (so `https://api.test/a b` worked), the relative
    // one compared as written: `/a b` never matched the entry of get('/a b'), stored as `/a%20b`.
    const t = makeClient({ baseURL: 'https://api.test/v1' });
    const urls = ['/a b', '/über', './users', '/x/../posts'];
    await prime(t, ...urls);
    for (const url of urls) {
      expect(t.client.invalidate(url), url).toEqual([keyOf(t, url)]);
    }
    await prime(t, '/q b/1', '/q b-x');
    expect(t.client.matches('/q%20b', t.client.resolve('GET', '/q b/1'))).toBe(true);
    expect(t.client.invalidate('/q b')).toEqual([keyOf(t, '/q b/1')]);
  });

  test('a tag array removes entries carrying any of the tags', async () => {
    const t = makeClient({}, { handler: counter() });
    await t.client.get('/t1', { tags: ['a'] });
    await t.client.get('/t2', { tags: ['b', 'c'] });
    await t.client.get('/t3', { tags: ['d'] });
    await t.client.get('/t4');
    expect(t.client.invalidate(['a', 'c']).sort()).toEqual(
      [keyOf(t, '/t1'), keyOf(t, '/t2')].sort(),
    );
    expect(debugOf(t.client).cacheSize).toBe(2);
  });

  test('a predicate over CacheMeta', async () => {
    const t = makeClient({}, { handler: counter() });
    await t.client.get('/pr1', { tags: ['x'] });
    await t.clock.advance(10);
    await t.client.get('/pr2');
    const cutoff = t.clock.now();
    expect(t.client.invalidate((m) => m.storedAt < cutoff)).toEqual([keyOf(t, '/pr1')]);
  });

  test('emits invalidate {keys, target} and CacheUpdate invalidate (no response)', async () => {
    const t = makeClient();
    await prime(t, '/ev/1', '/ev/2');
    const updates: CacheUpdate[] = [];
    t.client.subscribe(
      (k) => k.includes('/ev/'),
      (u) => updates.push(u),
    );
    const removed = t.client.invalidate('/ev', { refetch: false });
    expect(t.of('invalidate')).toEqual([{ keys: removed, target: '/ev' }]);
    expect(updates.map((u) => [u.type, u.key, u.response])).toEqual([
      ['invalidate', keyOf(t, '/ev/1'), undefined],
      ['invalidate', keyOf(t, '/ev/2'), undefined],
    ]);
  });

  // A first read (no entry yet) cut off by invalidate({refetch: false}): nothing was removed, but
  // the key stopped fetching; its subscribers and the cache's watchers hear it at once.
  test('refetch: false cutting a first read in flight tells subscribers and watchers at once', async () => {
    const t = makeClient();
    const key = keyOf(t, '/first');
    const heard: [string, boolean][] = [];
    t.client.subscribe(key, (u) => heard.push([u.type, t.client.isFetching(key)]));
    const off = watchCache(t.client, (c) => heard.push([c.type, t.client.isFetching(key)]));
    const read = t.client.get('/first');
    expect(t.client.isFetching(key)).toBe(true);
    expect(t.client.invalidate('/first', { refetch: false })).toEqual([]);
    expect(heard).toEqual([
      ['remove', false],
      ['invalidate', false],
    ]);
    expect(t.of('invalidate')).toHaveLength(0);
    t.fake.last().json({ n: 1 });
    await read;
    // The cut-off read answers its caller but is not stored.
    expect(t.client.getCached(key)).toBeUndefined();
    expect(heard).toHaveLength(2);
    off();
  });

  test('nothing matched: empty array, no event', () => {
    const t = makeClient();
    expect(t.client.invalidate('/nothing')).toEqual([]);
    expect(t.of('invalidate')).toHaveLength(0);
  });

  test('subscribed keys are refetched and emit revalidate; others are not refetched', async () => {
    const t = makeClient();
    await prime(t, '/rf/1', '/rf/2');
    const updates: CacheUpdate[] = [];
    t.client.subscribe(keyOf(t, '/rf/1'), (u) => updates.push(u));
    t.client.invalidate('/rf');
    expect(t.fake.calls).toHaveLength(3);
    expect(t.fake.last().url).toBe('https://api.test/rf/1');
    t.fake.last().json('fresh');
    await flush();
    expect(t.of('revalidate')).toEqual([
      { key: keyOf(t, '/rf/1'), response: expect.objectContaining({ data: 'fresh' }) },
    ]);
    expect(updates.map((u) => u.type)).toEqual(['invalidate', 'revalidate']);
    expect(updates[1]!.response?.data).toBe('fresh');
    expect(t.client.getCached(keyOf(t, '/rf/1'))?.data).toBe('fresh');
    expect(t.client.getCached(keyOf(t, '/rf/2'))).toBeUndefined();
  });

  // clearCache dropped the entries, specs and all: a later invalidation found nothing to match,
  // so a key still on screen kept its pre-clear data until a focus or a manual refetch.
  test('after clearCache, a subscribed key the target matches is told and refetched', async () => {
    const t = makeClient();
    await prime(t, '/cl/1', '/cl/2', '/other');
    const updates: CacheUpdate[] = [];
    t.client.subscribe(keyOf(t, '/cl/1'), (u) => updates.push(u));
    t.client.subscribe(keyOf(t, '/other'), (u) => updates.push(u));
    t.client.clearCache();
    // Nothing was removed (the clear did that): the keys returned and the event say so.
    expect(t.client.invalidate('/cl')).toEqual([]);
    expect(t.of('invalidate')).toEqual([]);
    expect(t.fake.calls).toHaveLength(4);
    expect(t.fake.last().url).toBe('https://api.test/cl/1');
    t.fake.last().json('after');
    await flush();
    expect(updates.map((u) => [u.type, u.key])).toEqual([
      ['invalidate', keyOf(t, '/cl/1')],
      ['revalidate', keyOf(t, '/cl/1')],
    ]);
    expect(t.client.getCached(keyOf(t, '/cl/1'))?.data).toBe('after');
    // Told once: the next invalidation removes the entry the refetch stored, as any.
    expect(t.client.invalidate('/cl')).toEqual([keyOf(t, '/cl/1')]);
    expect(t.fake.calls).toHaveLength(5);
  });

  test('after clearCache, an unsubscribed key is not refetched, nor kept for later', async () => {
    const t = makeClient();
    await prime(t, '/cu');
    const off = t.client.subscribe(keyOf(t, '/cu'), () => {});
    t.client.clearCache();
    off();
    expect(t.client.invalidate('/cu')).toEqual([]);
    t.client.subscribe(keyOf(t, '/cu'), () => {});
    expect(t.client.invalidate('/cu')).toEqual([]);
    expect(t.fake.calls).toHaveLength(1);
  });

  // An entry evicted by maxEntries took its spec along, as clearCache did: a key still
  // subscribed (on screen) was neither told nor refetched by a later invalidation.
  test('a subscribed key whose entry maxEntries evicted is told and refetched, as after clearCache', async () => {
    const t = makeClient({ cache: { maxEntries: 2 } });
    await prime(t, '/ev/1');
    const updates: CacheUpdate[] = [];
    t.client.subscribe(keyOf(t, '/ev/1'), (u) => updates.push(u));
    await prime(t, '/ev/2', '/ev/3');
    expect(t.client.getCached(keyOf(t, '/ev/1'))).toBeUndefined();
    const calls = t.fake.calls.length;
    expect(t.client.invalidate('/ev/1')).toEqual([]);
    expect(t.fake.calls).toHaveLength(calls + 1);
    expect(t.fake.last().url).toBe('https://api.test/ev/1');
    t.fake.last().json('again');
    await flush();
    expect(updates.map((u) => u.type)).toEqual(['invalidate', 'revalidate']);
    // An evicted key nobody subscribes is not kept for later.
    expect(t.client.invalidate('/ev/2')).toEqual([]);
    expect(t.fake.calls).toHaveLength(calls + 1);
  });

  // Evicted specs were kept until some invalidation ran, with no bound: views that subscribe,
  // read and unsubscribe (useQuery mounts) grew memory for good, and a broad predicate
  // subscription turned one invalidate into a request per key ever evicted.
  test('an evicted key is forgotten when its last subscription leaves', async () => {
    const t = makeClient({ cache: { maxEntries: 2 } });
    const offs = ['/fg/1', '/fg/2', '/fg/3', '/fg/4'].map((url) =>
      t.client.subscribe(keyOf(t, url), () => {}),
    );
    await prime(t, '/fg/1', '/fg/2', '/fg/3', '/fg/4');
    expect(debugOf(t.client).remembered).toBe(2);
    for (const off of offs) off();
    expect(debugOf(t.client).remembered).toBe(0);
    // A predicate subscription leaving forgets what only it wanted.
    const off = t.client.subscribe(
      (key) => key.includes('/fg/'),
      () => {},
    );
    await prime(t, '/fg/5', '/fg/6', '/fg/7');
    expect(debugOf(t.client).remembered).toBe(2);
    off();
    expect(debugOf(t.client).remembered).toBe(0);
  });

  test('a broad predicate subscription keeps at most maxEntries evicted keys to refetch', async () => {
    const t = makeClient({ cache: { maxEntries: 3 } });
    t.client.subscribe(
      (key) => key.includes('/bp/'),
      () => {},
    );
    await prime(t, ...Array.from({ length: 20 }, (_, i) => `/bp/${i}`));
    expect(debugOf(t.client).remembered).toBe(3);
    const calls = t.fake.calls.length;
    t.client.invalidate('/bp');
    // The 3 cached entries and the 3 most recently evicted keys; none of the 14 older ones.
    const refetched = t.fake.calls.slice(calls).map((c) => c.url.replace('https://api.test', ''));
    expect(refetched.sort()).toEqual(['/bp/14', '/bp/15', '/bp/16', '/bp/17', '/bp/18', '/bp/19']);
  });

  // A burst of invalidations (a server's keel:invalidate, 100 in a row) detached each refetch
  // and left it running though nobody waited for its answer (it is stored nowhere): 100 reads
  // ran to the end, one after another in a browser, and the tab showed the change ~N x latency
  // late. A detached read no caller waits for is cancelled; one a caller waits for runs on.
  test('a detached read no caller waits for is cancelled: a burst costs one read to the end', async () => {
    const t = makeClient();
    await prime(t, '/burst');
    const updates: CacheUpdate[] = [];
    t.client.subscribe(keyOf(t, '/burst'), (u) => updates.push(u));
    const calls = t.fake.calls.length;
    for (let i = 0; i < 5; i++) t.client.invalidate('/burst');
    const refetches = t.fake.calls.slice(calls);
    expect(refetches).toHaveLength(5);
    // Every refetch but the last was aborted.
    expect(refetches.map((c) => c.signal?.aborted)).toEqual([true, true, true, true, false]);
    expect(t.of('cancel')).toHaveLength(4);
    refetches[4]!.json('last');
    await flush();
    expect(t.client.getCached(keyOf(t, '/burst'))?.data).toBe('last');
    expect(updates.at(-1)?.type).toBe('revalidate');
    // A caller's read is detached, not cancelled: it still gets its answer.
    const read = t.client.get('/burst2');
    t.client.invalidate('/burst2');
    expect(t.fake.last().signal?.aborted).toBe(false);
    t.fake.last().json('mine');
    expect((await read).data).toBe('mine');
  });

  test('refetch:false removes without refetching', async () => {
    const t = makeClient();
    await prime(t, '/nr');
    t.client.subscribe(keyOf(t, '/nr'), () => {});
    t.client.invalidate('/nr', { refetch: false });
    expect(t.fake.calls).toHaveLength(1);
  });

  test('the refetch is coalesced through dedup: a caller joins it', async () => {
    const t = makeClient();
    await prime(t, '/co');
    t.client.subscribe(keyOf(t, '/co'), () => {});
    t.client.subscribe(
      (k) => k === keyOf(t, '/co'),
      () => {},
    ); // two interests, one refetch
    t.client.invalidate('/co');
    const p = t.client.get('/co');
    expect(t.fake.calls).toHaveLength(2);
    expect(t.of('dedup')).toHaveLength(1);
    t.fake.last().json('again');
    await expect(p).resolves.toMatchObject({ data: 'again' });
    expect(t.of('revalidate')).toHaveLength(1);
  });

  test('a failed refetch is swallowed (no unhandled rejection), entry stays removed', async () => {
    const t = makeClient({ retry: { attempts: 1 } });
    await prime(t, '/ff');
    t.client.subscribe(keyOf(t, '/ff'), () => {});
    t.client.invalidate('/ff');
    t.fake.last().respond(new Response('', { status: 500 }));
    await flush();
    expect(t.of('error')).toHaveLength(1);
    expect(t.client.getCached(keyOf(t, '/ff'))).toBeUndefined();
  });

  test('unsubscribing during the refetch: it completes without calling the dead listener', async () => {
    const t = makeClient();
    await prime(t, '/un');
    const updates: CacheUpdate[] = [];
    const off = t.client.subscribe(keyOf(t, '/un'), (u) => updates.push(u));
    t.client.invalidate('/un');
    off();
    t.fake.last().json('x');
    await flush();
    expect(updates.map((u) => u.type)).toEqual(['invalidate']);
    expect(debugOf(t.client)).toMatchObject({ flights: 0, subscriptions: 0 });
  });

  test('successful mutations invalidate their path (and children)', async () => {
    const t = makeClient();
    await prime(t, '/users', '/users/7', '/users-x');
    const p = t.client.post('/users', { name: 'a' });
    t.fake.last().json({ id: 8 });
    await p;
    expect(t.client.getCached(keyOf(t, '/users'))).toBeUndefined();
    expect(t.client.getCached(keyOf(t, '/users/7'))).toBeUndefined();
    expect(t.client.getCached(keyOf(t, '/users-x'))).toBeDefined();
    expect(t.of('invalidate')).toHaveLength(1);
  });

  test('successful mutations invalidate their tags', async () => {
    const t = makeClient({}, { handler: counter() });
    await t.client.get('/feed', { tags: ['feed'] });
    await t.client.get('/other', { tags: ['other'] });
    await t.client.put('/posts/1', { t: 'x' }, { tags: ['feed'] });
    expect(t.client.getCached(keyOf(t, '/feed'))).toBeUndefined();
    expect(t.client.getCached(keyOf(t, '/other'))).toBeDefined();
  });

  test('the cache is invalidated before the mutation caller resumes; subscribed keys refetch', async () => {
    const t = makeClient();
    await prime(t, '/items/1');
    t.client.subscribe(keyOf(t, '/items/1'), () => {});
    const p = t.client.delete('/items/1');
    t.fake.last().respond(new Response(null, { status: 204 }));
    await p;
    expect(t.client.getCached(keyOf(t, '/items/1'))).toBeUndefined();
    expect(t.fake.last().method).toBe('GET'); // the refetch started
  });

  test('a failed mutation invalidates nothing', async () => {
    const t = makeClient({ retry: { attempts: 1 } });
    await prime(t, '/keep');
    const p = t.client.post('/keep', 1);
    t.fake.last().respond(new Response('', { status: 400 }));
    await p.catch(() => {});
    expect(t.client.getCached(keyOf(t, '/keep'))).toBeDefined();
  });
});

describe('invalidation racing an in-flight fetch', () => {
  //  caller     get ──────────── fetch A (old data) ───────────────► resolves old
  //  invalidate           ▲ lands here: A is detached, refetch B starts
  //  refetch                 fetch B (new data) ──────► stored, revalidate
  test('the older response is not stored; the subscribed key ends with data fetched after', async () => {
    const t = makeClient();
    const key = keyOf(t, '/race');
    const updates: CacheUpdate[] = [];
    t.client.subscribe(key, (u) => updates.push(u));

    const p = t.client.get('/race');
    const a = t.fake.last();
    t.client.invalidate('/race');
    expect(t.fake.calls).toHaveLength(2);
    const b = t.fake.last();

    a.json('old'); // the older response lands after the invalidation
    await expect(p).resolves.toMatchObject({ data: 'old' }); // its caller still gets an answer
    expect(t.client.getCached(key)).toBeUndefined(); // but it is not stored as fresh
    expect(updates.filter((u) => u.response?.data === 'old')).toEqual([]);

    b.json('new');
    await flush();
    expect(t.client.getCached(key)?.data).toBe('new');
    expect(updates.at(-1)).toMatchObject({ type: 'revalidate', response: { data: 'new' } });
    expect(t.of('revalidate').map((r) => r.response.data)).toEqual(['new']);
    expect(await t.client.get('/race')).toMatchObject({ data: 'new' });
    expect(t.fake.calls).toHaveLength(2);
  });

  test('same race, the refetch answering first: the old response still does not overwrite', async () => {
    const t = makeClient();
    const key = keyOf(t, '/race2');
    t.client.subscribe(key, () => {});
    const p = t.client.get('/race2');
    const a = t.fake.last();
    t.client.invalidate(['never-matches-tags', 'x']); // no-op: no tags on this flight
    t.client.invalidate('/race2');
    const b = t.fake.last();
    b.json('new');
    await flush();
    a.json('old');
    await p;
    await flush();
    expect(t.client.getCached(key)?.data).toBe('new');
  });

  test('without a subscriber: the old response answers its caller but is not cached', async () => {
    const t = makeClient();
    const p = t.client.get('/race3');
    const a = t.fake.last();
    expect(t.client.invalidate('/race3')).toEqual([]); // nothing cached yet
    expect(t.fake.calls).toHaveLength(1); // no interest: no refetch
    a.json('old');
    await expect(p).resolves.toMatchObject({ data: 'old' });
    expect(t.of('cache-write')).toHaveLength(0);
    const q = t.client.get('/race3');
    expect(t.fake.calls).toHaveLength(2);
    t.fake.last().json('new');
    await expect(q).resolves.toMatchObject({ data: 'new' });
  });

  test('a request made after the invalidation does not join the older flight', async () => {
    const t = makeClient();
    const p = t.client.get('/race4');
    t.client.invalidate('/race4');
    const q = t.client.get('/race4');
    expect(t.fake.calls).toHaveLength(2);
    t.fake.calls[0]!.json('old');
    t.fake.calls[1]!.json('new');
    await expect(p).resolves.toMatchObject({ data: 'old' });
    await expect(q).resolves.toMatchObject({ data: 'new' });
    expect(t.client.getCached(keyOf(t, '/race4'))?.data).toBe('new');
  });

  test('an invalidation during a retry wait: the retried response is not stored', async () => {
    const t = makeClient();
    const key = keyOf(t, '/race5');
    t.client.subscribe(key, () => {});
    const p = t.client.get('/race5');
    t.fake.last().respond(new Response('', { status: 503 }));
    await flush();
    t.client.invalidate('/race5'); // lands while A waits to retry
    const b = t.fake.last();
    expect(b.index).toBe(1);
    b.json('new');
    await flush();
    await t.clock.advance(100);
    t.fake.last().json('old-retry');
    await expect(p).resolves.toMatchObject({ data: 'old-retry' });
    expect(t.client.getCached(key)?.data).toBe('new');
  });

  test('a mutation landing while a read is in flight: the read is not stored', async () => {
    const t = makeClient();
    const key = keyOf(t, '/race6');
    t.client.subscribe(key, () => {});
    const read = t.client.get('/race6');
    const a = t.fake.last();
    const write = t.client.put('/race6', { v: 2 });
    t.fake.last().json({ v: 2 });
    await write;
    const b = t.fake.last(); // refetch after the mutation
    expect(b.method).toBe('GET');
    b.json({ v: 2 });
    await flush();
    a.json({ v: 1 }); // the read sent before the mutation answers last
    await read;
    await flush();
    expect(t.client.getCached(key)?.data).toEqual({ v: 2 });
  });
});

describe('an entry written by hand under its key string', () => {
  const value = { data: { hand: 1 }, status: 200, statusText: 'OK', headers: new Headers() };

  test('over a fetched one: a matching invalidate removes it and refetches it for its subscriber', async () => {
    const t = makeClient({}, { handler: counter() });
    const key = keyOf(t, '/hand/1');
    const updates: CacheUpdate['type'][] = [];
    t.client.subscribe(key, (u) => updates.push(u.type));
    await t.client.get('/hand/1');
    t.client.setCached(key, value); // an optimistic write by key: the fetched entry's spec stays
    expect(t.client.invalidate('/hand')).toEqual([key]);
    await flush();
    expect(t.fake.calls).toHaveLength(2);
    expect(t.client.getCached(key)?.data).not.toEqual(value.data);
    expect(updates).toEqual(['write', 'write', 'invalidate', 'revalidate']);
  });

  test('never fetched: removed and its subscriber told, but not refetched (no spec to send)', async () => {
    const t = makeClient({}, { handler: counter() });
    const key = keyOf(t, '/hand/2');
    const updates: CacheUpdate['type'][] = [];
    t.client.subscribe(key, (u) => updates.push(u.type));
    t.client.setCached(key, value);
    expect(t.client.invalidate('/hand')).toEqual([key]);
    await flush();
    expect(t.client.getCached(key)).toBeUndefined();
    expect(updates).toEqual(['write', 'invalidate']);
    expect(t.fake.calls).toHaveLength(0);
  });
});

describe('afterWrite (internals): the reaction to a successful write', () => {
  const gets = (t: TestClient, path: string) =>
    t.fake.calls.filter((c) => c.method === 'GET' && c.url.endsWith(path));

  test("an invalidation in it keeps the write's own refetch; outside it, it reads again", async () => {
    const t = makeClient(
      {},
      { handler: (c) => (c.method === 'POST' ? Response.json({}) : undefined) },
    );
    t.client.subscribe(keyOf(t, '/todos'), () => {});
    await prime(t, '/todos');
    await t.client.post('/todos', { title: 'c' });
    expect(gets(t, '/todos')).toHaveLength(2); // the write's invalidation refetch
    afterWrite(t.client, () => t.client.invalidate('/todos'));
    expect(gets(t, '/todos')).toHaveLength(2);
    // Outside the reaction anything may have changed since: read again.
    t.client.invalidate('/todos');
    expect(gets(t, '/todos')).toHaveLength(3);
    for (const call of t.fake.pending()) call.json([]);
    await flush();
  });

  test('a read started before the write was answered is not kept: it may lack the write', async () => {
    const t = makeClient(
      {},
      { handler: (c) => (c.method === 'POST' ? Response.json({}) : undefined) },
    );
    t.client.subscribe(keyOf(t, '/stats'), () => {});
    const read = t.client.get('/stats');
    await t.client.post('/todos', { title: 'c' });
    afterWrite(t.client, () => t.client.invalidate('/stats'));
    expect(gets(t, '/stats')).toHaveLength(2);
    for (const call of t.fake.pending()) call.json({});
    await read;
    await flush();
  });
});
