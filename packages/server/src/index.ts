export {
  type App,
  type AppOptions,
  type CloseOptions,
  createApp,
  type ErrorHandler,
  type InjectRequest,
  type InjectResponse,
  type ResponseHook,
  type ResponseInfo,
  type ServerResponseOption,
  type ServerTimeouts,
} from './app';
export type { BodyParsers, RouteOptions } from './body';
export type { Clock, TimerHandle } from './clock';
export type { CompressionOptions, Encoding } from './compress';
export type {
  CacheControlOptions,
  Context,
  Handler,
  KeelRequest,
  Middleware,
  Next,
} from './context';
export type { CookieOptions } from './cookies';
export { type CorsOptions, cors } from './cors';
export {
  BadRequestError,
  type BadRequestErrorOptions,
  BodyTooLargeError,
  type BodyTooLargeErrorOptions,
  HttpException,
  type HttpExceptionOptions,
  isBadRequestError,
  isBodyTooLargeError,
  isHttpException,
  isReleasedContextError,
  ReleasedContextError,
  type ValidationIssue,
} from './errors';
export type { SendFileOptions } from './files';
export type { GraphqlOptions, GraphqlResolvers } from './graphql';
export {
  type ConnectOptions,
  createEventHub,
  type EventHub,
  type EventHubOptions,
  HUB_INVALIDATE_EVENT,
  HUB_RESET_EVENT,
  type HubMetrics,
  type InvalidateOptions,
  type PublishOptions,
  type SlowClientInfo,
  SOURCE_HEADER,
  type WireInvalidateTarget,
} from './hub';
export { HubPublishError, type HubPublishFailure, isHubPublishError } from './hub-errors';
export type {
  HubStore,
  ReplayRequest,
  ReplayResult,
  StoredEvent,
  StoreSink,
} from './hub-store';
export { type MemoryStoreOptions, memoryStore } from './memory-store';
export type { TrustProxy } from './proxy';
export type { SseOptions, SseStream } from './sse';
export type { StreamBody } from './stream-body';
export type { Rule, Rules, RuleType, Validated } from './validate';
