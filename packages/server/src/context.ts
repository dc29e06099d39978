import type { IncomingMessage, ServerResponse } from 'node:http';
import { type ParsedUrlQuery, parse as parseQuery } from 'node:querystring';
import { isAnyArrayBuffer } from 'node:util/types';
import encodeUrl from 'encodeurl';
import vary from 'vary';
import { MAX_FORM_FIELDS, tooManyFields } from './body';
import {
  boolean,
  checkFunction,
  checkLine,
  checkNumber,
  checkObject,
  integer,
  keysOf,
  knownKeys,
  notJson,
  rangeError,
  typeError,
} from './checks';
import { MAX_TIMER_MS } from './clock';
import { type CookieOptions, parseCookies, readCookie, serializeCookie } from './cookies';
import { HttpException, ReleasedContextError } from './errors';
import { type FileTarget, type SendFileOptions, sendFile } from './files';
import type { GraphqlResolvers } from './graphql';
import { headersCut, resolveAddresses } from './proxy';
import { wasUnsent, whileQueued } from './send-watch';
import { JSON_TYPE, type Slot } from './slot';
import { assertSseField, endedSseStream, type SseStream, serializeData, streamEvery } from './sse';
import { discard, isStreamBody, type StreamBody, sendStream } from './stream-body';
import { type Rules, type Validated, validate } from './validate';

/**
 * The incoming request: Node's IncomingMessage plus `remoteAddress`, the TCP peer captured when
 * the connection was accepted (no header can change it).
 */
export type KeelRequest = IncomingMessage & { readonly remoteAddress: string };

/** Route parameters by name. */
type Params = Readonly<Record<string, string>>;

/** A route handler. Return (or await) the response operation, e.g. `return ctx.json(x)`. */
export type Handler = (ctx: Context) => unknown;

/** `next()` runs the rest of the chain; await it to run code after the handler. */
export type Next = () => Promise<unknown>;

/** Onion middleware: code before `await next()` runs on the way in, after it on the way out. */
export type Middleware = (ctx: Context, next: Next) => unknown;

/**
 * Options for `ctx.cacheControl`. Every duration is in seconds (fractions floored); a directive
 * whose option is left out is not sent. A flag that is no boolean (`'true'`) is a TypeError, a
 * key that names no option (`privat`, `'max-age'`) a RangeError: a dropped `private` would let a
 * shared cache keep a per-user response.
 */
export interface CacheControlOptions {
  /**
   * `max-age`: how long any cache may reuse the response, in seconds.
   *
   * @default undefined (not sent)
   */
  maxAge?: number | undefined;
  /**
   * `s-maxage`: `max-age` for shared caches (CDNs, proxies) only, in seconds.
   *
   * @default undefined (not sent)
   */
  sMaxAge?: number | undefined;
  /**
   * `public` (true) or `private` (false: only the browser may store it).
   *
   * @default undefined (neither is sent)
   */
  public?: boolean | undefined;
  /**
   * `private`: only the browser may store it, no shared cache (a per-user response). The same as
   * `public: false`; `true` beside `public: true` is a RangeError.
   *
   * @default false
   */
  private?: boolean | undefined;
  /**
   * `no-cache`: a cache may store it but must revalidate with the server before each reuse.
   *
   * @default false
   */
  noCache?: boolean | undefined;
  /**
   * `must-revalidate`: once stale, never reused without revalidating (not even when offline).
   *
   * @default false
   */
  mustRevalidate?: boolean | undefined;
  /**
   * `proxy-revalidate`: `must-revalidate` for shared caches only.
   *
   * @default false
   */
  proxyRevalidate?: boolean | undefined;
  /**
   * `no-transform`: intermediaries must not change the body (recompress, convert images).
   *
   * @default false
   */
  noTransform?: boolean | undefined;
  /**
   * `stale-while-revalidate`: seconds a stale response may be served while it is refetched.
   *
   * @default undefined (not sent)
   */
  staleWhileRevalidate?: number | undefined;
  /**
   * `stale-if-error`: seconds a stale response may be served when refetching fails.
   *
   * @default undefined (not sent)
   */
  staleIfError?: number | undefined;
  /**
   * `immutable`: the response never changes while fresh (versioned assets).
   *
   * @default false
   */
  immutable?: boolean | undefined;
  /**
   * `no-store`: nothing may be stored; every other directive is left out (the options are still
   * checked).
   *
   * @default false
   */
  noStore?: boolean | undefined;
}

const DONE: Promise<void> = Promise.resolve();
/** `ctx.signal`'s reason. */
const LEFT = 'keel: the response closed before it finished (the client left, or was cut off)';
const REDIRECTS = new Set([300, 301, 302, 303, 307, 308]);
/** The largest Cache-Control duration sent (RFC 9111 §1.2.2: it stands for any larger one). */
const MAX_DELTA_SECONDS = 2_147_483_648;

/**
 * An IP literal, or a reg-name (RFC 3986 §3.2.2) of letters, digits, `-`, `.` and `_` (Docker and
 * compose service names: `my_api`), with one optional trailing dot (the DNS root label: curl
 * sends `example.com.` for such a URL) and no empty label (`a..b` names no host); then an
 * optional port (maybe empty: `example.com:`, RFC 3986 `port = *DIGIT`).
 */
