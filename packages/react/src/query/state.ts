import type { ApiResponse, Client } from '@keel/core';

/** `status` says whether data is there; `isFetching` (a separate axis) whether a read is in flight. */
export type QueryStatus = 'pending' | 'success' | 'error';

/**
 * What the store knows about one key. Immutable: a change replaces the object, so identity
 * comparison tells a reader whether anything changed.
 */
export interface QueryState {
  readonly status: QueryStatus;
  /** The last response for this key (undefined for initialData and before the first one). */
  readonly response: ApiResponse | undefined;
  /** `response.data`, structurally shared with the previous value (see replaceEqualDeep). */
  readonly data: unknown;
  /** The last error; null once a response arrives. */
  readonly error: unknown;
  readonly isFetching: boolean;
}

/** No data, no error, nothing in flight. */
export const PENDING: QueryState = {
  status: 'pending',
  response: undefined,
  data: undefined,
  error: null,
  isFetching: false,
};

/** What the cache alone says about `key`: its response (success) or nothing yet (pending). */
export function cachedState(client: Client, key: string): QueryState {
  const response = client.getCached(key);
  return {
    status: response ? 'success' : 'pending',
    response,
    data: response?.data,
    error: null,
    isFetching: client.isFetching(key),
  };
}

/** A response synthesized for data that did not come over the network (initialData, optimistic writes). */
export function syntheticResponse<T>(data: T, base?: ApiResponse): ApiResponse<T> {
  return base
    ? { data, status: base.status, statusText: base.statusText, headers: base.headers }
    : { data, status: 200, statusText: 'OK', headers: new Headers() };
}
