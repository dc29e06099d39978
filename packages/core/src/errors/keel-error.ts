import { guardFor } from './brand';

/**
 * Base class of every error keel raises, so `instanceof KeelError` (or `isKeelError`) catches them
 * all. Built like Error: `new KeelError(message, { cause })`.
 */
export class KeelError extends Error {
  /** `'KeelError'`, or the subclass's own literal name (`'HttpError'`, ...). */
  override name: string = 'KeelError';
}

/** True for any keel error, also one from another copy of the package. */
export const isKeelError = guardFor(KeelError, 'core', 'KeelError');

/**
 * The request an error belongs to: its method and URL. A RequestSpec (from `client.resolve`)
 * fits as it is.
 */
export interface FailedRequest {
  readonly method: string;
  readonly url: string;
}

/**
 * Base of the errors that belong to a request: one constructor names the request in the message
 * (` (GET https://api.test/x)` after `message`, then `detail`) and keeps its method and URL, so
 * each subclass adds only its own fields.
 */
export abstract class KeelRequestError extends KeelError {
  /** The request's method. */
  readonly method: string;
  /** The request's URL, resolved against `baseURL`. */
  readonly url: string;

  constructor(request: FailedRequest, message: string, cause?: unknown, detail = '') {
    super(
      `${message} (${request.method} ${request.url})${detail}`,
      cause === undefined ? undefined : { cause },
    );
    this.method = request.method;
    this.url = request.url;
  }
}

/**
 * For errors keel did not raise (a DOMException `AbortError` or `TimeoutError` from a signal or
 * a fetch implementation), which only a name can tell apart. keel's own errors have guards.
 */
export function hasErrorName(err: unknown, name: string): boolean {
  return typeof err === 'object' && err !== null && (err as { name?: unknown }).name === name;
}
