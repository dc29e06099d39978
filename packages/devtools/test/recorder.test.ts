import { inspect } from '@keel/core';
import { describe, expect, it, vi } from 'vitest';
import { FlightRecorder } from '../src/requests/recorder';
import { clientFor, loopback, manualClock, noop } from './helpers';

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
    // A success's HTTP status is on its `success` event only (its tracker keeps no response).
    expect(recorder.records().map((r) => [r.state, r.outcome, r.endedAt])).toEqual([
      ['done', 'succeeded while the panel was hidden (HTTP status not seen)', 2_000],
      ['failed', 'HTTP 500 Internal Server Error', 2_000],
      ['cancelled', 'cancelled', 2_000],
    ]);
    recorder.stop();
  });
});

describe('FlightRecorder: stopped, then started again, on flights still running', () => {
  it('a flight that moved on while it was stopped shows where it is now, without waiting for its next event', async () => {
    const held = new Map<string, () => void>();
    const hold = (path: string) =>
      new Promise<void>((resolve) => {
        held.set(path, resolve);
      });
    const heldFirst = hold('/first');
    const heldThird = hold('/third');
    const heldStill = hold('/still');
    const server = await loopback(({ path, nth }) => {
      if (path === '/flaky')
        return nth === 1 ? { status: 503 } : { body: {}, held: hold('/flaky') };
      const answers: Record<string, Promise<void>> = {
        '/first': heldFirst,
        '/third': heldThird,
        '/still': heldStill,
      };
      return { body: {}, held: answers[path] };
    });
    // The client's timers are the test's: the retry wait ends when the test says.
    let now = 1_000;
    const timers = new Map<number, () => void>();
    let nextTimer = 0;
    const client = clientFor(server, {
      retry: { attempts: 3, baseDelay: 5_000, backoff: 'fixed' },
      scheduler: { concurrency: 2, priority: true },
      clock: {
        now: () => now,
        setTimeout: ((fn: () => void) => {
          timers.set(++nextTimer, fn);
          return nextTimer;
        }) as never,
        clearTimeout: ((id: number) => timers.delete(id)) as never,
      },
    });
    const recorder = new FlightRecorder(client, 100);
    recorder.start();
    const calls = [
      client.get('/first'),
      client.get('/still'),
      client.get('/flaky'),
      client.get('/third', { priority: 'low' }),
    ].map((call) => call.catch(() => {}));
    const byUrl = (path: string) => recorder.records().find((r) => r.key.endsWith(path))!;
    expect(recorder.records().map((r) => r.state)).toEqual([
      'active',
      'active',
      'queued',
      'queued',
    ]);

    // Hidden at 1,500. /first ends at 2,000: /flaky gets its slot, fails and waits to retry;
    // /third gets the other slot once /flaky's attempt frees it. /still runs on, unchanged.
    const stillBefore = structuredClone(byUrl('/still').segments);
    expect(stillBefore.at(-1)).toEqual({ kind: 'attempt', from: 1_000, to: undefined });
    now = 1_500;
    recorder.stop();
    now = 2_000;
    held.get('/first')!();
    const phases = () =>
      Object.fromEntries(
        inspect(client)
          .flights()
          .map((f) => [f.url.slice(f.url.lastIndexOf('/')), f.phase.state]),
      );
    await vi.waitFor(() =>
      expect(phases()).toEqual({ '/still': 'active', '/flaky': 'retry-wait', '/third': 'active' }),
    );
    now = 3_000;
    recorder.start();

    // Where each one is, with no event since: drawn from when that is known (a retry wait's
    // start), else from now; what it did unseen is a gap after the moment it was hidden.
    expect(byUrl('/first')).toMatchObject({ state: 'done', endedAt: 2_000 });
    const flaky = byUrl('/flaky');
    expect(flaky.state).toBe('retrying');
    expect(flaky.retry).toMatchObject({
      reason: 'backoff',
      delay: 5_000,
      until: 7_000,
      attempt: 1,
    });
    expect(flaky.segments).toEqual([
      { kind: 'queued', from: 1_000, to: 1_500 },
      { kind: 'retry-wait', from: 2_000, to: undefined },
    ]);
    const third = byUrl('/third');
    expect(third.state).toBe('active');
    expect(third.segments).toEqual([
      { kind: 'queued', from: 1_000, to: 1_500 },
      { kind: 'attempt', from: 3_000, to: undefined },
    ]);
    // Nothing changed: its attempt goes on, one segment.
    const still = byUrl('/still');
    expect(still.state).toBe('active');
    expect(still.segments).toEqual(stillBefore);

    // The events that follow carry on from there: its wait ends, and it queues for a slot
    // (/still and /third hold both).
    now = 7_000;
    for (const [id, fn] of [...timers]) {
      timers.delete(id);
      fn();
    }
    await vi.waitFor(() => expect(byUrl('/flaky').state).toBe('queued'));
    expect(byUrl('/flaky').segments.slice(-2)).toEqual([
      { kind: 'retry-wait', from: 2_000, to: 7_000 },
      { kind: 'queued', from: 7_000, to: undefined },
    ]);
    client.cancelAll();
    await Promise.all(calls);
    recorder.stop();
  });

  it('a retry wait seen before the stop and over since is drawn to its end', async () => {
    let release = noop;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const server = await loopback(({ nth }) => (nth === 1 ? { status: 503 } : { body: {}, held }));
    let now = 1_000;
    const timers: (() => void)[] = [];
    const client = clientFor(server, {
      retry: { attempts: 2, baseDelay: 500, backoff: 'fixed' },
      scheduler: { concurrency: 1 },
      clock: {
        now: () => now,
        setTimeout: ((fn: () => void) => timers.push(fn)) as never,
        clearTimeout: noop as never,
      },
    });
    const recorder = new FlightRecorder(client, 100);
    recorder.start();
    const call = client.get('/flaky').catch(() => {});
    await vi.waitFor(() => expect(recorder.records()[0]!.state).toBe('retrying'));
    now = 1_200;
    recorder.stop();
    // Its wait ends at 1,500 and the second attempt starts.
    now = 1_500;
    for (const fn of timers.splice(0)) fn();
    await vi.waitFor(() => expect(inspect(client).flights()[0]!.attempts).toBe(2));
    now = 2_000;
    recorder.start();
    const [record] = recorder.records();
    expect(record!.state).toBe('active');
    expect(record!.segments.slice(-2)).toEqual([
      { kind: 'retry-wait', from: 1_000, to: 1_500 },
      { kind: 'attempt', from: 2_000, to: undefined },
    ]);
    release();
    await call;
    recorder.stop();
  });

  it('a flight that retried and ended while it was stopped: its attempt seen ends when it was last seen', async () => {
    let fail = noop;
    const failing = new Promise<void>((resolve) => {
      fail = resolve;
    });
    const server = await loopback(({ nth }) =>
      nth === 1 ? { status: 503, held: failing } : { body: {} },
    );
    let now = 1_000;
    const timers: (() => void)[] = [];
    const client = clientFor(server, {
      retry: { attempts: 2, baseDelay: 500, backoff: 'fixed' },
      clock: {
        now: () => now,
        setTimeout: ((fn: () => void) => timers.push(fn)) as never,
        clearTimeout: noop as never,
      },
    });
    const recorder = new FlightRecorder(client, 100);
    recorder.start();
    const call = client.get('/flaky');
    now = 1_200;
    recorder.stop();
    // Unseen: the attempt fails at 1,300, the wait ends at 1,800, the second attempt succeeds.
    now = 1_300;
    fail();
    await vi.waitFor(() => expect(timers.length).toBeGreaterThan(0));
    now = 1_800;
    for (const fn of timers.splice(0)) fn();
    await call;
    now = 2_000;
    recorder.start();
    const [record] = recorder.records();
    expect(record).toMatchObject({
      state: 'done',
      endedAt: 1_800,
      outcome: 'succeeded while the panel was hidden (HTTP status not seen)',
    });
    expect(record!.tracker!.attempts).toBe(2);
    expect(record!.segments).toEqual([
      { kind: 'attempt', from: 1_000, to: 1_200, outcome: 'failed' },
    ]);
    recorder.stop();
  });

  it('a rate wait is drawn from when it began, seen at the start or after a stop', async () => {
    let release = noop;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const server = await loopback(({ path }) =>
      path === '/a' ? { body: {}, held } : { body: {} },
    );
    // One attempt per 10 s: /b waits for budget once /a has taken it.
    const clock = manualClock(1_000);
    const client = clientFor(server, {
      scheduler: { concurrency: 1, rateLimit: { requests: 1, interval: 10_000 } },
      clock,
    });
    const parked = (path: string) =>
      inspect(client)
        .flights()
        .find((f) => f.url.endsWith(path))?.phase.state === 'rate-wait';
    const shown = new FlightRecorder(client, 100);
    shown.start();
    const calls = [client.get('/a'), client.get('/b')].map((call) => call.catch(noop));
    clock.advance(100);
    shown.stop();
    // Unseen: /a ends at 1,200 and /b, next in line, waits for budget from then.
    clock.advance(100);
    release();
    await vi.waitFor(() => expect(parked('/b')).toBe(true));
    clock.advance(300);
    // A panel opened now sees /b waiting since 1,200; one shown again, the same.
    const opened = new FlightRecorder(client, 100);
    opened.start();
    const b = opened.records().find((r) => r.key.endsWith('/b'))!;
    expect(b.state).toBe('parked');
    expect(b.segments).toEqual([{ kind: 'rate-wait', from: 1_200, to: undefined }]);
    shown.start();
    const again = shown.records().find((r) => r.key.endsWith('/b'))!;
    expect(again.state).toBe('parked');
    // What it did unseen is a gap: queued until the stop, waiting from 1,200.
    expect(again.segments).toEqual([
      { kind: 'queued', from: 1_000, to: 1_100 },
      { kind: 'rate-wait', from: 1_200, to: undefined },
    ]);
    client.cancelAll();
    await Promise.all(calls);
    opened.stop();
    shown.stop();
  });

  it('started again at once (StrictMode runs effects twice), nothing is redrawn', async () => {
    const server = await loopback(() => ({ body: {}, delay: 60_000 }));
    const now = 1_000;
    const client = clientFor(server, { clock: { now: () => now, setTimeout, clearTimeout } });
    const recorder = new FlightRecorder(client, 100);
    recorder.start();
    const call = client.get('/long').catch(() => {});
    recorder.stop();
    recorder.start();
    expect(recorder.records()[0]!.segments).toEqual([
      { kind: 'attempt', from: 1_000, to: undefined },
    ]);
    client.cancelAll();
    await call;
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

describe('FlightRecorder: telling its listeners', () => {
  it('tells each listener per event from the set itself: one unsubscribed meanwhile is not called', async () => {
    const server = await loopback(() => ({ body: { ok: true } }));
    const client = clientFor(server);
    const recorder = new FlightRecorder(client, 100);
    recorder.start();
    const second = vi.fn();
    let stopSecond = noop;
    // The first listener lets the second go (a view unmounting in the middle of a burst).
    const first = vi.fn(() => stopSecond());
    const stopFirst = recorder.subscribe(first);
    stopSecond = recorder.subscribe(second);
    await client.get('/x');
    expect(first).toHaveBeenCalled();
    expect(second).not.toHaveBeenCalled();
    stopFirst();
    recorder.stop();
  });

  it('a listener that re-subscribes itself during a tell is told once per change, and the tell ends', async () => {
    const server = await loopback(() => ({ body: { ok: true } }));
    const client = clientFor(server);
    const recorder = new FlightRecorder(client, 100);
    recorder.start();
    let calls = 0;
    let stop = noop;
    const again = () => {
      calls++;
      if (calls > 1000) throw new Error('the tell never ended');
      stop();
      stop = recorder.subscribe(again);
    };
    stop = recorder.subscribe(again);
    const before = calls;
    await client.get('/x');
    // Each client event of the request is one change: told once each, never re-entered.
    expect(calls - before).toBeGreaterThan(0);
    expect(calls - before).toBeLessThan(20);
    stop();
    recorder.stop();
  });
});
