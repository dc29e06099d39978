import type { ApiResponse, HttpMethodInput, RequestError } from '@keel/core';
import { useMemo, useSyncExternalStore } from 'react';
import { useCommit, useObserver } from './internal/use-observer';
import {
  type MutateCallbacks,
  MutationObserver,
  type MutationStatus,
  type UseMutationOptions,
} from './mutation/observer';

/** What `useMutation` returns. */
export interface MutationResult<TData = unknown, TVars = void, TError = RequestError> {
  /** Runs the mutation; errors go to the state and callbacks, never to an unhandled rejection. */
  mutate: (variables: TVars, callbacks?: MutateCallbacks<TData, TVars, TError>) => void;
  /** Runs the mutation; resolves with the response data, rejects with the error. */
  mutateAsync: (
    variables: TVars,
    callbacks?: MutateCallbacks<TData, TVars, TError>,
  ) => Promise<TData>;
  data: TData | undefined;
  response: ApiResponse<TData> | undefined;
  /** The error of the latest call: an HttpError (`status`, `data`), TimeoutError, ... */
  error: TError | null;
  status: MutationStatus;
  isIdle: boolean;
  isPending: boolean;
  isSuccess: boolean;
  isError: boolean;
  /** The variables of the latest call. */
  variables: TVars | undefined;
  /** Back to `idle`; a call still running no longer updates the state. */
  reset: () => void;
}

/**
 * A write (POST, PUT, PATCH, DELETE, ...) through the keel client. On success the core
 * invalidates the request path and its tags, which refetches every mounted query under them;
 * `invalidate` adds more targets. `onMutate` can update cached queries optimistically through
 * its helpers; those writes are rolled back if the mutation fails.
 *
 * The method takes either case, as the core's `request` does (`'post'` is `'POST'`).
 *
 * Retries follow the core's method-aware default (a POST is sent once unless the server said it
 * did not process it); the `retry` option overrides it. `invalidate` takes one invalidation
 * target: a path string, an array of tags or a predicate over CacheMeta.
 *
 * @example
 * const addTodo = useMutation<Todo, NewTodo>('POST', '/todos', {
 *   onMutate: (todo, { cancelReads, setQueryData }) => {
 *     cancelReads('/todos'); // a refetch in flight must not land on the optimistic row
 *     setQueryData<Todo[]>('/todos', (list = []) => [...list, { id: -1, ...todo }]);
 *   },
 * });
 * addTodo.mutate({ title: 'Write docs' });
 */
export function useMutation<
  TData = unknown,
  TVars = void,
  TContext = unknown,
  TError = RequestError,
>(
  method: HttpMethodInput,
  url: string | ((variables: TVars) => string),
  options?: UseMutationOptions<TData, TVars, TContext, TError>,
): MutationResult<TData, TVars, TError> {
  const observer = useObserver(MutationObserver<TData, TVars, TContext, TError>);
  observer.setInputs(method, url, options);
  const state = useSyncExternalStore(
    observer.subscribe,
    observer.getSnapshot,
    observer.getSnapshot,
  );
  useCommit(observer);
  return useMemo(() => {
    const { status } = state;
    // The state's fields (status, data, response, error, variables) as they are.
    return {
      ...state,
      mutate: observer.mutate,
      mutateAsync: observer.mutateAsync,
      isIdle: status === 'idle',
      isPending: status === 'pending',
      isSuccess: status === 'success',
      isError: status === 'error',
      reset: observer.reset,
    };
  }, [observer, state]);
}
