import { rangeError, typeError } from './checks';

/** The URL starts with a scheme (`https:`, `mailto:`, ...): `ABSOLUTE.test(url)`. */
export const ABSOLUTE = /^[a-zA-Z][a-zA-Z\d+\-.]*:/;

/**
 * Joins a relative URL onto a base. Unlike `new URL(url, base)`, a base path is kept:
 * `resolveURL('/users', 'https://api.test/v1')` is `https://api.test/v1/users`.
 * Absolute URLs are returned unchanged. A relative base (`/api`) is resolved against the
 * document's location first (see resolveBaseURL). Without a base, a relative URL resolves
 * against the page origin in a browser; elsewhere it is a RangeError.
 */
export function resolveURL(url: string, base?: string): string {
  if (typeof url !== 'string') throw typeError('url', 'a URL string', url);
  if (ABSOLUTE.test(url)) return url;
  if (base) {
    const b = ABSOLUTE.test(base) ? base : resolveBaseURL(base);
    if (url === '') return b;
    // One `/` between them; a query or fragment attaches to the base without its trailing `/`
    // (`?a=1` on `https://api.test/v1/` is `https://api.test/v1?a=1`, as on `.../v1`).
    return (b.endsWith('/') ? b.slice(0, -1) : b) + ('/?#'.includes(url[0]!) ? '' : '/') + url;
  }
  const origin = pageOrigin();
  if (origin) return new URL(url, origin).href;
  throw rangeError('url', 'an absolute URL where there is no baseURL and no page', url);
}

/** The page's origin in a browser; undefined elsewhere (and for an opaque `null` origin). */
function pageOrigin(): string | undefined {
  const origin = (globalThis as { location?: { origin?: string } }).location?.origin;
  return origin === 'null' ? undefined : origin || undefined;
}

/** The document's base URL in a browser (`<base href>` or the page's location); undefined elsewhere. */
function documentBase(): string | undefined {
  const g = globalThis as { document?: { baseURI?: string }; location?: { href?: string } };
  const href = g.document?.baseURI ?? g.location?.href;
  return href && href !== 'about:blank' ? href : undefined;
}

/**
 * A `baseURL` as an absolute URL. A relative one (`/api`, `api/v2`) is resolved against the
 * document's location, so `createClient({ baseURL: '/api' })` works in a browser; outside a
 * browser there is nothing to resolve it against, and the RangeError says what to pass instead.
 */
