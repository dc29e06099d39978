import { hasErrorName } from './keel-error';

/** True for an abort: keel's CancelledError, or a DOMException / Error named `AbortError`. */
export function isAbortError(err: unknown): boolean {
  return hasErrorName(err, 'CancelledError') || hasErrorName(err, 'AbortError');
}

export function isTimeoutError(err: unknown): boolean {
  return hasErrorName(err, 'TimeoutError');
}

export function isHttpError(err: unknown): err is import('./http-error').HttpError {
  return hasErrorName(err, 'HttpError');
}
