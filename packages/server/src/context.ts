import type { IncomingMessage, ServerResponse } from 'node:http';
import { type ParsedUrlQuery, parse as parseQuery } from 'node:querystring';
import encodeUrl from 'encodeurl';
import { checkLine, checkNumber, integer, rangeError } from './checks';
import { MAX_TIMER_MS } from './clock';
import { type CompressionSettings, chooseEncoding, compressBody, type Encoding } from './compress';
import { type CookieOptions, parseCookies, readCookie, serializeCookie } from './cookies';
import { ReleasedContextError } from './errors';
import { type SendFileOptions, sendFile } from './files';
import type { GraphqlResolvers } from './graphql';
import { resolveAddresses } from './proxy';
import type { Slot } from './slot';
import { SseStream } from './sse';
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

const DONE: Promise<void> = Promise.resolve();
const REDIRECTS = new Set([300, 301, 302, 303, 307, 308]);

const HOST = /^(?:\[[0-9a-f:.]+\]|[a-z0-9](?:[a-z0-9.-]*[a-z0-9])?)(?::\d{1,5})?$/i;

/** `example.com:8080` -> `example.com`, `[::1]:80` -> `[::1]`; '' for anything else. */
function hostnameOf(value: string | undefined): string {
  if (value === undefined || value.length > 255 || !HOST.test(value)) return '';
  const end = value.startsWith('[') ? value.indexOf(']') + 1 : value.indexOf(':');
  return (end <= 0 ? value : value.slice(0, end)).toLowerCase();
}

function seconds(name: string, value: number | undefined): number | undefined {
  if (value === undefined) return undefined;
  const n = checkNumber(
    `cacheControl ${name}`,
    value,
    'a non-negative number of seconds',
    (v) => Number.isFinite(v) && v >= 0,
  );
  return Math.floor(n);
}

/**
 * The context of one request. Its bookkeeping lives in a pooled slot that later requests reuse;
 * the ctx itself belongs to this request only. Once the response has finished (for a stream:
 * once it closed) the ctx is stale: reading it still gives this request's data (never another
 * client's), and a response operation through it does nothing and is reported to `onError` as a
 * {@link ReleasedContextError}. Copy what background work needs instead of keeping ctx.
 */
export class Context {
  /** The request (with `remoteAddress`, the TCP peer captured at accept). */
  readonly req: KeelRequest;
  /** Node's response; prefer the ctx helpers, which keep the pool's bookkeeping right. */
  readonly res: ServerResponse;
  /** HTTP method, e.g. `GET`. */
  readonly method: string;
  /** URL path without the query string, as sent (not percent-decoded). */
  readonly path: string;
  /** Route parameters (`:id` -> `params.id`, trailing `*` -> `params['*']`), decoded once. */
  readonly params: Readonly<Record<string, string>>;
  /** Parsed JSON or urlencoded body; `undefined` when the request has none (or another type). */
  body: unknown = undefined;
  /** Correlation id: the incoming X-Request-ID when short and safe, else a fresh one. */
  readonly requestId: string;

  /** @internal the pooled slot; this ctx may use it while `_slot.gen === _gen` */
  readonly _slot: Slot;
  /** @internal */ readonly _gen: number;
  /** @internal */ readonly _rawQuery: string;
  /** @internal */ _status = 200;
  /** @internal this request's stream, kept so a stale ctx can still return it */
  _stream: SseStream | null = null;
  /** @internal */ _query: ParsedUrlQuery | null = null;
  /** @internal */ _cookies: Record<string, string | undefined> | null = null;
  /** @internal */ _ip: string | null = null;
  /** @internal */ _ips: string[] | null = null;
  /** @internal */ _state: Record<string, unknown> | null = null;
  /** @internal a stale use was reported already (once per ctx is enough) */
  _reportedStale = false;

  /** @internal made by the app for each request */
  constructor(
    slot: Slot,
    req: KeelRequest,
    res: ServerResponse,
    method: string,
    path: string,
    params: Readonly<Record<string, string>>,
    rawQuery: string,
    requestId: string,
  ) {
    this._slot = slot;
    this._gen = slot.gen;
    this.req = req;
    this.res = res;
    this.method = method;
    this.path = path;
    this.params = params;
    this._rawQuery = rawQuery;
    this.requestId = requestId;
  }

