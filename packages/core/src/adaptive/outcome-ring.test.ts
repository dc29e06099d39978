import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { OutcomeRing } from './outcome-ring';

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
