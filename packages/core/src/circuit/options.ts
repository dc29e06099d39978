import {
  checkBoolean,
  checkInteger,
  checkMs,
  checkObject,
  keysOf,
  withDefaults,
} from '../internal/checks';
import { freeze } from '../internal/freeze';
import type { CircuitBreakerOptions } from '../types/options';

/** Circuit breaker options after defaults and validation; fixed for the client's lifetime. */
export interface ResolvedCircuitOptions {
  readonly enabled: boolean;
  readonly failureThreshold: number;
  readonly resetTimeout: number;
}

export const CIRCUIT_DEFAULTS: ResolvedCircuitOptions = /* @__PURE__ */ freeze({
  enabled: true,
  failureThreshold: 5,
  resetTimeout: 10000,
});

const CIRCUIT_KEYS = /* @__PURE__ */ keysOf('', CIRCUIT_DEFAULTS);

/**
 * Resolves `ClientOptions.circuitBreaker` once, at client creation (runtime mutation is not
 * supported: the breaker is fixed at creation, see README "Circuit breaker"). A bad value
 * throws naming the field.
 */
export function resolveCircuitOptions(options: CircuitBreakerOptions = {}): ResolvedCircuitOptions {
  checkObject('circuitBreaker', options, undefined, CIRCUIT_KEYS);
  const r = withDefaults(options, CIRCUIT_DEFAULTS);
  checkBoolean('circuitBreaker.enabled', r.enabled);
  checkInteger('circuitBreaker.failureThreshold', r.failureThreshold, 1);
  // Compared with elapsed time, never armed as a timer: any finite duration works.
  checkMs('circuitBreaker.resetTimeout', r.resetTimeout, Number.MAX_VALUE);
  return freeze(r);
}