const HOST = /^(?!.*\.\.)(?:\[[0-9a-f:.]+\]|[a-z0-9_](?:[a-z0-9_.-]*[a-z0-9_])?\.?)(?::\d{0,5})?$/i;

/**
 * `value` as JSON text (`undefined` as `null`); what JSON refuses, or has no text for (a
 * function, a Symbol: a mistake, not a `null` to send), is a keel: TypeError.
 */
function toJson(call: string, value: unknown): string {
  let text: string | undefined;
  try {
    text = JSON.stringify(value);
  } catch (cause) {
    throw notJson(call, value, cause);
  }
  if (text !== undefined || value === undefined) return text ?? 'null';
  throw notJson(call, value, `JSON has no text for a ${typeof value}`);
}

/**
 * `example.com:8080` -> `example.com`, `[::1]:80` -> `[::1]`, `example.com.` -> `example.com`
 * (one name, one spelling: a check against `example.com` must not miss it); '' for anything else.
 */
function hostnameOf(value: string | undefined): string {
  if (value === undefined || value.length > 255 || !HOST.test(value)) return '';
  let end = value.startsWith('[') ? value.indexOf(']') + 1 : value.indexOf(':');
  // A port past 65535 makes the value no host (a URL parser throws on it, RFC 9112 §3.2: 400).
  if (end > 0 && end < value.length && Number(value.slice(end + 1)) > 65_535) return '';
  if (end <= 0) end = value.length;
  if (value.charCodeAt(end - 1) === 46) end--;
  return (end === value.length ? value : value.slice(0, end)).toLowerCase();
}

/**
 * The request's host as sent: for an absolute-form target (`GET http://h/x`) its authority, Host
 * ignored (RFC 9112 §3.2.2); otherwise HTTP/2's :authority or the Host header, unless
 * {@link hostFault} finds a fault (the app answers those 400; its middleware still runs), then
 * none. Read only by `ctx.hostname`, off the hot path.
 */
function hostOf(target: string, req: IncomingMessage): string | undefined {
  const authority = authorityOf(target);
  if (authority !== undefined) return authority;
  if (headersCut(req) || hostFault(req) !== 0) return undefined;
  // HTTP/2 (`app.attach(http2Server)`) names the host in :authority, and Host only without it.
  const headers = req.headers;
  return (headers[':authority'] as string | undefined) ?? headers.host;
}

/** The authority of an absolute-form target (`http://h:1/x` → `h:1`); undefined for others. */
function authorityOf(target: string): string | undefined {
  if (target.charCodeAt(0) === 47) return undefined;
  const scheme = target.indexOf('://');
  if (scheme === -1) return undefined;
  const start = scheme + 3;
  let end = start;
  while (end < target.length) {
    const c = target.charCodeAt(end);
    if (c === 47 || c === 63 || c === 35) break;
    end++;
  }
  return target.slice(start, end);
}

/**
 * {@link hostFault} of an absolute-form target, whose authority stands for Host (RFC 9112
 * §3.2.2): one that is no `host[:port]` (`http://user:pw@h/x`: userinfo is an error, RFC 9110
 * §4.2.4) is refused as such a Host is. A path target (the usual one) costs one char code.
 */
export function targetHostFault(target: string): number {
  const authority = authorityOf(target);
  return authority === undefined || isHostSyntax(authority) ? 0 : INVALID_TARGET_HOST;
}

/** {@link hostFault}: two Host lines. */
const TWO_HOST_LINES = 1;
/** {@link hostFault}: a Host value that is no `host[:port]`. */
const INVALID_HOST = 2;
/** {@link hostFault}: an HTTP/2 request whose Host names another host than its :authority. */
const HOST_NOT_AUTHORITY = 3;
/** {@link targetHostFault}: an absolute-form target whose authority is no `host[:port]`. */
const INVALID_TARGET_HOST = 4;

/**
 * 1 for each ASCII code a reg-name may hold (RFC 3986 §3.2.2: unreserved, sub-delims, and `%`
 * of an escape): letters, digits, `-._~!$&'()*+,;=`.
 */
const REG_NAME = /* @__PURE__ */ (() => {
  const table = new Uint8Array(128);
  for (const c of "-._~!$&'()*+,;=%") table[c.charCodeAt(0)] = 1;
  for (let c = 48; c < 58; c++) table[c] = 1;
  for (let c = 65; c < 91; c++) table[c] = table[c + 32] = 1;
  return table;
})();

function isHexDigit(c: number): boolean {
  return (c >= 48 && c < 58) || ((c | 32) >= 97 && (c | 32) < 103);
}

/**
 * Whether `value` has the syntax of Host (RFC 9112 §3.2: `uri-host [ ":" port ]`, RFC 3986): a
 * reg-name or IPv4 address, or an IP literal in brackets (its inside held to the same characters
 * and `:`), then digits after one `:`. Empty is valid. What it lets through may still be no host
 * (`a..b`, a port over 65535): `ctx.hostname` is `''` for those. A loop, not a regex: it runs on
 * every request.
 */
