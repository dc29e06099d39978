import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { computeDelay } from './backoff';

const base = { baseDelay: 100, maxDelay: 10_000, jitter: false } as const;

describe('computeDelay', () => {
  test('exponential: baseDelay * 2^(attempts-1)', () => {
    const d = [1, 2, 3, 4].map((attempts) =>
      computeDelay({ ...base, attempts, backoff: 'exponential' }),
    );
    expect(d).toEqual([100, 200, 400, 800]);
  });

  test('fixed: always baseDelay', () => {
    const d = [1, 2, 5].map((attempts) => computeDelay({ ...base, attempts, backoff: 'fixed' }));
    expect(d).toEqual([100, 100, 100]);
  });

  test('capped at maxDelay', () => {
    expect(computeDelay({ ...base, attempts: 20, backoff: 'exponential', maxDelay: 1500 })).toBe(
      1500,
    );
    expect(
      computeDelay({ ...base, attempts: 1, backoff: 'fixed', baseDelay: 5000, maxDelay: 10 }),
    ).toBe(10);
  });

  test('huge attempt counts do not overflow past maxDelay', () => {
    expect(computeDelay({ ...base, attempts: 5000, backoff: 'exponential' })).toBe(10_000);
  });

  test('jitter with an injected random: equal jitter between d/2 and d', () => {
    const at = (random: number) =>
      computeDelay({
        ...base,
        attempts: 3,
        backoff: 'exponential',
        jitter: true,
        random: () => random,
      });
    expect(at(0)).toBe(200);
    expect(at(0.5)).toBe(300);
    expect(at(0.999999)).toBe(400);
  });

  test('a random outside [0, 1) is taken modulo 1 (NaN, Infinity: 0): a wait in (0, d], never none', () => {
    const at = (random: number) =>
      computeDelay({
        ...base,
        attempts: 3,
        backoff: 'exponential',
        jitter: true,
        random: () => random,
      });
    for (const r of [Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, 1, 7, -0]) {
      expect(at(r)).toBe(200);
    }
    expect(at(1.5)).toBe(300);
    // Modulo as a number line has it (-0.5 is 0.5), not JS's sign-keeping remainder: -0.5 gave
    // 100, below the half of 400 equal jitter promises, and -0.9999 no wait at all.
    expect(at(-0.5)).toBe(300);
    expect(at(-0.25)).toBe(350);
    expect(at(-0.9999)).toBe(200);
  });

  test('a zero baseDelay is no wait at any attempt, even past 2^1024 growth', () => {
    // 0 * 2^1100 is 0 * Infinity: NaN, a retry event's `delay` and a park of NaN ms.
    for (const jitter of [false, true]) {
      for (const attempts of [1, 1025, 5000]) {
        expect(
          computeDelay({
            attempts,
            baseDelay: 0,
            maxDelay: 30_000,
            backoff: 'exponential',
            jitter,
          }),
        ).toBe(0);
      }
    }
    expect(
      computeDelay({
        attempts: 5000,
        baseDelay: 10,
        maxDelay: 500,
        backoff: 'exponential',
        jitter: false,
      }),
    ).toBe(500);
  });

  test('attempts below 1 behave like the first retry', () => {
    expect(computeDelay({ ...base, attempts: 0, backoff: 'exponential' })).toBe(100);
  });

  test('property: delay is within [min(cap, raw)/2, min(cap, raw)] and never exceeds maxDelay', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 60 }),
        fc.integer({ min: 0, max: 100_000 }),
        fc.integer({ min: 0, max: 100_000 }),
        fc.constantFrom('exponential' as const, 'fixed' as const),
        fc.boolean(),
        fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
        (attempts, baseDelay, maxDelay, backoff, jitter, r) => {
          const d = computeDelay({
            attempts,
            baseDelay,
            maxDelay,
            backoff,
            jitter,
            random: () => r,
          });
          const raw = backoff === 'fixed' ? baseDelay : baseDelay * 2 ** (attempts - 1);
          const cap = Math.min(maxDelay, raw);
          expect(Number.isFinite(d)).toBe(true);
          expect(d).toBeLessThanOrEqual(Math.ceil(cap));
          expect(d).toBeGreaterThanOrEqual(jitter ? Math.floor(cap / 2) : cap);
        },
      ),
    );
  });

  test('property: without jitter, exponential delays never decrease', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 5000 }),
        fc.integer({ min: 0, max: 60_000 }),
        (b, m) => {
          let prev = -1;
          for (let attempts = 1; attempts < 20; attempts++) {
            const d = computeDelay({
              attempts,
              baseDelay: b,
              maxDelay: m,
              backoff: 'exponential',
              jitter: false,
            });
            expect(d).toBeGreaterThanOrEqual(prev);
            prev = d;
          }
        },
      ),
    );
  });
});
