import type { RequestOptions } from '@keel/core';
import { freeze } from '@keel/core/internals';
import { coreOptions } from '../internal/core-options';
import type { UseQueryOptions } from './observer';

// No React here: queryOptions, which a Server Component calls, reads these too.

/** The defaults of the React options of `useQuery` (and of `useInfiniteQuery`'s same-named ones). */
export const QUERY_DEFAULTS = /* @__PURE__ */ freeze({
  enabled: true,
  refetchInterval: false,
  refetchOnWindowFocus: true,
  refetchOnReconnect: true,
  suspense: false,
} as const);

/** The options of useQuery that are not request options: the core never sees them. */
const REACT_OPTIONS = new Set([
  ...Object.keys(QUERY_DEFAULTS),
  'select',
  'initialData',
  'placeholderData',
]);

/** The options the core understands, without the React ones. */
export function requestOptionsOf(
  options: UseQueryOptions<any, any> | undefined,
): RequestOptions | undefined {
  return coreOptions(options, REACT_OPTIONS);
}

/** For `placeholderData`: keeps the previous key's data on screen while the new key loads. */
export function keepPreviousData<T>(previousData: T | undefined): T | undefined {
  return previousData;
}
