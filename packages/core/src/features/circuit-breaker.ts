import { CircuitBreaker } from '../circuit/breaker';
import { OPEN_GUARD } from '../circuit/guard';
import { resolveCircuitOptions } from '../circuit/options';
import type { ClientFeature } from '../types/features';
import type { CircuitBreakerOptions } from '../types/options';
import { disabledCircuitBreaker } from './disabled';
import { controllerOf, feature } from './feature';

/**
 * The per-endpoint circuit breaker for `createBaseClient({ features })`: after
 * `failureThreshold` consecutive countable failures an endpoint's requests are rejected with
 * CircuitOpenError for `resetTimeout` ms, then one probe decides. Takes what `createClient`'s
 * `circuitBreaker` option takes; invalid options throw here.
 *
 * @param options - CircuitBreakerOptions.
 * @default { enabled: true, failureThreshold: 5, resetTimeout: 10000 }
 * @example
 * const client = createBaseClient({ features: [withCircuitBreaker({ failureThreshold: 3 })] });
 */
export function withCircuitBreaker(
  options?: CircuitBreakerOptions,
): ClientFeature<'circuitBreaker'> {
  const resolved = resolveCircuitOptions(options);
  return feature('circuitBreaker', ({ clock, events }) => {
    // Disabled: it guards nothing and answers as an absent breaker (every circuit closed, none
    // kept), so status() creates no circuit for statuses() to list.
    if (!resolved.enabled) return { guard: OPEN_GUARD, controller: disabledCircuitBreaker };
    const breaker = new CircuitBreaker(resolved, clock, events);
    breaker.observe(events);
    return {
      guard: breaker,
      controller: controllerOf(breaker, ['status', 'statuses', 'reset']),
      view: breaker,
      inspectable: breaker,
    };
  });
}
