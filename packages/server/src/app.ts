import { randomBytes } from 'node:crypto';
import {
  createServer,
  IncomingMessage,
  type OutgoingHttpHeaders,
  type RequestListener,
  type Server,
  type ServerResponse,
  validateHeaderName,
} from 'node:http';
import type {
  Http2SecureServer,
  Http2Server,
  Http2ServerRequest,
  Http2ServerResponse,
  Http2Session,
  ServerHttp2Stream,
} from 'node:http2';
import { Socket } from 'node:net';
import Router from 'find-my-way';
import inject, { type InjectOptions } from 'light-my-request';
import {
  BodyKind,
  type BodyParsers,
  type BodyPolicy,
  bodyKindOf,
  closeLingering,
  drainUnread,
  EXPECTS_CONTINUE,
  endAfterBody,
  type RouteOptions,
  skipBody,
  typeMatcher,
} from './body';
import { type BodyCharset, bodyCharset, isToken } from './charset';
import {
  badRoutePath,
  boolean,
  checkFunction,
  checkNumber,
  checkOptions,
  errorText,
  integer,
  keysOf,
  rangeError,
  typeError,
} from './checks';
import { onClientError } from './client-error';
import { type Clock, checkClock, MAX_TIMER_MS, type TimerHandle } from './clock';
import { type CompressionOptions, type CompressionSettings, resolveCompression } from './compress';
import {
  type Context,
  createContext,
  type Handler,
  hostFault,
  type KeelRequest,
  type Middleware,
  targetHostFault,
} from './context';
import { HttpException } from './errors';
import { type GraphqlOptions, GraphqlRunner, resolveGraphqlOptions } from './graphql';
import { adaptH2, h2StreamOf } from './h2';
import { h2RequestDeadline } from './h2-request';
import { watchH2Session } from './h2-session';
import { Pool } from './pool';
import { compileTrust, peerAddress, type TrustFn, type TrustProxy } from './proxy';
import { KeelServerResponse } from './raw-response';
import { awaitsSocket, replyDone, type SendWatch, wasUnsent, watchH2 } from './send-watch';
import { JSON_TYPE, Slot, type SlotHost } from './slot';
import { type SseOptions, SseRegistry } from './sse';
import { promiseOf } from './thenable';
import { asksUpgrade, endsItsRead } from './upgrade';

/**
 * Options for {@link createApp}; every one has a default. The timeouts of the servers `listen`
 * starts come from {@link ServerTimeouts}.
 *
 * @example
 * const app = createApp({ bodyLimit: 64 * 1024, trustProxy: 'loopback', compression: true });
 */
export interface AppOptions extends ServerTimeouts {
  /**
   * Largest request body read, in bytes; a larger one gets 413. Routes may set their own.
   *
   * @default 1048576 (1 MiB)
   */
  bodyLimit?: number | undefined;
  /**
   * Deepest nesting of arrays and objects in a JSON body, 1-2048; a deeper one gets 400
   * (JSON.stringify and recursive code overflow the stack around 4000). Routes may set their own.
   *
   * @default 1000
   */
  maxJsonDepth?: number | undefined;
  /**
   * Content types read as text or raw bytes, besides JSON and urlencoded forms (always read).
   *
   * @default {} (none)
   */
  parsers?: BodyParsers | undefined;
  /**
   * Which `X-Forwarded-For` hops to believe for `ctx.ip`, `ctx.protocol` and `ctx.hostname`;
   * `setTrustProxy` changes it later. See {@link TrustProxy}.
   *
   * @default false (the TCP peer; forwarding headers are ignored)
   */
  trustProxy?: TrustProxy | undefined;
  /**
   * Idle request slots kept for reuse; a burst beyond it allocates and is collected.
   *
   * @default 1024
   */
  poolSize?: number | undefined;
  /**
   * Development defaults: GraphQL introspection is on. (Stale-ctx detection does not depend on
   * it: it is always on.)
   *
   * @default process.env.NODE_ENV !== 'production'
   */
  development?: boolean | undefined;
  /**
   * Server-sent events: the heartbeat period and the per-client queue cap.
   *
   * @default { heartbeatMs: 15000, maxBufferedBytes: 1048576 }
   */
  sse?: SseOptions | undefined;
  /**
   * ms a response body (`ctx.sendFile`, `ctx.send(stream)`, a buffered reply, replies queued on
   * a keep-alive connection) may wait on a client that takes none of it before the connection is
   * closed (and the file, source or body released), as
   * nginx's `send_timeout`: the time between two drains of the response, not the whole transfer,
   * so a slow download that keeps moving is never cut, and a slow source is not the client's
   * fault. `0` turns it off (and the 4 MiB cap on replies queued behind another response of a
   * connection). Event streams have their own bound (`sse.maxBufferedBytes`), and a client that
   * takes nothing of a waiting event queue for this long is disconnected too, as is the tail of
   * one the server ended.
   *
   * @default 60000
   */
  sendTimeout?: number | undefined;
  /**
   * Treat `/a/` like `/a`.
   *
   * @default false
   */
  ignoreTrailingSlash?: boolean | undefined;
  /**
   * Match paths case-sensitively (`/A` is not `/a`).
   *
   * @default true
   */
  caseSensitive?: boolean | undefined;
  /**
   * Where every timer of the app comes from (heartbeats, `sseInterval`, the `close()` deadline);
   * tests substitute a manual clock. The same shape as `@keel/core`'s `Clock`.
   *
   * @default the global timers (unref'd: they never keep the process alive)
   */
  clock?: Clock | undefined;
  /**
   * Limits and switches for `ctx.graphql`; see {@link GraphqlOptions}.
   *
   * @default {} (every limit at its default)
   */
  graphql?: GraphqlOptions | undefined;
  /**
   * Compress buffered responses (json, send, errors, GraphQL) with brotli or gzip, as the
   * client's Accept-Encoding allows; `true` for the defaults of {@link CompressionOptions}.
   * Streams (SSE) and files are sent as they are.
   *
   * @default false
   */
  compression?: boolean | CompressionOptions | undefined;
  /**
   * The request header whose value becomes `ctx.requestId` when it is 1-128 characters of
   * `[A-Za-z0-9_.:@+=/-]`; `false` ignores incoming ids and always makes one (use it when clients
   * must not choose the id your logs correlate by). The response carries `X-Request-ID` either way.
   *
   * @default 'x-request-id'
   */
  requestIdHeader?: string | false | undefined;
  /**
   * Longest value of one route parameter, in characters (find-my-way's `maxParamLength`); a
   * longer one matches no route: 404.
   *
   * @default 100
   */
  maxParamLength?: number | undefined;
}

/**
 * Timeouts of the servers `listen` starts (Node's own defaults would hold a slow client for
 * 300 s). Set in `createApp`, overridable per `listen` call.
 */
export interface ServerTimeouts {
  /**
   * ms to receive a whole request, headers and body; past it Node answers 408 and closes the
   * connection. `0` disables it (then only `headersTimeout` applies). On an HTTP/2 server given to
   * `attach`, keel applies it per stream (Node does not): 408, or a reset once a response started.
   *
   * @default 30000
   */
  requestTimeout?: number | undefined;
  /**
   * ms to receive the request headers; at most a non-zero `requestTimeout`. Past it Node answers
   * 408 and closes the connection.
   *
   * @default 10000
   */
  headersTimeout?: number | undefined;
  /**
   * ms an idle keep-alive connection stays open. Behind a load balancer, set it above the
   * balancer's idle timeout (e.g. 65000 behind an AWS ALB's 60 s). On an HTTP/2 server given to
   * `attach`, ms a session with no open stream stays open (then closed with GOAWAY).
   *
   * @default 5000
   */
  keepAliveTimeout?: number | undefined;
}

/** What {@link App.onResponse} hooks learn about a response. */
export interface ResponseInfo {
  /**
   * The status sent, or `0` when none of the response was written: the client left before it was
   * started, or its connection closed while it waited behind an earlier response.
   */
  readonly status: number;
  /** The response was completed (`false`: the client left first, or the connection was cut). */
  readonly finished: boolean;
}

