import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { RateBudget } from './rate-budget';

describe('RateBudget', () => {
  it('admits `requests` attempts per window, then frees at oldest + interval', () => {
    const b = new RateBudget(2, 1000);
    expect(b.available(0)).toBe(true);
    b.take(0);
    b.take(10);
    expect(b.available(999)).toBe(false);
    expect(b.freeAt()).toBe(1000);
    expect(b.available(1000)).toBe(true);
    b.take(1000);
    // The window now holds 10 and 1000: the next slot frees at 1010.
    expect(b.available(1009)).toBe(false);
    expect(b.freeAt()).toBe(1010);
    expect(b.available(1010)).toBe(true);
  });

  it('used(now) counts the starts of the last interval', () => {
    const b = new RateBudget(3, 1000);
    expect(b.used(0)).toBe(0);
    b.take(0);
    b.take(500);
    expect(b.used(500)).toBe(2);
    expect(b.used(1000)).toBe(1);
    expect(b.used(1500)).toBe(0);
  });

  it('a clock that steps back never makes the wait longer than `interval`', () => {
    const b = new RateBudget(2, 1000);
    b.take(10_000);
    b.take(10_500);
    // The clock steps back an hour (an NTP correction): the starts look like the future.
    const now = 10_500 - 3_600_000;
    expect(b.available(now)).toBe(false);
    expect(b.freeAt() - now).toBe(1000);
    expect(b.available(now + 999)).toBe(false);
    expect(b.available(now + 1000)).toBe(true);
  });

  it('a clock answering NaN does not refuse forever (a refusal would re-arm a 0 ms timer)', () => {
    const b = new RateBudget(1, 1000);
    b.take(Number.NaN);
    expect(b.available(Number.NaN)).toBe(true);
  });

  it('never admits more than `requests` starts in any interval-long window', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 5 }),
        fc.integer({ min: 1, max: 200 }),
        fc.array(fc.integer({ min: 0, max: 100 }), { maxLength: 60 }),
        (requests, interval, gaps) => {
          const b = new RateBudget(requests, interval);
          const starts: number[] = [];
          let t = 0;
          for (const gap of gaps) {
            t += gap;
            if (b.available(t)) {
              b.take(t);
              starts.push(t);
            } else {
              // When refused, freeAt is in the future and is exactly when it admits again.
              expect(b.freeAt()).toBeGreaterThan(t);
              expect(b.available(b.freeAt())).toBe(true);
            }
          }
          for (const s of starts) {
            expect(starts.filter((x) => x >= s && x < s + interval).length).toBeLessThanOrEqual(
              requests,
            );
          }
        },
      ),
    );
  });
});
