export type {
  MutateCallbacks,
  MutationState,
  MutationStatus,
  OptimisticHelpers,
  UseMutationOptions,
} from './mutation/observer';
export { ClientProvider, type ClientProviderProps, useClient } from './provider';
export {
  keepPreviousData,
  type QueryResult,
  type UseQueryOptions,
} from './query/observer';
export type { QueryStatus } from './query/state';
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
  type ServerEvent,
  ServerEventsError,
} from './server-events/connection';
export { SOURCE_HEADER, sourceHeaders } from './server-events/source';
export { type MutationResult, useMutation } from './use-mutation';
export { useQuery } from './use-query';
export { useServerEvents } from './use-server-events';