  /**
   * @internal The slot, when this ctx's request is still live; otherwise reports the stale use
   * (once) and returns null, and the caller does nothing. The generation check is the whole
   * cost of stale-ctx detection: one comparison per response operation.
   */
  _use(op: string): Slot | null {
    const slot = this._slot;
    if (slot.gen === this._gen) return slot;
    if (!this._reportedStale) {
      this._reportedStale = true;
      slot.host.report(new ReleasedContextError(op), this);
    }
    return null;
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
    const trust = this._slot.host.trust;
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
    if (this._use('status()') === null) return this;
    integer('status', code, 0, 100, 599);
    this._status = code;
    return this;
  }

  /** Sets a response header; chainable. */
  setHeader(name: string, value: string | number | readonly string[]): this {
    if (this._use('setHeader()') !== null) this.res.setHeader(name, value);
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
    if (this._use('cacheControl()') === null) return this;
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
    if (this._use('setCookie()') !== null) {
      this.res.appendHeader('set-cookie', serializeCookie(name, value, options));
    }
    return this;
  }

  /**
   * Redirects to `url` (absolute, or relative to this request) with `status` (300-308, default
   * 302 Found; 303 after a POST, 307/308 keep the method). The URL is percent-encoded where it
   * must be (encodeurl); CR, LF and NUL are refused with a TypeError, so no header can be
   * injected. Redirecting to a URL taken from the request is an open redirect: check it first.
   */
  redirect(url: string, status = 302): void {
    const slot = this._use('redirect()');
    if (slot === null) return;
    if (checkLine('redirect url', url, 'a URL') === '') {
      throw rangeError('redirect url', 'a non-empty URL', url);
    }
    checkNumber('redirect status', status, '300-303, 307 or 308', (n) => REDIRECTS.has(n));
    this.res.setHeader('location', encodeUrl(url));
    this._status = status;
    this._end(slot, null, null);
  }

  /**
   * `https` when the connection is TLS; with trust proxy, and only when the TCP peer is a trusted
   * proxy, the first `X-Forwarded-Proto` value (`http` or `https`, anything else is ignored).
   */
  get protocol(): 'http' | 'https' {
    const encrypted = (this.req.socket as { encrypted?: boolean } | null)?.encrypted === true;
    const forwarded = this._forwarded('x-forwarded-proto')?.toLowerCase();
    if (forwarded === 'https' || forwarded === 'http') return forwarded;
    return encrypted ? 'https' : 'http';
  }

  /** `protocol === 'https'`. */
  get secure(): boolean {
    return this.protocol === 'https';
  }

  /**
   * The host name the client asked for, without port: from `Host`, or with trust proxy (the TCP
   * peer being a trusted proxy) from the first `X-Forwarded-Host` value. An IPv6 address keeps its
   * brackets. A value that is not a host name is ignored (`''` when nothing valid is left).
   */
  get hostname(): string {
    const forwarded = hostnameOf(this._forwarded('x-forwarded-host'));
    if (forwarded !== '') return forwarded;
    return hostnameOf(this.req.headers.host);
  }

  /** @internal the first value of a forwarding header, when the TCP peer is a trusted proxy */
  _forwarded(name: string): string | undefined {
    const trust = this._slot.host.trust;
    if (trust === null || !trust(this.req.remoteAddress, 0)) return undefined;
    const value = this.req.headers[name];
    if (typeof value !== 'string') return undefined;
    const comma = value.indexOf(',');
    return (comma === -1 ? value : value.slice(0, comma)).trim();
  }

  /** Sends `value` as JSON (`application/json; charset=utf-8`). */
  json(value: unknown): void {
    const slot = this._use('json()');
    if (slot === null) return;
    this._end(slot, 'application/json; charset=utf-8', JSON.stringify(value) ?? 'null');
  }

