export { CancelledError } from './cancelled-error';
export { CircuitOpenError } from './circuit-open-error';
export { isAbortError, isHttpError, isNetworkError, isTimeoutError } from './guards';
export { HttpError, type HttpErrorInit } from './http-error';
export { KeelError } from './keel-error';
export { NetworkError, type NetworkErrorInit } from './network-error';
export { ParseError } from './parse-error';
export { ResponseTooLargeError } from './response-too-large-error';
export { TimeoutError, type TimeoutErrorInit, type TimeoutKind } from './timeout-error';

import type { CancelledError } from './cancelled-error';
import type { CircuitOpenError } from './circuit-open-error';
import type { HttpError } from './http-error';
import type { NetworkError } from './network-error';
import type { ParseError } from './parse-error';
import type { TimeoutError } from './timeout-error';

/**
 * What a request can reject with: keel's errors, plus the TypeError / RangeError of a bad
 * request option or URL. Narrow with `instanceof` (or the guards): `error instanceof HttpError`
 * gives `status` and `data`.
 */
export type RequestError =
  | HttpError
  | NetworkError
  | TimeoutError
  | CancelledError
  | CircuitOpenError
  | ParseError
  | TypeError
  | RangeError;
