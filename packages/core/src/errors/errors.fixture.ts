/** Errors as the pipeline builds them, for unit tests of what classifies them. */
import { CancelledError } from './cancelled-error';
import { CircuitOpenError } from './circuit-open-error';
import { HttpError, type HttpErrorInit } from './http-error';
import { ParseError } from './parse-error';
import { TimeoutError } from './timeout-error';

/** The request the fixtures' errors belong to. */
export const REQUEST = Object.freeze({ method: 'GET', url: 'https://a.test/x' });

/** One builder per error class, as the pipeline builds them: `errorOf.http(503)`. */
export const errorOf = {
  http: (status?: number, init?: HttpErrorInit) => new HttpError(REQUEST, { ...init, status }),
  timeout: (timeout?: number) => new TimeoutError(REQUEST, { timeout }),
  cancelled: () => new CancelledError(REQUEST),
  circuitOpen: (endpoint = 'GET /x') => new CircuitOpenError(REQUEST, { endpoint }),
  parse: (status = 200, body = '{', cause?: unknown) =>
    new ParseError(REQUEST, { status, body, cause }),
};
