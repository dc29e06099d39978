import { describe, expect, it } from 'vitest';
import type { LatencyStats } from '../types/controllers';
import { resolveIntelligenceOptions } from './options';
import { recommendFrom } from './recommend';

const lat = (p95: number, samples = 5): LatencyStats => ({ avg: p95, p50: p95, p95, samples });
const timeoutOnly = resolveIntelligenceOptions({ adaptiveTimeout: true });
const swrOnly = resolveIntelligenceOptions({ adaptiveStaleWhileRevalidate: true });
const both = resolveIntelligenceOptions({
  adaptiveTimeout: true,
  adaptiveStaleWhileRevalidate: true,
});

describe('recommendFrom', () => {
  it('needs at least 5 samples', () => {
    expect(recommendFrom(lat(200, 4), both)).toBeUndefined();
    expect(recommendFrom(lat(200, 5), both)).toEqual({ timeout: 600 });
  });

  it('adaptiveTimeout: 3 x p95, clamped to 100 ms .. 60 s, whole ms', () => {
    expect(recommendFrom(lat(120), timeoutOnly)).toEqual({ timeout: 360 });
    expect(recommendFrom(lat(10), timeoutOnly)).toEqual({ timeout: 100 });
    expect(recommendFrom(lat(0), timeoutOnly)).toEqual({ timeout: 100 });
    expect(recommendFrom(lat(25_000), timeoutOnly)).toEqual({ timeout: 60_000 });
    expect(recommendFrom(lat(33.4), timeoutOnly)).toEqual({ timeout: 101 });
  });

  it('adaptiveStaleWhileRevalidate: p95 >= 500 ms switches to SWR', () => {
    expect(recommendFrom(lat(499), swrOnly)).toBeUndefined();
    expect(recommendFrom(lat(500), swrOnly)).toEqual({ strategy: 'stale-while-revalidate' });
    expect(recommendFrom(lat(900), both)).toEqual({
      timeout: 2700,
      strategy: 'stale-while-revalidate',
    });
  });

  it('nothing without a switch', () => {
    expect(recommendFrom(lat(900, 50), resolveIntelligenceOptions({}))).toBeUndefined();
  });
});