/** Called once per request after its response is over; see {@link App.onResponse}. */
export type ResponseHook = (ctx: Context, response: ResponseInfo) => void;

/** Options for {@link App.close}. */
export interface CloseOptions {
  /**
   * How long to wait for in-flight requests before closing their connections, in ms
   * (`Infinity` waits for ever).
   *
   * @default 10000
   */
  timeoutMs?: number | undefined;
}

/** A request for {@link App.inject}. */
export interface InjectRequest {
  /**
   * The HTTP method.
   *
   * @default 'GET'
   */
  method?: string | undefined;
  /** Path and query, e.g. `/users/1?full=1`. Required. */
  url: string;
  /**
   * Request headers (names in any case).
   *
   * @default {} (light-my-request adds `host` and `user-agent`)
   */
  headers?: Record<string, string | string[]> | undefined;
  /**
   * A string or Buffer is sent as-is; an object as JSON (with its Content-Type).
   *
   * @default undefined (no body)
   */
  body?: string | Buffer | object | undefined;
  /**
   * The simulated TCP peer (`ctx.req.remoteAddress`, and `ctx.ip` without trust proxy).
   *
   * @default '127.0.0.1'
   */
  remoteAddress?: string | undefined;
}

/** The outcome of {@link App.inject}. */
export interface InjectResponse {
  /** The status sent. */
  readonly status: number;
  /** The response headers, names lower-case. */
  readonly headers: OutgoingHttpHeaders;
  /** The body as text (UTF-8). */
  readonly body: string;
  /** The body parsed as JSON (throws a SyntaxError when it is not JSON). */
  json<T = unknown>(): T;
}

/** Called for unexpected errors (not HttpException 4xx); may send its own response via ctx. */
export type ErrorHandler = (err: unknown, ctx: Context) => void | Promise<void>;

/** The application returned by {@link createApp}. Route methods return the app for chaining. */
export interface App {
  /**
   * Registers a GET route (also answering HEAD unless a HEAD route exists). Paths take `:param`
   * segments and a trailing `*` wildcard. Route options (`bodyLimit`, `parsers`) replace the
   * app's for this route.
   *
   * @example
   * app.get('/users/:id', (ctx) => ctx.json({ id: ctx.params.id }));
   * app.post('/upload', { bodyLimit: 10 * 1024 * 1024, parsers: { raw: ['image/*'] } }, save);
   */
  get(path: string, handler: Handler): App;
  get(path: string, options: RouteOptions, handler: Handler): App;
  /** Registers a POST route. */
  post(path: string, handler: Handler): App;
  post(path: string, options: RouteOptions, handler: Handler): App;
  /** Registers a PUT route. */
  put(path: string, handler: Handler): App;
  put(path: string, options: RouteOptions, handler: Handler): App;
  /** Registers a PATCH route. */
  patch(path: string, handler: Handler): App;
  patch(path: string, options: RouteOptions, handler: Handler): App;
  /** Registers a DELETE route. */
  delete(path: string, handler: Handler): App;
  delete(path: string, options: RouteOptions, handler: Handler): App;
  /** Registers a HEAD route (otherwise HEAD uses the GET route without a body). */
  head(path: string, handler: Handler): App;
  head(path: string, options: RouteOptions, handler: Handler): App;
  /** Registers an OPTIONS route (otherwise OPTIONS on a known path gets 204 with Allow). */
  options(path: string, handler: Handler): App;
  options(path: string, options: RouteOptions, handler: Handler): App;
  /** Registers a route for GET, HEAD, POST, PUT, PATCH, DELETE and OPTIONS. */
  all(path: string, handler: Handler): App;
  all(path: string, options: RouteOptions, handler: Handler): App;
  /** Adds onion middleware, run in registration order for every request (404s included). */
  use(middleware: Middleware): App;
  /** Adds a handler for unexpected errors (thrown non-HttpException values and HttpException 5xx). */
  onError(handler: ErrorHandler): App;
  /**
   * Adds a hook called once per request when its response is over (sent, or the client left),
   * with the status the client got: for access logs and metrics. Unlike code after
   * `await next()` in a middleware, it also sees the status of thrown errors (404, 500...).
   * The ctx is over by then: read it, do not respond. A hook that throws is reported to onError.
   *
   * @example
   * app.onResponse((ctx, { status }) => log(ctx.method, ctx.path, status, ctx.requestId));
   */
  onResponse(hook: ResponseHook): App;
  /** Which X-Forwarded-For hops to trust; see {@link TrustProxy} and the README. */
  setTrustProxy(value: TrustProxy): App;
  /**
   * A plain `(req, res)` listener: `http.createServer(app.handler)`, or an HTTP/2 server's
   * (`http2.createSecureServer({ allowHTTP1: true }, app.handler)`, Node's compatibility API).
   */
  readonly handler: RequestListener & ((req: Http2ServerRequest, res: Http2ServerResponse) => void);
  /**
   * Options for your own server, so its responses are watched as those of servers `listen`
   * starts: a body the handler writes through `ctx.res` while it still awaits is cut after
   * `sendTimeout`, and a head made after the client left is reported as not sent.
   * One frozen object, the same for every app.
   *
   * @example
   * http.createServer({ ...app.serverOptions, requestTimeout: 30_000 }, app.handler);
   */
  readonly serverOptions: ServerResponseOption;
  /**
   * Starts an HTTP server with the app's timeouts, or those given here; resolves once listening.
   * On your own server (`http.createServer(app.handler)`) set the timeouts yourself, or `attach` it.
   *
   * @param port The TCP port; `0` picks a free one. @default 0
   * @param host The address to bind. @default every interface (Node's default)
   * @param timeouts Replace the app's {@link ServerTimeouts} for this server. @default the app's
   */
  listen(port?: number, host?: string, timeouts?: ServerTimeouts): Promise<Server>;
  /**
   * Gives your own server (`http.createServer(app.handler)`) what servers `listen` starts get
   * besides their response class (see `serverOptions`): CONNECT answered 405 rather
   * than dropped without a word, keel's `clientError` answers (a response is not replaced by a
   * 400 for bytes sent after `Connection: close`), `Expect: 100-continue` left to the body reader
   * (an oversize body refused before it is sent), every header line kept (`maxHeadersCount` 0),
   * the peer address captured at accept, and the app's `requestTimeout`, `headersTimeout` and
   * `keepAliveTimeout` while the server's are still Node's defaults (300 s, 60 s, 5 s), checked as
   * often as `listen` checks them (also on a server that listens already). For a server whose request listener is
   * `app.handler`; calling it again changes nothing, attaching a server of another app throws.
   * `close()` closes it as it closes those of `listen`. On an HTTP/2 server (`http2.createServer`,
   * `createSecureServer`) it also applies the app's `requestTimeout` per stream (408, or a reset
   * once a response started) and `keepAliveTimeout` per session with no open stream, which Node
   * does not, and gives the HTTP/1.1 connections of `allowHTTP1` the app's `requestTimeout` and
   * `headersTimeout` while the server's are still Node's (300 s, 60 s). Returns the server.
   *
   * @example
   * const server = app.attach(http.createServer({ ...app.serverOptions, requestTimeout: 30_000 }, app.handler));
   */
  attach<S extends Server | Http2Server | Http2SecureServer>(server: S): S;
  /**
   * Stops accepting connections, ends open SSE streams (and any opened from now on), and
   * resolves once in-flight requests have finished and the servers started by `listen` or given
   * to `attach` have closed (idle keep-alive connections are ended at once, the others once their
   * response is done; HTTP/2 sessions get GOAWAY, likewise). After `timeoutMs` the connections still open are closed and it resolves anyway:
   * a handler that never answers cannot hold a shutdown forever. Later calls return the first
   * call's promise.
   */
  close(options?: CloseOptions): Promise<void>;
  /** Runs a request in-process (no socket) through the same routing, body parsing and ctx. */
  inject(request: InjectRequest): Promise<InjectResponse>;
}

/** What {@link App.serverOptions} holds: the response class of servers `listen` starts. */
export interface ServerResponseOption {
  /** keel's `ServerResponse` subclass: it tells the app of the handler's own first write. */
  readonly ServerResponse: typeof ServerResponse;
}

