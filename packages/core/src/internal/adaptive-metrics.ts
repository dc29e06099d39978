import type { AdaptiveMetrics } from '../types/controllers';

/** AdaptiveMetrics all zero: a new profile's counters, and what a client without the engine reports. */
export function zeroMetrics(): AdaptiveMetrics {
  return {
    decisions: 0,
    concurrencyReductions: 0,
    concurrencyRecoveries: 0,
    throttles: 0,
    retryChanges: 0,
  };
}
