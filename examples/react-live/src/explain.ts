import { isCircuitOpenError, isHttpError, isNetworkError, isTimeoutError } from '@keel/core';

/**
 * What went wrong, for people: a sentence without URLs or stack traces. The HTTP status stays in
 * brackets for whoever reports it.
 */
export function explain(error: unknown): string {
  if (isCircuitOpenError(error)) {
    return 'The server kept failing, so requests to it are paused for a few seconds.';
  }
  if (isNetworkError(error)) return 'The server could not be reached. Check your connection.';
  if (isTimeoutError(error)) return 'The server took too long to answer.';
  if (isHttpError(error) && error.status !== undefined) {
    if (error.status === 404) return 'It is no longer there (HTTP 404).';
    if (error.status === 429) return 'Too many changes at once; wait a moment (HTTP 429).';
    if (error.status >= 500) return `The server had a problem (HTTP ${error.status}).`;
    return `The server refused it (HTTP ${error.status}).`;
  }
  return 'Something went wrong.';
}
