import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { LatencyRing, NO_LATENCY, ringSamples } from './latency-ring';

describe('LatencyRing', () => {
  it('is empty until the first sample', () => {
    const ring = new LatencyRing(4);
    expect(ring.size).toBe(0);
    expect(ring.stats()).toBe(NO_LATENCY);
    expect(NO_LATENCY).toEqual({ avg: 0, p50: 0, p95: 0, samples: 0 });
  });

  it('avg, p50 and p95 by nearest rank over the window', () => {
    const ring = new LatencyRing(100);
    for (let i = 100; i >= 1; i--) ring.record(i); // recorded out of order: no sort on record
    expect(ring.stats()).toEqual({ avg: 50.5, p50: 50, p95: 95, samples: 100 });
    const five = new LatencyRing(8);
    for (const ms of [30, 10, 50, 20, 40]) five.record(ms);
    expect(five.stats()).toEqual({ avg: 30, p50: 30, p95: 50, samples: 5 });
  });

  it('keeps only the last `capacity` samples', () => {
    const ring = new LatencyRing(4);
    for (const ms of [1000, 1000, 1000, 1, 2, 3, 4]) ring.record(ms);
    expect(ring.size).toBe(4);
    expect(ring.stats()).toEqual({ avg: 2.5, p50: 2, p95: 4, samples: 4 });
    ring.record(5); // overwrites the oldest, 1
    expect(ring.stats()).toEqual({ avg: 3.5, p50: 3, p95: 5, samples: 4 });
  });

  it('a sample past the longest timer (2^31-1 ms) is a clock jump, not a latency: dropped', () => {
    const ring = new LatencyRing(4);
    for (const ms of [1e12, 2 ** 31, Number.POSITIVE_INFINITY, -1, Number.NaN]) ring.record(ms);
    expect(ring.size).toBe(0);
    ring.record(2 ** 31 - 1);
    expect(ringSamples(ring)).toEqual([2 ** 31 - 1]);
  });

  it('ringSamples lists the window oldest first, across the wrap', () => {
    const ring = new LatencyRing(4);
    expect(ringSamples(ring)).toEqual([]);
    for (const ms of [1, 2, 3]) ring.record(ms);
    expect(ringSamples(ring)).toEqual([1, 2, 3]);
    for (const ms of [4, 5, 6]) ring.record(ms);
    expect(ringSamples(ring)).toEqual([3, 4, 5, 6]);
  });

  it('caches stats until the next sample', () => {
    const ring = new LatencyRing(4);
    ring.record(5);
    const a = ring.stats();
    expect(ring.stats()).toBe(a);
    expect(Object.isFrozen(a)).toBe(true);
    const v = ring.version;
    ring.record(7);
    expect(ring.version).toBe(v + 1);
    expect(ring.stats()).not.toBe(a);
    expect(ring.stats().samples).toBe(2);
  });

  it('ignores values that are not latencies', () => {
    const ring = new LatencyRing(4);
    ring.record(Number.NaN);
    ring.record(-1);
    expect(ring.size).toBe(0);
    ring.record(0);
    expect(ring.stats()).toEqual({ avg: 0, p50: 0, p95: 0, samples: 1 });
  });

  it('keeps its capacity', () => {
    expect(new LatencyRing(4).capacity).toBe(4);
  });

  it('matches a sort of the last window for any history', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 16 }),
        fc.array(fc.integer({ min: 0, max: 10_000 }), { minLength: 1, maxLength: 80 }),
        (capacity, samples) => {
          const ring = new LatencyRing(capacity);
          for (const s of samples) ring.record(s);
          const window = samples.slice(-capacity).sort((a, b) => a - b);
          const n = window.length;
          const stats = ring.stats();
          expect(stats.samples).toBe(n);
          expect(stats.p50).toBe(window[Math.ceil(0.5 * n) - 1]);
          expect(stats.p95).toBe(window[Math.ceil(0.95 * n) - 1]);
          expect(stats.avg).toBeCloseTo(window.reduce((a, b) => a + b, 0) / n, 9);
        },
      ),
    );
  });
});
