import { brandGuard } from './brand';
import { type FailedRequest, KeelRequestError } from './keel-error';

/** What a CircuitOpenError adds to its request. */
export interface CircuitOpenErrorInit {
  /** The circuit's endpoint key, `METHOD pathname`. */
  endpoint: string;
}

/**
 * The circuit for `endpoint` (`METHOD pathname`) is open: no attempt was made. Built by an app:
 * `new CircuitOpenError('GET /users')` (the endpoint alone), or the request first and then
 * `{ endpoint }`; `endpoint` is '' when none is given, a string as typed.
 */
export class CircuitOpenError extends KeelRequestError {
  override name = 'CircuitOpenError' as const;
  declare readonly endpoint: string;

  constructor(endpoint?: string);
  constructor(request?: FailedRequest, init?: CircuitOpenErrorInit);
  constructor(request?: FailedRequest | string, init?: CircuitOpenErrorInit) {
    const endpoint = typeof request === 'string' ? request : (init?.endpoint ?? '');
    // A string request names no request: a string has no `url` (nor `method`).
    super(
      request as FailedRequest | undefined,
      endpoint ? `Circuit open for ${endpoint}` : 'Circuit open',
      { endpoint },
    );
  }
}

// Its guard, isCircuitOpenError, is made from the brand alone (./is-circuit-open-error): the client
// and the retry policy ask it, and an app without a circuit breaker never makes one of these.
brandGuard('CircuitOpenError', CircuitOpenError);
