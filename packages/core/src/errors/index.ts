export {
  CancelledError,
  type CancelledErrorInit,
  isAbortError,
  isCancelledError,
} from './cancelled-error';
export { CircuitOpenError, type CircuitOpenErrorInit } from './circuit-open-error';
export { HttpError, type HttpErrorInit, isHttpError } from './http-error';
export { isCircuitOpenError } from './is-circuit-open-error';
export { type FailedRequest, isKeelError, KeelError } from './keel-error';
export { isNetworkError, NetworkError, type NetworkErrorInit } from './network-error';
export { isParseError, ParseError, type ParseErrorInit } from './parse-error';
export {
  isResponseTooLargeError,
  ResponseTooLargeError,
  type ResponseTooLargeErrorInit,
} from './response-too-large-error';
export {
  isTimeoutError,
  TimeoutError,
  type TimeoutErrorInit,
  type TimeoutKind,
} from './timeout-error';

import type { CancelledError } from './cancelled-error';
import type { CircuitOpenError } from './circuit-open-error';
import type { HttpError } from './http-error';
import type { NetworkError } from './network-error';
import type { ParseError } from './parse-error';
import type { ResponseTooLargeError } from './response-too-large-error';
import type { TimeoutError } from './timeout-error';

/**
 * What a request can reject with: keel's errors, plus the TypeError / RangeError of a bad
 * request option or URL. Narrow with the guards (`isHttpError(error)` gives `status` and `data`)
 * or `instanceof`; every keel error carries the request's `method` and `url`.
 */
export type RequestError =
  | HttpError
  | NetworkError
  | TimeoutError
  | CancelledError
  | CircuitOpenError
  | ParseError
  | ResponseTooLargeError
  | TypeError
  | RangeError;
