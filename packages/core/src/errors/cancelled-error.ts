import { brandGuard } from './brand';
import { type FailedRequest, hasErrorName, KeelRequestError } from './keel-error';

/** What a CancelledError adds to its request. */
export interface CancelledErrorInit {
  /** Why, in words. @default 'Request cancelled' */
  message?: string | undefined;
  /** What aborted it: a signal's reason, the fetch implementation's AbortError. */
  cause?: unknown;
}

/** The request was cancelled: `cancel()`, `cancelAll()`, a group cancel, or an aborted `signal`. */
export class CancelledError extends KeelRequestError {
  override name = 'CancelledError' as const;

  constructor(request?: FailedRequest, init: CancelledErrorInit = {}) {
    super(request, init.message ?? 'Request cancelled', undefined, init.cause);
  }
}

/** True for a CancelledError, also one from another copy of the package. */
export const isCancelledError = brandGuard('CancelledError', CancelledError);

/**
 * True for an abort: keel's CancelledError, or an error named `AbortError` (a DOMException from
 * an aborted signal). A TimeoutError is not an abort.
 */
export function isAbortError(value: unknown): boolean {
  return isCancelledError(value) || hasErrorName(value, 'AbortError');
}
