import { type ResolvedRetryOptions, resolveRetryOptions } from '../attempt/retry-policy';
import { type ResolvedCacheOptions, resolveCacheOptions } from '../cache/options';
import type { ClientConfig } from '../config';
import { checkObject, keysOf, oneOf, optionalMs, rangeError, typeError } from '../internal/checks';
import { joinEndpoint } from '../internal/endpoint';
import { fingerprintOf } from '../internal/fingerprint';
import { freeze } from '../internal/freeze';
import { PRIORITIES } from '../internal/priorities';
import { keyURL, resolveBaseURL, resolveCanonical } from '../internal/url';
import type {
  CacheOptions,
  CacheStrategy,
  HttpMethod,
  Priority,
  RequestOptions,
  ResponseBodyType,
} from '../types/options';
import { JSON_TYPE, serializeBody } from './body';
import { type FetchInit, resolveFetchInit, SHARED_OPTION_NAMES } from './fetch-init';
import {
  checkHeaders,
  checkMaxBytes,
  checkResponseType,
  checkStrings,
  headerName,
  setHeader,
} from './fields';
import { buildQuery } from './query';

/**
 * A fully-resolved, frozen request description. Computed once at the boundary; every stage reads
 * it. It holds no caller signal, so it can be stored in the cache and replayed to refetch.
 */
export interface RequestSpec {
  readonly method: HttpMethod;
  /** Canonical absolute URL, query included (sorted): what the key is made of. */
  readonly url: string;
  /**
   * The URL handed to fetch: `url` with the query as the caller wrote it (`params` after it), not
   * sorted, so a signature over the query still holds.
   */
  readonly fetchURL: string;
  /** Fingerprint: the cache and dedup key. */
  readonly key: string;
  /** `METHOD pathname`: circuit, intelligence and adaptive key. */
  readonly endpoint: string;
  /** URL pathname, for path invalidation. */
  readonly path: string;
  readonly host: string;
  /** What fetch gets: client and request headers merged, names as the caller wrote them. */
  readonly headers: Readonly<Record<string, string>>;
  /** The serialized body as handed to fetch. */
  readonly body: BodyInit | undefined;
  /** Per-attempt timeout ms, 0 = none. */
  readonly timeout: number;
  /** Total time budget ms across attempts and waits, 0 = none. */
  readonly deadline: number;
  /** undefined: from the Content-Type. */
  readonly responseType: ResponseBodyType | undefined;
  /** undefined when unlimited. */
  readonly maxResponseBytes: number | undefined;
  /** The fetch options (client and request merged), as RequestInit fields; undefined if none. */
  readonly fetchInit: FetchInit | undefined;
  /** null when this request is not cached (non-GET, `cache:false`, or caching disabled). */
  readonly cache: ResolvedCacheOptions | null;
  readonly retry: ResolvedRetryOptions;
  readonly tags: readonly string[];
  readonly priority: Priority;
  readonly group: string | undefined;
}

/**
 * What the observers suggest for an endpoint's requests (intelligence: a timeout and a cache
 * strategy from its latencies; the adaptive engine: stale-while-revalidate while it is
 * degraded), layered by applyRecommendation between a request's own options and the client's.
 */
export interface IntelligenceRecommendation {
  /** Recommended per-attempt timeout in ms. */
  timeout?: number;
  /** Recommended cache strategy for the endpoint's cached reads. */
  strategy?: CacheStrategy;
}

/** `method` and `url` are the arguments': taken (an object written as the spec lists it) and ignored. */
const REQUEST_KEYS = /* @__PURE__ */ keysOf(
  `${SHARED_OPTION_NAMES} method url params body signal tags priority scheduler`,
);
const GROUP_KEYS = /* @__PURE__ */ keysOf('group');

const NO_TAGS: readonly string[] = /* @__PURE__ */ freeze([]);
/** No request headers, and no request options. */
const EMPTY = /* @__PURE__ */ freeze({});

