import { hasErrorName } from '../errors/keel-error';

/**
 * What a terminal flight error tells the breaker about its endpoint:
 * - `failure`: countable (spec rule 2): a 5xx or 429 response, a TimeoutError, a NetworkError
 *   (and any other error that is not an abort, or an HttpError without status).
 * - `answered`: the endpoint answered but the request failed for its own reasons: a 4xx other
 *   than 429, or a 2xx whose body did not parse (ParseError: deterministic per response, not a
 *   sign of unavailability, and not retried either) or was larger than `maxResponseBytes`. Not counted; a half-open probe that ends
 *   like this closes the circuit, since the endpoint is reachable (cockatiel does the same).
 * - `neutral`: cancellation (CancelledError / AbortError), or a CircuitOpenError (a job the
 *   scheduler's pre-start gate refused): says nothing about the endpoint.
 */
export type ErrorVerdict = 'failure' | 'answered' | 'neutral';

export function classifyError(error: unknown): ErrorVerdict {
  if (
    hasErrorName(error, 'CancelledError') ||
    hasErrorName(error, 'AbortError') ||
    hasErrorName(error, 'CircuitOpenError')
  ) {
    return 'neutral';
  }
  if (hasErrorName(error, 'ParseError') || hasErrorName(error, 'ResponseTooLargeError')) {
    return 'answered';
  }
  if (hasErrorName(error, 'HttpError')) {
    const status = (error as { status?: unknown }).status;
    if (typeof status !== 'number') return 'failure';
    return status >= 500 || status === 429 ? 'failure' : 'answered';
  }
  return 'failure';
}

/** Spec rule 2: 5xx, 429, timeouts and network errors count toward opening a circuit. */
export function isCountableFailure(error: unknown): boolean {
  return classifyError(error) === 'failure';
}
