import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { LatencyRing } from './latency-ring';
import { OutcomeRing } from './outcome-ring';

describe('LatencyRing', () => {
  it('is empty at first', () => {
    expect(new LatencyRing(4).summary()).toEqual({ avg: 0, p50: 0, p95: 0, samples: 0 });
  });

  it('computes avg and nearest-rank p50/p95 over what it holds', () => {
    const ring = new LatencyRing(20);
    for (let i = 20; i >= 1; i--) ring.record(i * 10); // 200, 190, ... 10
    expect(ring.summary()).toEqual({ avg: 105, p50: 100, p95: 190, samples: 20 });
  });

  it('keeps only the last `size` samples', () => {
    const ring = new LatencyRing(4);
    for (const ms of [5000, 5000, 5000, 5000, 10, 20, 30]) ring.record(ms);
    // holds 5000, 10, 20, 30
    expect(ring.summary()).toEqual({ avg: 1265, p50: 20, p95: 5000, samples: 4 });
    ring.record(40);
    expect(ring.summary()).toEqual({ avg: 25, p50: 20, p95: 40, samples: 4 });
    expect(ring.count).toBe(4);
  });

  it('caches the summary until the next sample and forgets on clear', () => {
    const ring = new LatencyRing(4);
    ring.record(1);
    const first = ring.summary();
    expect(ring.summary()).toBe(first);
    ring.record(2);
    expect(ring.summary()).not.toBe(first);
    ring.clear();
    expect(ring.summary().samples).toBe(0);
    ring.record(7);
    expect(ring.summary()).toEqual({ avg: 7, p50: 7, p95: 7, samples: 1 });
  });

  it('matches a sort of the last `size` samples (property)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 4, max: 40 }),
        fc.array(fc.integer({ min: 0, max: 100_000 }), { minLength: 1, maxLength: 200 }),
        (size, samples) => {
          const ring = new LatencyRing(size);
          for (const s of samples) ring.record(s);
          const held = samples.slice(-size).sort((a, b) => a - b);
          const at = (q: number) => held[Math.ceil(q * held.length) - 1];
          const s = ring.summary();
          expect(s.samples).toBe(held.length);
          expect(s.p50).toBe(at(0.5));
          expect(s.p95).toBe(at(0.95));
          expect(s.avg).toBeCloseTo(held.reduce((a, b) => a + b, 0) / held.length, 6);
        },
      ),
    );
  });
});

describe('OutcomeRing', () => {
  it('counts kinds over the last `size` outcomes', () => {
    const ring = new OutcomeRing(4);
    expect(ring.errorRatio).toBe(0);
    expect(ring.rateLimitRatio).toBe(0);
    ring.record('rateLimited');
    ring.record('error');
    ring.record('took');
    ring.record('took');
    expect([ring.errors, ring.rateLimited, ring.count]).toEqual([1, 1, 4]);
    expect(ring.errorRatio).toBe(0.25);
    ring.record('took'); // evicts the 429
    expect([ring.errors, ring.rateLimited]).toEqual([1, 0]);
    ring.record('error'); // evicts the error
    expect(ring.errors).toBe(1);
    expect(ring.errorRatio).toBe(0.25);
    ring.clear();
    expect([ring.errors, ring.rateLimited, ring.count]).toEqual([0, 0, 0]);
  });

  it('matches a recount of the last `size` outcomes (property)', () => {
    const outcome = fc.constantFrom('took' as const, 'error' as const, 'rateLimited' as const);
    fc.assert(
      fc.property(fc.integer({ min: 2, max: 16 }), fc.array(outcome), (size, outcomes) => {
        const ring = new OutcomeRing(size);
        for (const o of outcomes) ring.record(o);
        const held = outcomes.slice(-size);
        expect(ring.count).toBe(held.length);
        expect(ring.errors).toBe(held.filter((o) => o === 'error').length);
        expect(ring.rateLimited).toBe(held.filter((o) => o === 'rateLimited').length);
      }),
    );
  });
});
