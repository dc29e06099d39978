export type { DehydratedState, DehydrateOptions } from '@keel/core';
export { HydrationBoundary, type HydrationBoundaryProps } from './hydration-boundary';
export type {
  InfiniteData,
  InfiniteQueryResult,
  UseInfiniteQueryOptions,
} from './infinite/observer';
export type {
  MutateCallbacks,
  MutationState,
  MutationStatus,
  OptimisticHelpers,
  UseMutationOptions,
} from './mutation/observer';
export { ClientProvider, type ClientProviderProps, useClient } from './provider';
export { isNoServerDataError, NoServerDataError } from './query/no-server-data-error';
export type {
  QueryResult,
  SuspenseQueryResult,
  UseQueryOptions,
  UseSuspenseQueryOptions,
} from './query/observer';
export type { QueryStatus } from './query/state';
export {
  QueryErrorBoundary,
  type QueryErrorBoundaryProps,
  type QueryErrorFallbackProps,
  useQueryErrorReset,
} from './query-error-boundary';
export {
  dehydrate,
  hydrate,
  keepPreviousData,
  type QueryDefinition,
  queryOptions,
} from './server-callable';
export {
  INVALIDATE_EVENT,
  RESET_EVENT,
  type ServerEventHandler,
  type ServerEventHandlers,
  type ServerEventsOptions,
} from './server-events/channel';
export {
  type ConnectionState,
  type ConnectionStatus,
  isServerEventsError,
  type ServerEvent,
  ServerEventsError,
  type ServerEventsErrorInit,
} from './server-events/connection';
export {
  inspectServerEvents,
  type ReceivedServerEvent,
  type ServerEventsConnectionView,
  watchServerEvents,
} from './server-events/inspect';
export { SOURCE_HEADER, sourceHeaders } from './server-events/source';
export { useInfiniteQuery } from './use-infinite-query';
export { useIsFetching, useIsMutating } from './use-is-fetching';
export { type MutationResult, useMutation } from './use-mutation';
export { type QueriesResults, useQueries } from './use-queries';
export { useQuery, useSuspenseQuery } from './use-query';
export { useServerEvents } from './use-server-events';
