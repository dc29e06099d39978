/**
 * `@keel/core/internals`: parts of keel's own machinery that its sibling packages (@keel/react)
 * and tooling build on. **Unstable**: anything here may change or go in any release, minor or
 * patch, without a deprecation. Application code should use `@keel/core`.
 *
 * @packageDocumentation
 */

export { RETRY_DEFAULTS } from './attempt/retry-policy';
export { isRetriableStatus } from './attempt/status';
export { checkInvalidateTarget } from './cache/match';
export { CACHE_DEFAULTS } from './cache/options';
export { CIRCUIT_DEFAULTS } from './circuit/options';
export { isCountableFailure } from './circuit/outcome';
export { afterWrite, watchCache } from './client';
export { guardFor } from './errors/brand';
export { KeelRequestError } from './errors/keel-error';
export { type PreparedEntry, prepareHydration, writeHydration } from './hydration';
export { INTELLIGENCE_DEFAULTS } from './intelligence/options';
export {
  checkBoolean,
  checkFunction,
  checkInteger,
  checkMs,
  checkNumber,
  checkObject,
  mustBe,
  oneOf,
  rangeError,
  shown,
  typeError,
} from './internal/checks';
export { clockOf, fetchOf } from './internal/client-config';
export { freeze } from './internal/freeze';
export { noop } from './internal/noop';
export { headerName, setHeader } from './request/fields';
