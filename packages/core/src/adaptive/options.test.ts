import { describe, expect, it } from 'vitest';
import type { AdaptiveOptions } from '../types/options';
import { ADAPTIVE_DEFAULTS, resolveAdaptiveOptions } from './options';

describe('resolveAdaptiveOptions', () => {
  it('returns undefined when the block is absent or not enabled (nothing is built)', () => {
    expect(resolveAdaptiveOptions(undefined)).toBeUndefined();
    expect(resolveAdaptiveOptions({})).toBeUndefined();
    expect(resolveAdaptiveOptions({ enabled: false, concurrency: true })).toBeUndefined();
  });

  it('fills the documented defaults and freezes the result', () => {
    const r = resolveAdaptiveOptions({ enabled: true });
    expect(r).toEqual(ADAPTIVE_DEFAULTS);
    expect(r).toEqual({
      concurrency: false,
      retry: false,
      rateLimit: false,
      staleWhileRevalidate: false,
      highLatencyMs: 2000,
      lowLatencyMs: 1000,
      degradeSamples: 3,
      recoverySamples: 3,
      changeCooldown: 2,
      minConcurrency: 1,
      rateLimitRatio: 0.2,
      errorRatio: 0.1,
      backoffFactor: 2,
      maxBackoffMs: 10000,
      swrLatencyMs: 1500,
      latencyWindow: 64,
      outcomeWindow: 32,
    });
    expect(Object.isFrozen(r)).toBe(true);
  });

  it('keeps given values', () => {
    const r = resolveAdaptiveOptions({
      enabled: true,
      concurrency: true,
      highLatencyMs: 500,
      lowLatencyMs: 500,
      latencyWindow: 4,
      outcomeWindow: 2,
      rateLimitRatio: 0,
      errorRatio: 1,
      changeCooldown: 0,
    });
    expect(r).toMatchObject({
      concurrency: true,
      highLatencyMs: 500,
      lowLatencyMs: 500,
      latencyWindow: 4,
      outcomeWindow: 2,
      rateLimitRatio: 0,
      errorRatio: 1,
      changeCooldown: 0,
    });
  });

  const bad: [keyof AdaptiveOptions, unknown][] = [
    ['rateLimitRatio', 1.5],
    ['rateLimitRatio', -0.1],
    ['errorRatio', 2],
    ['errorRatio', Number.NaN],
    ['latencyWindow', 3],
    ['latencyWindow', 8.5],
    ['outcomeWindow', 1],
    ['minConcurrency', 0],
    ['degradeSamples', 0],
    ['recoverySamples', 0],
    ['changeCooldown', -1],
    ['highLatencyMs', -5],
    ['lowLatencyMs', Number.POSITIVE_INFINITY],
    ['backoffFactor', 0.5],
  ];
  it.each(bad)('rejects %s = %s with a RangeError naming the field', (field, value) => {
    const options = { enabled: true, [field]: value } as AdaptiveOptions;
    expect(() => resolveAdaptiveOptions(options)).toThrow(RangeError);
    expect(() => resolveAdaptiveOptions(options)).toThrow(`\`adaptive.${field}\``);
  });

  const wrongType: [keyof AdaptiveOptions, unknown][] = [
    ['swrLatencyMs', '1500'],
    ['maxBackoffMs', true],
    ['minConcurrency', '2'],
  ];
  it.each(wrongType)('rejects %s = %s with a TypeError naming the field', (field, value) => {
    const options = { enabled: true, [field]: value } as AdaptiveOptions;
    expect(() => resolveAdaptiveOptions(options)).toThrow(TypeError);
    expect(() => resolveAdaptiveOptions(options)).toThrow(`\`adaptive.${field}\``);
  });

  it('validates a disabled block too', () => {
    expect(() => resolveAdaptiveOptions({ enabled: false, errorRatio: 3 })).toThrow(
      'adaptive.errorRatio',
    );
  });

  it('rejects lowLatencyMs above highLatencyMs, naming both', () => {
    const run = () => resolveAdaptiveOptions({ enabled: true, lowLatencyMs: 3000 });
    expect(run).toThrow(RangeError);
    expect(run).toThrow(
      'keel: `adaptive.lowLatencyMs` must be at most adaptive.highLatencyMs (2000), got 3000',
    );
  });

  it('rejects a non-boolean switch and a non-object block with a TypeError', () => {
    expect(() => resolveAdaptiveOptions({ enabled: 'yes' } as never)).toThrow(TypeError);
    expect(() => resolveAdaptiveOptions({ enabled: 'yes' } as never)).toThrow('adaptive.enabled');
    expect(() => resolveAdaptiveOptions({ enabled: true, retry: 1 } as never)).toThrow(
      'adaptive.retry',
    );
    expect(() => resolveAdaptiveOptions(true as never)).toThrow(TypeError);
  });

  it('shows the bad value', () => {
    expect(() => resolveAdaptiveOptions({ enabled: true, latencyWindow: 2 })).toThrow(
      'keel: `adaptive.latencyWindow` must be an integer >= 4, got 2',
    );
    expect(() => resolveAdaptiveOptions({ enabled: true, errorRatio: '0.1' as never })).toThrow(
      'got "0.1"',
    );
  });
});
