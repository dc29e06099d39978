import { checkMs, resolveRetryOptions } from '../attempt/retry-policy';
import { MAX_TIMER_MS } from '../internal/clock';
import { joinEndpoint } from '../internal/endpoint';
import { HTTP_METHODS } from '../internal/methods';
import type {
  HttpMethod,
  IntelligenceRecommendation,
  RequestOptions,
  RequestSpec,
  ResolvedCacheOptions,
} from '../types';
import { serializeBody } from './body';
import { resolveFetchInit } from './fetch-init';
import { fingerprintOf } from './fingerprint';
import {
  type ClientConfig,
  checkMaxBytes,
  checkResponseType,
  lowerCaseHeaders,
  resolveCacheOptions,
} from './options';
import { buildQuery } from './query';
import { parseCanonical, resolveURL } from './url';

const METHODS = HTTP_METHODS;
const NO_TAGS: readonly string[] = Object.freeze([]);
const NO_HEADERS: Readonly<Record<string, string>> = Object.freeze({});

export function normalizeMethod(method: unknown): HttpMethod {
  // Fast path: the client's own helpers (get, post, ...) pass canonical names.
  if (METHODS.has(method as string)) return method as HttpMethod;
  const m = typeof method === 'string' ? method.toUpperCase() : method;
  if (typeof m !== 'string' || !METHODS.has(m)) {
    throw new TypeError(
      `keel: unknown HTTP method ${JSON.stringify(method)}; expected one of ${[...METHODS].join(', ')}`,
    );
  }
  return m as HttpMethod;
}

/** Reads take part in dedup; mutations are never coalesced. */
export function isDedupable(method: HttpMethod): boolean {
  return method === 'GET' || method === 'HEAD' || method === 'OPTIONS';
}

/** A request later identical ones may join: a read whose body is not a stream (read once). */
export function isJoinable(spec: RequestSpec): boolean {
  return isDedupable(spec.method) && spec.responseType !== 'stream';
}

/**
 * Builds the frozen RequestSpec for one call: header merge (request wins, names lower-cased),
 * base URL, params, canonical URL, body serialization, fingerprint, endpoint key, and the
 * timeout / cache / retry layering (request option, then recommendation, then client default).
 * Every problem is a TypeError or RangeError naming the field.
 */
export function resolveSpec(
  config: ClientConfig,
  method: HttpMethod,
  url: string,
  options: RequestOptions | undefined,
  recommendation: IntelligenceRecommendation | undefined,
): RequestSpec {
  const spec = resolveOwn(config, method, url, options);
  return recommendation ? applyRecommendation(spec, options, recommendation) : spec;
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
  const timeout =
    options?.timeout === undefined && recommendation.timeout !== undefined
      ? spec.timeout > 0
        ? Math.min(recommendation.timeout, spec.timeout)
        : recommendation.timeout
      : spec.timeout;
  const requested = options?.cache;
  const strategyGiven =
    typeof requested === 'object' && requested !== null && requested.strategy !== undefined;
  const cache =
    spec.cache &&
    recommendation.strategy !== undefined &&
    !strategyGiven &&
    recommendation.strategy !== spec.cache.strategy
      ? Object.freeze({ ...spec.cache, strategy: recommendation.strategy })
      : spec.cache;
  if (timeout === spec.timeout && cache === spec.cache) return spec;
  return Object.freeze({ ...spec, timeout, cache });
}

