import { domainToASCII } from 'node:url';
import { parse, serialize } from 'cookie';
import { boolean, checkNumber, checkOptions, keysOf, oneOf, rangeError, typeError } from './checks';

/** Options for `ctx.setCookie`. */
export interface CookieOptions {
  /**
   * `HttpOnly`: hide the cookie from client-side JavaScript. A boolean (a string such as
   * `'true'` is a TypeError, not a cookie sent without the flag).
   *
   * @default false
   */
  httpOnly?: boolean | undefined;
  /**
   * `Secure`: send only over HTTPS. Forced on when `sameSite` is `'none'`, `partitioned` is true
   * and for names starting `__Secure-` / `__Host-` (browsers require it); an explicit `false`
   * beside any of them is a RangeError.
   *
   * @default false
   */
  secure?: boolean | undefined;
  /**
   * `Max-Age`: lifetime in seconds; fractions are floored, `0` or less deletes the cookie. Above
   * 400 days it is sent as 400 days, where browsers cap it anyway (below -400 days as -400 days).
   *
   * @default undefined (a session cookie, unless `expires` is set)
   */
  maxAge?: number | undefined;
  /**
   * `Path`: the paths the browser sends the cookie to. Starts with `/` and is at most 1024 bytes
   * as sent (a browser takes any other as the request's directory): else a RangeError. Non-ASCII
   * characters are sent percent-encoded as UTF-8, as a browser writes them in the request path it
   * matches against (`/café` is sent `/caf%C3%A9`).
   *
   * @default '/'
   */
  path?: string | undefined;
  /**
   * `Domain`: also send the cookie to subdomains of this domain. At most 1024 bytes (a browser
   * ignores a longer one) and not empty (`''` would be a host-only cookie, which is what leaving
   * it out means): else a RangeError. A non-ASCII domain is sent as punycode (`café.example` as
   * `xn--caf-dma.example`), the Host a browser matches it against; one punycode cannot spell is a
   * RangeError.
   *
   * @default undefined (a host-only cookie)
   */
  domain?: string | undefined;
  /**
   * `SameSite`: whether cross-site requests carry the cookie (any case: `'None'` works too).
   *
   * @default 'lax'
   */
  sameSite?: 'lax' | 'strict' | 'none' | undefined;
  /**
   * `Expires`: an absolute expiry; `maxAge` wins in browsers when both are set.
   *
   * @default undefined (not sent)
   */
  expires?: Date | undefined;
  /**
   * `Partitioned` (CHIPS): a third-party cookie kept apart per top-level site. Forces `Secure`,
   * which browsers require of it; `secure: false` beside it is a RangeError.
   *
   * @default false
   */
  partitioned?: boolean | undefined;
  /**
   * `Priority` (Chrome): which cookies go last when a site is over its cookie limit. Any case.
   *
   * @default undefined (not sent: browsers take medium)
   */
  priority?: 'low' | 'medium' | 'high' | undefined;
}

const CRLF = /[\r\n]/g;
/**
 * 400 days: browsers cap Max-Age there (RFC 6265bis §5.6.2). A larger value is sent as this, so
 * `1e21` (which String() writes `1e+21`, not the digits Max-Age takes) stays a lasting cookie.
 */
const MAX_COOKIE_AGE = 400 * 24 * 3600;
const SAME_SITE = ['lax', 'strict', 'none'] as const;
const PRIORITY = ['low', 'medium', 'high'] as const;
/** Every key of CookieOptions: any other is refused (`secured`, `signed`), not dropped. */
const COOKIE_KEYS = keysOf<CookieOptions>({
  httpOnly: 0,
  secure: 0,
  maxAge: 0,
  path: 0,
  domain: 0,
  sameSite: 0,
  expires: 0,
  partitioned: 0,
  priority: 0,
});
/**
 * RFC 6265bis §5.6: a browser ignores a cookie whose name and value (as sent) are over 4096
 * bytes, and an attribute whose value is over 1024 (a Path or Domain left out scopes the cookie
 * to the request's directory, or to the host only).
 */
const MAX_PAIR_BYTES = 4096;
const MAX_ATTRIBUTE_BYTES = 1024;

function strip(value: string): string {
  return value.replace(CRLF, '');
}

/** encodeURIComponent, whose bare URIError for a lone surrogate (JSON can carry `"\ud800"`) names nothing. */
function encoded(what: string, text: string): string {
  try {
    return encodeURIComponent(text);
  } catch (err) {
    throw rangeError(what, 'well-formed Unicode text', text, err);
  }
}

/**
 * One of `allowed` in any case, as `cookie` (and Express, @fastify/cookie) take it: `'None'` is
 * common in the wild. Returned lower case; else oneOf's TypeError or RangeError.
 */
function anyCase<const T extends string>(name: string, given: unknown, allowed: readonly T[]): T {
  const lower = typeof given === 'string' ? given.toLowerCase() : given;
  return allowed.find((v) => v === lower) ?? oneOf(name, given, allowed);
}

