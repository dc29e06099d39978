/** Errors as the pipeline builds them, for unit tests of what classifies them. */
import { CancelledError } from './cancelled-error';
import { CircuitOpenError } from './circuit-open-error';
import { HttpError, type HttpErrorInit } from './http-error';
import { ParseError } from './parse-error';
import { TimeoutError } from './timeout-error';

/** The request the fixtures' errors belong to. */
export const REQUEST = Object.freeze({ method: 'GET', url: 'https://a.test/x' });

export const httpError = (status?: number, init?: HttpErrorInit) =>
  new HttpError(REQUEST, { ...init, status });
export const timeoutError = (timeout?: number) => new TimeoutError(REQUEST, { timeout });
export const cancelledError = () => new CancelledError(REQUEST);
export const circuitOpenError = (endpoint = 'GET /x') =>
  new CircuitOpenError(REQUEST, { endpoint });
export const parseError = (status = 200, body = '{', cause?: unknown) =>
  new ParseError(REQUEST, { status, body, cause });