export function resolveBaseURL(baseURL: unknown): string {
  if (typeof baseURL !== 'string') throw typeError('baseURL', 'a URL string', baseURL);
  // A request that sets its own baseURL checks it each time: skip the checks when it repeats.
  if (baseURL === checkedBase) return baseURL;
  // URLs are joined onto it as text: after a query or fragment, `/users` would land in it and
  // every request fetch the base (under one key).
  if (/[?#]/.test(baseURL)) {
    throw rangeError('baseURL', 'a URL without a query or fragment', baseURL);
  }
  // `localhost:3000` parses as scheme `localhost:`: every request then failed.
  const port = /^\w[^/]*:\d/.test(baseURL);
  if (port || !ABSOLUTE.test(baseURL)) {
    const page = port ? undefined : documentBase();
    if (page === undefined) {
      // One example for all: a host lacks its scheme (`api.example.com`), a path its server.
      throw rangeError(
        'baseURL',
        'a full URL, e.g. "https://api.example.com/v1" (a path works only in a browser)',
        baseURL,
      );
    }
    return new URL(baseURL, page).href;
  }
  try {
    new URL(baseURL);
  } catch (cause) {
    throw rangeError('baseURL', 'a valid URL', baseURL, cause);
  }
  checkedBase = baseURL;
  return baseURL;
}

/** The last absolute baseURL that parsed (absolute, so the page it was read on does not matter). */
let checkedBase: string | undefined;

/**
 * What cache keys are written relative to: the canonical `baseURL` without a trailing slash, or
 * in a browser without one, the page origin (which relative URLs resolve against). Undefined
 * when URLs cannot be relative (Node without a baseURL).
 */
export function keyBaseOf(baseURL: string | undefined): string | undefined {
  // (A base with a query or fragment never gets here: resolveBaseURL refuses it, and
  // createFingerprint keys no URL relative to one.) No base at all does not parse either.
  try {
    return canonicalURL((baseURL ?? pageOrigin())!).href.replace(/\/$/, '');
  } catch {
    return undefined;
  }
}

/**
 * The URL as a cache key writes it: relative to the key base when it is under it (`/users?a=1`
 * for `https://api.test/v1/users?a=1` with base `https://api.test/v1`), otherwise absolute. A
 * server client on an internal URL and a browser client on a relative `/api` therefore make the
 * same keys for the same request, so cached data can be handed from one to the other.
 */
export function keyURL(href: string, keyBase: string | undefined): string {
  if (keyBase === undefined || !href.startsWith(keyBase)) return href;
  const next = href.charCodeAt(keyBase.length);
  // The end, `/` or `?`: under the base at a segment boundary (`/v1x` is not under `/v1`).
  if (Number.isNaN(next) || next === 47 || next === 63) return href.slice(keyBase.length);
  return href;
}

/** The absolute URL of a key's URL part (see keyURL). */
export function absoluteKeyURL(url: string, keyBase: string | undefined): string {
  return keyBase === undefined || ABSOLUTE.test(url) ? url : keyBase + url;
}

/**
 * The canonical form used in keys: parsed and re-serialized (lower-case scheme and host, default
 * port dropped, dot segments resolved), query parameters sorted by name (stable, so repeated
 * keys keep their order), fragment removed. A relative URL stays relative (`/users?b=2&a=1` is
 * `/users?a=1&b=2`, `users` stays `users`): keys write URLs under the base so, and a
 * protocol-relative `//host/x` is no exception to parse (a RangeError, as any unparsable URL).
 */
export function canonicalizeURL(url: string): string {
  if (typeof url !== 'string' || ABSOLUTE.test(url) || url.startsWith('//')) {
    return canonicalURL(url).href;
  }
  // Canonicalized under a placeholder origin, then cut back to the form it was written in.
  const slash = url[0] === '/' ? '' : '/';
  return canonicalURL(`http://h${slash}${url}`).href.slice(8 + slash.length);
}

/** Parses once and canonicalizes in place (see canonicalizeURL), in parts. */
function canonicalURL(url: string): ParsedURL {
  let u: URL;
  try {
    u = new URL(url);
  } catch (cause) {
    throw rangeError('url', 'a valid absolute URL', url, cause);
  }
  // Each setter re-serializes the URL: skip the ones that would change nothing (no `#` means
  // no fragment; a query already in canonical form stays as it is).
  if (url.includes('#')) u.hash = '';
  // What fetch is handed: the query as written (only the key sorts it).
  const sent = u.href;
  const search = u.search;
  // `new URL('x?')` keeps a bare `?` in href; it means the same as no query.
  if (search === '') {
    if (url.includes('?')) u.search = '';
  } else if (!isCanonicalQuery(search)) {
    u.searchParams.sort();
    // URLSearchParams serializes spaces as '+'; keep the %20 form so keys match buildQuery's.
    u.search = u.searchParams.toString().replace(/\+/g, '%20');
  }
  return { href: u.href, pathname: u.pathname, host: u.hostname, sent };
}

/**
 * `name=value` pairs of characters URLSearchParams serializes as themselves, joined by `&`: such
 * a query comes back from sort + serialize unchanged when its names are already in order.
 */
const PLAIN_QUERY = /^\?[\w.*-]+=[\w.*-]*(?:&[\w.*-]+=[\w.*-]*)*$/;

function isCanonicalQuery(search: string): boolean {
  if (!PLAIN_QUERY.test(search)) return false;
  // Sorted by name (a stable sort: equal names keep their order). Plain names are ASCII, so
  // string comparison is the code-unit order URLSearchParams.sort uses.
  let prev = '';
  let start = 1;
  while (start < search.length) {
    const eq = search.indexOf('=', start);
    const name = search.slice(start, eq);
    if (name < prev) return false;
    prev = name;
    const amp = search.indexOf('&', eq);
    if (amp === -1) break;
    start = amp + 1;
  }
  return true;
}

export interface ParsedURL {
  href: string;
  pathname: string;
  host: string;
  /**
   * What fetch is handed: `href` with the query as written, not sorted (a signature may cover it
   * as it is). Absent from the unparsed fast paths: their URL is canonical already, so is sent.
   */
  sent?: string;
}

const MEMO_LIMIT = 1000;
const memo = new Map<string, ParsedURL>();

/**
 * Canonicalizes and splits a resolved URL, memoized in a small bounded map so a cache hit on a
 * URL seen before does no URL parsing. The map is cleared wholesale when full: cheap, and hot
 * URLs repopulate it immediately.
 */
export function parseCanonical(resolved: string): ParsedURL {
  const plain = splitCanonical(resolved);
  if (plain !== undefined) return plain;
  const hit = memo.get(resolved);
  if (hit) return hit;
  const parsed = canonicalURL(resolved);
  if (memo.size >= MEMO_LIMIT) memo.clear();
  memo.set(resolved, parsed);
  return parsed;
}

/** resolveCanonical's memo: base + path parts by path (null: not plain), for `pathsBase`. */
const paths = new Map<string, ParsedURL | null>();
let pathsBase: string | undefined;

/**
 * `parseCanonical(resolveURL(url, base))`, with `query` (a request's params, serialized) after
 * the URL's own query and any fragment dropped, without matching the whole URL each time for the
 * usual request URL: a path on the base with a plain query (`/items?i=42`, `/items?i=43`, ...).
 * The base + path part is canonicalized once and memoized (for the last base used; null when it
 * is not plain); the query is checked on its own (isCanonicalQuery). Anything else takes
 * parseCanonical's way. Both give the same parts: a plain URL is its own canonical form, and
 * base + path + plain query is plain exactly when base + path is (the path pattern stops at the
 * `?`; a base with a query or fragment is never plain, so the params follow the URL's own `?`).
 */
export function resolveCanonical(url: string, base: string | undefined, query: string): ParsedURL {
  if (base !== undefined && url.charCodeAt(0) === 47 && !url.includes('#')) {
    const q = url.indexOf('?');
    const path = q < 0 ? url : url.slice(0, q);
    if (base !== pathsBase || paths.size >= MEMO_LIMIT) {
      paths.clear();
      pathsBase = base;
    }
    let prefix = paths.get(path);
    if (prefix === undefined)
      paths.set(path, (prefix = splitCanonical(resolveURL(path, base)) ?? null));
    if (prefix) {
      const search = url.slice(path.length) + (query && (url.includes('?') ? '&' : '?') + query);
      if (search === '') return prefix;
      if (isCanonicalQuery(search)) {
        return { href: prefix.href + search, pathname: prefix.pathname, host: prefix.host };
      }
    }
  }
  let resolved = resolveURL(url, base);
  if (query) {
    // An empty URL is the base as written (`.../v1/?q=1`), unlike `?q=1` on it (`.../v1?q=1`).
    resolved = resolved.split('#', 1)[0]!;
    resolved += (resolved.includes('?') ? '&' : '?') + query;
  }
  return parseCanonical(resolved);
}

/**
 * An http(s) URL that `new URL` would serialize back unchanged, in parts: a lower-case ASCII host
 * whose last label starts with a letter (no IPv4 number or IDNA processing can apply), an
 * optional port, a path of characters kept as they are, and a query. Checked further below
 * (default port, dot segments, punycode, a plain query in order) before being trusted.
 */
const PLAIN_URL =
  /^(https?):\/\/((?:[a-z\d-]+\.)*[a-z][a-z\d-]*)(?::([1-9]\d{0,4}))?(\/[\w\-.~!$&'()*+,;=:@/%]*)(\?.*)?$/;
/**
 * What `new URL` would change in a path: a `.` or `..` segment, literal or percent-encoded (it
 * resolves them), or a `%` not starting an escape (it encodes it).
 */
const PATH_CHANGES = /\/(?:\.|%2e)(?:\.|%2e)?(?:\/|$)|%(?![\da-f]{2})/i;

/**
 * The parts of a URL already in canonical form, without parsing it (undefined when not sure):
 * requests to distinct URLs (`/items?i=1`, `/items?i=2`, ...) would otherwise each cost a
 * WHATWG parse and serialization, and miss the memo.
 */
export function splitCanonical(url: string): ParsedURL | undefined {
  const m = PLAIN_URL.exec(url);
  if (m === null) return undefined;
  const [, scheme, host, port, pathname, search] = m as unknown as [
    string,
    string,
    string,
    string | undefined,
    string,
    string | undefined,
  ];
  if (port !== undefined) {
    const n = Number(port);
    if (n > 65535 || n === (scheme === 'https' ? 443 : 80)) return undefined;
  }
  if (host.includes('xn--') || PATH_CHANGES.test(pathname)) {
    return undefined;
  }
  if (search !== undefined && !isCanonicalQuery(search)) return undefined;
  return { href: url, pathname, host };
}

/** `scheme://host[:port]` of an http(s) URL without userinfo: read off the string. */
const HTTP_ORIGIN = /^https?:\/\/[^/?#@\\]+(?=\/)/;

/** The origin of a canonical URL (a spec's `url`), without parsing it when it is plain http(s). */
export function originOf(canonicalUrl: string): string {
  return HTTP_ORIGIN.exec(canonicalUrl)?.[0] ?? splitURL(canonicalUrl).origin;
}

/** Pathname and origin of any URL (a relative one: its path, origin `''`); `/` and `''` when it does not parse. */
export function splitURL(url: string): { path: string; origin: string } {
  try {
    // A relative URL (a key of a store without keyBase) has its path, under no origin.
    const u = new URL(url, 'http://h/');
    return { path: u.pathname, origin: ABSOLUTE.test(url) ? u.origin : '' };
  } catch {
    return { path: '/', origin: '' };
  }
}
