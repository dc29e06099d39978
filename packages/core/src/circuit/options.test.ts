import { describe, expect, it } from 'vitest';
import { CIRCUIT_DEFAULTS, resolveCircuitOptions } from './options';

describe('resolveCircuitOptions', () => {
  it('defaults: enabled, threshold 5, resetTimeout 10 s', () => {
    expect(resolveCircuitOptions()).toEqual(CIRCUIT_DEFAULTS);
    expect(CIRCUIT_DEFAULTS).toEqual({ enabled: true, failureThreshold: 5, resetTimeout: 10000 });
    expect(resolveCircuitOptions({ resetTimeout: 0, failureThreshold: 1 })).toEqual({
      enabled: true,
      failureThreshold: 1,
      resetTimeout: 0,
    });
  });

  it('the resolved options are frozen: fixed at creation', () => {
    expect(Object.isFrozen(resolveCircuitOptions({ failureThreshold: 2 }))).toBe(true);
  });

  it('rejects bad values naming the field and showing the value', () => {
    expect(() => resolveCircuitOptions('x' as never)).toThrow(
      'keel: `circuitBreaker` must be an object, got "x"',
    );
    for (const failureThreshold of [0, -1, 1.5, Number.NaN, '3' as never]) {
      expect(() => resolveCircuitOptions({ failureThreshold })).toThrow(
        /`circuitBreaker\.failureThreshold` must be an integer >= 1/,
      );
    }
    for (const resetTimeout of [-1, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(() => resolveCircuitOptions({ resetTimeout })).toThrow(RangeError);
    }
    expect(() => resolveCircuitOptions({ resetTimeout: '1' as never })).toThrow(TypeError);
    expect(() => resolveCircuitOptions({ resetTimeout: -5 })).toThrow(/got -5/);
    expect(() => resolveCircuitOptions({ enabled: 0 as never })).toThrow(
      'keel: `circuitBreaker.enabled` must be true or false, got 0',
    );
  });
});
