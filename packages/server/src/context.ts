import type { IncomingMessage, ServerResponse } from 'node:http';
import { type ParsedUrlQuery, parse as parseQuery } from 'node:querystring';
import { BodyReader } from './body';
import { type CookieOptions, parseCookies, readCookie, serializeCookie } from './cookies';
import { ReleasedContextError } from './errors';
import { type SendFileOptions, sendFile } from './files';
import { type GraphqlResolvers, runGraphql } from './graphql';
import { resolveAddresses, type TrustFn } from './proxy';
import { type SseRegistry, SseStream } from './sse';
import { type Rules, type Validated, validate } from './validate';

/**
 * The incoming request: Node's IncomingMessage plus `remoteAddress`, the TCP peer captured when
 * the connection was accepted (no header can change it).
 */
export type KeelRequest = IncomingMessage & { readonly remoteAddress: string };

/** A route handler. Return (or await) the response operation, e.g. `return ctx.json(x)`. */
export type Handler = (ctx: Context) => unknown;

/** `next()` runs the rest of the chain; await it to run code after the handler. */
export type Next = () => Promise<unknown>;

/** Onion middleware: code before `await next()` runs on the way in, after it on the way out. */
export type Middleware = (ctx: Context, next: Next) => unknown;

/** Options for `ctx.cacheControl`. Every duration is in seconds. */
export interface CacheControlOptions {
  /** `max-age`, seconds. */
  maxAge?: number;
  /** `s-maxage` (shared caches), seconds. */
  sMaxAge?: number;
  /** `public` (true) or `private` (false); omitted when undefined. */
  public?: boolean;
  /** `stale-while-revalidate`, seconds. */
  staleWhileRevalidate?: number;
  /** `stale-if-error`, seconds. */
  staleIfError?: number;
  /** `immutable`. */
  immutable?: boolean;
  /** `no-store`: nothing else is emitted with it. */
  noStore?: boolean;
}

/** What a ctx needs from its app; implemented by the app's dispatcher. */
export interface ContextHost {
  readonly development: boolean;
  readonly closing: boolean;
  readonly middleware: readonly Middleware[];
  readonly trust: TrustFn;
  readonly sse: SseRegistry;
  chainDone(ctx: Context): void;
  fail(ctx: Context, err: unknown): void;
  bodyDone(ctx: Context, err: Error | null, body: unknown, aborted: boolean): void;
  maybeRelease(ctx: Context): void;
  report(err: unknown, ctx: Context): void;
}

const RESOLVED: Promise<unknown> = Promise.resolve();
const EMPTY_PARAMS: Readonly<Record<string, string>> = Object.freeze({});
const NONE = null as never;

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (
    value !== null &&
    (typeof value === 'object' || typeof value === 'function') &&
    typeof (value as PromiseLike<unknown>).then === 'function'
  );
}

function seconds(name: string, value: number | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
    throw new RangeError(
      `cacheControl ${name} must be a non-negative number of seconds, got ${String(value)}`,
    );
  }
  return Math.floor(value);
}

/**
 * The per-request context. Pooled: after the response has finished (for a stream: after it
 * closed) the object is reset and reused for another request. Do not keep it in timers or
 * background work; copy what you need first. In development a kept ctx throws
 * {@link ReleasedContextError} on use.
 */
export class Context {
  /** The request (with `remoteAddress`, the TCP peer captured at accept). */
  req: KeelRequest = NONE;
  /** Node's response; prefer the ctx helpers, which keep the pool's bookkeeping right. */
  res: ServerResponse = NONE;
  /** HTTP method, e.g. `GET`. */
  method = '';
  /** URL path without the query string, as sent (not percent-decoded). */
  path = '';
  /** Route parameters (`:id` -> `params.id`, trailing `*` -> `params['*']`), decoded once. */
  params: Readonly<Record<string, string>> = EMPTY_PARAMS;
  /** Parsed JSON or urlencoded body; `undefined` when the request has none (or another type). */
  body: unknown = undefined;
  /** Correlation id: the incoming X-Request-ID when short and safe, else a fresh one. */
  requestId = '';

