import { hasErrorName } from './keel-error';

/** True for an abort: keel's CancelledError, or a DOMException / Error named `AbortError`. */
export function isAbortError(err: unknown): boolean {
  return hasErrorName(err, 'CancelledError') || hasErrorName(err, 'AbortError');
}

/** True for anything named `TimeoutError`: keel's, or a DOMException from `AbortSignal.timeout()`. */
export function isTimeoutError(err: unknown): boolean {
  return hasErrorName(err, 'TimeoutError');
}

/** True for keel's NetworkError: no HTTP response (refused, reset, DNS, a cut body, ...). */
export function isNetworkError(err: unknown): err is import('./network-error').NetworkError {
  return hasErrorName(err, 'NetworkError');
}

export function isHttpError(err: unknown): err is import('./http-error').HttpError {
  return hasErrorName(err, 'HttpError');
}
