import type { AdaptiveMetrics } from '../types/controllers';

/*
 * Counters kept as plain number fields and totalled with one loop over a key list, written once
 * next to what it counts: intelligence folds an evicted endpoint into its retired totals and
 * sums its snapshot, the adaptive engine totals its profiles.
 */

/** Adds each counter `keys` names from `from` into `into`. */
export function addCounters<K extends PropertyKey>(
  into: Record<K, number>,
  from: Readonly<Record<K, number>>,
  keys: readonly K[],
): void {
  for (const key of keys) into[key] += from[key];
}

/** A record with each counter `keys` names at 0. */
export function zeroCounters<K extends PropertyKey>(keys: readonly K[]): Record<K, number> {
  const counters = {} as Record<K, number>;
  for (const key of keys) counters[key] = 0;
  return counters;
}

/** The adaptive engine's counters (intelligence reports zeros when there is no engine). */
export const ADAPTIVE_COUNTERS = [
  'decisions',
  'concurrencyReductions',
  'concurrencyRecoveries',
  'throttles',
  'retryChanges',
] as const satisfies readonly (keyof AdaptiveMetrics)[];

/** Every adaptive counter at 0; a field AdaptiveMetrics adds without a key above fails to compile. */
export function zeroAdaptiveMetrics(): AdaptiveMetrics {
  return zeroCounters(ADAPTIVE_COUNTERS);
}
