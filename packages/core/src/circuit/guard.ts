import type { CircuitOpenError } from '../errors/circuit-open-error';
import { freeze } from '../internal/freeze';
import type { RequestSpec } from '../request/resolve';

/** The guard's answer for a flight owner. */
export type Admission = { ok: true; probe: boolean } | { ok: false; error: CircuitOpenError };

export const ADMIT: Admission = /* @__PURE__ */ freeze({ ok: true, probe: false });

/** Admitted as the single half-open probe of its circuit. */
export const ADMIT_PROBE: Admission = /* @__PURE__ */ freeze({ ok: true, probe: true });

/**
 * The pipeline's circuit stage, consulted by flight owners only (cache hits and dedup joins
 * bypass it). It learns outcomes from lifecycle events, never from the pipeline directly.
 */
export interface CircuitGuard {
  /** `beforeRequest`: may this owner start? May make it the half-open probe. */
  beforeRequest(spec: RequestSpec): Admission;
  /** Peek used by the scheduler's pre-start gate; changes no state. */
  permits(endpoint: string): boolean;
  /**
   * Gives back the probe slot `beforeRequest` admitted for a flight that never started (its
   * caller's signal threw as it was listened to); none on a guard that admits no probe.
   */
  release?(endpoint: string): void;
}

/** Circuit breaker disabled. */
export const OPEN_GUARD: CircuitGuard = {
  beforeRequest: () => ADMIT,
  permits: () => true,
};