/**
 * Only the response class: the request class of `listen` reads the peer address a connection
 * listener captured at accept, which an own server does not add (its requests get the address
 * at request time instead, see setPeer).
 */
const SERVER_OPTIONS: ServerResponseOption = Object.freeze({
  ServerResponse: KeelServerResponse,
});

const PEER = Symbol('keel.peer');
/**
 * What Node's Http2SecureServer constructor sets for its `allowHTTP1` connections (lib/internal/
 * http2/core.js), which are http.Server's defaults too: see #timeHttp1Fallback.
 */
const NODE_REQUEST_TIMEOUT = 300_000;
const NODE_HEADERS_TIMEOUT = 60_000;
const NODE_CHECKING_INTERVAL = 30_000;
/** http.Server's `keepAliveTimeout` by default (an HTTP/2 server has none: undefined). */
const NODE_KEEP_ALIVE_TIMEOUT = 5000;

/**
 * Node checks `requestTimeout` and `headersTimeout` every connectionsCheckingInterval (30 s by
 * default, which would let a 10 s headers timeout run to 40 s): a quarter of the shorter one.
 */
function checkingInterval(requestTimeout: number, headersTimeout: number): number {
  const shortest = Math.min(headersTimeout, requestTimeout || headersTimeout);
  return Math.min(NODE_CHECKING_INTERVAL, Math.max(50, Math.floor(shortest / 4)));
}

/** Node's 'listening' listener that arms the connection checks, by its name in Node 18.12-24. */
const TRACKING_NAME = 'setupConnectionsTracking';
/** The fallback's find, once per process: undefined until looked for, null when there is none. */
let nodeTracking: ((this: Server) => void) | null | undefined;

/**
 * Node's own listener that arms the connection checks (lib/_http_server.js), among `server`'s
 * 'listening' listeners. By name first; a Node that renamed it is still served: a fresh
 * http.Server registers that one function and no other (an allowHTTP1 server shares it), so it
 * is known by identity. A fresh server with some other count of them is not guessed at: null.
 */
function connectionsTracking(server: Server): ((this: Server) => void) | null {
  const listeners = server.listeners('listening') as ((this: Server) => void)[];
  for (const listener of listeners) if (listener.name === TRACKING_NAME) return listener;
  if (nodeTracking === undefined) {
    const own = createServer().listeners('listening') as ((this: Server) => void)[];
    nodeTracking = own.length === 1 ? (own[0] ?? null) : null;
  }
  return nodeTracking !== null && listeners.includes(nodeTracking) ? nodeTracking : null;
}

/**
 * Has `server` check its connections' `requestTimeout` / `headersTimeout` every `interval` ms
 * while it checks them every 30 s of Node's default (any other value is the server's own). Node
 * arms the check on 'listening' with the interval it has then: a server already listening is
 * armed again by Node's own 'listening' listener (it clears the running check first); on a Node
 * without that listener the 30 s check stays.
 */
function checkOften(server: Server, interval: number): void {
  // A field Node has (since 18.12) and @types/node does not declare.
  const checked = server as Server & { connectionsCheckingInterval?: number };
  if (checked.connectionsCheckingInterval !== NODE_CHECKING_INTERVAL) return;
  checked.connectionsCheckingInterval = interval;
  if (server.listening) connectionsTracking(server)?.call(server);
}

/** The app whose listeners a server got (listen, attach). */
const ATTACHED = Symbol('keel.attached');
const FAULTY_FRAMING = Symbol('keel.faultyFraming');
const SAFE_REQUEST_ID = /^[\w.:@+=/-]{1,128}$/;
const ID_PREFIX = `${randomBytes(4).toString('hex')}-`;
const EMPTY_PARAMS: Readonly<Record<string, string>> = Object.freeze({});
/**
 * The body policy of a request whose body is never read: no route takes it, or its headers
 * refuse it (415, 400, 501). The body is skipped (see skipBody).
 */
const NO_BODY: BodyPolicy = { limit: 0, depth: 1, text: null, raw: null };
let idCounter = 0;

/** C0 and C1 controls, DEL, and the Unicode line / paragraph separators: not for a log line. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching them is the point
const CONTROL_CHARACTER = /[\x00-\x1f\x7f-\x9f\u2028\u2029]/;
/** What JSON.stringify leaves raw of those. */
const UNESCAPED_CONTROL = /[\x7f-\x9f\u2028\u2029]/g;

