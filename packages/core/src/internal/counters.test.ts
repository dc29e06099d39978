import { describe, expect, it } from 'vitest';
import { ADAPTIVE_COUNTERS, addCounters, zeroAdaptiveMetrics, zeroCounters } from './counters';

describe('counters', () => {
  it('addCounters adds the named fields only', () => {
    const into = { a: 1, b: 2, c: 3 };
    const from = { a: 10, b: 20, c: 30 };
    addCounters(into, from, ['a', 'b']);
    expect(into).toEqual({ a: 11, b: 22, c: 3 });
  });

  it('zeroCounters and zeroAdaptiveMetrics start every counter at 0, a fresh object each time', () => {
    expect(zeroCounters(['x', 'y'])).toEqual({ x: 0, y: 0 });
    const m = zeroAdaptiveMetrics();
    expect(Object.keys(m)).toEqual([...ADAPTIVE_COUNTERS]);
    expect(Object.values(m).every((v) => v === 0)).toBe(true);
    expect(zeroAdaptiveMetrics()).not.toBe(m);
  });
});
