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

/** ` (GET https://api.test/x)`: how a message names its request. */
export function requestLabel(request: FailedRequest): string {
  return ` (${request.method} ${request.url})`;
}

/**
 * For errors keel did not raise (a DOMException `AbortError` or `TimeoutError` from a signal or
 * a fetch implementation), which only a name can tell apart. keel's own errors have guards.
 */
export function hasErrorName(err: unknown, name: string): boolean {
  return typeof err === 'object' && err !== null && (err as { name?: unknown }).name === name;
}