/** `path` for a log line: as it is, or a JSON string with every control character escaped. */
function loggable(path: string): string {
  if (!CONTROL_CHARACTER.test(path)) return path;
  return JSON.stringify(path).replace(
    UNESCAPED_CONTROL,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

/**
 * The request class of servers started by `listen`: `remoteAddress` is a prototype getter over
 * the address captured at accept, so no property is added to each request (which would change
 * its hidden class on the hot path). Requests from other servers get an own property instead.
 */
class KeelIncomingMessage extends IncomingMessage {
  get remoteAddress(): string {
    const socket = this.socket as (Socket & { [PEER]?: string }) | null;
    return socket?.[PEER] ?? peerAddress(socket?.remoteAddress);
  }
}

const DEFAULT_TIMEOUTS: Required<ServerTimeouts> = {
  requestTimeout: 30_000,
  headersTimeout: 10_000,
  keepAliveTimeout: 5_000,
};

const TIMEOUT_KEYS = keysOf<ServerTimeouts>({
  requestTimeout: 0,
  headersTimeout: 0,
  keepAliveTimeout: 0,
});
const APP_KEYS = keysOf<Omit<AppOptions, keyof ServerTimeouts>>(
  {
    bodyLimit: 0,
    maxJsonDepth: 0,
    parsers: 0,
    trustProxy: 0,
    poolSize: 0,
    development: 0,
    sse: 0,
    sendTimeout: 0,
    ignoreTrailingSlash: 0,
    caseSensitive: 0,
    clock: 0,
    graphql: 0,
    compression: 0,
    requestIdHeader: 0,
    maxParamLength: 0,
  },
  TIMEOUT_KEYS,
);
const ROUTE_KEYS = keysOf<RouteOptions>({ bodyLimit: 0, maxJsonDepth: 0, parsers: 0 });
const PARSER_KEYS = keysOf<BodyParsers>({ text: 0, raw: 0 });
const SSE_KEYS = keysOf<SseOptions>({ heartbeatMs: 0, maxBufferedBytes: 0 });
const CLOSE_KEYS = keysOf<CloseOptions>({ timeoutMs: 0 });
const INJECT_KEYS = keysOf<InjectRequest>({
  method: 0,
  url: 0,
  headers: 0,
  body: 0,
  remoteAddress: 0,
});

/** Checks the timeouts once, at the boundary; missing ones come from `base`. */
function resolveTimeouts(
  options: ServerTimeouts,
  base: Required<ServerTimeouts>,
): Required<ServerTimeouts> {
  const out = {
    requestTimeout: integer(
      'requestTimeout',
      options.requestTimeout,
      base.requestTimeout,
      0,
      MAX_TIMER_MS,
      'ms',
    ),
    headersTimeout: integer(
      'headersTimeout',
      options.headersTimeout,
      base.headersTimeout,
      1,
      MAX_TIMER_MS,
      'ms',
    ),
    keepAliveTimeout: integer(
      'keepAliveTimeout',
      options.keepAliveTimeout,
      base.keepAliveTimeout,
      0,
      MAX_TIMER_MS,
      'ms',
    ),
  };
  if (out.requestTimeout > 0 && out.headersTimeout > out.requestTimeout) {
    throw rangeError(
      'headersTimeout',
      `at most \`requestTimeout\` (${out.requestTimeout} ms)`,
      out.headersTimeout,
    );
  }
  return out;
}

/**
 * `req.remoteAddress` on a request from a server `listen` did not start
 * (`http.createServer(app.handler)`): an own property, set once. A request class that defines
 * its own read-only `remoteAddress` gets the property defined over it (an assignment would throw).
 */
function setPeer(req: IncomingMessage): void {
  const socket = req.socket as (Socket & { [PEER]?: string }) | null;
  let peer = socket?.[PEER];
  if (peer === undefined) {
    peer = peerAddress(socket?.remoteAddress);
    // Kept for the connection's next requests; not an address a closing socket lost already.
    if (socket !== null && socket.remoteAddress !== undefined) socket[PEER] = peer;
  }
  try {
    (req as { remoteAddress?: string }).remoteAddress = peer;
  } catch {
    Object.defineProperty(req, 'remoteAddress', { value: peer, enumerable: true });
  }
}

function requestIdHeaderOf(value: string | false | undefined): string | null {
  if (value === false) return null;
  if (value === undefined) return 'x-request-id';
  const expected = 'a header name or false';
  if (typeof value !== 'string') throw typeError('requestIdHeader', expected, value);
  try {
    validateHeaderName(value);
  } catch (err) {
    throw rangeError('requestIdHeader', expected, value, err);
  }
  return value.toLowerCase();
}

/** What the router stores for a route. */
interface Route {
  handler: Handler;
  body: BodyPolicy;
}

/** Above it JSON.stringify overflows the stack anyway (about 4000 levels): no use, and unsafe. */
const MAX_JSON_DEPTH = 2048;

/** Resolves body options once, at registration; what is not given comes from `base`. */
function bodyPolicy(options: RouteOptions, base: BodyPolicy): BodyPolicy {
  const parsers = options.parsers;
  if (parsers !== undefined) checkOptions('parsers', parsers, PARSER_KEYS);
  return {
    limit: integer('bodyLimit', options.bodyLimit, base.limit, 0, undefined, 'bytes'),
    depth: integer('maxJsonDepth', options.maxJsonDepth, base.depth, 1, MAX_JSON_DEPTH),
    text: parsers?.text === undefined ? base.text : typeMatcher('text', parsers.text),
    raw: parsers?.raw === undefined ? base.raw : typeMatcher('raw', parsers.raw),
  };
}

function notFound(): never {
  throw new HttpException(404);
}

function unsupportedEncoding(): never {
  throw new HttpException(415, 'Compressed request bodies (Content-Encoding) are not supported');
}

/**
 * An `Allow` value for `methods` (changed in place): HEAD where GET is (a GET route answers it),
 * and OPTIONS, which is answered on every routed path (RFC 9110 §10.2.1: the methods the resource
 * supports). One rule for a 405, an OPTIONS 204, `OPTIONS *` and CONNECT.
 */
function allowOf(methods: string[]): string {
  if (methods.includes('GET') && !methods.includes('HEAD')) methods.push('HEAD');
  if (!methods.includes('OPTIONS')) methods.push('OPTIONS');
  return methods.join(', ');
}

/** Sent, not thrown: a 5xx HttpException goes to onError, and this one is the client's doing. */
const UNKNOWN_CODING_BODY = JSON.stringify(
  new HttpException(501, 'Transfer-Encoding other than chunked is not supported').toJSON(),
);

function unknownTransferCoding(ctx: Context): void {
  // The body is skipped: Node can still find its end (chunked comes last).
  ctx.status(501).setHeader('content-type', JSON_TYPE).send(UNKNOWN_CODING_BODY);
}

function ambiguousType(): never {
  throw new HttpException(400, 'Two different Content-Type headers: the body type is ambiguous');
}

/**
 * Two Content-Type lines that differ. Node keeps the first; a proxy or WAF in front may have
 * judged the body by the last (a JSON body inspected as text/plain), so neither is believed.
 * Only bodies keel reads pay for it: one pass over the raw header names, no allocation for the
 * usual spellings.
 */
function twoContentTypes(req: IncomingMessage): boolean {
  const raw = req.rawHeaders;
  let first: string | undefined;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!;
    if (name.length !== 12) continue;
    if (
      name !== 'Content-Type' &&
      name !== 'content-type' &&
      name.toLowerCase() !== 'content-type'
    ) {
      continue;
    }
    if (first === undefined) first = raw[i + 1]!;
    else if (raw[i + 1] !== first) return true;
  }
  return false;
}

/**
 * A Content-Encoding other than `identity` (read as any header token: OWS around it, no case;
 * not String#trim's Unicode spaces, as the Content-Type check). No header allocates nothing.
 */
function isEncoded(req: IncomingMessage): boolean {
  const coding = req.headers['content-encoding'];
  return coding !== undefined && coding !== '' && !isToken(coding, 'identity');
}

const VERSION_NOT_SUPPORTED = JSON.stringify({
  status: 505,
  error: 'HTTP Version Not Supported: this server speaks HTTP/1.0, HTTP/1.1 and HTTP/2',
});

/**
 * The 505 of {@link App.handler} for a text HTTP/0.9 or HTTP/2.0 request line; closes. Written
 * whole at once, ended (Node then closes) once a body it declared is drained: see endAfterBody.
 */
function unsupportedVersion(req: IncomingMessage, res: ServerResponse, clock: Clock): void {
  res.shouldKeepAlive = false; // Node then writes `Connection: close`

  res.writeHead(505, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(VERSION_NOT_SUPPORTED),
  });
  res.write(VERSION_NOT_SUPPORTED);
  endAfterBody(req, res, clock);
}

/** The handler of a request refused before any route: a 400 saying why. */
function refusal(message: string): () => never {
  return () => {
    throw new HttpException(400, message);
  };
}

const badUrl = refusal('Malformed URL');
const asteriskForm = refusal('The * request target is only valid for OPTIONS');

/**
 * The refusal of each fault {@link hostFault} finds, by its number: 1 two Host lines, 2 a value
 * that is no `host[:port]`, 3 a Host that is not the :authority; and {@link targetHostFault}'s,
 * 4 an absolute-form target whose authority is no `host[:port]`.
 */
const HOST_REFUSALS = [
  undefined,
  refusal('Two Host header lines: the request names no one host (RFC 9112, section 3.2)'),
  refusal('Invalid Host header: not a host with an optional port (RFC 9112, section 3.2)'),
  refusal(
    'Host names another host than :authority: the request names no one host (RFC 9113, section 8.3.1)',
  ),
  refusal(
    'Invalid host in the request target: not a host with an optional port (RFC 9110, section 4.2.4)',
  ),
] as const;

type FindResult = {
  store: unknown;
  params: Record<string, string | undefined>;
};

/**
 * The router's match of `url` for `method`, or null: also when it fills a named parameter with
 * nothing (find-my-way takes an empty segment: `/users/` for `/users/:id`, `/` for `/:slug`,
 * `/users//posts`), so a handler always gets a value. The wildcard may be empty (`/static/`).
 */
function routeOf(
  router: Router.Instance<Router.HTTPVersion.V1>,
  method: string,
  url: string,
): FindResult | null {
  const found = router.find(method as Router.HTTPMethod, url) as FindResult | null;
  if (found !== null) {
    const params = found.params;
    for (const name in params) if (!params[name] && name !== '*') return null;
  }
  return found;
}

class KeelApp implements App, SlotHost {
  readonly development: boolean;
  readonly middleware: Middleware[] = [];
  readonly sse: SseRegistry;
  readonly send: SendWatch;
  readonly graphql: GraphqlRunner;
  readonly compression: CompressionSettings | null;
  trust: TrustFn;
  closing = false;
  readonly #router: Router.Instance<Router.HTTPVersion.V1>;
  readonly #methods = new Set<string>();
  readonly #errorHandlers: ErrorHandler[] = [];
  readonly #responseHooks: ResponseHook[] = [];
  readonly #timeouts: Required<ServerTimeouts>;
  /** Lower-case header name, or null when incoming ids are ignored. */
  readonly #requestIdHeader: string | null;
  readonly #pool: Pool<Slot>;
  /** The app's body policy: routes without options share it. */
  readonly #body: BodyPolicy;
  readonly #servers = new Set<Server>();
  /** Sockets of answered CONNECT requests: Node no longer tracks them, close() ends them. */
  readonly #tunnels = new Set<Socket>();
  /** Open sessions of attached HTTP/2 servers: close() ends them (Node's close() does not). */
  readonly #sessions = new Set<Http2Session>();
  /** HTTP/1.1 connections of attached HTTP/2 servers (`allowHTTP1`): close() ends them. */
  readonly #h1OnH2 = new Set<Socket>();
  /**
   * Every TCP connection of attached HTTP/2 servers, by both ends (see connectionKey, which a
   * session's proxy reads too): a session's socket is a proxy that cannot be destroyed, and
   * Node's graceful session close waits for a peer that may never read; close() and a
   * session's idle watch destroy these.
   */
  readonly #h2Connections = new Map<string, Socket>();
  #inflight = 0;
  #compiled = false;
  #drained: (() => void) | null = null;
  #closed: Promise<void> | null = null;

