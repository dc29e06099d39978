import { guardFor } from './brand';
import { type FailedRequest, KeelError, requestLabel } from './keel-error';

/** What a CircuitOpenError adds to its request. */
export interface CircuitOpenErrorInit {
  /** The circuit's endpoint key, `METHOD pathname`. */
  endpoint: string;
}

/** The circuit for `endpoint` (`METHOD pathname`) is open: no attempt was made. */
export class CircuitOpenError extends KeelError {
  override name = 'CircuitOpenError' as const;
  readonly endpoint: string;
  readonly method: string;
  readonly url: string;

  constructor(request: FailedRequest, init: CircuitOpenErrorInit) {
    super(`Circuit open for ${init.endpoint}${requestLabel(request)}`);
    this.endpoint = init.endpoint;
    this.method = request.method;
    this.url = request.url;
  }
}

/** True for a CircuitOpenError, also one from another copy of the package. */
export const isCircuitOpenError = guardFor(CircuitOpenError, 'core', 'CircuitOpenError');
