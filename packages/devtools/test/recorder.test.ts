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