function isHostSyntax(value: string): boolean {
  const n = value.length;
  let i = 0;
  let c = 0;
  if (value.charCodeAt(0) === 91) {
    for (i = 1; i < n && (c = value.charCodeAt(i)) !== 93; i++) {
      if (c !== 58 && (c > 127 || REG_NAME[c] === 0)) return false;
    }
    if (i++ === n) return false;
  } else {
    for (; i < n && (c = value.charCodeAt(i)) !== 58; i++) {
      if (c > 127 || REG_NAME[c] === 0) return false;
      if (c === 37 && !(isHexDigit(value.charCodeAt(i + 1)) && isHexDigit(value.charCodeAt(i + 2))))
        return false;
    }
  }
  if (i === n) return true;
  if (value.charCodeAt(i) !== 58) return false;
  for (i++; i < n; i++) {
    c = value.charCodeAt(i);
    if (c < 48 || c > 57) return false;
  }
  return true;
}

/**
 * What makes the request's Host unusable, answered 400 whatever the route (RFC 9112 §3.2):
 * {@link TWO_HOST_LINES} (Node keeps the first, a proxy in front may have routed by the last),
 * {@link INVALID_HOST} (`evil.example/reset?x=`, `user@evil.example`: a value no URL has as its
 * host), {@link HOST_NOT_AUTHORITY} (HTTP/2, RFC 9113 §8.3.1: the same doubt as two lines), or 0.
 * HTTP/2's :authority stands for Host when there is one. Run for every request: one pass over the
 * raw header names (~6 ns for a benchmark client's two, ~30 ns for a browser's ten), then the
 * value compared with the last valid one, or checked (~30 ns) when it differs.
 */
export function hostFault(req: IncomingMessage): number {
  const raw = req.rawHeaders;
  let at = -1;
  let authority = -1;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!;
    // The spellings clients send compared first: no lower-cased copy of each 4-letter name.
    if (
      name.length === 4 &&
      (name === 'Host' || name === 'host' || name.toLowerCase() === 'host')
    ) {
      if (at !== -1) return TWO_HOST_LINES;
      at = i + 1;
    } else if (name.length === 10 && name === ':authority') authority = i + 1;
  }
  if (authority !== -1) {
    if (at !== -1 && raw[at]!.toLowerCase() !== raw[authority]!.toLowerCase()) {
      return HOST_NOT_AUTHORITY;
    }
    at = authority;
  }
  if (at === -1) return 0;
  const value = raw[at]!;
  // A server hears one or a few hosts: the last valid one is compared (a few ns), not re-checked.
  if (value === lastHost) return 0;
  if (!isHostSyntax(value)) return INVALID_HOST;
  lastHost = value;
  return 0;
}

/** The Host value {@link hostFault} last found valid. */
let lastHost = '';

function seconds(name: string, value: number | undefined): number | undefined {
  if (value === undefined) return undefined;
  const n = checkNumber(
    `cacheControl ${name}`,
    value,
    'a non-negative number of seconds',
    (v) => Number.isFinite(v) && v >= 0,
  );
  // RFC 9111 §1.2.2: 2^31 stands for any larger delta-seconds; String() would write 1e21 as
  // `1e+21`, which is no delta-seconds at all (a cache would ignore the directive).
  return Math.min(Math.floor(n), MAX_DELTA_SECONDS);
}

/** Every key of CacheControlOptions, in the order their directives are sent. */
const CACHE_KEYS = keysOf<CacheControlOptions>({
  public: 0,
  private: 0,
  noCache: 0,
  maxAge: 0,
  sMaxAge: 0,
  mustRevalidate: 0,
  proxyRevalidate: 0,
  noTransform: 0,
  staleWhileRevalidate: 0,
  staleIfError: 0,
  immutable: 0,
  noStore: 0,
});
/** The flags sent as a bare directive when true (after `public`/`private`, `no-cache`). */
const CACHE_FLAGS = [
  ['mustRevalidate', 'must-revalidate'],
  ['proxyRevalidate', 'proxy-revalidate'],
  ['noTransform', 'no-transform'],
] as const;

/**
 * The Cache-Control directives `options` ask for. Every option is checked whatever else is set
 * (`noStore: 'true'` from an env var sent the max-age of a response meant to be stored nowhere),
 * and a key that names no option is refused: `private` was once one, dropped in silence.
 */
function cacheDirectives(options: CacheControlOptions): string[] {
  knownKeys('cacheControl options', options, CACHE_KEYS);
  const flag = (key: keyof CacheControlOptions) =>
    options[key] === undefined ? undefined : boolean(`cacheControl ${key}`, options[key], false);
  const isPublic = flag('public');
  const isPrivate = flag('private');
  // `public: false` is `private`: the two given alike (both true, both false) contradict.
  if (isPublic !== undefined && isPublic === isPrivate) {
    throw rangeError(
      'cacheControl private',
      `${!isPublic} or left out with public: ${isPublic}`,
      isPrivate,
    );
  }
  const noStore = flag('noStore') === true;
  const noCache = flag('noCache') === true;
  const flags = CACHE_FLAGS.filter(([key]) => flag(key) === true);
  const immutable = flag('immutable') === true;
  const maxAge = seconds('maxAge', options.maxAge);
  const sMaxAge = seconds('sMaxAge', options.sMaxAge);
  const swr = seconds('staleWhileRevalidate', options.staleWhileRevalidate);
  const sie = seconds('staleIfError', options.staleIfError);
  if (noStore) return ['no-store'];
  const parts: string[] = [];
  if (isPublic === true) parts.push('public');
  else if (isPublic === false || isPrivate === true) parts.push('private');
  if (noCache) parts.push('no-cache');
  if (maxAge !== undefined) parts.push(`max-age=${maxAge}`);
  if (sMaxAge !== undefined) parts.push(`s-maxage=${sMaxAge}`);
  for (const [, directive] of flags) parts.push(directive);
  if (swr !== undefined) parts.push(`stale-while-revalidate=${swr}`);
  if (sie !== undefined) parts.push(`stale-if-error=${sie}`);
  if (immutable) parts.push('immutable');
  return parts;
}

