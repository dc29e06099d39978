export type {
  MutateCallbacks,
  MutationState,
  MutationStatus,
  OptimisticHelpers,
  UseMutationOptions,
} from './mutation/observer';
export { ClientProvider, type ClientProviderProps, useClient } from './provider';
export { NoServerDataError } from './query/no-server-data-error';
export {
  keepPreviousData,
  type QueryResult,
  type SuspenseQueryResult,
  type UseQueryOptions,
  type UseSuspenseQueryOptions,
} from './query/observer';
export type { QueryStatus } from './query/state';
export {
  QueryErrorBoundary,
  type QueryErrorBoundaryProps,
  type QueryErrorFallbackProps,
  useQueryErrorReset,
} from './query-error-boundary';
export { type QueryDefinition, queryOptions } from './query-options';
export {
  RESET_EVENT,
  type ServerEventHandler,
  type ServerEventHandlers,
  type ServerEventsOptions,
} from './server-events/channel';
export {
  type ConnectionState,
  type ConnectionStatus,
  type ServerEvent,
  ServerEventsError,
} from './server-events/connection';
export { type MutationResult, useMutation } from './use-mutation';
export { useQuery, useSuspenseQuery } from './use-query';
export { useServerEvents } from './use-server-events';
