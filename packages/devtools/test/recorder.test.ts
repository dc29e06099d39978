import { describe, expect, it } from 'vitest';
import { FlightRecorder } from '../src/requests/recorder';
import { clientFor, loopback, noop } from './helpers';

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

describe('FlightRecorder: a read ended by its last joiner, among many flights of its key', () => {
  /**
   * `n` reads of one key in progress, each detached by an invalidation so the next one starts a
   * flight of its own (two running, the rest queued), each joined by a second caller. The owners
   * leave first (nothing ends), then the joiners, newest or oldest first: each joiner's cancel
   * ends its flight and names the joiner's tracker, not the flight's, so the recorder cannot look
   * the flight up by its tracker.
   */
  async function joinerEnds(n: number, order: 'newest first' | 'oldest first') {
    const server = await loopback(() => ({ body: { ok: true }, delay: 60_000 }));
    const client = clientFor(server, { scheduler: { concurrency: 2 } });
    const recorder = new FlightRecorder(client, 100);
    recorder.start();
    const owners: AbortController[] = [];
    const joiners: AbortController[] = [];
    const settled: Promise<unknown>[] = [];
    for (let i = 0; i < n; i++) {
      const owner = new AbortController();
      const joiner = new AbortController();
      owners.push(owner);
      joiners.push(joiner);
      settled.push(client.get('/j', { signal: owner.signal }).catch(() => {}));
      settled.push(client.get('/j', { signal: joiner.signal }).catch(() => {}));
      client.invalidate('/j');
    }
    const started = recorder.records();
    expect(started).toHaveLength(n);
    expect(started.every((record) => record.joins === 1)).toBe(true);
    for (const owner of owners) owner.abort();
    expect(recorder.records().filter((record) => record.state === 'cancelled')).toHaveLength(0);
    if (order === 'newest first') joiners.reverse();
    for (const joiner of joiners) joiner.abort();
    await Promise.all(settled);
    const records = recorder.records();
    recorder.stop();
    return { visited: recorder.visited, records };
  }

  for (const order of ['newest first', 'oldest first'] as const) {
    it(`10,000 of them ended by their joiners ${order}: each record looked at a bounded number of times`, async () => {
      const small = await joinerEnds(1_000, order);
      const large = await joinerEnds(10_000, order);
      expect(large.records).toHaveLength(100);
      for (const record of large.records) {
        expect(record.key).toBe('GET /j');
        expect(record.state).toBe('cancelled');
      }
      // A search of the key's joined or live flights per cancel looks at about n * n / 2.
      expect(large.visited).toBeLessThanOrEqual(4 * 10_000);
      expect(large.visited / small.visited).toBeLessThan(12);
    }, 60_000);
  }

  it("an older flight of the key ended by its joiner's cancel ends when it was cancelled", async () => {
    const server = await loopback(() => ({ body: { ok: true }, delay: 60_000 }));
    let now = 1_000;
    const client = clientFor(server, { clock: { now: () => now, setTimeout, clearTimeout } });
    const recorder = new FlightRecorder(client, 100);
    recorder.start();
    const owner = new AbortController();
    const joiner = new AbortController();
    const calls = [
      client.get('/k', { signal: owner.signal }).catch(() => {}),
      client.get('/k', { signal: joiner.signal }).catch(() => {}),
    ];
    client.invalidate('/k');
    calls.push(
      client.get('/k').catch(() => {}),
      client.get('/k').catch(() => {}),
    );
    owner.abort();
    now = 2_000;
    joiner.abort();
    // Read later: the flight that ended is found now, and ended at its cancel.
    now = 3_000;
    expect(recorder.records().map((r) => [r.state, r.joins, r.endedAt])).toEqual([
      ['cancelled', 1, 2_000],
      ['active', 1, undefined],
    ]);
    client.cancelAll();
    await Promise.all(calls);
    recorder.stop();
  });
});

describe('FlightRecorder: stopped, then started again', () => {
  it('flights that ended while it was stopped end when they did, as they did', async () => {
    let release = noop;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const server = await loopback(({ path }) => ({ status: path === '/bad' ? 500 : 200, held }));
    let now = 1_000;
    const client = clientFor(server, { clock: { now: () => now, setTimeout, clearTimeout } });
    const recorder = new FlightRecorder(client, 100);
    recorder.start();
    const gone = new AbortController();
    const calls = [
      client.get('/ok'),
      client.get('/bad').catch(() => {}),
      client.get('/gone', { signal: gone.signal }).catch(() => {}),
    ];
    expect(recorder.records().map((r) => r.state)).toEqual(['active', 'active', 'active']);
    // Hidden (an <Activity> keeps the panel's state and runs its effects' cleanups).
    recorder.stop();
    now = 2_000;
    gone.abort();
    release();
    await Promise.all(calls);
    now = 3_000;
    recorder.start();
    expect(recorder.records().map((r) => [r.state, r.outcome, r.endedAt])).toEqual([
      ['done', 'done', 2_000],
      ['failed', 'HTTP 500 Internal Server Error', 2_000],
      ['cancelled', 'cancelled', 2_000],
    ]);
    recorder.stop();
  });
});

describe('FlightRecorder: a flight that retries for long', () => {
  it('keeps its last segments, not one per attempt it ever made', async () => {
    const server = await loopback(() => ({ status: 503 }));
    const client = clientFor(server, {
      retry: { attempts: 300, baseDelay: 0, backoff: 'fixed' },
    });
    const recorder = new FlightRecorder(client, 100);
    recorder.start();
    await client.get('/down').catch(() => {});
    expect(server.count('/down')).toBe(300);
    const [record] = recorder.records();
    expect(record).toMatchObject({ state: 'failed', outcome: 'HTTP 503 Service Unavailable' });
    // Two segments per retry (its wait, its attempt) would be about 600, drawn on every refresh.
    expect(record!.segments.length).toBeLessThanOrEqual(100);
    // The last ones: the flight's end is drawn.
    expect(record!.segments.at(-1)).toMatchObject({ kind: 'attempt', outcome: 'failed' });
    recorder.stop();
  }, 30_000);
});
