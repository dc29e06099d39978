import { brandGuard } from './brand';

/**
 * Base class of every error keel raises, so `instanceof KeelError` (or `isKeelError`) catches them
 * all. Built like Error: `new KeelError(message, { cause })`.
 */
export class KeelError extends Error {
  /** `'KeelError'`, or the subclass's own literal name (`'HttpError'`, ...). */
  override name: string = 'KeelError';
}

/** True for any keel error, also one from another copy of the package. */
export const isKeelError = brandGuard('KeelError', KeelError);

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
 * (` (GET https://api.test/x)` after `message`, then `detail`) and sets the request's method and
 * URL, then the subclass's own `fields` (each one, even when undefined, is an own property), so
 * each subclass only says what its message and fields are. Subclasses `declare` their fields: a
 * class field would be defined again, as undefined, after this constructor. The four errors an
 * app may build itself (README, "Errors") may be built without a request (`new CancelledError()`):
 * no suffix, and `method` and `url` are '' (strings as typed, so `error.url.startsWith(...)` in an
 * app never throws; every error keel raises names its request).
 */
export abstract class KeelRequestError extends KeelError {
  /** The request's method ('' only for an error built without a request). */
  declare readonly method: string;
  /** The request's URL, resolved against `baseURL` ('' only for an error built without one). */
  declare readonly url: string;

  constructor(
    request: Partial<FailedRequest> | undefined,
    message: string,
    fields?: object,
    cause?: unknown,
    detail = '',
  ) {
    super(
      `${message}${request?.url ? ` (${request.method} ${request.url})` : ''}${detail}`,
      cause === undefined ? undefined : { cause },
    );
    Object.assign(this, { method: request?.method ?? '', url: request?.url ?? '' }, fields);
  }
}

/**
 * For errors keel did not raise (a DOMException `AbortError` or `TimeoutError` from a signal or
 * a fetch implementation), which only a name can tell apart. keel's own errors have guards.
 */
export function hasErrorName(err: unknown, name: string): boolean {
  // A value whose `name` getter throws, or a revoked Proxy, is named nothing: never a throw.
  try {
    return typeof err === 'object' && (err as { name?: unknown } | null)?.name === name;
  } catch {
    return false;
  }
}
