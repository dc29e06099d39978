import { KeelError } from './keel-error';

/**
 * Which clock ran out: `attempt` (the per-attempt `timeout`), `deadline` (the request's total
 * `deadline`, across attempts and waits), `signal` (the caller's signal aborted with a
 * TimeoutError, e.g. `AbortSignal.timeout()`), `transport` (the fetch implementation's own
 * timer, e.g. undici's headers timeout, `code` `UND_ERR_HEADERS_TIMEOUT`).
 */
export type TimeoutKind = 'attempt' | 'deadline' | 'signal' | 'transport';

export interface TimeoutErrorInit {
  kind?: TimeoutKind;
  method?: string;
  url?: string;
  /** The transport's code (`UND_ERR_HEADERS_TIMEOUT`, `UND_ERR_BODY_TIMEOUT`, ...). */
  code?: string;
  cause?: unknown;
}

/**
 * The request ran out of time (see `kind`). An attempt or transport timeout is retried like a
 * 408 for idempotent methods; a deadline or a caller's signal ends the request.
 */
export class TimeoutError extends KeelError {
  /** The limit that ran out, in ms; undefined when the transport's or a signal's. */
  readonly timeout: number | undefined;
  readonly kind: TimeoutKind;
  readonly method: string | undefined;
  readonly url: string | undefined;
  readonly code: string | undefined;

  constructor(timeout?: number, init: TimeoutErrorInit = {}) {
    const kind = init.kind ?? 'attempt';
    const where = init.method && init.url ? ` (${init.method} ${init.url})` : '';
    super(
      `${timeout === undefined ? LABELS[kind] : `${LABELS[kind]} after ${timeout} ms`}${where}`,
      init.cause === undefined ? undefined : { cause: init.cause },
    );
    this.name = 'TimeoutError';
    this.timeout = timeout;
    this.kind = kind;
    this.method = init.method;
    this.url = init.url;
    this.code = init.code;
  }
}

const LABELS: Record<TimeoutKind, string> = {
  attempt: 'Request timed out',
  deadline: 'Request deadline exceeded',
  signal: 'Request timed out by its signal',
  transport: 'Request timed out in transport',
};
