export { CancelledError } from './cancelled-error';
export { CircuitOpenError } from './circuit-open-error';
export { isAbortError, isHttpError, isTimeoutError } from './guards';
export { HttpError, type HttpErrorInit } from './http-error';
export { KeelError } from './keel-error';
export { ParseError } from './parse-error';
export { TimeoutError } from './timeout-error';
