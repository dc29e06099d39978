import { CancelledError, isAbortError } from '../errors/cancelled-error';
import { CodeKind, codeIs, errorCodeOf } from '../errors/error-code';
import {
  type FailedRequest,
  hasErrorName,
  isKeelError,
  type KeelError,
} from '../errors/keel-error';
import { NetworkError } from '../errors/network-error';
import { TimeoutError } from '../errors/timeout-error';

/**
 * What a failed attempt rejects with, whatever the fetch implementation threw: keel's own errors
 * from reading the response (`read`: HttpError, ParseError, ResponseTooLargeError) as they are;
 * an AbortError or CancelledError the attempt did not cause, a CancelledError; a transport
 * timeout (undici's headers / body / connect timeout, a DOMException or keel `TimeoutError`), a
 * TimeoutError of kind `transport`; anything else (undici's `TypeError('fetch failed')`, a
 * browser's "Failed to fetch", a body cut short), a NetworkError with the platform's code; a
 * value that throws when read, a NetworkError too. A keel error the fetch rejects with (a nested
 * client's, a wrapper's own breaker) is mapped like any other: it names another request, and a
 * fetch rejects only when there is no response. So a caller, `retryOn` and `retry` events always
 * see a KeelError that names the request, and this never throws.
 */
export function attemptError(error: unknown, request: FailedRequest, read?: boolean): KeelError {
  // The guards and readers below never throw, whatever the value (a getter, a revoked Proxy).
  if (read && isKeelError(error)) return error;
  if (isAbortError(error)) {
    const message = 'Request aborted by the fetch implementation';
    return new CancelledError(request, { message, cause: error });
  }
  const code = errorCodeOf(error);
  if (hasErrorName(error, 'TimeoutError') || codeIs(code, CodeKind.TransportTimeout)) {
    return new TimeoutError(request, { kind: 'transport', code, cause: error });
  }
  // Given, so the NetworkError does not read the code again.
  return new NetworkError(request, { cause: error, code: code ?? 'ERR_NETWORK' });
}
