import { STATUS_CODES } from 'node:http';
import { checkNumber, checkOptions, integer, keysOf, typeError } from './checks';

/*
 * The server's errors. Every class has a literal `name`, a brand (so its guard also recognises an
 * instance from another copy of this package) and a guard of its own. One constructor form:
 * what the error is about first (a status, an event, an operation), then the message where the
 * caller writes one, then an options object (`cause`, and what the class adds).
 *
 * `HttpException` (not `HttpError`): `@keel/core` has an `HttpError` too, and it means the
 * opposite direction (a response a client received). This one is thrown by a handler to send a
 * response.
 */

const HTTP_EXCEPTION = Symbol.for('keel.server.HttpException');
const BAD_REQUEST = Symbol.for('keel.server.BadRequestError');
const RELEASED_CONTEXT = Symbol.for('keel.server.ReleasedContextError');
const BODY_TOO_LARGE = Symbol.for('keel.server.BodyTooLargeError');

/** Marks `error` as an instance of the class `key` names, for the cross-realm guards. */
export function brand(error: Error, key: symbol): void {
  Object.defineProperty(error, key, { value: true });
}

/** True when `value` carries the brand `key`. */
export function hasBrand(value: unknown, key: symbol): boolean {
  return (
    typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[key] === true
  );
}

/** Options for {@link HttpException}. */
export interface HttpExceptionOptions {
  /**
   * The underlying error; kept for logs (`onError`, `err.cause`), never sent to the client.
   *
   * @default undefined
   */
  cause?: unknown;
  /**
   * Extra response headers sent with the error response, e.g. `{ 'Retry-After': '30' }` for a
   * 503. A header Node refuses (CR/LF, ...) turns the answer into a bare 500, reported to
   * `onError`.
   *
   * @default undefined (none)
   */
  headers?: Readonly<Record<string, string>> | undefined;
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
 * Throw it from a handler or middleware to answer with its status. Its `message` is sent to the
 * client (it is meant to be public), as `{ "status": 404, "error": "Not Found", "message": "..." }`;
 * a 5xx is also reported to `onError`.
 *
 * @example
 * throw new HttpException(404, 'No such user');
 * throw new HttpException(503, 'Try later', { headers: { 'Retry-After': '30' } });
 */
export class HttpException extends Error {
  /**
   * `'HttpException'`, or the subclass's own literal name (`'BadRequestError'`, ...). Typed
   * `string` here because the class is meant to be extended.
   */
  override name: string = 'HttpException';
  /** The HTTP status, 400-599. */
  readonly status: number;
  /** Extra response headers sent with the error response. */
  readonly headers: Readonly<Record<string, string>> | undefined;

  /**
   * @param status 400-599 (a RangeError otherwise).
   * @param message Sent to the client (a TypeError when not a string). @default the status text, e.g. `'Not Found'`
   */
  constructor(status: number, message?: string, options?: HttpExceptionOptions) {
    integer('status', status, 0, 400, 599);
    // Sent to the client as the body's `message`: a non-string would become "[object Object]".
    if (message !== undefined && typeof message !== 'string') {
      throw typeError('message', 'a string', message);
    }
    // keel's own classes know every key of their options; a subclass of yours may take more.
    const known = OPTION_KEYS.get(new.target);
    if (options !== undefined && known !== undefined) checkOptions(known[0], options, known[1]);
    super(
      message ?? STATUS_CODES[status] ?? 'Error',
      options?.cause === undefined ? undefined : { cause: options.cause },
    );
    this.status = status;
    this.headers = options?.headers;
    brand(this, HTTP_EXCEPTION);
  }

