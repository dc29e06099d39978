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
  HttpError,
  type HttpErrorOptions,
  isHttpError,
  ReleasedContextError,
  type ValidationIssue,
} from './errors';
export type { SendFileOptions } from './files';
export type { GraphqlOptions, GraphqlResolvers } from './graphql';
export { createEventHub, type EventHub, type EventHubOptions, HUB_RESET_EVENT } from './hub';
export type { TrustProxy } from './proxy';
export type { SseStream } from './sse';
export type { Rule, Rules, RuleType, Validated } from './validate';