  /**
   * Sends a raw payload: a string as `text/plain`, a Buffer as `application/octet-stream`
   * (unless a Content-Type was set), an object as JSON, `null`/`undefined` as an empty body.
   */
  send(body: string | Buffer | Uint8Array | object | null | undefined): void {
    const slot = this._use('send()');
    if (slot === null) return;
    if (body === null || body === undefined) this._end(slot, null, null);
    else if (typeof body === 'string') {
      const type = this.res.hasHeader('content-type') ? null : 'text/plain; charset=utf-8';
      this._end(slot, type, body);
    } else if (body instanceof Uint8Array) {
      const type = this.res.hasHeader('content-type') ? null : 'application/octet-stream';
      this._end(slot, type, body);
    } else this._end(slot, 'application/json; charset=utf-8', JSON.stringify(body) ?? 'null');
  }

  /**
   * Serves a file: Content-Type from the extension, ETag, Last-Modified, 304 for matching
   * conditionals, 206 for a single range (only that window is read), 416 when unsatisfiable.
   * Pass `root` whenever the path comes from the request. Rejects with HttpException 403/404.
   */
  sendFile(path: string, options?: SendFileOptions): Promise<void> {
    const slot = this._use('sendFile()');
    if (slot === null) return DONE;
    this._assertCanRespond(slot);
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
    return this._track(slot, work);
  }