  /** @internal the real object, also when reached through the development guard */
  readonly _self: Context = this;
  /** @internal */ _host: ContextHost;
  /** @internal */ _handler: Handler | null = null;
  /** @internal generation, bumped at each release; async continuations compare it. */ _gen = 0;
  /** @internal */ _live = false;
  /** @internal the object handed to user code: this, or a guard proxy in development */
  _face: Context = this;
  /** @internal middleware cursor */ _i = -1;
  /** @internal */ _status = 200;
  /** @internal */ _chainDone = false;
  /** @internal */ _resDone = false;
  /** @internal an async response op (sendFile, graphql) is running */ _busy = false;
  /** @internal */ _stream: SseStream | null = null;
  /** @internal */ _rawQuery = '';
  /** @internal */ _query: ParsedUrlQuery | null = null;
  /** @internal */ _cookies: Record<string, string | undefined> | null = null;
  /** @internal */ _ip: string | null = null;
  /** @internal */ _ips: string[] | null = null;
  /** @internal */ _state: Record<string, unknown> | null = null;
  /** @internal `_onResClose` is registered on res */ _watchingClose = false;
  /** @internal the body reader was used for this request */ _reading = false;
  /** @internal */ readonly _reader: BodyReader;
  /** @internal bound once per pooled object, so dispatch allocates no closures */
  readonly _next: Next;
  /** @internal */ readonly _onFulfilled: () => void;
  /** @internal */ readonly _onRejected: (err: unknown) => void;
  /** @internal */ readonly _onStreamEnd: (stream: SseStream) => void;
  /** @internal */ readonly _onResClose: () => void;

  constructor(host: ContextHost) {
    this._host = host;
    this._next = () => {
      const result = this._dispatch();
      return isThenable(result) ? (result as Promise<unknown>) : RESOLVED;
    };
    this._onFulfilled = () => host.chainDone(this);
    this._onRejected = (err) => host.fail(this, err);
    this._onStreamEnd = (stream) => {
      if (this._stream !== stream) return; // a stale stream of an earlier request
      this._resDone = true;
      host.maybeRelease(this);
    };
    this._onResClose = () => {
      this.res.off('close', this._onResClose);
      this._watchingClose = false;
      this._resDone = true;
      host.maybeRelease(this);
    };
    this._reader = new BodyReader((err, body, aborted) => host.bodyDone(this, err, body, aborted));
  }

  /** @internal runs the next middleware, or the route handler after the last one */
  _dispatch(): unknown {
    const i = ++this._i;
    const middleware = this._host.middleware;
    if (i < middleware.length) return middleware[i]!(this._face, this._next);
    if (i === middleware.length) return this._handler!(this._face);
    throw new Error('next() was called more than once');
  }

  /** @internal clears every per-request field; the object goes back to the pool after this */
  _reset(): void {
    if (this._watchingClose) this.res.off('close', this._onResClose);
    if (this._reading) this._reader.reset();
    this.req = NONE;
    this.res = NONE;
    this.method = '';
    this.path = '';
    this.params = EMPTY_PARAMS;
    this.body = undefined;
    this.requestId = '';
    this._handler = null;
    this._gen++;
    this._live = false;
    this._face = this;
    this._i = -1;
    this._status = 200;
    this._chainDone = false;
    this._resDone = false;
    this._busy = false;
    this._stream = null;
    this._rawQuery = '';
    this._query = null;
    this._cookies = null;
    this._ip = null;
    this._ips = null;
    this._state = null;
    this._watchingClose = false;
    this._reading = false;
  }

  /** Per-request scratch space for middleware (e.g. the authenticated user). */
  get state(): Record<string, unknown> {
    if (this._state === null) this._state = {};
    return this._state;
  }

  /** The client address: the TCP peer, or with trust proxy the address it resolves to. */
  get ip(): string {
    if (this._ip === null) this._resolveIp();
    return this._ip!;
  }

  /** Forwarded addresses, client first; empty unless trust proxy is on. */
  get ips(): readonly string[] {
    if (this._ips === null) this._resolveIp();
    return this._ips!;
  }

  /** @internal */
  _resolveIp(): void {
    const trust = this._host.trust;
    const peer = this.req.remoteAddress;
    if (trust === null) {
      this._ip = peer;
      this._ips = [];
      return;
    }
    const { ip, ips } = resolveAddresses(peer, this.req.headers, trust);
    this._ip = ip;
    this._ips = ips;
  }

  /** The first value of query parameter `key`, or `undefined`. */
  query(key: string): string | undefined {
    const value = this._parsedQuery()[key];
    return Array.isArray(value) ? value[0] : value;
  }

  /** Every value of query parameter `key` (`?tag=a&tag=b` -> `['a', 'b']`). */
  queryAll(key: string): string[] {
    const value = this._parsedQuery()[key];
    return value === undefined ? [] : Array.isArray(value) ? value : [value];
  }

  /** @internal */
  _parsedQuery(): ParsedUrlQuery {
    if (this._query === null) this._query = parseQuery(this._rawQuery); // null prototype
    return this._query;
  }

  /** A request header by name (case-insensitive); repeated headers are joined with `, `. */
  header(name: string): string | undefined {
    const value = this.req.headers[name.toLowerCase()];
    return Array.isArray(value) ? value.join(', ') : value;
  }

