/**
 * The scheduler (and the adaptive observer that follows its jobs) at queue scale: 100,000 queued
 * jobs cancelled one by one in reverse order, by group, or all at once. Each cancel must cost
 * O(1)-ish: measured as the elements of large arrays (> 1000, so a bounded one such as the rate
 * parked list never counts) that array searches and splices walk during the cancels, never as
 * wall-clock time. Afterwards every caller has a CancelledError and nothing is left anywhere.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { type CancellablePromise, CancelledError } from '../src/index';
import { debugOf, type PromiseState, settle } from './helpers';
import { schedulerClient } from './scheduler.helpers';

/** The benchmark's queue; the other scenarios use a quarter (the suite runs them all). */
const N = 100_000;
const QUARTER = N / 4;
const WALKERS = ['indexOf', 'lastIndexOf', 'includes', 'find', 'findIndex', 'splice'] as const;

/** Runs `fn` and returns how many elements of large arrays the array walkers were asked to scan. */
function elementsScanned(fn: () => void): number {
  let scanned = 0;
  const spies = WALKERS.map((name) => {
    const original = Array.prototype[name] as (...args: unknown[]) => unknown;
    return vi.spyOn(Array.prototype, name).mockImplementation(function (
      this: unknown[],
      ...args: unknown[]
    ) {
      if (this.length > 1000) scanned += this.length;
      return original.apply(this, args);
    } as never);
  });
  try {
    fn();
  } finally {
    for (const spy of spies) spy.mockRestore();
  }
  return scanned;
}

afterEach(() => vi.restoreAllMocks());

describe('scheduler at scale: up to 100,000 queued jobs', () => {
  async function queued(adaptive: boolean, n: number) {
    const t = schedulerClient(
      { concurrency: 4, priority: true },
      adaptive ? { adaptive: { enabled: true, concurrency: true } } : {},
    );
    const calls: CancellablePromise<unknown>[] = [];
    const outcomes: Promise<PromiseState<unknown>>[] = [];
    // Mutations are never coalesced: N flights of one key (same URL, same body), all queued.
    for (let i = 0; i < n; i++) {
      const priority = i % 3 === 0 ? 'high' : i % 3 === 1 ? 'normal' : 'low';
      const call = t.client.post(
        '/events',
        { a: 1 },
        { priority, scheduler: { group: `g${i % 2}` } },
      );
      calls.push(call);
      outcomes.push(settle(call));
    }
    await t.clock.advance(0);
    expect(t.client.scheduler().stats()).toMatchObject({ active: 4, queued: n - 4 });
    return { t, calls, outcomes, n };
  }

  async function expectAllCancelled(
    { t, outcomes, n }: Omit<Awaited<ReturnType<typeof queued>>, 'calls'>,
    scanned: number,
  ): Promise<void> {
    // O(1) per cancel: less than one large-array element per job in total (O(n^2) is ~n^2/2).
    expect(scanned).toBeLessThan(n);
    const results = await Promise.all(outcomes);
    expect(
      results.filter((r) => !(r.state === 'rejected' && r.reason instanceof CancelledError)),
    ).toHaveLength(0);
    expect(t.client.scheduler().stats()).toMatchObject({
      active: 0,
      queued: 0,
      delayed: 0,
      completed: 0,
      rejected: n,
      lanes: { high: 0, normal: 0, low: 0 },
    });
    expect(debugOf(t.client)).toMatchObject({ flights: 0, inflight: 0 });
    expect((debugOf(t.client) as { adaptiveFlights?: number }).adaptiveFlights ?? 0).toBe(0);
    expect(t.clock.live).toBe(0);
  }

  it('each caller cancels, newest first (adaptive engine following the jobs)', async () => {
    const q = await queued(true, N);
    const scanned = elementsScanned(() => {
      for (let i = N - 1; i >= 0; i--) q.calls[i]!.cancel();
    });
    await expectAllCancelled(q, scanned);
  }, 60_000);

  it('cancelGroup for one half, cancelAll for the rest (adaptive engine following the jobs)', async () => {
    const q = await queued(true, QUARTER);
    const scanned = elementsScanned(() => {
      q.t.client.cancelGroup('g1');
      q.t.client.cancelAll();
    });
    await expectAllCancelled(q, scanned);
  }, 60_000);

  it('cancelAll of jobs parked for rate budget (a concurrency far above the budget)', async () => {
    // Every job but the first has a free slot and no budget: all of them wait parked.
    const t = schedulerClient({
      concurrency: 1_000_000,
      rateLimit: { requests: 1, interval: 1000 },
    });
    const outcomes: Promise<PromiseState<unknown>>[] = [];
    for (let i = 0; i < QUARTER; i++) outcomes.push(settle(t.client.get(`/parked/${i}`)));
    await t.clock.advance(0);
    expect(t.client.scheduler().stats()).toMatchObject({ active: 1, delayed: QUARTER - 1 });
    const scanned = elementsScanned(() => t.client.cancelAll());
    await expectAllCancelled({ t, outcomes, n: QUARTER }, scanned);
  }, 60_000);

  it('each caller cancels, oldest first (no adaptive engine)', async () => {
    const q = await queued(false, QUARTER);
    const scanned = elementsScanned(() => {
      for (let i = 0; i < QUARTER; i++) q.calls[i]!.cancel();
    });
    await expectAllCancelled(q, scanned);
  }, 60_000);
});
