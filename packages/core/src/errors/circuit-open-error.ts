import { guardFor } from './brand';
import { type FailedRequest, KeelRequestError } from './keel-error';

/** What a CircuitOpenError adds to its request. */
export interface CircuitOpenErrorInit {
  /** The circuit's endpoint key, `METHOD pathname`. */
  endpoint: string;
}

/** The circuit for `endpoint` (`METHOD pathname`) is open: no attempt was made. */
export class CircuitOpenError extends KeelRequestError {
  override name = 'CircuitOpenError' as const;
  declare readonly endpoint: string;

  constructor(request?: FailedRequest, init?: CircuitOpenErrorInit) {
    const endpoint = init?.endpoint;
    super(request, endpoint ? `Circuit open for ${endpoint}` : 'Circuit open', { endpoint });
  }
}

/** True for a CircuitOpenError, also one from another copy of the package. */
export const isCircuitOpenError = guardFor(CircuitOpenError, 'CircuitOpenError');
