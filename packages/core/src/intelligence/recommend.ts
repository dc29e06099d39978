import { freeze } from '../internal/freeze';
import type { IntelligenceRecommendation } from '../request/resolve';
import type { LatencyStats } from '../types/controllers';
import type { ResolvedIntelligenceOptions } from './options';

/** Samples an endpoint needs before any recommendation is made for it. */
export const MIN_SAMPLES = 5;
export const MIN_TIMEOUT = 100;
export const MAX_TIMEOUT = 60_000;
/** p95 at or above this switches an endpoint's reads to stale-while-revalidate. */
export const SWR_LATENCY = 500;

/**
 * The intelligence recommendation for one endpoint from its latency window, or undefined.
 * - adaptiveTimeout: with at least 5 samples, 3 x p95 (rounded up to a whole ms), clamped to
 *   100 ms .. 60 s.
 * - adaptiveStaleWhileRevalidate: with at least 5 samples, p95 >= 500 ms recommends the
 *   `stale-while-revalidate` strategy (it matters for cached GETs only).
 * Request resolution applies it below explicit request options and above client defaults.
 */
export function recommendFrom(
  latency: LatencyStats,
  options: ResolvedIntelligenceOptions,
): IntelligenceRecommendation | undefined {
  if (latency.samples < MIN_SAMPLES) return undefined;
  const out: IntelligenceRecommendation = {};
  if (options.adaptiveTimeout) {
    out.timeout = Math.min(MAX_TIMEOUT, Math.max(MIN_TIMEOUT, Math.ceil(3 * latency.p95)));
  }
  if (options.adaptiveStaleWhileRevalidate && latency.p95 >= SWR_LATENCY) {
    out.strategy = 'stale-while-revalidate';
  }
  return out.timeout === undefined && out.strategy === undefined ? undefined : freeze(out);
}