  /** A request cookie by name, URL-decoded. */
  cookie(name: string): string | undefined {
    if (this._cookies === null) this._cookies = parseCookies(this.req.headers.cookie);
    return readCookie(this._cookies, name);
  }

  /** Sets the response status for the next response operation; chain into it. */
  status(code: number): this {
    if (!Number.isInteger(code) || code < 100 || code > 599) {
      throw new RangeError(`status must be an integer in 100-599, got ${String(code)}`);
    }
    this._status = code;
    return this;
  }

  /** Sets a response header; chainable. */
  setHeader(name: string, value: string | number | readonly string[]): this {
    this.res.setHeader(name, value);
    return this;
  }

  /**
   * Sets `Cache-Control`; durations in seconds (fractions floored). Chainable.
   *
   * @example
   * ctx.cacheControl({ public: true, maxAge: 60, staleWhileRevalidate: 30 }).json(data);
   * // Cache-Control: public, max-age=60, stale-while-revalidate=30
   */
  cacheControl(options: CacheControlOptions): this {
    const parts: string[] = [];
    if (options.noStore === true) parts.push('no-store');
    else {
      if (options.public === true) parts.push('public');
      else if (options.public === false) parts.push('private');
      const maxAge = seconds('maxAge', options.maxAge);
      const sMaxAge = seconds('sMaxAge', options.sMaxAge);
      const swr = seconds('staleWhileRevalidate', options.staleWhileRevalidate);
      const sie = seconds('staleIfError', options.staleIfError);
      if (maxAge !== undefined) parts.push(`max-age=${maxAge}`);
      if (sMaxAge !== undefined) parts.push(`s-maxage=${sMaxAge}`);
      if (swr !== undefined) parts.push(`stale-while-revalidate=${swr}`);
      if (sie !== undefined) parts.push(`stale-if-error=${sie}`);
      if (options.immutable === true) parts.push('immutable');
    }
    if (parts.length > 0) this.res.setHeader('cache-control', parts.join(', '));
    return this;
  }

  /**
   * Adds a Set-Cookie header (several calls, several headers). Name and value are URL-encoded
   * with CR/LF stripped; defaults `Path=/`, `SameSite=Lax`; `maxAge` in seconds. Chainable.
   */
  setCookie(name: string, value: string, options?: CookieOptions): this {
    this.res.appendHeader('set-cookie', serializeCookie(name, value, options));
    return this;
  }

  /** Sends `value` as JSON (`application/json; charset=utf-8`). */
  json(value: unknown): void {
    this._end('application/json; charset=utf-8', JSON.stringify(value) ?? 'null');
  }

  /**
   * Sends a raw payload: a string as `text/plain`, a Buffer as `application/octet-stream`
   * (unless a Content-Type was set), an object as JSON, `null`/`undefined` as an empty body.
   */
  send(body: string | Buffer | Uint8Array | object | null | undefined): void {
    if (body === null || body === undefined) this._end(null, null);
    else if (typeof body === 'string') {
      this._end(this.res.hasHeader('content-type') ? null : 'text/plain; charset=utf-8', body);
    } else if (body instanceof Uint8Array) {
      this._end(this.res.hasHeader('content-type') ? null : 'application/octet-stream', body);
    } else this.json(body);
  }

  /**
   * Serves a file: Content-Type from the extension, ETag, Last-Modified, 304 for matching
   * conditionals, 206 for a single range (only that window is read), 416 when unsatisfiable.
   * Pass `root` whenever the path comes from the request. Rejects with HttpError 403/404.
   */
  sendFile(path: string, options?: SendFileOptions): Promise<void> {
    this._assertCanRespond();
    const req = this.req;
    const work = sendFile(
      {
        method: this.method,
        headers: req.headers,
        res: this.res,
        status: this._status,
        extra: ['x-request-id', this.requestId],
      },
      path,
      options,
    );
    return this._track(work);
  }

  /**
   * Evaluates the request's GraphQL operation (POST JSON `{query, variables, operationName}` or
   * GET query string) against `schema` (SDL, built once per string) and sends the result.
   */
  graphql(schema: string, resolvers?: GraphqlResolvers): Promise<void> {
    this._assertCanRespond();
    const source = (this.method === 'POST' ? this.body : this._parsedQuery()) as
      | Record<string, unknown>
      | undefined;
    const params =
      typeof source === 'object' && source !== null
        ? { query: source.query, variables: source.variables, operationName: source.operationName }
        : { query: undefined, variables: undefined, operationName: undefined };
    const self = this._self;
    const gen = self._gen;
    const work = runGraphql(this.method, params, schema, resolvers, this._face).then((outcome) => {
      if (self._gen !== gen) return;
      if (outcome.allow !== undefined) self.res.setHeader('allow', outcome.allow);
      self._status = outcome.status;
      self.json(outcome.body);
    });
    return this._track(work);
  }