/** The spec from the request's options and the client defaults alone. */
function resolveOwn(
  config: ClientConfig,
  method: HttpMethod,
  url: string,
  options: RequestOptions | undefined,
): RequestSpec {
  if (typeof url !== 'string') throw new TypeError(`keel: url must be a string, got ${typeof url}`);
  let resolved = resolveURL(url, options?.baseURL ?? config.baseURL);
  if (options?.params !== undefined) {
    if (typeof options.params !== 'object' || options.params === null) {
      throw new TypeError(`keel: params must be an object, got ${typeof options.params}`);
    }
    const query = buildQuery(options.params);
    if (query !== '') {
      const hash = resolved.indexOf('#');
      if (hash !== -1) resolved = resolved.slice(0, hash);
      resolved += (resolved.includes('?') ? '&' : '?') + query;
    }
  }
  const parsed = parseCanonical(resolved);

  const requestHeaders = options?.headers
    ? lowerCaseHeaders(options.headers, 'headers')
    : undefined;
  let headers: Record<string, string> | Readonly<Record<string, string>> = config.headers
    ? requestHeaders
      ? { ...config.headers, ...requestHeaders }
      : config.headers
    : (requestHeaders ?? NO_HEADERS);

  let body: BodyInit | undefined;
  if (options?.body !== undefined && options.body !== null) {
    if (method === 'GET' || method === 'HEAD') {
      throw new TypeError(`keel: a ${method} request cannot have a body`);
    }
    const serialized = serializeBody(options.body);
    body = serialized.body;
    if (serialized.contentType && headers['content-type'] === undefined) {
      headers = { ...headers, 'content-type': serialized.contentType };
    }
    if (typeof options.body === 'string') checkJsonText(options.body, headers['content-type']);
  }

  const timeout = options?.timeout ?? config.timeout;
  if (options?.timeout !== undefined) checkMs('timeout', options.timeout, MAX_TIMER_MS);
  const deadline = options?.deadline ?? config.deadline;
  if (options?.deadline !== undefined) checkMs('deadline', options.deadline, MAX_TIMER_MS);
  const responseType =
    options?.responseType === undefined
      ? config.responseType
      : checkResponseType(options.responseType);
  const maxResponseBytes =
    options?.maxResponseBytes === undefined
      ? config.maxResponseBytes
      : checkMaxBytes(options.maxResponseBytes);

  const retry =
    options?.retry === undefined ? config.retry : resolveRetryOptions(options.retry, config.retry);

  let tags = NO_TAGS;
  if (options?.tags !== undefined) {
    if (!Array.isArray(options.tags) || options.tags.some((t) => typeof t !== 'string')) {
      throw new TypeError('keel: tags must be an array of strings');
    }
    tags = Object.freeze([...options.tags]);
  }

  const priority = options?.priority ?? 'normal';
  if (priority !== 'high' && priority !== 'normal' && priority !== 'low') {
    throw new RangeError(
      `keel: priority must be 'high', 'normal' or 'low', got ${String(priority)}`,
    );
  }

  // Only GET is cached, but a bad cache option is reported whatever the method. A stream is
  // read once, by one caller: never cached.
  const cache =
    method === 'GET' || options?.cache !== undefined ? resolveRequestCache(config, options) : null;
  const cacheable = method === 'GET' && responseType !== 'stream';

  const names = sharedNames(method, parsed.pathname, parsed.host);
  return Object.freeze({
    method,
    url: parsed.href,
    key: fingerprintOf(
      method,
      parsed.href,
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
    fetchInit:
      options === undefined ? config.fetchInit : resolveFetchInit(options, config.fetchInit),
    cache: cacheable ? cache : null,
    retry,
    tags,
    priority,
    group: options?.scheduler?.group,
  });
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

const JSON_TYPE = /[/+]json\b/i;

/** A string body sent as JSON must be JSON: a malformed one is a TypeError, not a server 400. */
function checkJsonText(text: string, contentType: string | undefined): void {
  if (contentType === undefined || !JSON_TYPE.test(contentType)) return;
  try {
    JSON.parse(text);
  } catch (cause) {
    throw new TypeError(
      `keel: request body is not valid JSON but its content-type is ${contentType}: ${(cause as Error).message}`,
      { cause },
    );
  }
}

function resolveRequestCache(
  config: ClientConfig,
  options: RequestOptions | undefined,
): ResolvedCacheOptions | null {
  const opt = options?.cache;
  if (opt === false) return null;
  const base = config.cache;
  const resolved =
    opt === undefined || opt === true
      ? opt === true && !base.enabled
        ? { ...base, enabled: true }
        : base
      : resolveCacheOptions(opt, base, 'cache');
  return resolved.enabled ? resolved : null;
}
