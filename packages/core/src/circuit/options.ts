import type { CircuitBreakerOptions } from '../types/options';

/** Circuit breaker options after defaults and validation; fixed for the client's lifetime. */
export interface ResolvedCircuitOptions {
  readonly enabled: boolean;
  readonly failureThreshold: number;
  readonly resetTimeout: number;
}

export const CIRCUIT_DEFAULTS: ResolvedCircuitOptions = Object.freeze({
  enabled: true,
  failureThreshold: 5,
  resetTimeout: 10000,
});

/**
 * Resolves `ClientOptions.circuitBreaker` once, at client creation (runtime mutation is not
 * supported: the breaker is fixed at creation, see README "Circuit breaker"). A bad value throws naming the field.
 */
export function resolveCircuitOptions(options: CircuitBreakerOptions = {}): ResolvedCircuitOptions {
  if (typeof options !== 'object' || options === null) {
    throw new TypeError(`keel: circuitBreaker must be an object, got ${typeOf(options)}`);
  }
  const { enabled = true, failureThreshold = 5, resetTimeout = 10000 } = options;
  if (typeof enabled !== 'boolean') {
    throw new TypeError(`keel: circuitBreaker.enabled must be a boolean, got ${typeOf(enabled)}`);
  }
  if (!Number.isInteger(failureThreshold) || failureThreshold < 1) {
    throw new RangeError(
      `keel: circuitBreaker.failureThreshold must be an integer >= 1, got ${String(failureThreshold)}`,
    );
  }
  if (typeof resetTimeout !== 'number' || !Number.isFinite(resetTimeout) || resetTimeout < 0) {
    throw new RangeError(
      `keel: circuitBreaker.resetTimeout must be a finite number >= 0 (ms), got ${String(resetTimeout)}`,
    );
  }
  return Object.freeze({ enabled, failureThreshold, resetTimeout });
}

function typeOf(value: unknown): string {
  return value === null ? 'null' : typeof value;
}