/** Reads take part in dedup; mutations are never coalesced. */
export function isDedupable(method: HttpMethod): boolean {
  return method === 'GET' || method === 'HEAD' || method === 'OPTIONS';
}

/** A request later identical ones may join: a read whose body is not a stream (read once). */
export function isJoinable(spec: RequestSpec): boolean {
  return isDedupable(spec.method) && spec.responseType !== 'stream';
}

/**
 * Layers a recommendation between the request's own options and the client defaults: it sets
 * the timeout unless the request gave one, and the cache strategy of a cached read unless the
 * request named one. Returns the same spec when nothing changes, so a resolved spec never has to
 * be built twice.
 */
export function applyRecommendation(
  spec: RequestSpec,
  options: RequestOptions | undefined,
  recommendation: IntelligenceRecommendation,
): RequestSpec {
  // A recommendation never exceeds a configured timeout: it may tighten the client's, not
  // loosen it (a loosened timeout let slow samples raise it again, up to 60 s).
  // (A timeout of 0 is none: any recommendation tightens it.)
  const timeout =
    options?.timeout === undefined && recommendation.timeout !== undefined
      ? Math.min(recommendation.timeout, spec.timeout || Infinity)
      : spec.timeout;
  // `cache: true` / `false` name no strategy (reading `strategy` off a boolean gives undefined).
  const cache =
    spec.cache &&
    recommendation.strategy !== undefined &&
    (options?.cache as CacheOptions | undefined)?.strategy === undefined &&
    recommendation.strategy !== spec.cache.strategy
      ? freeze({ ...spec.cache, strategy: recommendation.strategy })
      : spec.cache;
  if (timeout === spec.timeout && cache === spec.cache) return spec;
  return freeze({ ...spec, timeout, cache });
}

/**
 * Builds the frozen RequestSpec of one call from its options and the client's defaults: header
 * merge (request wins, names compared case-insensitively and sent as written), base URL, params, canonical URL, body serialization,
 * fingerprint, endpoint key, and the timeout / cache / retry layering (request option, then
 * client default; the client layers a recommendation in between with applyRecommendation).
 * Every problem is a TypeError or RangeError naming the option.
 */