const NON_ASCII = /[^\0-\x7f]+/g;
const HAS_NON_ASCII = /[^\0-\x7f]/;

/**
 * A path as a browser matches it: non-ASCII percent-encoded as UTF-8, as the request path it is
 * compared with is (RFC 6265 path-value is ASCII; `cookie` refused it). The rest is left as is:
 * an escape already there stays one.
 */
function encodedPath(path: string): string {
  return path.replace(NON_ASCII, (text) => encoded('setCookie path', text));
}

/**
 * A domain as a browser matches it: the Host it sends is punycode (`café.example` is
 * `xn--caf-dma.example`), so a non-ASCII one is sent so (RFC 6265 domain-value is ASCII;
 * `cookie` refused it as "invalid"). One that no domain name spells is a RangeError.
 */
function asciiDomain(domain: string): string {
  if (!HAS_NON_ASCII.test(domain)) return domain;
  const ascii = domainToASCII(domain);
  if (ascii === '') {
    throw rangeError('setCookie domain', 'an ASCII domain name, or one punycode can spell', domain);
  }
  return ascii;
}

const PARENS = /[()]/g;

/**
 * A name as sent: URL-encoded, and `(` `)` too, which encodeURIComponent leaves but an RFC 6265
 * cookie name (a token) cannot hold; strict parsers refuse the header.
 */
function encodedName(what: string, name: string): string {
  const text = encoded(what, name);
  return text.includes('(') || text.includes(')')
    ? text.replace(PARENS, (c) => (c === '(' ? '%28' : '%29'))
    : text;
}

const PREFIX = /^__(host|secure)-/i;

/**
 * RFC 6265bis §4.1.3: browsers drop, in silence, a `__Secure-` cookie without Secure and a
 * `__Host-` cookie without Secure, with a Domain or with a Path other than `/` (the prefixes
 * match in any case). True when the name has a prefix, so Secure is forced (as for SameSite=None);
 * what cannot be mended is a RangeError naming the option.
 */
function checkPrefix(
  name: string,
  secure: boolean | undefined,
  path: string,
  domain: string | undefined,
): boolean {
  const match = PREFIX.exec(name);
  if (match === null) return false;
  const host = match[1]!.toLowerCase() === 'host';
  const kind = host ? '__Host-' : '__Secure-';
  if (secure === false) {
    throw rangeError('setCookie secure', `true or left out for a ${kind} cookie`, secure);
  }
  if (host && domain !== undefined) {
    throw rangeError('setCookie domain', 'left out for a __Host- cookie', domain);
  }
  if (host && path !== '/') throw rangeError('setCookie path', "'/' for a __Host- cookie", path);
  return true;
}

/**
 * One `Set-Cookie` header value. Name and value are URL-encoded after stripping CR/LF, so neither
 * can inject attributes or headers; `path` and `domain` are stripped too and then validated by
 * `cookie`, whose refusal becomes a RangeError naming the option. What a browser would drop
 * without a word (name and value over 4096 bytes as sent, a Path or Domain over 1024, a Path not
 * starting with `/`) is a RangeError too.
 */