  /**
   * Evaluates the request's GraphQL operation (POST JSON `{query, variables, operationName}` or
   * GET query string) against `schema` (SDL, built once per string) and sends the result.
   */
  graphql(schema: string, resolvers?: GraphqlResolvers): Promise<void> {
    const slot = this._use('graphql()');
    if (slot === null) return DONE;
    this._assertCanRespond(slot);
    const source = (this.method === 'POST' ? this.body : this._parsedQuery()) as
      | Record<string, unknown>
      | undefined;
    const params =
      typeof source === 'object' && source !== null
        ? { query: source.query, variables: source.variables, operationName: source.operationName }
        : { query: undefined, variables: undefined, operationName: undefined };
    const contentType = this.req.headers['content-type'];
    const runner = slot.host.graphql;
    const work = runner
      .run(this.method, contentType, params, schema, resolvers, this)
      .then((outcome) => {
        if (slot.gen !== this._gen) return;
        if (outcome.allow !== undefined) this.res.setHeader('allow', outcome.allow);
        this._status = outcome.status;
        this._end(slot, 'application/json; charset=utf-8', JSON.stringify(outcome.body));
      });
    return this._track(slot, work);
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

  /**
   * Opens this request's event stream if needed and returns it (e.g. to keep in a callback). For
   * HEAD, and while the app is closing, the stream is ended right after its headers. Through a
   * ctx whose request is over it returns the stream the request had (ended by then), and throws
   * {@link ReleasedContextError} if it had none.
   */
  sseStream(): SseStream {
    if (this._stream !== null) return this._stream;
    const slot = this._slot;
    // The one stale operation that throws: it must return a stream, and this request has none.
    if (slot.gen !== this._gen) throw new ReleasedContextError('sseStream()');
    this._assertCanRespond(slot);
    const stream = new SseStream(this.res, slot.host.sse, ['x-request-id', this.requestId]);
    this._stream = stream;
    slot.stream = stream;
    stream.onClose(slot.onStreamEnd);
    // HEAD gets the headers only; an open stream would hold the keep-alive socket forever. While
    // the app closes, a new stream ends at once too (close() already ended the others).
    if (this.method === 'HEAD' || slot.host.closing) {
      if (slot.host.closing) this.res.shouldKeepAlive = false;
      stream.close();
    }
    return stream;
  }

  /**
   * Sends one named event (opening the stream on first use). Data: strings as-is, anything
   * else as JSON. Returns false when the client is gone or was dropped as too slow.
   */
  sseEvent(event: string, data: unknown): boolean {
    if (this._stream === null && this._use('sseEvent()') === null) return false;
    return this.sseStream().send(event, data);
  }

  /**
   * Streams `fn()`'s result as an event now and every `intervalMs` (default 1000 ms) until the
   * client disconnects; return this from the handler. Resolves when the stream ends.
   */
  sseInterval(fn: () => unknown, intervalMs = 1000): Promise<void> {
    checkNumber(
      'sseInterval intervalMs',
      intervalMs,
      `a positive number of ms up to ${MAX_TIMER_MS}`,
      (n) => n > 0 && n <= MAX_TIMER_MS,
    );
    if (this._stream === null && this._use('sseInterval()') === null) return DONE;
    const stream = this.sseStream();
    const host = this._slot.host;
    return stream.every(fn, intervalMs, (err) => {
      if (!stream.closed) host.report(err, this);
    });
  }

  /** @internal every buffered response goes out through here */
  _end(slot: Slot, contentType: string | null, body: string | Uint8Array | null): void {
    this._assertCanRespond(slot);
    const res = this.res;
    const status = this._status;
    // While the app closes, tell keep-alive clients this connection ends with this response.
    if (slot.host.closing) res.shouldKeepAlive = false;
    if (status === 204 || status === 304) {
      res.writeHead(status, ['x-request-id', this.requestId]);
      res.end();
      slot.resDone = true;
      return;
    }
    const length =
      body === null ? 0 : typeof body === 'string' ? Buffer.byteLength(body) : body.byteLength;
    const compression = slot.host.compression;
    if (compression !== null && body !== null) {
      const encoding = chooseEncoding(compression, this.req, res, contentType, length);
      if (encoding !== null && this.method !== 'HEAD') {
        this._compress(slot, compression, encoding, contentType, body);
        return;
      }
    }
    this._write(contentType, body, length, null);
    slot.resDone = true;
  }

  /** @internal writes the head and the body (a HEAD request gets the head only) */
  _write(
    contentType: string | null,
    body: string | Uint8Array | null,
    length: number,
    encoding: Encoding | null,
  ): void {
    const res = this.res;
    const head =
      contentType === null
        ? ['content-length', String(length), 'x-request-id', this.requestId]
        : [
            'content-type',
            contentType,
            'content-length',
            String(length),
            'x-request-id',
            this.requestId,
          ];
    if (encoding !== null) head.push('content-encoding', encoding);
    res.writeHead(this._status, head);
    if (body === null || this.method === 'HEAD') res.end();
    else res.end(body);
  }

  /**
   * @internal Compresses off the event loop, then writes. The response counts as sent at once
   * (a second response operation is refused) and the slot stays busy until it is written.
   */
  _compress(
    slot: Slot,
    settings: CompressionSettings,
    encoding: Encoding,
    contentType: string | null,
    body: string | Uint8Array,
  ): void {
    slot.resDone = true;
    slot.busy++;
    const gen = this._gen;
    compressBody(settings, encoding, body, (err, out) => {
      // busy > 0 holds the slot, so the generation is still this request's.
      const live = slot.gen === gen;
      if (live) slot.busy--;
      try {
        if (err === null) this._write(contentType, out, out.byteLength, encoding);
        else this._write(contentType, body, Buffer.byteLength(body), null);
      } catch (writeErr) {
        slot.host.report(writeErr, this);
        this.res.destroy();
      }
      if (live) slot.host.maybeRelease(slot);
    });
  }

  /** @internal a live request answers once */
  _assertCanRespond(slot: Slot): void {
    if (slot.resDone || slot.stream !== null || this.res.headersSent) {
      throw new Error('A response was already sent for this request');
    }
  }

  /**
   * @internal Follows an async response op. If the handler did not await it and it fails after
   * the chain finished, the error is answered here; the returned promise is marked handled.
   */
  _track(slot: Slot, work: Promise<void>): Promise<void> {
    const gen = this._gen;
    slot.busy++;
    work.then(
      () => {
        if (slot.gen !== gen) return;
        slot.busy--;
        slot.resDone = true;
        slot.host.maybeRelease(slot);
      },
      (err: unknown) => {
        if (slot.gen !== gen) return;
        slot.busy--;
        if (slot.chainDone) slot.host.fail(slot, err);
        else slot.lose(err); // the chain may await it; if it ends without a response, this answers
      },
    );
    return work;
  }
}