  /**
   * `status` under the name Node's `res.statusCode`, http-errors and Fastify use, so code written
   * for either reads the right number. A getter on the prototype: nothing per instance.
   */
  get statusCode(): number {
    return this.status;
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

/** Options for {@link BadRequestError}. */
export interface BadRequestErrorOptions extends HttpExceptionOptions {
  /**
   * Every failing field and rule, sent as `fields` in the body.
   *
   * @default [] (the body has no `fields`)
   */
  fields?: readonly ValidationIssue[] | undefined;
}

/**
 * HTTP 400. Thrown by `ctx.validate` with every failing field in `fields`; the response body is
 * `{ "status": 400, "error": "Bad Request", "message": "Validation failed", "fields": [...] }`.
 *
 * @example
 * throw new BadRequestError('Unknown plan', { fields: [{ field: 'plan', rule: 'enum', message: 'is unknown' }] });
 */
export class BadRequestError extends HttpException {
  override name = 'BadRequestError' as const;
  /** Every failing field and rule; empty when the error is not about validation. */
  readonly fields: readonly ValidationIssue[];

  /** @param message Sent to the client. @default 'Bad Request' */
  constructor(message = 'Bad Request', options?: BadRequestErrorOptions) {
    super(400, message, options);
    this.fields = options?.fields ?? [];
    brand(this, BAD_REQUEST);
  }

  override toJSON(): Record<string, unknown> {
    const body = super.toJSON();
    if (this.fields.length > 0) body.fields = this.fields;
    return body;
  }
}

/** Options for {@link BodyTooLargeError}. */
export interface BodyTooLargeErrorOptions extends HttpExceptionOptions {
  /**
   * End the connection with the 413 instead of draining the rest of the body (the client is
   * sending far more, or waits for `100 Continue` and will send nothing).
   *
   * @default false
   */
  closeConnection?: boolean | undefined;
}

/**
 * HTTP 413: a request body over `bodyLimit` (the app's or the route's). The body reader throws
 * it where the route's handler would run (middleware sees it, as for a 404); a handler that reads
 * `ctx.req` itself can throw it too.
 *
 * @example
 * throw new BodyTooLargeError(64 * 1024);
 */
export class BodyTooLargeError extends HttpException {
  override name = 'BodyTooLargeError' as const;
  /** The limit the body went over, in bytes. */
  readonly limit: number;
  /** The connection ends with the 413 (the rest of the body is not drained). */
  readonly closeConnection: boolean;

  /**
   * @param limit The limit in bytes: a non-negative integer (a TypeError / RangeError otherwise).
   * @param message Sent to the client. @default `Request body exceeds <limit> bytes`
   */
  constructor(limit: number, message?: string, options?: BodyTooLargeErrorOptions) {
    checkNumber(
      'limit',
      limit,
      'a non-negative integer number of bytes',
      (n) => Number.isInteger(n) && n >= 0,
    );
    super(413, message ?? `Request body exceeds ${limit} bytes`, options);
    this.limit = limit;
    this.closeConnection = options?.closeConnection === true;
    brand(this, BODY_TOO_LARGE);
  }
}

const HTTP_EXCEPTION_KEYS = { cause: 0, headers: 0 } as const;
/** The options each of keel's classes takes, by constructor, as its checks name them. */
const OPTION_KEYS = new Map<unknown, readonly [string, ReadonlySet<string>]>([
  [HttpException, ['HttpException options', keysOf<HttpExceptionOptions>(HTTP_EXCEPTION_KEYS)]],
  [
    BadRequestError,
    [
      'BadRequestError options',
      keysOf<BadRequestErrorOptions>({ ...HTTP_EXCEPTION_KEYS, fields: 0 }),
    ],
  ],
  [
    BodyTooLargeError,
    [
      'BodyTooLargeError options',
      keysOf<BodyTooLargeErrorOptions>({ ...HTTP_EXCEPTION_KEYS, closeConnection: 0 }),
    ],
  ],
]);

/**
 * Reported to `onError` (never thrown, except by a stale `ctx.sseStream()`) when a response
 * operation is called through a ctx whose request is over: the call did nothing. See the README's
 * pooling rule.
 */
export class ReleasedContextError extends Error {
  override name = 'ReleasedContextError' as const;
  /** The operation that was called, e.g. `json()`. */
  readonly operation: string;

  /** @param operation The call that came too late, e.g. `'json()'`. */
  constructor(operation: string) {
    super(
      `ctx.${operation} was called after the response finished, so it did nothing. The ` +
        "request's state is pooled and serves later requests: copy what you need (e.g. " +
        '`const id = ctx.params.id`) before timers or background work, and answer before the ' +
        'handler returns.',
    );
    this.operation = operation;
    brand(this, RELEASED_CONTEXT);
  }
}

/** True for an {@link HttpException} (any subclass), also one from another copy of this package. */
export function isHttpException(value: unknown): value is HttpException {
  return value instanceof HttpException || hasBrand(value, HTTP_EXCEPTION);
}

/** True for a {@link BadRequestError}, also one from another copy of this package. */
export function isBadRequestError(value: unknown): value is BadRequestError {
  return value instanceof BadRequestError || hasBrand(value, BAD_REQUEST);
}

/** True for a {@link ReleasedContextError}, also one from another copy of this package. */
export function isReleasedContextError(value: unknown): value is ReleasedContextError {
  return value instanceof ReleasedContextError || hasBrand(value, RELEASED_CONTEXT);
}

/** True for a {@link BodyTooLargeError}, also one from another copy of this package. */
export function isBodyTooLargeError(value: unknown): value is BodyTooLargeError {
  return value instanceof BodyTooLargeError || hasBrand(value, BODY_TOO_LARGE);
}
