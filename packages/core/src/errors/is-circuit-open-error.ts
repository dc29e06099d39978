import { brandGuard } from './brand';
import type { CircuitOpenError } from './circuit-open-error';

/** True for a CircuitOpenError, also one from another copy of the package. */
export const isCircuitOpenError = brandGuard<CircuitOpenError>('CircuitOpenError');
