import { isAbortError } from '../errors/cancelled-error';
import { CodeKind, codeIs, errorCodeOf } from '../errors/error-code';
import { isHttpError } from '../errors/http-error';
import { isCircuitOpenError } from '../errors/is-circuit-open-error';
import { isKeelError } from '../errors/keel-error';
import { isParseError } from '../errors/parse-error';
import { isResponseTooLargeError } from '../errors/response-too-large-error';

/**
 * What a terminal flight error tells the breaker about its endpoint:
 * - `failure`: countable (README "Circuit breaker", countable failures): a 5xx or 429 response, a TimeoutError, a NetworkError
 *   (and any other error that is not an abort, or an HttpError without status).
 * - `answered`: the endpoint answered but the request failed for its own reasons: a 4xx other
 *   than 429, or a 2xx whose body did not parse (ParseError: deterministic per response, not a
 *   sign of unavailability, and not retried either) or was larger than `maxResponseBytes`, or a
 *   NetworkError of a permanent code (a redirect loop, a redirect under `redirect: 'error'`, an
 *   integrity mismatch: the caller's settings refused an answer). Not counted; a half-open probe that ends
 *   like this closes the circuit, since the endpoint is reachable (cockatiel does the same).
 * - `neutral`: cancellation (CancelledError / AbortError), or a CircuitOpenError (a job the
 *   scheduler's pre-start gate refused): says nothing about the endpoint.
 */
export type ErrorVerdict = 'failure' | 'answered' | 'neutral';

export function classifyError(error: unknown): ErrorVerdict {
  if (isAbortError(error) || isCircuitOpenError(error)) return 'neutral';
  if (
    isParseError(error) ||
    isResponseTooLargeError(error) ||
    codeIs(errorCodeOf(error), CodeKind.Permanent)
  )
    return 'answered';
  if (isHttpError(error)) {
    const { status } = error;
    if (status === undefined) return 'failure';
    return status >= 500 || status === 429 ? 'failure' : 'answered';
  }
  return 'failure';
}

/**
 * The verdict on a flight's terminal `error` event. The client turns whatever an attempt fails
 * with into its own errors, so any other error was thrown by the app's own callback (`retryOn`):
 * the request fails with it, but it says nothing about the endpoint.
 */
export function flightVerdict(error: unknown): ErrorVerdict {
  return isKeelError(error) ? classifyError(error) : 'neutral';
}

/** 5xx, 429, timeouts and network errors count toward opening a circuit (README "Circuit breaker"). */
export function isCountableFailure(error: unknown): boolean {
  return classifyError(error) === 'failure';
}
