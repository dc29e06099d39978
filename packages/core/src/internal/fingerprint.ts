import { checkHeaders } from '../request/fields';
import type { HeadersOption, ResponseBodyType } from '../types/options';
import { canonicalizeURL, keyBaseOf, keyURL, resolveURL } from './url';

export interface FingerprintInput {
  method: string;
  url: string;
  /** As a request's `headers`: a plain object (a value left undefined is not sent) or a Headers. */
  headers?: HeadersOption | undefined;
  body?: unknown;
  /**
   * The client's base URL: a URL under it is written relative to it, as the client's keys are
   * (`GET /users` for `https://api.test/v1/users` with base `https://api.test/v1`).
   * @default none: the URL is written absolute
   */
  base?: string | undefined;
}

/**
 * The cache / dedup key: `METHOD url`, plus the request-level headers (names lower-cased,
 * sorted) and a string body when present. The URL is canonical, and relative to `base` when it
 * is under it (see keyURL): keys do not depend on the origin a client used. Two calls that would
 * send the same bytes get the same key. Client-wide default headers are the same for every
 * request of a client, so the client leaves them out. Headers a request refuses (a value that is
 * no string, a name that is no token) throw the TypeError / RangeError that request gets.
 *
 * @example createFingerprint({ method: 'get', url: 'https://a.test/x?b=2&a=1' }) // 'GET https://a.test/x?a=1&b=2'
 * @example createFingerprint({ method: 'get', url: 'https://a.test/v1/x', base: 'https://a.test/v1' }) // 'GET /x'
 */
export function createFingerprint({ method, url, headers, body, base }: FingerprintInput): string {
  // A base with a query or fragment (a client refuses one) has no URL under it.
  const keyBase = base === undefined || /[?#]/.test(base) ? undefined : keyBaseOf(base);
  let canonical: string;
  try {
    // Joined onto the base as a request's URL is (`users` is `/users` under it, `../x` leaves
    // it), so the key is the one the client writes for a request to `url`.
    canonical = canonicalizeURL(keyBase === undefined ? url : resolveURL(url, base));
  } catch {
    canonical = url;
  }
  const text =
    body === undefined || body === null || typeof body === 'string' ? body : safeJson(body);
  return fingerprintOf(
    method.toUpperCase(),
    keyURL(canonical, keyBase),
    // Read and checked as a request's are: headers a request refuses would name no entry.
    headers && checkHeaders(headers, 'headers'),
    text ?? undefined,
  );
}

/** What a key is made of (the inverse of fingerprintOf). */
export interface KeyParts {
  method: string;
  /** Relative to the client's key base, or absolute. */
  url: string;
  /** The request-level headers written into the key; undefined when none. */
  headers: Record<string, string> | undefined;
  /** The body text written into the key; undefined when none. */
  body: string | undefined;
  /** The `responseType` written into the key; undefined when none. */
  responseType: ResponseBodyType | undefined;
}

/**
 * A key as fingerprintOf writes it: `METHOD url`, then, each optional and in this order, the
 * headers (` |h name:value` lines), the body (` |b text`) and the responseType (` |r type`).
 * The URL (canonical: no space) holds no ` |`, so the first one starts the marks; a header
 * value may hold one (fetch allows it), so header values are read lazily up to the next mark.
 * Groups: method, url, the marks as written, header block, body, responseType. parseKey and the
 * client's hand-written keys both read keys through it (the client takes the groups itself:
 * parseKey's object would add bytes to every app).
 */
export const KEY =
  /^(\S+) ((?:(?! \|).)*)((?: \|h ([^\s:]+:[^\n]*?(?:\n[^\s:]+:[^\n]*?)*))?(?: \|b (.*?))?(?: \|r (json|text|blob|arrayBuffer|stream))?)$/s;

/** Splits a key as fingerprintOf writes it; undefined for anything else (see KEY). */
export function parseKey(key: string): KeyParts | undefined {
  const m = KEY.exec(key);
  if (m === null) return undefined;
  const [, method, url, , block, body, responseType] = m as (string | undefined)[];
  return {
    method: method!,
    url: url!,
    headers: headersOf(block),
    body,
    responseType: responseType as ResponseBodyType | undefined,
  };
}

/** A key's header block (KEY's group 4) as the headers it was written from; undefined for none. */
export function headersOf(block: string | undefined): Record<string, string> | undefined {
  // Each line is `name:value`, split at its first `:` (a name cannot hold one, fetch refuses it).
  return block && Object.fromEntries(block.split('\n').map((line) => line.split(/:(.*)/s)));
}

/** The URL part of a key (relative to the client's key base, or absolute; see parseKey). */
export function urlOfKey(key: string): string {
  const rest = key.slice(key.indexOf(' ') + 1);
  const mark = rest.indexOf(' |');
  return mark === -1 ? rest : rest.slice(0, mark);
}

/**
 * The key from already-canonical parts (the hot path skips re-parsing), header names lower-cased
 * here: they are sent as written, and two spellings of one request share a key.
 */
export function fingerprintOf(
  method: string,
  canonicalUrl: string,
  headers: Record<string, string> | undefined,
  body: string | undefined,
  responseType?: string,
): string {
  let key = `${method} ${canonicalUrl}`;
  if (headers) {
    const names = Object.keys(headers);
    if (names.length > 0) {
      // Names equal but for case come once (checkHeaders keeps the last).
      const pairs = names.map((n) => `${n.toLowerCase()}:${headers[n]}`).sort();
      key += ` |h ${pairs.join('\n')}`;
    }
  }
  if (body !== undefined) key += ` |b ${body}`;
  // The same URL read as text and as JSON are different data.
  if (responseType !== undefined) key += ` |r ${responseType}`;
  return key;
}

function safeJson(body: unknown): string {
  try {
    return JSON.stringify(body) ?? String(body);
  } catch {
    return String(body);
  }
}
