import { brandGuard } from './brand';
import { type FailedRequest, KeelRequestError } from './keel-error';

/** What a ParseError adds to its request. */
export interface ParseErrorInit {
  /** The response's status (a 2xx). */
  status: number;
  /** The body as received. */
  body: string;
  /** JSON.parse's SyntaxError. */
  cause: unknown;
}

/** The response said it was JSON but its body did not parse. Not retried. */
export class ParseError extends KeelRequestError {
  override name = 'ParseError' as const;
  declare readonly status: number;
  declare readonly body: string;

  constructor(request: FailedRequest, init: ParseErrorInit) {
    const { status, body, cause } = init;
    super(request, `Response body is not valid JSON (status ${status})`, { status, body }, cause);
  }
}

/** True for a ParseError, also one from another copy of the package. */
export const isParseError = brandGuard('ParseError', ParseError);
