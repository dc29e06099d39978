import { brandGuard } from './brand';
import { type FailedRequest, KeelRequestError } from './keel-error';

/** What a ResponseTooLargeError adds to its request. */
export interface ResponseTooLargeErrorInit {
  /** The `maxResponseBytes` that was passed. */
  limit: number;
  /** Bytes read when the download stopped, or the declared Content-Length. */
  received: number;
  /** The response's status. */
  status: number;
}

/**
 * The response body is larger than `maxResponseBytes`: the download was aborted as soon as the
 * limit was passed (at once when its Content-Length said so). `received` is the bytes read when
 * it stopped, or the declared Content-Length. Not retried (the server answered; the answer is
 * too big), and not counted by the circuit breaker.
 */
export class ResponseTooLargeError extends KeelRequestError {
  override name = 'ResponseTooLargeError' as const;
  declare readonly limit: number;
  declare readonly received: number;
  declare readonly status: number;

  constructor(request: FailedRequest, init: ResponseTooLargeErrorInit) {
    const { limit, received, status } = init;
    super(request, `Response body exceeds maxResponseBytes ${limit} (${received} bytes or more)`, {
      limit,
      received,
      status,
    });
  }
}

/** True for a ResponseTooLargeError, also one from another copy of the package. */
export const isResponseTooLargeError = brandGuard('ResponseTooLargeError', ResponseTooLargeError);
