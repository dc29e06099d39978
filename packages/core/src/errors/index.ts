export { CancelledError } from './cancelled-error';
export { CircuitOpenError } from './circuit-open-error';
export { isAbortError, isHttpError, isNetworkError, isTimeoutError } from './guards';
export { HttpError, type HttpErrorInit } from './http-error';
export { KeelError } from './keel-error';
export { NetworkError, type NetworkErrorInit } from './network-error';
export { ParseError } from './parse-error';
export { ResponseTooLargeError } from './response-too-large-error';
export { TimeoutError, type TimeoutErrorInit, type TimeoutKind } from './timeout-error';
