import { brandGuard } from './brand';
import { type FailedRequest, KeelRequestError } from './keel-error';

/** What an HttpError adds to its request: the response. */
export interface HttpErrorInit<T = unknown> {
  status?: number | undefined;
  statusText?: string | undefined;
  headers?: Headers | undefined;
  /** The parsed response body (JSON or text), when there was one. */
  data?: T | undefined;
  /** The wait the response asked for with Retry-After, in ms. */
  retryAfter?: number | undefined;
}

/**
 * A response whose status is not 2xx (a response this client received; `@keel/server`'s
 * `HttpException` is the one a handler throws to send one). It is also the error carried by
 * `retry` events.
 *
 * @example
 * try { await client.get('/users/7') } catch (e) { if (isHttpError(e) && e.status === 404) ... }
 */
export class HttpError<T = unknown> extends KeelRequestError {
  override name = 'HttpError' as const;
  declare readonly status: number | undefined;
  declare readonly statusText: string | undefined;
  declare readonly headers: Headers | undefined;
  declare readonly data: T | undefined;
  /**
   * The wait the server asked for with a Retry-After header (seconds or an HTTP date), in ms from
   * when the response arrived; undefined without a valid header.
   */
  declare readonly retryAfter: number | undefined;

  /** `new HttpError({ status, ... })`: the response alone (and the request, when it names one). */
  constructor(init?: HttpErrorInit<T> & Partial<FailedRequest>);
  constructor(request: FailedRequest, init?: HttpErrorInit<T>);
  constructor(
    request?: Partial<FailedRequest> & HttpErrorInit<T>,
    // One object with a `status` is the response (a request never has one).
    init: HttpErrorInit<T> = request && 'status' in request ? request : {},
  ) {
    const { status, statusText, headers, data, retryAfter } = init;
    super(
      request,
      status === undefined
        ? 'Request failed'
        : `Request failed with status ${status}${statusText ? ` ${statusText}` : ''}`,
      { status, statusText, headers, data, retryAfter },
    );
  }
}

/** True for an HttpError, also one from another copy of the package. */
export const isHttpError = brandGuard('HttpError', HttpError);
