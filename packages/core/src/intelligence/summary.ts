import type { AdaptiveMetrics, IntelligenceSummary } from '../types/controllers';

/** A summary with every count and rate zero (before any request, or with intelligence off). */
export function emptySummary(adaptive: AdaptiveMetrics): IntelligenceSummary {
  return {
    totalRequests: 0,
    cacheHits: 0,
    cacheMisses: 0,
    deduplicated: 0,
    retriesPerformed: 0,
    retriesRecovered: 0,
    failures: 0,
    rateLimited: 0,
    timeouts: 0,
    cancels: 0,
    activeRequests: 0,
    cacheHitRate: 0,
    dedupRate: 0,
    retryRate: 0,
    failureRate: 0,
    rateLimitRate: 0,
    adaptive,
    circuits: { open: 0, halfOpen: 0, closed: 0 },
    circuitRejected: 0,
  };
}