  /**
   * Validates `targetData`, or by default the body (when the request has one) or else the query
   * merged with the route params. Returns only the declared fields; throws BadRequestError (400)
   * listing every failing field and rule.
   */
  validate<const R extends Rules>(rules: R, targetData?: unknown): Validated<R> {
    const data =
      targetData !== undefined
        ? targetData
        : this.body !== undefined
          ? this.body
          : { ...this._parsedQuery(), ...this.params };
    return validate(rules, data);
  }

  /** Opens this request's event stream if needed and returns it (e.g. to keep in a callback). */
  sseStream(): SseStream {
    if (this._stream === null) {
      this._assertCanRespond();
      const stream = new SseStream(this.res, this._host.sse, ['x-request-id', this.requestId]);
      this._stream = stream;
      stream.onClose(this._onStreamEnd);
    }
    return this._stream;
  }

  /**
   * Sends one named event (opening the stream on first use). Data: strings as-is, anything
   * else as JSON. Returns false when the client is gone or was dropped as too slow.
   */
  sseEvent(event: string, data: unknown): boolean {
    return this.sseStream().send(event, data);
  }

  /**
   * Streams `fn()`'s result as an event now and every `intervalMs` (default 1000 ms) until the
   * client disconnects; return this from the handler. Resolves when the stream ends.
   */
  sseInterval(fn: () => unknown, intervalMs = 1000): Promise<void> {
    if (!Number.isFinite(intervalMs) || intervalMs <= 0) {
      throw new RangeError(`sseInterval intervalMs must be a positive number, got ${intervalMs}`);
    }
    const stream = this.sseStream();
    const host = this._host;
    const face = this._face;
    return stream.every(fn, intervalMs, (err) => {
      if (!stream.closed) host.report(err, face);
    });
  }

  /** @internal every buffered response goes out through here */
  _end(contentType: string | null, body: string | Uint8Array | null): void {
    this._assertCanRespond();
    const res = this.res;
    const status = this._status;
    // While the app closes, tell keep-alive clients this connection ends with this response.
    if (this._host.closing) res.shouldKeepAlive = false;
    if (status === 204 || status === 304) {
      res.writeHead(status, ['x-request-id', this.requestId]);
      res.end();
    } else {
      const length =
        body === null ? 0 : typeof body === 'string' ? Buffer.byteLength(body) : body.byteLength;
      res.writeHead(
        status,
        contentType === null
          ? ['content-length', String(length), 'x-request-id', this.requestId]
          : [
              'content-type',
              contentType,
              'content-length',
              String(length),
              'x-request-id',
              this.requestId,
            ],
      );
      if (body === null || this.method === 'HEAD') res.end();
      else res.end(body);
    }
    this._resDone = true;
  }

  /** @internal */
  _assertCanRespond(): void {
    if (!this._live) throw new ReleasedContextError('response');
    if (this._resDone || this._stream !== null || this.res.headersSent) {
      throw new Error('A response was already sent for this request');
    }
  }

  /**
   * @internal Follows an async response op. If the handler did not await it and it fails after
   * the chain finished, the error is answered here; the returned promise is marked handled.
   */
  _track(work: Promise<void>): Promise<void> {
    // Continuations use the real object: the guard proxy throws once this request is over.
    const self = this._self;
    const gen = self._gen;
    self._busy = true;
    work.then(
      () => {
        if (self._gen !== gen) return;
        self._busy = false;
        self._resDone = true;
        self._host.maybeRelease(self);
      },
      (err: unknown) => {
        if (self._gen !== gen) return;
        self._busy = false;
        if (self._chainDone) self._host.fail(self, err);
      },
    );
    return work;
  }
}

const guardTraps: ProxyHandler<Context> & { gen: number } = {
  gen: 0,
  get(target, prop) {
    // `then` and `constructor` stay readable so awaiting or inspecting a ctx does not throw.
    if (
      typeof prop === 'string' &&
      prop !== 'then' &&
      prop !== 'constructor' &&
      target._gen !== this.gen
    ) {
      throw new ReleasedContextError(prop);
    }
    return (target as unknown as Record<string | symbol, unknown>)[prop];
  },
  set(target, prop, value) {
    if (target._gen !== this.gen) throw new ReleasedContextError(String(prop));
    (target as unknown as Record<string | symbol, unknown>)[prop] = value;
    return true;
  },
};

/**
 * Development guard: a proxy bound to this request's generation of a pooled ctx. Once the ctx
 * is released, every use of the proxy throws, instead of reading the next request's data.
 */
export function guardContext(ctx: Context): Context {
  const traps = Object.create(guardTraps) as typeof guardTraps;
  traps.gen = ctx._gen;
  return new Proxy(ctx, traps);
}
