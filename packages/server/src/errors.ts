import { STATUS_CODES } from 'node:http';
import { integer } from './checks';

const HTTP_ERROR_BRAND = Symbol.for('keel.server.HttpError');

/** Options for {@link HttpError}. */
export interface HttpErrorOptions {
  /** The underlying error; kept for logs, never sent to the client. */
  cause?: unknown;
  /** Extra response headers, e.g. `{ 'Retry-After': '30' }` for a 503. */
  headers?: Readonly<Record<string, string>>;
}

/** One failing rule of one field, as listed in a validation error body. */
export interface ValidationIssue {
  /** The field name as declared in the rules. */
  field: string;
  /** The rule that failed: `required`, `type`, `min`, `max`, `pattern` or `enum`. */
  rule: 'required' | 'type' | 'min' | 'max' | 'pattern' | 'enum';
  /** A human-readable message, safe to show to the client. */
  message: string;
}

/**
 * An error that becomes an HTTP response with its status. Its `message` is sent to the client
 * (it is meant to be public), as `{ "status": 404, "error": "Not Found", "message": "..." }`.
 *
 * @example
 * throw new HttpError(404, 'No such user');
 */
export class HttpError extends Error {
  override name = 'HttpError';
  /** The HTTP status, 400-599. */
  readonly status: number;
  /** Extra response headers sent with the error response. */
  readonly headers: Readonly<Record<string, string>> | undefined;

  constructor(status: number, message?: string, options?: HttpErrorOptions) {
    integer('status', status, 0, 400, 599);
    super(
      message ?? STATUS_CODES[status] ?? 'Error',
      options?.cause === undefined ? undefined : { cause: options.cause },
    );
    this.status = status;
    this.headers = options?.headers;
    Object.defineProperty(this, HTTP_ERROR_BRAND, { value: true });
  }

  /** The JSON body sent to the client for this error. */
  toJSON(): Record<string, unknown> {
    return {
      status: this.status,
      error: STATUS_CODES[this.status] ?? 'Error',
      message: this.message,
    };
  }
}

/**
 * HTTP 400. Thrown by `ctx.validate` with every failing field in `fields`; the response body is
 * `{ "status": 400, "error": "Bad Request", "message": "Validation failed", "fields": [...] }`.
 */
export class BadRequestError extends HttpError {
  override name = 'BadRequestError';
  /** Every failing field and rule; empty when the error is not about validation. */
  readonly fields: readonly ValidationIssue[];

  constructor(
    message = 'Bad Request',
    fields: readonly ValidationIssue[] = [],
    options?: HttpErrorOptions,
  ) {
    super(400, message, options);
    this.fields = fields;
  }

  override toJSON(): Record<string, unknown> {
    const body = super.toJSON();
    if (this.fields.length > 0) body.fields = this.fields;
    return body;
  }
}

/**
 * Reported to `onError` (never thrown) when a response operation is called through a ctx whose
 * request is over: the call did nothing. See the README's pooling rule.
 */
export class ReleasedContextError extends Error {
  override name = 'ReleasedContextError';
  /** The operation that was called, e.g. `json()`. */
  readonly operation: string;

  constructor(operation: string) {
    super(
      `ctx.${operation} was called after the response finished, so it did nothing. The ` +
        "request's state is pooled and serves later requests: copy what you need (e.g. " +
        '`const id = ctx.params.id`) before timers or background work, and answer before the ' +
        'handler returns.',
    );
    this.operation = operation;
  }
}

/** True for an {@link HttpError}, also one from another copy of this package (another realm). */
export function isHttpError(value: unknown): value is HttpError {
  return (
    value instanceof HttpError ||
    (typeof value === 'object' &&
      value !== null &&
      (value as Record<symbol, unknown>)[HTTP_ERROR_BRAND] === true)
  );
}
