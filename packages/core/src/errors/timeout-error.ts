import { brandGuard } from './brand';
import { type FailedRequest, KeelRequestError } from './keel-error';

/**
 * Which clock ran out: `attempt` (the per-attempt `timeout`), `deadline` (the request's total
 * `deadline`, across attempts and waits), `signal` (the caller's signal aborted with a
 * TimeoutError, e.g. `AbortSignal.timeout()`), `transport` (the fetch implementation's own
 * timer, e.g. undici's headers timeout, `code` `UND_ERR_HEADERS_TIMEOUT`).
 */
export type TimeoutKind = 'attempt' | 'deadline' | 'signal' | 'transport';

/** What a TimeoutError adds to its request. */
export interface TimeoutErrorInit {
  /** Which clock ran out. @default 'attempt' */
  kind?: TimeoutKind | undefined;
  /** The limit that ran out, in ms; undefined when it was the transport's or a signal's. */
  timeout?: number | undefined;
  /** The transport's code (`UND_ERR_HEADERS_TIMEOUT`, `UND_ERR_BODY_TIMEOUT`, ...). */
  code?: string | undefined;
  /** What timed out underneath: a signal's reason, the transport's error. */
  cause?: unknown;
}

/**
 * The request ran out of time (see `kind`). An attempt or transport timeout is retried like a
 * 408 for idempotent methods; a deadline or a caller's signal ends the request.
 */
export class TimeoutError extends KeelRequestError {
  override name = 'TimeoutError' as const;
  /** The limit that ran out, in ms; undefined when the transport's or a signal's. */
  declare readonly timeout: number | undefined;
  declare readonly kind: TimeoutKind;
  declare readonly code: string | undefined;

  constructor(request?: FailedRequest, init: TimeoutErrorInit = {}) {
    const { timeout, code, cause } = init;
    const kind = init.kind ?? 'attempt';
    super(
      request,
      timeout === undefined ? LABELS[kind] : `${LABELS[kind]} after ${timeout} ms`,
      { timeout, kind, code },
      cause,
    );
  }
}

/**
 * True for keel's TimeoutError, also one from another copy of the package. A DOMException named
 * `TimeoutError` (from `AbortSignal.timeout()`) is not one: a request whose signal timed out
 * rejects with keel's TimeoutError of kind `signal`, which is.
 */
export const isTimeoutError = brandGuard('TimeoutError', TimeoutError);

const LABELS: Record<TimeoutKind, string> = {
  attempt: 'Request timed out',
  deadline: 'Request deadline exceeded',
  signal: 'Request timed out by its signal',
  transport: 'Request timed out in transport',
};
