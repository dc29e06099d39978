import { describe, expect, it } from 'vitest';
import { FlightRecorder } from '../src/requests/recorder';
import { clientFor, loopback } from './helpers';

// The Requests view's recorder on its own: the work it does per event, counted (not timed).

describe('FlightRecorder: trimming to maxFlights', () => {
  /**
   * `n` flights in progress (two running, the rest queued), then all cancelled while the
   * recorder listens: the records it looked at to trim, and what it kept.
   */
  async function cancelInProgress(n: number) {
    const server = await loopback(() => ({ body: { ok: true }, delay: 60_000 }));
    const client = clientFor(server, { scheduler: { concurrency: 2 } });
    const recorder = new FlightRecorder(client, 100);
    recorder.start();
    const settled: Promise<unknown>[] = [];
    for (let i = 0; i < n; i++) settled.push(client.get(`/f/${i}`).catch(() => {}));
    expect(recorder.records()).toHaveLength(n);
    client.cancelAll();
    await Promise.all(settled);
    const records = recorder.records();
    recorder.stop();
    return { visited: recorder.visited, records };
  }

  it('cancelling 10,000 flights in progress looks at each record a bounded number of times', async () => {
    const small = await cancelInProgress(1_000);
    const large = await cancelInProgress(10_000);
    // What is kept: maxFlights records, the oldest dropped first.
    expect(large.records).toHaveLength(100);
    large.records.forEach((record, i) => {
      expect(record.state).toBe('cancelled');
      expect(record.key).toMatch(new RegExp(`/f/${9_900 + i}$`));
    });
    // Linear: a few visits per flight, and ten times the flights is about ten times the work.
    // A rescan of every record per ended flight visits about n * n / 2 (50 million here).
    expect(large.visited).toBeLessThanOrEqual(4 * 10_000);
    expect(large.visited / small.visited).toBeLessThan(12);
  }, 60_000);
});

describe('FlightRecorder: thousands of flights in flight on one key', () => {
  /**
   * `n` POSTs to one key in progress (not deduplicated: a flight each; two running, the rest
   * queued), then each cancelled by its own signal, newest or oldest first: the records the
   * recorder looked at (to trim, and to find the ended flight among its key's live ones).
   */
  async function cancelOnOneKey(n: number, order: 'newest first' | 'oldest first') {
    const server = await loopback(() => ({ body: { ok: true }, delay: 60_000 }));
    const client = clientFor(server, { scheduler: { concurrency: 2 } });
    const recorder = new FlightRecorder(client, 100);
    recorder.start();
    const controllers: AbortController[] = [];
    const settled: Promise<unknown>[] = [];
    for (let i = 0; i < n; i++) {
      const controller = new AbortController();
      controllers.push(controller);
      settled.push(client.post('/f', undefined, { signal: controller.signal }).catch(() => {}));
    }
    expect(recorder.records()).toHaveLength(n);
    if (order === 'newest first') controllers.reverse();
    for (const controller of controllers) controller.abort();
    await Promise.all(settled);
    const records = recorder.records();
    recorder.stop();
    return { visited: recorder.visited, records };
  }

  for (const order of ['newest first', 'oldest first'] as const) {
    it(`cancelling 10,000 of them ${order} looks at each record a bounded number of times`, async () => {
      const small = await cancelOnOneKey(1_000, order);
      const large = await cancelOnOneKey(10_000, order);
      expect(large.records).toHaveLength(100);
      for (const record of large.records) {
        expect(record.key).toBe('POST /f');
        expect(record.state).toBe('cancelled');
      }
      // The last 100 cancelled are kept: the oldest flights when the newest went first.
      const first = large.records[0]!.seq - large.records.at(-1)!.seq;
      expect(Math.abs(first)).toBe(99);
      // Linear: a scan of the key's live flights per cancel looks at about n * n / 2 records.
      expect(large.visited).toBeLessThanOrEqual(4 * 10_000);
      expect(large.visited / small.visited).toBeLessThan(12);
    }, 60_000);
  }

  it("a read cancelled by its owner, then by its last joiner, ends when the joiner's cancel ends it", async () => {
    const server = await loopback(() => ({ body: { ok: true }, delay: 60_000 }));
    const client = clientFor(server);
    const recorder = new FlightRecorder(client, 100);
    recorder.start();
    const owner = new AbortController();
    const joiner = new AbortController();
    const calls = [
      client.get('/j', { signal: owner.signal }).catch(() => {}),
      client.get('/j', { signal: joiner.signal }).catch(() => {}),
      // Another flight of the key, newer: invalidation detached the first one.
    ];
    client.invalidate('/j');
    calls.push(client.get('/j').catch(() => {}));
    const [first, second] = recorder.records();
    expect([first!.joins, first!.state, second!.state]).toEqual([1, 'active', 'active']);
    owner.abort();
    expect(recorder.records()[0]!.state).toBe('active');
    // The cancel that ends the flight names the joiner's tracker, not the flight's.
    joiner.abort();
    expect(recorder.records().map((r) => r.state)).toEqual(['cancelled', 'active']);
    client.cancelAll();
    await Promise.all(calls);
    expect(recorder.records().map((r) => r.state)).toEqual(['cancelled', 'cancelled']);
    recorder.stop();
  });
});