/**
 * Node's ERR_HTTP_HEADERS_SENT ("Cannot set headers after they are sent to the client") names
 * neither keel's call nor the header: say both.
 */
function lateHeader(call: string, name: unknown, cause: unknown): Error {
  return new Error(
    `keel: ctx.${call}() set ${JSON.stringify(String(name))} after the response was sent; ` +
      'set headers before the response operation',
    { cause },
  );
}

/** `err` restated by {@link lateHeader} when it is Node's headers-sent error, else as it is. */
function restateLate(call: string, name: string, err: unknown): unknown {
  return (err as { code?: string }).code === 'ERR_HTTP_HEADERS_SENT'
    ? lateHeader(call, name, err)
    : err;
}

/**
 * The path of a request target as the router takes it, as sent: up to the first `?` or `#` (a
 * fragment is no part of a request target, RFC 9112 §3.2, but a raw client can send one). For
 * the absolute-form (`http://host/a?q`), the raw path after the authority (`/` when it has none),
 * not a URL parser's normalized one. Any other target (`*`) is returned as sent.
 */
function pathOf(target: string): string {
  let start = 0;
  if (target.charCodeAt(0) !== 47) {
    const scheme = target.indexOf('://');
    if (scheme === -1) return target;
    start = scheme + 3;
    while (start < target.length && target.charCodeAt(start) !== 47) {
      const c = target.charCodeAt(start);
      if (c === 63 || c === 35) return '/';
      start++;
    }
    if (start === target.length) return '/';
  }
  for (let i = start + 1; i < target.length; i++) {
    const c = target.charCodeAt(i);
    if (c === 63 || c === 35) return target.slice(start, i);
  }
  return start === 0 ? target : target.slice(start);
}

/**
 * The path as the router (find-my-way) matches it: percent-escapes decoded as `decodeURI` does,
 * so reserved characters (`%2F`, `%3F`, ...) stay encoded and `%25` stays `%25`. A guard reading
 * `ctx.path` then sees what was routed (`/%61dmin` is `/admin`). Malformed escapes (the router
 * answers 400) leave the path as sent. Lazy: only a path with a `%` pays for it.
 */
function routedPath(path: string): string {
  if (path.indexOf('%') === -1) return path;
  try {
    return decodeURI(path.replace(PERCENT_25, '%2525'));
  } catch {
    return path;
  }
}
const PERCENT_25 = /%25/g;

/** The raw query of a request target: after the first `?`, up to a `#`; '' when there is none. */
function queryOf(target: string): string {
  const q = target.indexOf('?');
  if (q === -1) return '';
  const hash = target.indexOf('#');
  if (hash === -1) return target.slice(q + 1);
  return hash < q ? '' : target.slice(q + 1, hash);
}

/** The constructor's arguments: slot, req, res, method, request target, params, request id. */
type ContextArgs = [Slot, KeelRequest, ServerResponse, string, string, Params, string];

/**
 * Makes the ctx of one request, bound to the slot's current generation. Set by `Context`'s
 * static block: the constructor is private, so the slot stays out of the published types.
 */
export let createContext: (...args: ContextArgs) => Context;