export function resolveRequest(
  config: ClientConfig,
  method: HttpMethod,
  url: string,
  options?: RequestOptions,
): RequestSpec {
  if (typeof url !== 'string') throw typeError('url', 'a URL string', url);
  if (options !== undefined) checkObject('options', options, undefined, REQUEST_KEYS);
  const o: RequestOptions = options ?? EMPTY;
  // Checked as on the client (config.ts): only undefined takes the client's.
  const base = o.baseURL === undefined ? config.baseURL : resolveBaseURL(o.baseURL);
  // The params go after the URL's own query; a fragment is then dropped.
  const parsed = resolveCanonical(url, base, o.params === undefined ? '' : paramsQuery(o.params));

  const requestHeaders = o.headers !== undefined ? checkHeaders(o.headers, 'headers') : undefined;
  let headers: Record<string, string> | Readonly<Record<string, string>> = config.headers
    ? requestHeaders
      ? mergeHeaders(config.headers, requestHeaders)
      : config.headers
    : (requestHeaders ?? EMPTY);

  let body: BodyInit | undefined;
  if (o.body !== undefined && o.body !== null) {
    if (method === 'GET' || method === 'HEAD') {
      throw rangeError('body', `absent on a ${method} request`, o.body);
    }
    const serialized = serializeBody(o.body);
    const type = serialized.contentType;
    body = serialized.body;
    // Names are as the caller wrote them: any case is the caller's Content-Type.
    const name = headerName(headers, 'content-type');
    if (type === null) {
      // A form: fetch writes its Content-Type (a multipart one with its boundary). A client-wide
      // one (`application/json`) would replace it and the server could not parse the body; the
      // request's own still wins.
      // (A request's own is in `headers` under its spelling.)
      if (name && requestHeaders?.[name] === undefined) {
        headers = { ...headers };
        delete (headers as Record<string, string>)[name];
      }
    } else if (type && !name) {
      headers = { ...headers, 'content-type': type };
    }
    if (typeof o.body === 'string' && name) checkJsonText(o.body, headers[name]!);
  }

  const timeout = optionalMs('timeout', o.timeout, config.timeout);
  const deadline = optionalMs('deadline', o.deadline, config.deadline);
  const responseType = checkResponseType(o.responseType, config.responseType);
  const maxResponseBytes = checkMaxBytes(o.maxResponseBytes, config.maxResponseBytes);
  const retry = resolveRetryOptions(o.retry, config.retry);
  const tags =
    o.tags === undefined
      ? NO_TAGS
      : freeze([...checkStrings('tags', o.tags, 'an array of strings')]);
  const priority = o.priority === undefined ? 'normal' : oneOf('priority', o.priority, PRIORITIES);
  let group: string | undefined;
  if (o.scheduler !== undefined) {
    checkObject('scheduler', o.scheduler, undefined, GROUP_KEYS);
    group = o.scheduler.group;
    if (group !== undefined && typeof group !== 'string') {
      throw typeError('scheduler.group', 'a string', group);
    }
  }

  // Only GET is cached, but a bad cache option is reported whatever the method. A stream is
  // read once, by one caller: never cached.
  const cache =
    method === 'GET' || o.cache !== undefined ? resolveRequestCache(config, o.cache) : null;

  const names = sharedNames(method, parsed.pathname, parsed.host);
  return freeze({
    method,
    url: parsed.href,
    fetchURL: parsed.sent ?? parsed.href,
    key: fingerprintOf(
      method,
      keyURL(parsed.href, config.keyBase),
      requestHeaders,
      typeof body === 'string' ? body : undefined,
      responseType,
    ),
    endpoint: names.endpoint,
    path: names.path,
    host: names.host,
    headers,
    body,
    timeout,
    deadline,
    responseType,
    maxResponseBytes,
    fetchInit: resolveFetchInit(o, config.fetchInit),
    cache: method === 'GET' && responseType !== 'stream' ? cache : null,
    retry,
    tags,
    priority,
    group,
  });
}

/** The client's headers with the request's over them, names compared case-insensitively. */
function mergeHeaders(
  base: Readonly<Record<string, string>>,
  over: Record<string, string>,
): Record<string, string> {
  const out = { ...base };
  for (const name in over) setHeader(out, name, over[name]!);
  return out;
}

/** `params` as a query string ('' when it adds nothing). */
function paramsQuery(params: unknown): string {
  checkObject('params', params);
  return buildQuery(params as Parameters<typeof buildQuery>[0]);
}

/**
 * The strings of the last spec built. A burst to one path (`/items?i=1`, `/items?i=2`, ...)
 * shares one endpoint, path and host string instead of holding three per queued request.
 */
const last = { method: '', path: '', endpoint: '', host: '' };

function sharedNames(method: HttpMethod, path: string, host: string): Readonly<typeof last> {
  if (path !== last.path || method !== last.method) {
    last.method = method;
    last.path = path;
    last.endpoint = joinEndpoint(method, path);
  }
  if (host !== last.host) last.host = host;
  return last;
}

/** A string body sent as JSON must be JSON: a malformed one is a TypeError, not a server 400. */
function checkJsonText(text: string, contentType: string): void {
  if (!JSON_TYPE.test(contentType)) return;
  try {
    JSON.parse(text);
  } catch (cause) {
    throw rangeError('body', `JSON text, as its content-type is ${contentType}`, text, cause);
  }
}

const ENABLED: CacheOptions = /* @__PURE__ */ freeze({ enabled: true });

function resolveRequestCache(
  config: ClientConfig,
  opt: RequestOptions['cache'],
): ResolvedCacheOptions | null {
  if (opt === false) return null;
  const base = config.cache;
  // `true` is `{ enabled: true }` over the client's (even when its cache is off).
  const resolved =
    opt === undefined ? base : resolveCacheOptions(opt === true ? ENABLED : opt, base, 'cache');
  return resolved.enabled ? resolved : null;
}
