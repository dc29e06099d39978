import type { RequestOptions } from '@keel/core';
import { freeze, shown } from '@keel/core/internals';
import { requestOptionsOf } from './query/hook-options';
import type { UseQueryOptions } from './query/observer';

declare const queryData: unique symbol;

/**
 * A query written once with its types: the URL and the options, usable wherever a query is named
 * (`useQuery(todos)`, `useSuspenseQuery(todos)`, `useQueries`, `getQueryData(todos)`), and
 * fetched outside a hook with `client.get(todos.url, todos.request)` (a Server Component's
 * prefetch).
 */
export interface QueryDefinition<TQueryData = unknown, TData = TQueryData> {
  readonly url: string;
  readonly options: UseQueryOptions<TQueryData, TData> | undefined;
  /**
   * The options the client takes: `options` without the hook's own (`enabled`, `select`,
   * `placeholderData`, ...), which `client.get` refuses; frozen, undefined when none is left.
   * Read when the definition is made (absent from a `{ url, options }` written by hand).
   */
  readonly request?: RequestOptions | undefined;
  /** Carries the response type for inference; never present at runtime. */
  readonly [queryData]?: TQueryData;
}

/**
 * Names a query once, with its response type, so that every hook that reads it infers its data.
 * The result is a frozen `{ url, options, request }`.
 *
 * @example
 * const todos = queryOptions<Todo[]>('/todos', { params: { done: false } });
 * const { data } = useQuery(todos);                            // Todo[] | undefined
 * const { data: n } = useQuery(todos, { select: (t) => t.length }); // number | undefined
 */
export function queryOptions<TQueryData = unknown, TData = TQueryData>(
  url: string,
  options?: UseQueryOptions<TQueryData, TData>,
): QueryDefinition<TQueryData, TData> {
  if (typeof url !== 'string') {
    throw new TypeError(`keel: queryOptions \`url\` must be a string, got ${shown(url)}`);
  }
  const request = requestOptionsOf(options);
  return freeze({ url, options, request: request && freeze(request) });
}