/**
 * The context of one request. Its bookkeeping lives in a pooled slot that later requests reuse;
 * the ctx itself belongs to this request only. Once the response has finished (for a stream: once
 * it closed) the ctx is stale: reading it still gives this request's data (never another
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
  /** Route parameters (`:id` -> `params.id`, trailing `*` -> `params['*']`), decoded once. */
  readonly params: Params;
  /**
   * Parsed JSON or urlencoded body (a string or Buffer with the text / raw parsers); `undefined`
   * when the request has none (or a type no parser takes). Middleware may replace it.
   */
  body: unknown = undefined;
  /** Correlation id: the incoming X-Request-ID when short and safe, else a fresh one. */
  readonly requestId: string;

  /** The pooled slot; this ctx may use it while `#slot.gen === #gen`. */
  readonly #slot: Slot;
  readonly #gen: number;
  /** The request target as sent; path and query are split off it when first read. */
  readonly #target: string;
  #path: string | null = null;
  /** This request's stream, kept so a stale ctx can still return it. */
  #stream: SseStream | null = null;
  #query: ParsedUrlQuery | null = null;
  #cookies: Record<string, string | undefined> | null = null;
  #ip: string | null = null;
  #ips: string[] | null = null;
  /** Trusted proxies in front of this request, kept apart from `ips`, which the handler owns. */
  #hops = 0;
  #state: Record<string, unknown> | null = null;
  #signal: AbortSignal | null = null;
  /** A stale use was reported already (once per ctx is enough). */
  #reportedStale = false;

  static {
    createContext = (slot, req, res, method, target, params, requestId) =>
      new Context(slot, req, res, method, target, params, requestId);
  }

  /** Made by the app for each request. */
  private constructor(
    slot: Slot,
    req: KeelRequest,
    res: ServerResponse,
    method: string,
    target: string,
    params: Params,
    requestId: string,
  ) {
    this.#slot = slot;
    this.#gen = slot.gen;
    this.req = req;
    this.res = res;
    this.method = method;
    this.#target = target;
    this.params = params;
    this.requestId = requestId;
  }

  /**
   * URL path without the query string or a `#fragment`, as the router matched it: escapes of
   * unreserved and non-ASCII characters decoded (`/%61dmin` is `/admin`), reserved ones (`%2F`,
   * `%3F`, `%25`...) kept, as `decodeURI` does. Guards that compare it see what was routed.
   */
  get path(): string {
    if (this.#path === null) this.#path = routedPath(pathOf(this.#target));
    return this.#path;
  }

  /**
   * The slot, when this ctx's request is still live; otherwise reports the stale use (once) and
   * returns null, and the caller does nothing. The generation check is the whole cost of
   * stale-ctx detection: one comparison per response operation.
   */
  #use(op: string): Slot | null {
    const slot = this.#slot;
    if (slot.gen === this.#gen) return slot;
    if (!this.#reportedStale) {
      this.#reportedStale = true;
      slot.host.report(new ReleasedContextError(op), this);
    }
    return null;
  }

  /** Per-request scratch space for middleware (e.g. the authenticated user). */
  get state(): Record<string, unknown> {
    if (this.#state === null) this.#state = {};
    return this.#state;
  }

  /**
   * Aborted when the response closes before it finished: the client left, `sendTimeout` cut it,
   * or `app.close()` ran out of time. Pass it to what the handler waits on (`fetch(url, { signal:
   * ctx.signal })`, `pipeline(src, ctx.res, { signal: ctx.signal })`, a query): keel sets no time
   * limit on a handler, and one that never settles holds its request (and `close()`) for ever.
   * Never aborted once the response finished. Made when first read (requests that do not read
   * it pay nothing); its reason is an `AbortError` DOMException.
   */
  get signal(): AbortSignal {
    if (this.#signal === null) {
      const controller = new AbortController();
      this.#signal = controller.signal;
      const res = this.res;
      const closed = (): void => {
        // Not ended by the app: an HTTP/2 stream closed under it (a reset, keel's timeouts) ends
        // its writable side itself, so finished alone does not tell.
        if (!res.writableFinished || !res.writableEnded || wasUnsent(res))
          controller.abort(new DOMException(LEFT, 'AbortError'));
      };
      if (res.closed || res.destroyed) closed();
      else {
        res.once('close', closed);
        // Queued behind an earlier response of its connection (pipelined), it gets no 'close'
        // from Node when that connection closes: closed with it.
        if (res.socket === null) res.once('close', whileQueued(res, this.req.socket));
      }
    }
    return this.#signal;
  }

  /** The client address: the TCP peer, or with trust proxy the address it resolves to. */
  get ip(): string {
    if (this.#ip === null) this.#resolveIp();
    return this.#ip!;
  }

  /**
   * Forwarded addresses, client first; empty unless trust proxy is on. The array is this
   * request's own: changing it changes nothing else (hostname and protocol keep their hop count).
   */
  get ips(): string[] {
    if (this.#ips === null) this.#resolveIp();
    return this.#ips!;
  }

  #resolveIp(): void {
    const trust = this.#slot.host.trust;
    const peer = this.req.remoteAddress;
    if (trust === null || headersCut(this.req)) {
      this.#ip = peer;
      this.#ips = [];
      return;
    }
    const { ip, ips } = resolveAddresses(peer, this.req.headers, trust);
    this.#ip = ip;
    this.#ips = ips;
    this.#hops = ips.length;
  }

  /** The first value of query parameter `key`, or `undefined`. */
  query(key: string): string | undefined {
    const value = this.#parsedQuery()[key];
    return Array.isArray(value) ? value[0] : value;
  }

  /** Every value of query parameter `key` (`?tag=a&tag=b` -> `['a', 'b']`). */
  queryAll(key: string): string[] {
    const value = this.#parsedQuery()[key];
    return value === undefined ? [] : Array.isArray(value) ? value : [value];
  }

  /** The query as `ctx.query` reads it: a repeated key gives its first value. */
  #firstQueryValues(): Record<string, string | undefined> {
    // Null prototype: a `__proto__` parameter is a key like any other (an assignment to `{}`
    // would try to set the prototype and drop it).
    const out: Record<string, string | undefined> = Object.create(null);
    const query = this.#parsedQuery();
    for (const key in query) {
      const value = query[key];
      out[key] = Array.isArray(value) ? value[0] : value;
    }
    return out;
  }

  #parsedQuery(): ParsedUrlQuery {
    if (this.#query === null) {
      const query = queryOf(this.#target);
      // querystring keeps the first maxKeys and drops the rest in silence: refused, as a form
      // body of as many fields is (414: a target the server will not interpret).
      if (tooManyFields(query)) return this.#refuseQuery();
      this.#query = parseQuery(query); // null prototype
    }
    return this.#query;
  }

  /**
   * The 414 of a query of too many parameters: thrown while it can still be the answer. Read once
   * the response started (an event stream's timer, a callback after the answer, where a throw
   * is uncaught, or a handler's throw, dropped as a client error with its response cut), it goes
   * to onError instead, and the query reads as empty from then on.
   */
  #refuseQuery(): ParsedUrlQuery {
    const refused = new HttpException(
      414,
      `Query string has more than ${MAX_FORM_FIELDS} parameters`,
    );
    const slot = this.#slot;
    if (slot.gen === this.#gen && !this.res.headersSent) throw refused;
    this.#query = Object.create(null) as ParsedUrlQuery;
    // Not the path in the message (a client's bytes): onError has the ctx, and logs it escaped.
    const late = new Error(
      `keel: a query string of more than ${MAX_FORM_FIELDS} parameters was read after the ` +
        'response started: it reads as empty',
      { cause: refused },
    );
    void slot.host.report(late, this);
    return this.#query;
  }

  /** A request header by name (case-insensitive); repeated headers are joined with `, `. */
  header(name: string): string | undefined {
    if (typeof name !== 'string') throw typeError('header name', 'a string', name);
    const key = name.toLowerCase();
    // Node's headers object has Object.prototype: `constructor` would give a function, and a
    // `__proto__` header is dropped from it (an assignment); its null-prototype list keeps it.
    const value: unknown =
      key === '__proto__' ? this.req.headersDistinct?.[key] : this.req.headers[key];
    if (typeof value === 'string') return value;
    return Array.isArray(value) ? value.join(', ') : undefined;
  }

  /** A request cookie by name, URL-decoded. */
  cookie(name: string): string | undefined {
    if (this.#cookies === null) this.#cookies = parseCookies(this.req.headers.cookie);
    return readCookie(this.#cookies, name);
  }

  /**
   * Sets the response status (200-599) for the next response operation; chain into it. A 1xx is
   * refused: it is an interim head, and a client would take the next response on the connection
   * for this request's answer.
   */
  status(code: number): this {
    const slot = this.#use('status()');
    if (slot === null) return this;
    slot.setStatus(integer('status', code, 0, 200, 599));
    return this;
  }

  /** Sets a response header; chainable. */
  setHeader(name: string, value: string | number | readonly string[]): this {
    if (this.#use('setHeader()') === null) return this;
    // The headers that frame the response or keep its connection (10, 14 and 17 characters:
    // length tests on the common path).
    const n = name?.length;
    if (n === 10 || n === 14 || n === 17) checkFraming(name, value);
    try {
      this.res.setHeader(name, value);
    } catch (err) {
      // Node's errors name neither the call nor the value: restate them in the package's template.
      const code = (err as { code?: string }).code;
      if (code === 'ERR_INVALID_HTTP_TOKEN') {
        const make = typeof name === 'string' ? rangeError : typeError;
        throw make('setHeader name', 'an HTTP header name (a token)', name, err);
      }
      if (code === 'ERR_HTTP_HEADERS_SENT') throw lateHeader('setHeader', name, err);
      const expected = 'a header value Node can send';
      if (code === 'ERR_INVALID_CHAR') throw rangeError('setHeader value', expected, value, err);
      if (code === 'ERR_HTTP_INVALID_HEADER_VALUE') {
        throw typeError('setHeader value', expected, value, err);
      }
      throw err;
    }
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
    checkObject('cacheControl options', options);
    if (this.#use('cacheControl()') === null) return this;
    const parts = cacheDirectives(options);
    if (parts.length > 0) {
      try {
        this.res.setHeader('cache-control', parts.join(', '));
      } catch (err) {
        throw restateLate('cacheControl', 'cache-control', err);
      }
    }
    return this;
  }

  /**
   * Adds a Set-Cookie header (several calls, several headers). Name and value are URL-encoded
   * with CR/LF stripped; defaults `Path=/`, `SameSite=Lax`; `maxAge` in seconds. Chainable.
   */
  setCookie(name: string, value: string, options?: CookieOptions): this {
    if (this.#use('setCookie()') !== null) {
      const cookie = serializeCookie(name, value, options);
      try {
        this.res.appendHeader('set-cookie', cookie);
      } catch (err) {
        throw restateLate('setCookie', 'set-cookie', err);
      }
    }
    return this;
  }

  /**
   * Redirects to `url` (absolute, or relative to this request) with `status` (300-308, default
   * 302 Found; 303 after a POST, 307/308 keep the method). The URL is percent-encoded where it
   * must be (encodeurl); CR, LF and NUL are refused with a RangeError, so no header can be
   * injected. Redirecting to a URL taken from the request is an open redirect: check it first.
   */
  redirect(url: string, status = 302): void {
    const slot = this.#use('redirect()');
    if (slot === null) return;
    if (checkLine('redirect url', url, 'a URL') === '') {
      throw rangeError('redirect url', 'a non-empty URL', url);
    }
    checkNumber('redirect status', status, '300-303, 307 or 308', (n) => REDIRECTS.has(n));
    this.res.setHeader('location', encodeUrl(url));
    slot.setStatus(status);
    slot.end(null, null);
  }

  /**
   * `https` when the connection is TLS; with trust proxy, and only when the TCP peer is a trusted
   * proxy, the `X-Forwarded-Proto` entry of the outermost trusted proxy (`http` or `https`,
   * anything else is ignored).
   */
  get protocol(): 'http' | 'https' {
    const encrypted = (this.req.socket as { encrypted?: boolean } | null)?.encrypted === true;
    const forwarded = this.#forwarded('x-forwarded-proto')?.toLowerCase();
    if (forwarded === 'https' || forwarded === 'http') return forwarded;
    return encrypted ? 'https' : 'http';
  }

  /** `protocol === 'https'`. */
  get secure(): boolean {
    return this.protocol === 'https';
  }

  /**
   * The host name the client asked for, lower-cased, without port or trailing root dot: from
   * `Host`, or with trust proxy (the TCP peer being a trusted proxy) from the `X-Forwarded-Host`
   * entry of the outermost trusted proxy. An IPv6 address keeps its brackets. A value that is
   * not a host name is ignored (`''` when nothing valid is left).
   */
  get hostname(): string {
    const forwarded = hostnameOf(this.#forwarded('x-forwarded-host'));
    if (forwarded !== '') return forwarded;
    return hostnameOf(hostOf(this.#target, this.req));
  }

  /**
   * The value of a forwarding header that the outermost trusted proxy wrote, when the TCP peer is
   * a trusted proxy. A proxy that appends (rather than replaces) keeps what the client sent to
   * the left of its own entry, so entries are counted from the right, one per trusted proxy, as
   * for `X-Forwarded-For`: with `n` trusted proxies, the `n`th entry from the right (the first
   * when there are fewer). Off the hot path: only `protocol` and `hostname` read it.
   */
  #forwarded(name: string): string | undefined {
    const trust = this.#slot.host.trust;
    if (trust === null || !trust(this.req.remoteAddress, 0) || headersCut(this.req)) {
      return undefined;
    }
    const value = this.req.headers[name];
    if (typeof value !== 'string') return undefined;
    // The peer is one trusted proxy even when it wrote no X-Forwarded-For.
    if (this.#ips === null) this.#resolveIp();
    let skip = Math.max(1, this.#hops);
    let end = value.length;
    let start = value.lastIndexOf(',');
    while (start !== -1 && --skip > 0) {
      end = start;
      start = value.lastIndexOf(',', start - 1);
    }
    return value.slice(start + 1, end).trim();
  }

  /** Sends `value` as JSON (`application/json`, with `Content-Length`). */
  json(value: unknown): void {
    const slot = this.#use('json()');
    if (slot === null) return;
    slot.end(JSON_TYPE, toJson('json()', value));
  }

  /**
   * Streams a Node Readable or a web ReadableStream (`fetch`'s `response.body`) as the body:
   * `application/octet-stream` unless a Content-Type was set, chunked, read only as fast as the
   * client takes it, never compressed. Resolves when the body is written or the client left (the
   * source is then destroyed / cancelled); if the source fails mid-body the connection is closed
   * and the error goes to `onError`. Return or await it; the request stays open until it ends.
   *
   * @example
   * app.get('/export', (ctx) => ctx.setHeader('content-type', 'text/csv').send(createReadStream(file)));
   */
  send(body: StreamBody): Promise<void>;
  /**
   * Sends a raw payload: a string as `text/plain`, bytes (Buffer, Uint8Array, any typed array,
   * DataView, ArrayBuffer) as `application/octet-stream` (unless a Content-Type was set), an
   * object as JSON, `null`/`undefined` as an empty body.
   */
  send(body: string | ArrayBufferLike | ArrayBufferView | object | null | undefined): void;
  send(body: unknown): void | Promise<void> {
    const slot = this.#use('send()');
    if (slot === null) {
      // A stream handed to a stale ctx is ours to release: nobody else will read it.
      if (isStreamBody(body)) discard(body);
      return DONE;
    }
    if (body === null || body === undefined) slot.end(null, null);
    else if (typeof body === 'string') {
      slot.end(this.res.hasHeader('content-type') ? null : 'text/plain; charset=utf-8', body);
    } else if (body instanceof Uint8Array) this.#sendBytes(slot, body);
    else if (ArrayBuffer.isView(body)) {
      // Its window of the buffer, as bytes: JSON.stringify gives `{}` or an index map.
      this.#sendBytes(slot, new Uint8Array(body.buffer, body.byteOffset, body.byteLength));
    } else if (isAnyArrayBuffer(body)) this.#sendBytes(slot, new Uint8Array(body));
    else if (isStreamBody(body)) return this.#sendStream(slot, body);
    else slot.end(JSON_TYPE, toJson('send()', body));
  }

  #sendBytes(slot: Slot, bytes: Uint8Array): void {
    slot.end(this.res.hasHeader('content-type') ? null : 'application/octet-stream', bytes);
  }

  #sendStream(slot: Slot, source: StreamBody): Promise<void> {
    try {
      slot.assertCanRespond();
    } catch (err) {
      discard(source); // refused: released here, or it (a file handle) would stay open
      throw err;
    }
    if (slot.host.closing) this.res.shouldKeepAlive = false;
    return slot.track(sendStream(this.#bodyTarget(slot), source));
  }

  /** What a streamed body or a file needs of this request and its response. */
  #bodyTarget(slot: Slot): FileTarget {
    return {
      method: this.method,
      headers: this.req.headers,
      res: this.res,
      status: slot.status,
      extra: ['x-request-id', this.requestId],
      watch: slot.host.send,
    };
  }

  /**
   * Serves a file: Content-Type from the extension, ETag, Last-Modified, 304 for matching
   * conditionals, 206 for a single range (only that window is read), 416 when unsatisfiable.
   * Pass `root` whenever the path comes from the request. Rejects with HttpException 403/404.
   */
  sendFile(path: string, options?: SendFileOptions): Promise<void> {
    const slot = this.#use('sendFile()');
    if (slot === null) return DONE;
    slot.assertCanRespond();
    return slot.track(sendFile(this.#bodyTarget(slot), path, options));
  }

  /**
   * Evaluates the request's GraphQL operation (POST JSON `{query, variables, operationName}` or
   * GET query string) against `schema` (SDL, built once per string) and sends the result.
   */
  graphql(schema: string, resolvers?: GraphqlResolvers): Promise<void> {
    const slot = this.#use('graphql()');
    if (slot === null) return DONE;
    slot.assertCanRespond();
    const source = (this.method === 'POST' ? this.body : this.#parsedQuery()) as
      | Record<string, unknown>
      | undefined;
    const params =
      typeof source === 'object' && source !== null
        ? {
            query: source.query,
            variables: source.variables,
            operationName: source.operationName,
            extensions: source.extensions,
          }
        : {
            query: undefined,
            variables: undefined,
            operationName: undefined,
            extensions: undefined,
          };
    const gen = this.#gen;
    const work = slot.host.graphql
      .run(this.method, this.req.headers, params, schema, resolvers, this, slot.jsonDepth)
      .then((outcome) => {
        if (slot.gen !== gen) return;
        if (outcome.allow !== undefined) this.res.setHeader('allow', outcome.allow);
        // The media type (and so the status rules) follows Accept: caches keep them apart.
        vary(this.res, 'Accept');
        slot.setStatus(outcome.status);
        slot.end(outcome.type, JSON.stringify(outcome.body), 1); // this work is the one busy op
      });
    return slot.track(work);
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
          : { ...this.#firstQueryValues(), ...this.params };
    return validate(rules, data);
  }

  /**
   * Opens this request's event stream if needed and returns it (e.g. to keep in a callback). For
   * HEAD, and while the app is closing, the stream is ended right after its headers. Through a
   * ctx whose request is over it returns the stream the request had (ended by then), or, if it
   * had none, an ended one (its writes return false) and reports {@link ReleasedContextError},
   * as every late operation does: never a throw, which a timer would make the process's end.
   */
  sseStream(): SseStream {
    if (this.#stream !== null) return this.#stream;
    const slot = this.#use('sseStream()');
    this.#stream =
      slot === null ? endedSseStream(this.res, this.#slot.host.sse) : slot.openStream();
    return this.#stream;
  }

  /**
   * Sends one named event (opening the stream on first use). Data: strings as-is, anything
   * else as JSON. Returns false when the client is gone or was dropped as too slow. The event's
   * id is the stream's next (1, 2, ...), or none on a hub's stream (`hub.connect`). A bad event
   * name (RangeError) or data JSON cannot hold (TypeError) throws before the stream opens.
   */
  sseEvent(event: string, data: unknown): boolean {
    // Before the stream opens: a bad name or data JSON cannot hold must not answer 200.
    assertSseField('event', event);
    const text = serializeData(data, event);
    if (this.#stream === null && this.#use('sseEvent()') === null) return false;
    return this.sseStream().send(event, text);
  }

  /**
   * Streams `fn()`'s result as an event now and every `intervalMs` (default 1000 ms) until the
   * client disconnects; return this from the handler. Resolves when the stream ends.
   */
  sseInterval(fn: () => unknown, intervalMs = 1000): Promise<void> {
    checkFunction('sseInterval fn', fn);
    checkNumber(
      'sseInterval intervalMs',
      intervalMs,
      `a positive number of ms up to ${MAX_TIMER_MS}`,
      (n) => n > 0 && n <= MAX_TIMER_MS,
    );
    if (this.#stream === null && this.#use('sseInterval()') === null) return DONE;
    const stream = this.sseStream();
    const host = this.#slot.host;
    return streamEvery(stream, fn, intervalMs, (err) => {
      if (!stream.closed) host.report(err, this);
    });
  }
}

/**
 * keel frames a body itself (Content-Length for one piece, chunked for a stream of unknown
 * length) and keeps its connections: a handler's Transfer-Encoding would be sent beside keel's
 * Content-Length (RFC 9112 §6.2: never both, or a proxy and the client may each read the body by
 * another), a Content-Length must be one length, or the body after it is unframed, and a
 * Connection may only close.
 */
function checkFraming(name: string, value: unknown): void {
  const lower = name.toLowerCase();
  // keel decides whether a connection stays open (it closes one whose framing it cannot trust,
  // or whose body it refused): a handler's `keep-alive` would keep it open all the same.
  if (lower === 'connection') {
    if (typeof value === 'string' && /^\s*close\s*$/i.test(value)) return;
    throw rangeError(
      'setHeader value of Connection',
      '"close" (keel keeps a connection alive when it can: a handler may only close it)',
      Array.isArray(value) ? value.join(', ') : value,
    );
  }
  if (lower === 'transfer-encoding') {
    throw rangeError(
      'setHeader name',
      'a header other than Transfer-Encoding (keel sends a body chunked when it has no ' +
        'Content-Length, and with one otherwise)',
      name,
    );
  }
  if (lower !== 'content-length') return;
  const one = Array.isArray(value) && value.length === 1 ? value[0] : value;
  const ok =
    typeof one === 'number'
      ? Number.isSafeInteger(one) && one >= 0
      : typeof one === 'string' && /^\d{1,15}$/.test(one);
  if (!ok) {
    throw rangeError(
      'setHeader value of Content-Length',
      'one non-negative integer (a number or its digits)',
      Array.isArray(value) ? value.join(', ') : value,
    );
  }
}
