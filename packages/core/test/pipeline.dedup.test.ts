import { describe, expect, test } from 'vitest';
import { CancelledError, HttpError } from '../src/index';
import { debugOf, flush, makeClient, settle, spiedSignal, track } from './helpers';

describe('dedup', () => {
  test.each(['GET', 'HEAD', 'OPTIONS'] as const)(
    'concurrent %s requests share one fetch',
    async (method) => {
      const t = makeClient();
      const a = t.client.request(method, '/d', { cache: false });
      const b = t.client.request(method, '/d', { cache: false });
      const c = t.client.request(method, '/d', { cache: false });
      expect(t.fake.calls).toHaveLength(1);
      t.fake.last().text('x');
      const [ra, rb, rc] = await Promise.all([a, b, c]);
      expect(rb).toBe(ra);
      expect(rc).toBe(ra);
    },
  );

  test.each(['POST', 'PUT', 'PATCH', 'DELETE'] as const)(
    '%s is never coalesced',
    async (method) => {
      const t = makeClient({}, { handler: () => new Response('ok') });
      await Promise.all([
        t.client.request(method, '/m', { body: method === 'DELETE' ? undefined : { a: 1 } }),
        t.client.request(method, '/m', { body: method === 'DELETE' ? undefined : { a: 1 } }),
      ]);
      expect(t.fake.calls).toHaveLength(2);
      expect(t.of('dedup')).toHaveLength(0);
    },
  );

  test('owner vs joiners: one request event, a dedup event per joiner with the consumer count', async () => {
    const t = makeClient();
    const key = t.client.resolve('GET', '/own').key;
    const all = [t.client.get('/own'), t.client.get('/own'), t.client.get('/own')];
    expect(t.of('request')).toHaveLength(1);
    expect(t.of('request')[0]).toMatchObject({ key, method: 'GET', url: 'https://api.test/own' });
    expect(t.of('dedup')).toEqual([
      { key, method: 'GET', url: 'https://api.test/own', consumers: 2, endpoint: 'GET /own' },
      { key, method: 'GET', url: 'https://api.test/own', consumers: 3, endpoint: 'GET /own' },
    ]);
    t.fake.last().json([1]);
    await Promise.all(all);
    expect(t.of('success')).toHaveLength(1);
    expect(t.of('cache-write')).toHaveLength(1);
  });

  test('joiners receive the same error instance', async () => {
    const t = makeClient({ retry: false });
    const a = settle(t.client.get('/err'));
    const b = settle(t.client.get('/err'));
    t.fake.last().respond(
      new Response('{"why":"x"}', {
        status: 404,
        headers: { 'content-type': 'application/json' },
      }),
    );
    const [ra, rb] = await Promise.all([a, b]);
    expect(ra.state).toBe('rejected');
    const err = (ra as { reason: unknown }).reason;
    expect(err).toBeInstanceOf(HttpError);
    expect((rb as { reason: unknown }).reason).toBe(err);
    expect(t.of('error')).toHaveLength(1);
  });

  test('requests with different keys (header, query) are not coalesced', async () => {
    const t = makeClient();
    const all = [
      t.client.get('/k', { headers: { accept: 'a' } }),
      t.client.get('/k', { headers: { accept: 'b' } }),
      t.client.get('/k?x=1'),
      t.client.get('/k'),
    ].map(settle);
    expect(t.fake.calls).toHaveLength(4);
    t.client.cancelAll();
    for (const r of await Promise.all(all)) expect(r.state).toBe('rejected');
  });

  test('cancelling one consumer rejects only it; the fetch continues for the others', async () => {
    const t = makeClient();
    const owner = t.client.get('/c1');
    const joiner = t.client.get('/c1');
    const other = t.client.get('/c1');
    const signal = t.fake.last().signal!;
    joiner.cancel();
    await expect(joiner).rejects.toBeInstanceOf(CancelledError);
    owner.cancel(); // the owner leaving does not stop the flight either
    await expect(owner).rejects.toBeInstanceOf(CancelledError);
    expect(signal.aborted).toBe(false);
    t.fake.last().json({ ok: true });
    await expect(other).resolves.toMatchObject({ data: { ok: true } });
    expect(t.of('cancel').map((c) => c.final)).toEqual([false, false]);
    expect(t.of('success')).toHaveLength(1);
  });

  test('the fetch is aborted only when the last consumer leaves', async () => {
    const t = makeClient();
    const a = t.client.get('/c2');
    const b = t.client.get('/c2');
    const signal = t.fake.last().signal!;
    a.cancel();
    await expect(a).rejects.toBeInstanceOf(CancelledError);
    await flush();
    expect(signal.aborted).toBe(false);
    b.cancel();
    expect(signal.aborted).toBe(true);
    await expect(b).rejects.toBeInstanceOf(CancelledError);
    await flush();
    expect(t.of('cancel').map((c) => c.final)).toEqual([false, true]);
    expect(t.of('error')).toHaveLength(0);
    expect(t.of('success')).toHaveLength(0);
    expect(t.of('request')[0]!.tracker.state).toBe('cancelled');
    expect(debugOf(t.client)).toMatchObject({ flights: 0, inflight: 0 });
  });

  test('a request after the flight was torn down starts a new flight instead of joining', async () => {
    const t = makeClient();
    const a = t.client.get('/c3');
    a.cancel();
    await expect(a).rejects.toBeInstanceOf(CancelledError);
    const b = t.client.get('/c3');
    expect(t.fake.calls).toHaveLength(2);
    expect(t.of('dedup')).toHaveLength(0);
    t.fake.last().json(2);
    await expect(b).resolves.toMatchObject({ data: 2 });
    await expect(a).rejects.toBeInstanceOf(CancelledError);
  });

  test('joiner trackers mirror the outcome; the flight tracker is shared by the owner', async () => {
    const t = makeClient();
    const owner = t.client.get('/tr');
    const joiner = t.client.get('/tr');
    joiner.cancel();
    await expect(joiner).rejects.toBeInstanceOf(CancelledError);
    const cancelled = t.of('cancel')[0]!.tracker;
    const flightTracker = t.of('request')[0]!.tracker;
    expect(cancelled).not.toBe(flightTracker);
    expect(cancelled.state).toBe('cancelled');
    expect(flightTracker.state).toBe('pending');
    t.fake.last().json(1);
    await owner;
    expect(flightTracker.state).toBe('success');
    expect(t.of('success')[0]!.tracker).toBe(flightTracker);
  });

  test('a joiner whose cancel ends the flight reports its own tracker too', async () => {
    const t = makeClient();
    const owner = t.client.get('/last');
    const joiner = t.client.get('/last');
    owner.cancel();
    joiner.cancel();
    await expect(joiner).rejects.toBeInstanceOf(CancelledError);
    const [, last] = t.of('cancel');
    const flightTracker = t.of('request')[0]!.tracker;
    expect(last).toMatchObject({ final: true, tracker: { state: 'cancelled' } });
    expect(last!.tracker).not.toBe(flightTracker);
    expect(flightTracker.state).toBe('cancelled');
    await expect(owner).rejects.toBeInstanceOf(CancelledError);
  });

  test('a caller joining a background refetch gets the refetched data', async () => {
    const t = makeClient({ cache: { ttl: 10, strategy: 'stale-while-revalidate' } });
    const p = t.client.get('/bg');
    t.fake.last().json(1);
    await p;
    await t.clock.advance(20);
    await t.client.get('/bg'); // stale hit, starts the refetch
    expect(t.fake.calls).toHaveLength(2);
    const joined = t.client.get('/bg', { cache: false }); // bypasses the cache, joins the flight
    expect(t.fake.calls).toHaveLength(2);
    t.fake.last().json(2);
    await expect(joined).resolves.toMatchObject({ data: 2 });
  });

  test('cancelling a caller that joined a background refetch does not abort the refetch', async () => {
    const t = makeClient({ cache: { ttl: 10, strategy: 'stale-while-revalidate' } });
    const p = t.client.get('/bg2');
    t.fake.last().json(1);
    await p;
    await t.clock.advance(20);
    await t.client.get('/bg2');
    const joined = t.client.get('/bg2', { cache: false });
    joined.cancel();
    await expect(joined).rejects.toBeInstanceOf(CancelledError);
    expect(t.fake.last().signal?.aborted).toBe(false);
    t.fake.last().json(2);
    await flush();
    expect(t.client.getCached(t.client.resolve('GET', '/bg2').key)?.data).toBe(2);
  });

  // A caching read that joined a `cache: false` read in flight shared its fetch but was never
  // cached: the owner's spec alone decided the write, so the next read fetched again.
  test('a caching read joining a `cache: false` flight shares its fetch and caches the response for itself', async () => {
    const t = makeClient({ cache: { ttl: 5000 } });
    const bypass = t.client.get('/nc', { cache: false });
    const cached = t.client.get('/nc', { tags: ['t'] });
    expect(t.fake.calls).toHaveLength(1);
    t.fake.last().json(1);
    const [a, b] = await Promise.all([bypass, cached]);
    expect(b).toBe(a);
    expect(t.of('cache-write')).toHaveLength(1);
    // Written under the joiner's spec: its ttl, its tags.
    const key = t.client.resolve('GET', '/nc').key;
    expect(t.client.getCached(key)).toMatchObject({ data: 1 });
    await t.clock.advance(4000);
    await expect(t.client.get('/nc')).resolves.toMatchObject({ data: 1 });
    expect(t.fake.calls).toHaveLength(1);
    expect(t.client.invalidate(['t'])).toContain(key);
  });

  test('a `cache: false` read joined by several caching reads is written once, under the first', async () => {
    const t = makeClient();
    const all = [
      t.client.get('/nc2', { cache: false }),
      t.client.get('/nc2', { tags: ['first'] }),
      t.client.get('/nc2', { tags: ['second'] }),
    ];
    t.fake.last().json(2);
    await Promise.all(all);
    expect(t.fake.calls).toHaveLength(1);
    expect(t.of('cache-write')).toHaveLength(1);
    const key = t.client.resolve('GET', '/nc2').key;
    expect(t.client.invalidate(['second'])).toEqual([]);
    expect(t.client.invalidate(['first'])).toEqual([key]);
  });

  test('a `cache: false` flight whose caching joiner was cancelled still writes for it', async () => {
    const t = makeClient();
    const bypass = t.client.get('/nc3', { cache: false });
    const cached = t.client.get('/nc3');
    cached.cancel();
    await expect(cached).rejects.toBeInstanceOf(CancelledError);
    t.fake.last().json(3);
    await bypass;
    // The response was fetched for a reader that asked for it to be cached: it is kept.
    expect(t.client.getCached(t.client.resolve('GET', '/nc3').key)?.data).toBe(3);
  });

  test('10,000 callers building the same relative URL share one fetch and one response', async () => {
    const t = makeClient();
    const k = 7;
    const all = Array.from({ length: 10_000 }, () => t.client.get(`/x?k=${k}`));
    expect(t.fake.calls).toHaveLength(1);
    expect(t.fake.calls[0]!.url).toBe('https://api.test/x?k=7');
    expect(t.of('dedup')).toHaveLength(9_999);
    expect(t.of('dedup').at(-1)!.consumers).toBe(10_000);
    t.fake.last().json({ k });
    const settled = await Promise.all(all);
    expect(settled.every((r) => r === settled[0])).toBe(true);
    expect(settled[0]!.data).toEqual({ k });
    expect(t.of('success')).toHaveLength(1);
    expect(debugOf(t.client)).toMatchObject({ flights: 0, inflight: 0 });
  });

  test('each joined caller has its own cancel() and signal: only those leave, the fetch goes on', async () => {
    const t = makeClient();
    const signals = Array.from({ length: 4 }, () => spiedSignal());
    const callers = Array.from({ length: 1_000 }, (_, i) =>
      t.client.get(
        '/j?k=1',
        i % 250 === 3 ? { signal: signals[(i - 3) / 250]!.signal } : undefined,
      ),
    );
    const outcomes = callers.map(track);
    expect(t.fake.calls).toHaveLength(1);
    const fetchSignal = t.fake.last().signal!;
    // The owner, every other joiner but the last, and two of the signalled callers leave.
    const leaving = new Set<number>([0, 253]);
    for (let i = 0; i < 998; i += 2) leaving.add(i);
    for (const i of leaving) if (i !== 253) callers[i]!.cancel();
    signals[1]!.controller.abort();
    await flush();
    expect(fetchSignal.aborted).toBe(false);
    for (const i of leaving) {
      expect(outcomes[i]!.current.state, `caller ${i}`).toBe('rejected');
      const reason = (outcomes[i]!.current as { reason: unknown }).reason;
      expect(reason).toBeInstanceOf(CancelledError);
    }
    expect(outcomes.filter((o) => o.current.state === 'pending')).toHaveLength(
      1_000 - leaving.size,
    );
    expect(t.of('cancel')).toHaveLength(leaving.size);
    expect(t.of('cancel').every((c) => !c.final)).toBe(true);
    // A caller cancelled twice, or after it left, changes nothing.
    callers[0]!.cancel();
    callers[2]!.cancel();
    expect(t.of('cancel')).toHaveLength(leaving.size);
    t.fake.last().json('done');
    await flush();
    for (let i = 0; i < 1_000; i++) {
      expect(outcomes[i]!.current.state).toBe(leaving.has(i) ? 'rejected' : 'fulfilled');
    }
    expect(signals.reduce((n, s) => n + s.live(), 0)).toBe(0);
    expect(t.of('success')).toHaveLength(1);
    expect(debugOf(t.client)).toMatchObject({ flights: 0, inflight: 0 });
  });

  test('the flight is aborted when the last of many joined callers leaves, whatever their order', async () => {
    const t = makeClient();
    const callers = Array.from({ length: 100 }, () => t.client.get('/all'));
    const outcomes = callers.map(track);
    const fetchSignal = t.fake.last().signal!;
    // Leave in a scrambled order (37 is coprime with 100: every index once).
    for (let n = 0; n < 99; n++) callers[(n * 37) % 100]!.cancel();
    expect(fetchSignal.aborted).toBe(false);
    expect(t.client.isFetching(t.client.resolve('GET', '/all').key)).toBe(true);
    callers[(99 * 37) % 100]!.cancel();
    expect(fetchSignal.aborted).toBe(true);
    await flush();
    expect(outcomes.every((o) => o.current.state === 'rejected')).toBe(true);
    expect(t.of('cancel').map((c) => c.final)).toEqual([...Array(99).fill(false), true]);
    expect(t.of('error')).toHaveLength(0);
    expect(debugOf(t.client)).toMatchObject({ flights: 0, inflight: 0 });
    // A new caller starts a new flight.
    const again = t.client.get('/all');
    expect(t.fake.calls).toHaveLength(2);
    t.fake.last().json(1);
    await expect(again).resolves.toMatchObject({ data: 1 });
  });

  test('a joiner that cancels reports its own tracker: started when it joined, cancelled when it left', async () => {
    const t = makeClient();
    const owner = t.client.get('/when');
    await t.clock.advance(5);
    const joinedAt = t.clock.now();
    const joiner = t.client.get('/when');
    await t.clock.advance(7);
    joiner.cancel();
    await expect(joiner).rejects.toBeInstanceOf(CancelledError);
    const [cancel] = t.of('cancel');
    expect(cancel!.tracker).not.toBe(t.of('request')[0]!.tracker);
    expect(cancel!.tracker).toMatchObject({
      key: t.client.resolve('GET', '/when').key,
      state: 'cancelled',
      startedAt: joinedAt,
      endedAt: joinedAt + 7,
      attempts: 0,
    });
    t.fake.last().json(1);
    await owner;
  });
});