  constructor(options: AppOptions) {
    checkOptions('createApp options', options, APP_KEYS);
    this.development = boolean(
      'development',
      options.development,
      process.env.NODE_ENV !== 'production',
    );
    const sse = options.sse === undefined ? {} : options.sse;
    checkOptions('sse', sse, SSE_KEYS);
    this.#body = bodyPolicy(options, {
      limit: 1024 * 1024,
      depth: 1000,
      text: null,
      raw: null,
    });
    const poolSize = integer('poolSize', options.poolSize, 1024, 0);
    this.trust = compileTrust(options.trustProxy ?? false);
    const clock = checkClock(options.clock);
    this.send = {
      clock,
      ms: integer('sendTimeout', options.sendTimeout, 60_000, 0, MAX_TIMER_MS, 'ms'),
    };
    this.sse = new SseRegistry(
      clock,
      {
        heartbeatMs: integer('sse.heartbeatMs', sse.heartbeatMs, 15_000, 0, MAX_TIMER_MS, 'ms'),
        maxBufferedBytes: integer(
          'sse.maxBufferedBytes',
          sse.maxBufferedBytes,
          1024 * 1024,
          1,
          undefined,
          'bytes',
        ),
      },
      this.send.ms,
    );
    this.graphql = new GraphqlRunner(resolveGraphqlOptions(options.graphql, this.development));
    this.compression = resolveCompression(options.compression);
    this.#pool = new Pool(poolSize, () => new Slot(this));
    this.#timeouts = resolveTimeouts(options, DEFAULT_TIMEOUTS);
    this.#requestIdHeader = requestIdHeaderOf(options.requestIdHeader);
    this.#router = Router({
      ignoreTrailingSlash: boolean('ignoreTrailingSlash', options.ignoreTrailingSlash, false),
      caseSensitive: boolean('caseSensitive', options.caseSensitive, true),
      maxParamLength: integer(
        'maxParamLength',
        options.maxParamLength,
        100,
        1,
        undefined,
        'characters',
      ),
      // No parsing here: ctx splits path and query off the target only if a handler asks.
      querystringParser: (s: string) => s,
      // Returns a match with a null store, answered with 400 below.
      onBadUrl: () => {},
    });
  }

  get(path: string, a: RouteOptions | Handler, b?: Handler): App {
    return this.#on(['GET'], path, a, b);
  }
  post(path: string, a: RouteOptions | Handler, b?: Handler): App {
    return this.#on(['POST'], path, a, b);
  }
  put(path: string, a: RouteOptions | Handler, b?: Handler): App {
    return this.#on(['PUT'], path, a, b);
  }
  patch(path: string, a: RouteOptions | Handler, b?: Handler): App {
    return this.#on(['PATCH'], path, a, b);
  }
  delete(path: string, a: RouteOptions | Handler, b?: Handler): App {
    return this.#on(['DELETE'], path, a, b);
  }
  head(path: string, a: RouteOptions | Handler, b?: Handler): App {
    return this.#on(['HEAD'], path, a, b);
  }
  options(path: string, a: RouteOptions | Handler, b?: Handler): App {
    return this.#on(['OPTIONS'], path, a, b);
  }
  all(path: string, a: RouteOptions | Handler, b?: Handler): App {
    const methods = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const;
    return this.#on([...methods], path, a, b);
  }

  #on(
    methods: Router.HTTPMethod[],
    path: string,
    a: RouteOptions | Handler,
    b: Handler | undefined,
  ): App {
    const handler = (b === undefined ? a : b) as Handler;
    const where = `${methods.length === 1 ? methods[0] : 'ALL'} ${path}`;
    checkFunction(`handler of ${where}`, handler);
    let body = this.#body;
    if (b !== undefined) {
      checkOptions(`options of ${where}`, a, ROUTE_KEYS);
      body = bodyPolicy(a as RouteOptions, body);
    }
    const route: Route = { handler, body };
    if (typeof path !== 'string') throw badRoutePath(where, path, 'a string');
    // Parameter names (`::` is an escaped colon, a `(regexp)` may hold one): the router takes
    // `/:` and a name used twice, and ctx.params would lose a value.
    const names: string[] = path.replace(/\([^)]*\)/g, '').match(/(?<!:):(?!:)[^/:(?.-]*/g) ?? [];
    if (names.includes(':')) throw badRoutePath(where, path, 'a name for every parameter');
    const twice = names.find((n, i) => names.indexOf(n) !== i);
    if (twice !== undefined) throw badRoutePath(where, path, `"${twice}" twice`);
    try {
      this.#router.on(methods, path, () => {}, route);
    } catch (cause) {
      const taken = /^Method '(\w+)' already declared/.exec(errorText(cause));
      if (taken !== null) {
        throw new Error(
          `keel: ${taken[1]} ${path} has a handler already: register each method and path once`,
          { cause },
        );
      }
      throw badRoutePath(where, path, errorText(cause), cause);
    }
    for (const method of methods) this.#methods.add(method);
    return this;
  }

  use(middleware: Middleware): App {
    checkFunction('middleware', middleware);
    this.middleware.push(middleware);
    return this;
  }

  onError(handler: ErrorHandler): App {
    checkFunction('onError handler', handler);
    this.#errorHandlers.push(handler);
    return this;
  }

  onResponse(hook: ResponseHook): App {
    checkFunction('onResponse hook', hook);
    this.#responseHooks.push(hook);
    return this;
  }

  setTrustProxy(value: TrustProxy): App {
    this.trust = compileTrust(value);
    return this;
  }

  get serverOptions(): ServerResponseOption {
    return SERVER_OPTIONS;
  }

  /** Step 1: route, take a ctx from the pool, read the body if there is one. */
  // Typed as HTTP/1's: Node's HTTP/2 compatibility request and response are read as theirs.
  readonly handler = ((req: IncomingMessage, res: ServerResponse): void => {
    const socket = req.socket as (Socket & { [FAULTY_FRAMING]?: true }) | null;
    // Parsed from bytes after a request whose framing was faulty: never run (see below). Its
    // response is queued behind that one's, and goes when the connection closes after it.
    if (socket?.[FAULTY_FRAMING] === true) return;
    if (req.httpVersionMinor !== 1 || req.httpVersionMajor !== 1) {
      // Only versions other than 1.1 pay for these checks.
      if (req.httpVersionMajor !== 1 && (req as { stream?: unknown }).stream === undefined) {
        // A text request line of HTTP/0.9 (a bare `GET /path`) or `HTTP/2.0`, which Node's
        // parser takes (HTTP/2 proper is binary frames, and comes with a `stream`): no version
        // keel speaks (RFC 9110 §6.2), answered 505 before anything runs, then the connection
        // closes; what Node parses after it on that connection is not a request.
        unsupportedVersion(req, res, this.send.clock);
        if (socket !== null) socket[FAULTY_FRAMING] = true;
        return;
      }
      if (req.headers['transfer-encoding'] !== undefined) {
        // RFC 9112 §6.1: Transfer-Encoding in HTTP/1.0 is faulty framing, the way to smuggle a
        // request past a proxy that frames it otherwise (HTTP/2 proper forbids the field). This
        // one is answered, then the connection closes; what Node parses after it on that
        // connection is not a request. The close lingers, as for other refused bodies: a client
        // still sending its body would otherwise draw a reset and lose the answer.
        closeLingering(req, res, this.send.clock);
        if (socket !== null) socket[FAULTY_FRAMING] = true;
      }
    }
    // A request asking to upgrade reaches the handler only when the server has no 'upgrade'
    // listener, and then Node's parser drops what it read past it (a request pipelined in the
    // same write): unless nothing was (see endsItsRead), the connection closes after this
    // response, so no client waits for an answer that cannot come. One lookup in the headers
    // object (every request builds it anyway).
    if (
      req.headers.upgrade !== undefined &&
      asksUpgrade(req.headers.connection) &&
      !endsItsRead(req)
    ) {
      res.shouldKeepAlive = false;
    }
    const method = req.method ?? 'GET';
    const url = req.url ?? '/';
    const router = this.#router;
    if (!this.#compiled) this.#compile();
    // A target starting with `*` is no path: never routed. `*` alone is the asterisk-form (see
    // #miss); anything longer (`*foo`) is malformed.
    const star = url.charCodeAt(0) === 42;
    let found = star ? null : routeOf(router, method, url);
    if (found === null && method === 'HEAD' && !star) found = routeOf(router, 'GET', url);
    let handler: Handler;
    let body: BodyPolicy;
    let params: Readonly<Record<string, string>>;
    // The route's maxJsonDepth (body may become NO_BODY below): GraphQL variables sent as a
    // JSON string are held to it.
    let jsonDepth: number;
    if (found !== null && found.store !== null) {
      const route = found.store as Route;
      handler = route.handler;
      body = route.body;
      jsonDepth = body.depth;
      params = found.params as Record<string, string>;
    } else {
      handler = found === null && !(star && url.length > 1) ? this.#miss(method, url) : badUrl;
      body = NO_BODY;
      jsonDepth = this.#body.depth;
      params = EMPTY_PARAMS;
    }
    // Refused whatever the route: code that reads Host must not see one of two, nor a value no
    // URL has as its host (see hostFault).
    const fault = hostFault(req) || targetHostFault(req.url!);
    if (fault !== 0) {
      handler = HOST_REFUSALS[fault]!;
      body = NO_BODY;
    }
    if (!(req instanceof KeelIncomingMessage)) setPeer(req);
    const incomingId =
      this.#requestIdHeader === null ? undefined : req.headers[this.#requestIdHeader];
    const requestId =
      typeof incomingId === 'string' && SAFE_REQUEST_ID.test(incomingId)
        ? incomingId
        : ID_PREFIX + (++idCounter).toString(36);

    const slot = this.#pool.acquire();
    // Tells the slot of the handler's own first write (a response of a server `listen` started).
    if (res instanceof KeelServerResponse) res.writer = slot;
    const ctx = createContext(slot, req as KeelRequest, res, method, url, params, requestId);
    let kind: BodyKind;
    let charset: BodyCharset = null;
    if (body === NO_BODY) {
      // A 404 / 405 needs no body: it is skipped (below), never read.
      kind = BodyKind.None;
    } else if (method === 'GET' || method === 'HEAD') {
      // Their bodies have no defined meaning: not read, drained once the request is over
      // (drainUnread, up to 16 MiB, past that the connection closed). One declared over the
      // route's bodyLimit is refused as any body is (413, drained up to 16 MiB, past that the
      // connection closed) rather than read for nothing: RFC 9110 §9.3.1 allows it.
      const declared = req.headers['content-length'];
      kind = declared !== undefined && Number(declared) > body.limit ? BodyKind.Raw : BodyKind.None;
    } else {
      kind = bodyKindOf(req, body);
      // Refused for its headers: never read, skipped as a 404's is (below).
      if (kind === BodyKind.UnknownCoding) {
        handler = unknownTransferCoding;
        body = NO_BODY;
      } else if (kind !== BodyKind.None && twoContentTypes(req)) {
        handler = ambiguousType;
        body = NO_BODY;
      } else if (kind !== BodyKind.None && kind !== BodyKind.Raw && isEncoded(req)) {
        // A gzip body read as JSON would be "Malformed JSON": say what is wrong instead (415).
        handler = unsupportedEncoding;
        body = NO_BODY;
      } else if (kind !== BodyKind.None && kind !== BodyKind.Raw) {
        // Text and forms are decoded by their charset, JSON is UTF-8: null (UTF-8) unless a
        // charset parameter says otherwise; one keel cannot decode is refused (415).
        const decoded = bodyCharset(req.headers['content-type'] ?? '', kind === BodyKind.Json);
        if (decoded instanceof HttpException) {
          handler = () => {
            throw decoded;
          };
          body = NO_BODY;
        } else charset = decoded;
      }
    }
    slot.begin(ctx, handler, jsonDepth);
    this.#inflight++;
    // Node hands over every request of a read it parsed, also after its connection was closed
    // under it (keel's queued-replies cap): nobody is there to answer, so no chain is run.
    if (req.socket.destroyed) slot.abandon();
    else if (body === NO_BODY) {
      skipBody(req, res, this.send.clock);
      slot.run();
    } else if (kind === BodyKind.None) slot.run();
    else slot.read(req, kind, body, charset);
  }) as App['handler'];

  /**
   * find-my-way 9.10+ can compile its trees to generated code (faster lookups); routes added
   * later are recompiled on their next lookup. Older 9.x versions simply walk the tree.
   */
  #compile(): void {
    this.#compiled = true;
    const router = this.#router as { compile?: () => unknown };
    if (typeof router.compile === 'function') router.compile();
  }

  /** No route for this method: 405 with Allow when other methods match, OPTIONS -> 204. */
  #miss(method: string, url: string): Handler {
    // RFC 9112 §3.2.4: `*` is only for a server-wide OPTIONS, answered with every method served.
    if (url === '*') {
      if (method !== 'OPTIONS') return asteriskForm;
      const allow = this.#serverAllow();
      return (ctx) => ctx.setHeader('allow', allow).status(204).send(null);
    }
    const allowed: string[] = [];
    for (const other of this.#methods) {
      if (other !== method && routeOf(this.#router, other, url) !== null) {
        allowed.push(other);
      }
    }
    if (allowed.length === 0) return notFound;
    const allow = allowOf(allowed);
    if (method === 'OPTIONS') {
      return (ctx) => ctx.setHeader('allow', allow).status(204).send(null);
    }
    return () => {
      throw new HttpException(405, undefined, { headers: { allow } });
    };
  }

  /** `Allow` for the server as a whole (`OPTIONS *`, CONNECT): every method routed, and OPTIONS. */
  #serverAllow(): string {
    return allowOf([...this.#methods].filter((method) => method !== 'OPTIONS'));
  }

  /** Calls the onError handlers; returns a promise when one of them is async. */
  report(err: unknown, ctx: Context): Promise<void> | undefined {
    if (this.#errorHandlers.length === 0) {
      // ctx.path is decoded: `%0A` is a line break, which would let a request write log lines
      // of its own (and `%1B` terminal escapes). Quoted as a JSON string when it holds any.
      console.error(`[keel] ${ctx.method} ${loggable(ctx.path)} failed:`, err);
      return undefined;
    }
    let pending: Promise<unknown>[] | undefined;
    for (const handler of this.#errorHandlers) {
      try {
        const promise = promiseOf(handler(err, ctx));
        if (promise !== null) {
          pending ??= [];
          pending.push(promise.catch((e: unknown) => console.error('[keel] onError failed:', e)));
        }
      } catch (e) {
        console.error('[keel] onError failed:', e);
      }
    }
    return pending === undefined ? undefined : Promise.all(pending).then(() => {});
  }

  /** The request is over (called by the slot): back to the pool, then the onResponse hooks. */
  release(slot: Slot): void {
    const ctx = slot.face;
    const cut = slot.cut;
    // What is left of a body nobody read is drained with a bound (Node's has none).
    drainUnread(ctx.req);
    slot.reset();
    this.#pool.release(slot);
    if (--this.#inflight === 0 && this.#drained !== null) this.#drained();
    if (this.#responseHooks.length === 0) return;
    // A reply ended while its bytes still wait for the connection (queued behind an earlier
    // response, or for a client that is not reading) is not over: reported once it finished,
    // or was cut with its connection. Its request is released already (the ctx is stale).
    const res = ctx.res;
    if (awaitsSocket(res)) void replyDone(res).then((ok) => this.#responded(ctx, cut || !ok));
    else this.#responded(ctx, cut);
  }

  /** Runs the onResponse hooks; the ctx is stale by now, so a hook cannot respond through it. */
  #responded(ctx: Context, cut: boolean): void {
    const res = ctx.res;
    // A head the handler made through ctx.res after its client left, or a response whose
    // connection closed while it was queued behind another (or the reply that took that queue
    // over the cap): none of it was sent.
    const sent = res.headersSent && !wasUnsent(res);
    const info: ResponseInfo = {
      status: sent ? res.statusCode : 0,
      // A small reply the socket took at once is over when ended (no 'finish' listener on the
      // hot path); one that waited is judged once it finished (above); a stream, a file or a
      // response written through ctx.res is marked cut when its connection closed after its
      // end, before it finished.
      finished: sent && res.writableEnded && !cut,
    };
    for (const hook of this.#responseHooks) {
      try {
        promiseOf(hook(ctx, info))?.then(undefined, (err: unknown) => this.report(err, ctx));
      } catch (err) {
        this.report(err, ctx);
      }
    }
  }

  /** Requests whose ctx is not yet released (tests and close() use it). */
  get inflight(): number {
    return this.#inflight;
  }

  /** Idle ctx objects in the pool. */
  get pooled(): number {
    return this.#pool.available;
  }

  listen(port = 0, host?: string, timeouts?: ServerTimeouts): Promise<Server> {
    // Checked here: Node's own refusal (ERR_SOCKET_BAD_PORT) names neither keel nor the call,
    // and a host of another type is ignored (the server listens on every interface).
    integer('port', port, 0, 0, 65_535);
    if (host !== undefined && typeof host !== 'string') throw typeError('host', 'a string', host);
    // createApp checks its timeout keys with the rest of its options.
    if (timeouts !== undefined) checkOptions('listen timeouts', timeouts, TIMEOUT_KEYS);
    const { requestTimeout, headersTimeout, keepAliveTimeout } =
      timeouts === undefined ? this.#timeouts : resolveTimeouts(timeouts, this.#timeouts);
    const server = createServer(
      {
        IncomingMessage: KeelIncomingMessage,
        ServerResponse: KeelServerResponse,
        requestTimeout,
        headersTimeout,
        connectionsCheckingInterval: checkingInterval(requestTimeout, headersTimeout),
      },
      this.handler,
    );
    server.keepAliveTimeout = keepAliveTimeout;
    // Its timeouts are set: attach() would take those equal to Node's defaults for unset ones.
    this.#attach(server, false);
    return new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => {
        server.off('error', reject);
        resolve(server);
      });
    });
  }

  attach<S extends Server | Http2Server | Http2SecureServer>(attached: S): S {
    return this.#attach(attached, true);
  }

  /** attach(), and with `timed` the app's timeouts for those still Node's (#timeOwnServer). */
  #attach<S extends Server | Http2Server | Http2SecureServer>(attached: S, timed: boolean): S {
    // Node's HTTP/2 servers emit what an http.Server does (request, checkContinue, connection)
    // through its compatibility API: handled as one, HTTP/2 told apart per response (adaptH2).
    const server = attached as unknown as Server;
    if (
      typeof server !== 'object' ||
      server === null ||
      typeof (server as Partial<Server>).on !== 'function' ||
      typeof (server as Partial<Server>).listen !== 'function'
    ) {
      throw typeError('server', 'an http.Server', server);
    }
    // Two apps' CONNECT and checkContinue listeners would both answer.
    const marked = server as Server & { [ATTACHED]?: App };
    const owner = marked[ATTACHED];
    // Its listeners stay; after a close of its own (and a new listen) it is tracked again.
    if (owner === this) {
      this.#track(server);
      return attached;
    }
    if (owner !== undefined) throw new Error('keel: this server is attached to another app');
    marked[ATTACHED] = this;
    this.#track(server);
    // Every header line (maxHeaderSize, 16 KiB, bounds them): Node's default drops those past
    // about 1000, a proxy's appended X-Forwarded-For among them (see headersCut).
    server.maxHeadersCount = 0;
    server.on('clientError', onClientError);
    // An HTTP/2 server (its `updateSettings`, or its first session, tells: an http.Server has
    // neither): each response given what keel reads of it, watched by `sendTimeout` per stream,
    // and its request by `requestTimeout` (Node times HTTP/1 only), before app.handler runs. A
    // listener of its own, so an HTTP/1 server's requests pay nothing for it.
    const adapt = (): void => {
      server.prependListener('request', this.#onH2Request);
    };
    if (typeof (server as { updateSettings?: unknown }).updateSettings === 'function') {
      adapt();
      // Node leaves it unset on an HTTP/2 server: the HTTP/1.1 connections of `allowHTTP1` then
      // stayed open idle for ever. Set to the app's unless the server has its own.
      if (server.keepAliveTimeout === undefined) {
        server.keepAliveTimeout = this.#timeouts.keepAliveTimeout;
      }
    } else server.once('session', adapt);
    if (timed) this.#timeOwnServer(server);
    // Its idle sessions closed as listen()'s idle connections are, and all of them by close()
    // (an http.Server has none).
    server.on('session', (session: Http2Session) => {
      if (this.closing) {
        session.close();
        return;
      }
      this.#sessions.add(session);
      session.once('close', () => this.#sessions.delete(session));
      // The proxy reads through: its peer names the TCP connection (TLS or not) under it.
      const connection = this.#h2Connections.get(connectionKey(session.socket));
      watchH2Session(session, this.#timeouts.keepAliveTimeout, this.send.clock, () =>
        connection?.destroy(),
      );
    });
    // CONNECT asks for a tunnel, and this server is no proxy: Node would close the connection
    // without a word. The socket is ours once the event fires (Node's listeners are gone).
    server.on('connect', (_req: IncomingMessage, socket: Socket | ServerResponse) => {
      // A server with a CONNECT listener of its own (a proxy that also serves the app) answers
      // it: added before or after this one.
      if (server.listenerCount('connect') > 1) return;
      // Node's HTTP/2 compat server emits (request, response) instead: answered as a request.
      if (!(socket instanceof Socket)) {
        socket.writeHead(405, { allow: this.#serverAllow() }).end();
        return;
      }
      socket.on('error', () => socket.destroy());
      // Read and dropped from now on: unread bytes after the CONNECT would hide the client's
      // close, and the socket (and server.close(), so app.close()) would wait on it for ever.
      // One whose client keeps it open is closed as an idle keep-alive connection would be.
      socket.resume();
      if (server.keepAliveTimeout > 0)
        socket.setTimeout(server.keepAliveTimeout, () => socket.destroy());
      this.#tunnels.add(socket);
      socket.once('close', () => this.#tunnels.delete(socket));
      socket.end(
        `HTTP/1.1 405 Method Not Allowed\r\nAllow: ${this.#serverAllow()}\r\n` +
          'Content-Length: 0\r\nConnection: close\r\n\r\n',
      );
    });
    // Expect: 100-continue. Node would send 100 Continue before the app sees the request; the
    // body reader decides instead, so an oversize upload is refused before it is sent.
    server.on('checkContinue', (req: IncomingMessage, res: ServerResponse) => {
      // Node's HTTP/2 server emits these instead of 'request': adapted and timed as its others.
      this.#onH2Request(req, res);
      const expecting = req as IncomingMessage & { [EXPECTS_CONTINUE]?: string };
      expecting[EXPECTS_CONTINUE] = 'pending';
      this.handler(req, res);
      // Not after a final response (a handler that answered at once without the body): the client
      // would read the 100 as the start of the next response.
      if (expecting[EXPECTS_CONTINUE] === 'pending' && !res.headersSent) res.writeContinue();
    });
    // Capture the peer at accept: later reads of socket.remoteAddress can be undefined once the
    // socket is closing, and no header can change this value.
    const h2 = typeof (server as { updateSettings?: unknown }).updateSettings === 'function';
    // First: Node's own listener makes an HTTP/2 session of it (and emits 'session') at once.
    server.prependListener('connection', (socket: Socket & { [PEER]?: string }) => {
      socket[PEER] = peerAddress(socket.remoteAddress);
      if (h2) {
        const ends = connectionKey(socket);
        this.#h2Connections.set(ends, socket);
        socket.once('close', () => {
          if (this.#h2Connections.get(ends) === socket) this.#h2Connections.delete(ends);
        });
      }
    });
    return attached;
  }

  /**
   * The HTTP/1 connections of an own server (an http.Server, the `allowHTTP1` fallback of an
   * HTTP/2 one, whose values no option of createSecureServer takes) are timed by Node with its
   * defaults unless told otherwise: 300 s and 60 s, checked every 30 s (and an http.Server's
   * idle keep-alive connections closed after 5 s). Still exactly those, they are taken for
   * untouched and become the app's, checked as often as listen()'s (also on a server that
   * listens already). Any other value is the server's own and stays. An HTTP/2 server without
   * the fallback has none.
   */
  #timeOwnServer(server: Server): void {
    if (server.keepAliveTimeout === NODE_KEEP_ALIVE_TIMEOUT) {
      server.keepAliveTimeout = this.#timeouts.keepAliveTimeout;
    }
    if (
      server.requestTimeout !== NODE_REQUEST_TIMEOUT ||
      server.headersTimeout !== NODE_HEADERS_TIMEOUT
    ) {
      return;
    }
    const { requestTimeout, headersTimeout } = this.#timeouts;
    server.requestTimeout = requestTimeout;
    server.headersTimeout = headersTimeout;
    checkOften(server, checkingInterval(requestTimeout, headersTimeout));
  }

  /** Before app.handler, for a request of an attached HTTP/2 server; nothing for HTTP/1 ones. */
  readonly #onH2Request = (req: IncomingMessage, res: ServerResponse): void => {
    if (!adaptH2(res)) {
      // An HTTP/1.1 request of `allowHTTP1`: an HTTP/2 server has no closeAllConnections, so
      // close() ends its connection itself (else one left in flight held the server for ever).
      const socket = req.socket;
      if (!this.#h1OnH2.has(socket)) {
        this.#h1OnH2.add(socket);
        socket.once('close', () => this.#h1OnH2.delete(socket));
      }
      return;
    }
    const stream = h2StreamOf(res) as ServerHttp2Stream;
    const deadline = h2RequestDeadline(req, res, stream, this.#timeouts.requestTimeout);
    // One timer per stream: the request's deadline rides on its watch, sendTimeout on or off.
    watchH2(res, this.send, deadline);
  };

  /**
   * close() closes it as a listen() server (Fastify's close() closes a serverFactory's too): the
   * app is what answers on it, so a shutdown that left it accepting would be half done.
   */
  #track(server: Server): Server {
    if (this.#servers.has(server)) return server;
    this.#servers.add(server);
    server.once('close', () => this.#servers.delete(server));
    return server;
  }

  close(options: CloseOptions = {}): Promise<void> {
    if (this.#closed !== null) return this.#closed;
    checkOptions('close options', options, CLOSE_KEYS);
    const timeoutMs = checkNumber(
      'timeoutMs',
      options.timeoutMs ?? 10_000,
      `a number of ms in 0-${MAX_TIMER_MS} or Infinity`,
      (n) => (n >= 0 && n <= MAX_TIMER_MS) || n === Number.POSITIVE_INFINITY,
    );
    this.closing = true;
    const servers = [...this.#servers];
    const clock = this.sse.clock;
    this.#closed = new Promise<void>((resolve) => {
      let timer: TimerHandle | null = null;
      /** The servers' closes, and the requests in flight draining. */
      let waiting = servers.length + 1;
      const done = (): void => {
        if (--waiting > 0) return;
        if (timer !== null) clock.clearTimeout(timer);
        resolve();
      };
      /** Ends what holds each server open once the time is up: its connections, or the wait. */
      const forced: (() => void)[] = [];
      for (const server of servers) {
        let over = false;
        const closed = (): void => {
          if (over) return;
          over = true;
          done();
        };
        server.close(closed);
        // An HTTP/2 server (attached) has neither call: its sessions are closed below.
        if (typeof server.closeAllConnections === 'function') {
          server.closeIdleConnections();
          forced.push(() => server.closeAllConnections());
        } else {
          forced.push(() => {
            for (const socket of this.#h1OnH2) socket.destroy();
            // Sessions still closing (a peer that never reads), and connections that are no
            // session (a TLS handshake, an HTTP/1.1 one between requests).
            for (const socket of this.#h2Connections.values()) socket.destroy();
            closed();
          });
        }
      }
      // GOAWAY: each session ends once its open streams are done (an idle one at once), as an
      // HTTP/1 connection after its response; those still open when the time is up are destroyed.
      for (const session of this.#sessions) session.close();
      if (this.#sessions.size > 0) {
        forced.push(() => {
          for (const session of this.#sessions) session.destroy();
        });
      }
      this.sse.closeAll();
      // Answered already, as an idle connection is: ended at once.
      for (const socket of this.#tunnels) socket.destroy();
      const drained = (): void => {
        this.#drained = null;
        // Connections whose last response just finished become idle a tick later.
        setImmediate(() => {
          for (const server of servers) server.closeIdleConnections?.();
          // Nothing in flight: the allowHTTP1 connections are idle.
          for (const socket of this.#h1OnH2) socket.destroy();
        });
        done();
      };
      if (this.#inflight === 0) drained();
      else this.#drained = drained;
      // Armed even with nothing in flight: a connection that is not idle without a request (one
      // still sending its headers, a socket its client left half-closed) would hold the servers'
      // close until Node's own timeouts.
      if (waiting === 0 || timeoutMs === Number.POSITIVE_INFINITY) return;
      timer = clock.setTimeout(() => {
        timer = null;
        // Requests still running own their slots until they end; nothing waits for them now
        // (before their sockets go, which may release some).
        if (this.#drained === drained) {
          this.#drained = null;
          done();
        }
        for (const force of forced) force();
        // A CONNECT answered since the start: closeAllConnections() does not know its socket.
        for (const socket of this.#tunnels) socket.destroy();
      }, timeoutMs);
    });
    return this.#closed;
  }

  async inject(request: InjectRequest): Promise<InjectResponse> {
    checkOptions('inject request', request, INJECT_KEYS);
    const response = await inject(this.handler, {
      // light-my-request 6.6 (the last on cookie 1, which runs on Node 20) lists the methods it knows.
      method: (request.method ?? 'GET') as InjectOptions['method'],
      url: request.url,
      headers: request.headers && asLines(request.headers),
      payload: request.body,
      remoteAddress: request.remoteAddress ?? '127.0.0.1',
    });
    const body = response.body;
    return {
      status: response.statusCode,
      headers: response.headers,
      body,
      json: <T>() => JSON.parse(body) as T,
    };
  }
}

/**
 * Injected headers as a socket gives a handler the same lines: an array is that header sent once
 * per value, which Node joins as RFC 9110 section 5.3 says (by `, `; Cookie by `; `, RFC 9113
 * section 8.2.3) and the Host check sees as the two Host lines they are. light-my-request alone
 * joins by `,`: two cookies read as one.
 */
function asLines(headers: Record<string, string | string[]>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of Object.keys(headers)) {
    const value = headers[name]!;
    out[name] = Array.isArray(value)
      ? value.join(name.toLowerCase() === 'cookie' ? '; ' : ', ')
      : value;
  }
  return out;
}

/**
 * Creates an app.
 *
 * @example
 * const app = createApp({ bodyLimit: 64 * 1024 });
 * app.get('/users/:id', (ctx) => ctx.json({ id: ctx.params.id }));
 * const server = await app.listen(3000);
 */
export function createApp(options: AppOptions = {}): App {
  return new KeelApp(options);
}

/** @internal test helper: in-flight and pooled ctx counts of an app made by createApp. */
export function appStats(app: App): { inflight: number; pooled: number } {
  const inner = app as unknown as KeelApp;
  return { inflight: inner.inflight, pooled: inner.pooled };
}

/**
 * A TCP connection by both its ends: one client port may reach two servers of an app (Linux
 * reuses an ephemeral port for another destination), so the peer alone is not one connection.
 */
function connectionKey(socket: {
  localAddress?: string | undefined;
  localPort?: number | undefined;
  remoteAddress?: string | undefined;
  remotePort?: number | undefined;
}): string {
  return `${socket.localAddress} ${socket.localPort} ${socket.remoteAddress} ${socket.remotePort}`;
}
