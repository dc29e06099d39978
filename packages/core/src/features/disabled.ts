import { emptySummary } from '../intelligence/summary';
import { zeroAdaptiveMetrics } from '../internal/counters';
import { endpointKey } from '../internal/endpoint';
import { freeze } from '../internal/freeze';
import { noop } from '../internal/noop';
import type {
  AdaptiveController,
  AdaptiveMetrics,
  CircuitBreakerController,
  IntelligenceController,
} from '../types/controllers';

/*
 * The controllers of a client without a feature: they answer as the feature would when disabled
 * (`enabled: false`), and cost a few bytes instead of the feature's code. The scheduler's is the
 * transparent gate's own (scheduler/controller.ts).
 */

/** Checks `(method, path)` as the feature's controller does (a TypeError / RangeError); no answer. */
const checked = (method: unknown, path: unknown): undefined => void endpointKey(method, path);

/** Nothing observed: an empty snapshot (with the adaptive engine's counters, if it has one). */
export function disabledIntelligence(
  adaptive: () => AdaptiveMetrics = zeroAdaptiveMetrics,
): IntelligenceController {
  return {
    snapshot: () => ({ summary: emptySummary(adaptive()), endpoints: [] }),
    endpoint: checked,
    reset: noop,
  };
}

/** No breaker: every circuit is closed, none is kept. */
export const disabledCircuitBreaker: CircuitBreakerController =
  /* @__PURE__ */ freeze<CircuitBreakerController>({
    status: (method, path) => ({
      endpoint: endpointKey(method, path),
      state: 'closed',
      consecutiveFailures: 0,
      probing: false,
    }),
    statuses: () => [],
    // Like the breaker's: no argument resets all, a method alone all of that method.
    reset: (method, path) =>
      method === undefined && path === undefined ? undefined : checked(method, path ?? ''),
  });

/** Nothing measured, nothing decided. */
export const disabledAdaptive: AdaptiveController = /* @__PURE__ */ freeze<AdaptiveController>({
  snapshot: () => ({ enabled: false, endpoints: {} }),
  endpoint: checked,
  metrics: zeroAdaptiveMetrics,
  reset: noop,
});
