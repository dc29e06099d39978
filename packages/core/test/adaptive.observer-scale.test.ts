/**
 * The adaptive observer at scale: after `adaptive().reset()` during a burst of identical POSTs
 * (one key, many flights), the old jobs coming back from their retry wait are re-queued under
 * ids the observer no longer knows. Each such `request-queued` must cost O(1), not a walk of
 * every flight of the key (O(n^2) over the burst); so must a final `cancel` carrying a tracker
 * the observer does not follow (a joiner's, or a forgotten flight's). Measured as the steps
 * taken along the observer's per-key flight list (reads of a flight's `older` link), never as
 * wall-clock time.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { debugOf, jsonResponse, makeClient, settle } from './helpers';

const N = 2000;

afterEach(() => vi.restoreAllMocks());

/**
 * From now on, every flight the observer files by key (a Map value with an `older` link) is
 * stored as a proxy counting reads of `older`; returns the counter.
 */
function countListSteps(): { steps: number } {
  const count = { steps: 0 };
  const proxies = new WeakSet<object>();
  const set = Map.prototype.set;
  vi.spyOn(Map.prototype, 'set').mockImplementation(function (
    this: Map<unknown, unknown>,
    key: unknown,
    value: unknown,
  ) {
    if (
      typeof key === 'string' &&
      typeof value === 'object' &&
      value !== null &&
      'older' in value &&
      'measuring' in value &&
      !proxies.has(value)
    ) {
      const proxy = new Proxy(value, {
        get(target, prop, receiver) {
          if (prop === 'older') count.steps++;
          return Reflect.get(target, prop, receiver);
        },
      });
      proxies.add(proxy);
      return set.call(this, key, proxy);
    }
    return set.call(this, key, value);
  } as never);
  return count;
}

describe('adaptive observer at scale', () => {
  it('old jobs re-queued after a reset cost O(1) each, not a walk of the key', async () => {
    let n = 0;
    const t = makeClient(
      {
        scheduler: { concurrency: 4 * N },
        adaptive: { enabled: true, concurrency: true },
        circuitBreaker: { enabled: false },
        // An app that opted POST in (an endpoint that de-duplicates by an idempotency key).
        retry: { attempts: 2, baseDelay: 100, methods: ['POST'] },
      },
      // The first N calls fail (retry after 100 ms); the rest stay pending.
      { handler: () => (n++ < N ? jsonResponse({}, { status: 503 }) : undefined) },
    );
    const old = Array.from({ length: N }, () => settle(t.client.post('/events', { a: 1 })));
    await t.clock.advance(0);
    expect(t.client.scheduler().stats()).toMatchObject({ delayed: N });

    t.client.adaptive().reset();
    const count = countListSteps();
    const fresh = Array.from({ length: N }, () => settle(t.client.post('/events', { a: 1 })));
    await t.clock.advance(0);
    expect(t.client.scheduler().stats()).toMatchObject({ active: N, delayed: N });

    count.steps = 0;
    await t.clock.advance(100); // the old jobs come back: N request-queued with unknown ids
    expect(t.client.scheduler().stats()).toMatchObject({ active: 2 * N, delayed: 0 });
    // O(1) each: a few steps per job at most (O(n^2) is N steps per job).
    expect(count.steps).toBeLessThan(4 * N);

    vi.restoreAllMocks();
    t.client.cancelAll();
    await t.clock.runAll();
    const results = await Promise.all([...old, ...fresh]);
    expect(results.filter((r) => r.state !== 'rejected')).toHaveLength(0);
    expect((debugOf(t.client) as { adaptiveFlights?: number }).adaptiveFlights).toBe(0);
  });

  it('a final cancel costs O(1), a joiner’s (its flight detached) or a flight’s it forgot', async () => {
    const t = makeClient(
      { adaptive: { enabled: true, concurrency: true }, circuitBreaker: { enabled: false } },
      { handler: () => undefined }, // nothing answers: every flight stays live
    );
    // N live flights of one key, each with its owner and a joiner: an invalidation detaches the
    // flight in progress, so the next read starts a new one.
    const owners = [];
    const joiners = [];
    for (let i = 0; i < N; i++) {
      owners.push(t.client.get('/live'));
      joiners.push(t.client.get('/live'));
      t.client.invalidate('/live');
    }
    const outcomes = [...owners, ...joiners].map(settle);
    expect((debugOf(t.client) as { adaptiveFlights?: number }).adaptiveFlights).toBe(N);
    const count = countListSteps();
    for (const owner of owners) owner.cancel(); // not final: each flight keeps its joiner
    for (const joiner of joiners) joiner.cancel(); // final, with the joiner's own tracker
    // O(1) each (a walk of the key's flights is up to N steps per cancel).
    expect(count.steps).toBeLessThan(4 * N);
    expect((debugOf(t.client) as { adaptiveFlights?: number }).adaptiveFlights).toBe(0);
    expect(t.client.adaptive().snapshot().endpoints['GET /live']!.signals.active).toBe(0);

    // Flights the observer forgot (an adaptive reset) ended by their owner's final cancel.
    const old = Array.from({ length: N }, () => t.client.post('/events', { a: 1 }));
    t.client.adaptive().reset();
    const fresh = Array.from({ length: N }, () => t.client.post('/events', { a: 1 }));
    outcomes.push(...[...old, ...fresh].map(settle));
    count.steps = 0;
    for (const p of old) p.cancel();
    expect(count.steps).toBeLessThan(4 * N);
    vi.restoreAllMocks();
    for (const p of fresh) p.cancel();
    await Promise.all(outcomes);
    expect((debugOf(t.client) as { adaptiveFlights?: number }).adaptiveFlights).toBe(0);
  });
});
