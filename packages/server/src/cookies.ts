import { parse, serialize } from 'cookie';

/** Options for `ctx.setCookie`. Defaults: `path: '/'`, `sameSite: 'lax'`. */
export interface CookieOptions {
  /** Hide the cookie from client-side JavaScript. */
  httpOnly?: boolean;
  /** Send only over HTTPS. Forced on when `sameSite` is `'none'` (browsers require it). */
  secure?: boolean;
  /** Lifetime in seconds (`Max-Age`); fractions are floored, `0` deletes the cookie. */
  maxAge?: number;
  /** `Path`, default `'/'`. */
  path?: string;
  /** `Domain`; omit for a host-only cookie. */
  domain?: string;
  /** `SameSite`, default `'lax'`. */
  sameSite?: 'lax' | 'strict' | 'none';
  /** Absolute expiry (`Expires`); `maxAge` wins in browsers when both are set. */
  expires?: Date;
}

const CRLF = /[\r\n]/g;

function strip(value: string): string {
  return value.replace(CRLF, '');
}

/**
 * One `Set-Cookie` header value. Name and value are URL-encoded after stripping CR/LF, so neither
 * can inject attributes or headers; `path` and `domain` are stripped too and then validated by
 * `cookie`, which throws a TypeError on characters that are not allowed.
 */
export function serializeCookie(name: string, value: string, options: CookieOptions = {}): string {
  const sameSite = options.sameSite ?? 'lax';
  return serialize(encodeURIComponent(strip(String(name))), strip(String(value)), {
    encode: encodeURIComponent,
    path: options.path === undefined ? '/' : strip(options.path),
    domain: options.domain === undefined ? undefined : strip(options.domain),
    httpOnly: options.httpOnly === true,
    secure: options.secure === true || sameSite === 'none',
    maxAge: options.maxAge === undefined ? undefined : Math.floor(options.maxAge),
    expires: options.expires,
    sameSite,
  });
}

/** Parses a `Cookie` header into a null-prototype record (values URL-decoded). */
export function parseCookies(header: string | undefined): Record<string, string | undefined> {
  if (header === undefined || header === '') return Object.create(null);
  return parse(header);
}

/** Looks a cookie up by the name given to `setCookie` (which URL-encodes it), or as sent. */
export function readCookie(
  cookies: Record<string, string | undefined>,
  name: string,
): string | undefined {
  const encoded = encodeURIComponent(name);
  return Object.hasOwn(cookies, encoded)
    ? cookies[encoded]
    : Object.hasOwn(cookies, name)
      ? cookies[name]
      : undefined;
}
