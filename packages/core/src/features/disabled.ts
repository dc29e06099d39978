import { emptySummary } from '../intelligence/summary';
import { zeroAdaptiveMetrics } from '../internal/counters';
import { endpointKey } from '../internal/endpoint';
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

/** Nothing observed: an empty snapshot (with the adaptive engine's counters, if it has one). */
export function disabledIntelligence(
  adaptive: () => AdaptiveMetrics = zeroAdaptiveMetrics,
): IntelligenceController {
  return {
    snapshot: () => ({ summary: emptySummary(adaptive()), endpoints: [] }),
    endpoint: noop,
    reset: noop,
  };
}

/** No breaker: every circuit is closed, none is kept. */
export const disabledCircuitBreaker: CircuitBreakerController =
  /* @__PURE__ */ Object.freeze<CircuitBreakerController>({
    status: (method, path) => ({
      endpoint: endpointKey(method, path),
      state: 'closed',
      consecutiveFailures: 0,
      probing: false,
    }),
    statuses: () => [],
    reset: noop,
  });

/** Nothing measured, nothing decided. */
export const disabledAdaptive: AdaptiveController =
  /* @__PURE__ */ Object.freeze<AdaptiveController>({
    snapshot: () => ({ enabled: false, endpoints: {} }),
    endpoint: noop,
    metrics: zeroAdaptiveMetrics,
    reset: noop,
  });