export function serializeCookie(name: string, value: string, options: CookieOptions = {}): string {
  if (typeof name !== 'string') throw typeError('setCookie name', 'a string', name);
  if (typeof value !== 'string') throw typeError('setCookie value', 'a string', value);
  checkOptions('setCookie options', options, COOKIE_KEYS);
  const sameSite = anyCase('setCookie sameSite', options.sameSite ?? 'lax', SAME_SITE);
  const priority =
    options.priority === undefined
      ? undefined
      : anyCase('setCookie priority', options.priority, PRIORITY);
  for (const key of ['path', 'domain'] as const) {
    if (options[key] !== undefined && typeof options[key] !== 'string') {
      throw typeError(`setCookie ${key}`, 'a string', options[key]);
    }
  }
  if (options.maxAge !== undefined) {
    checkNumber('setCookie maxAge', options.maxAge, 'a finite number of seconds', Number.isFinite);
  }
  const expires = options.expires;
  if (expires !== undefined && !(expires instanceof Date)) {
    throw typeError('setCookie expires', 'a Date', expires);
  }
  if (expires !== undefined && Number.isNaN(expires.getTime())) {
    throw rangeError('setCookie expires', 'a valid Date', expires);
  }
  // A string ('true' from a config file or an env var) was sent without the flag.
  const httpOnly = boolean('setCookie httpOnly', options.httpOnly, false);
  const partitioned = boolean('setCookie partitioned', options.partitioned, false);
  const secure =
    options.secure === undefined ? undefined : boolean('setCookie secure', options.secure, false);
  // Browsers drop a Partitioned cookie (CHIPS) and a SameSite=None one without Secure: an
  // explicit `secure: false` beside either is a contradiction, not a flag to override.
  if (secure === false && (partitioned || sameSite === 'none')) {
    const other = partitioned ? 'partitioned: true' : "sameSite: 'none'";
    throw rangeError('setCookie secure', `true or left out with ${other}`, secure);
  }
  const bareName = strip(name);
  if (bareName === '') throw rangeError('setCookie name', 'a non-empty cookie name', name);
  const path = options.path === undefined ? '/' : encodedPath(strip(options.path));
  // RFC 6265bis §5.6.4: a browser takes any other as the request's directory.
  if (path.charCodeAt(0) !== 47) {
    throw rangeError('setCookie path', 'a path starting with "/"', options.path);
  }
  if (path.length > MAX_ATTRIBUTE_BYTES) {
    throw rangeError('setCookie path', `at most ${MAX_ATTRIBUTE_BYTES} bytes`, options.path);
  }
  const domain = options.domain === undefined ? undefined : asciiDomain(strip(options.domain));
  // `cookie` leaves an empty Domain out: a host-only cookie, where a wider one was asked for.
  if (domain === '') {
    const expected = 'a domain name (leave domain out for a host-only cookie)';
    throw rangeError('setCookie domain', expected, options.domain);
  }
  if (domain !== undefined && domain.length > MAX_ATTRIBUTE_BYTES) {
    throw rangeError('setCookie domain', `at most ${MAX_ATTRIBUTE_BYTES} bytes`, options.domain);
  }
  const prefix = checkPrefix(bareName, secure, path, domain);
  let cookie: string;
  try {
    cookie = serialize(encodedName('setCookie name', bareName), strip(value), {
      encode: (text) => encoded('setCookie value', text),
      path,
      domain,
      httpOnly,
      secure: secure === true || sameSite === 'none' || prefix || partitioned,
      partitioned,
      priority,
      // Within ±400 days: a negative age deletes the cookie whatever its size, and -1e21 would be
      // written `-1e+21`, no delta-seconds (a browser ignoring it keeps a session cookie).
      maxAge:
        options.maxAge === undefined
          ? undefined
          : Math.max(Math.min(Math.floor(options.maxAge), MAX_COOKIE_AGE), -MAX_COOKIE_AGE),
      // Sent within 1970..9999: RFC 6265's cookie-date has a 4-digit year (10000 and later were
      // written with 5 or 6), and a browser ignores a year before 1601, which would turn a
      // deleting cookie into a session one. Before 1970 is as past as 1970.
      expires:
        expires &&
        new Date(Math.min(Math.max(expires.getTime(), 0), Date.UTC(9999, 11, 31, 23, 59, 59))),
      sameSite,
    });
  } catch (err) {
    if (err instanceof RangeError) throw err; // ours, from encoded()
    // cookie refuses characters a cookie cannot carry: "option path is invalid: ..."
    const option = /option (\w+) is invalid/.exec((err as Error).message)?.[1] ?? 'options';
    const bad = (options as Record<string, unknown>)[option];
    throw rangeError(`setCookie ${option}`, 'a value a cookie can carry', bad, err);
  }
  // `name=value` comes first, URL-encoded (ASCII: one byte a character), and the attributes
  // after the first `;` (SameSite is always there).
  const pair = cookie.indexOf(';') - 1;
  if (pair > MAX_PAIR_BYTES) {
    const expected = `at most ${MAX_PAIR_BYTES} bytes with the name, URL-encoded (${pair} here)`;
    throw rangeError('setCookie value', expected, value);
  }
  return cookie;
}

/**
 * A cookie-value as read: RFC 6265 §4.1.1 lets it be wrapped in DQUOTEs, which are no part of it
 * (`a="x y"` is `x y`, as Go's net/http and Python's http.cookies read it; `cookie` 1 kept them).
 * Then URL-decoded, as `cookie` does; malformed escapes are left as sent. Quotes sent encoded
 * (`%22x%22`, how setCookie writes them) are the value's own and stay.
 */
function decodeValue(text: string): string {
  const value =
    text.length > 1 && text.charCodeAt(0) === 34 && text.charCodeAt(text.length - 1) === 34
      ? text.slice(1, -1)
      : text;
  if (!value.includes('%')) return value;
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}

/** Parses a `Cookie` header into a null-prototype record (values unquoted and URL-decoded). */
export function parseCookies(header: string | undefined): Record<string, string | undefined> {
  if (header === undefined || header === '') return Object.create(null);
  return parse(header, { decode: decodeValue });
}

/** Looks a cookie up by the name given to `setCookie` (which URL-encodes it), or as sent. */
export function readCookie(
  cookies: Record<string, string | undefined>,
  name: string,
): string | undefined {
  if (typeof name !== 'string') throw typeError('cookie name', 'a string', name);
  // A nameless `=v` pair is no cookie (RFC 6265 §4.1.1: a name is a token, 1 character or more).
  if (name === '') return undefined;
  const key = encodedName('cookie name', name);
  return Object.hasOwn(cookies, key)
    ? cookies[key]
    : Object.hasOwn(cookies, name)
      ? cookies[name]
      : undefined;
}
