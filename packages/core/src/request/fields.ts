import { checkInteger, checkObject, oneOf, rangeError, typeError } from '../internal/checks';
import type { HeadersOption, ResponseBodyType } from '../types/options';

/*
 * The request options a client may also set as defaults for every request (`headers`,
 * `responseType`, `maxResponseBytes`): one check each, used by the client's config and by each
 * request's resolution.
 */

/** A header name fetch sends (an HTTP token). */
const TOKEN = /^[\w!#$%&'*+.^`|~-]+$/;

/**
 * Headers checked, values as strings, names as the caller wrote them (fetch gets them so: a
 * custom fetch reads `init.headers.Authorization`); of names equal but for case, the last one.
 * `field` names the option. A Headers instance is read too (its own keys are none: it would add
 * nothing). A name or value fetch would refuse is a RangeError here rather than a failed (and
 * retried) attempt.
 */
export function checkHeaders(headers: HeadersOption, field: string): Record<string, string> {
  if (typeof Headers !== 'undefined' && headers instanceof Headers) {
    headers = Object.fromEntries(headers);
  }
  checkObject(field, headers, 'an object of header strings');
  const out: Record<string, string> = {};
  for (const name of Object.keys(headers)) {
    const value = (headers as Readonly<Record<string, string | undefined>>)[name];
    if (value === undefined) continue;
    if (typeof value !== 'string' && typeof value !== 'number') {
      throw typeError(member(field, name), 'a string', value);
    }
    const text = String(value);
    // What fetch refuses: a name that is no token; in the value a control character but tab
    // (Node's fetch fails at send on U+0001 too, not only NUL, CR, LF) or one past U+00FF (a
    // header is bytes). It trims surrounding whitespace itself. `__proto__` is dropped by Node's
    // fetch from a headers object, and by an object key: neither keyed nor sent, two requests
    // would share one key.
    if (!TOKEN.test(name) || /^__proto__$/i.test(name) || /[^\t -~\x80-\xff]/.test(text))
      throw rangeError(member(field, name), 'a valid header', value);
    setHeader(out, name, text);
  }
  return out;
}

/**
 * `headers[name] = value`, dropping a name equal to it but for case: fetch would send both (the
 * values joined), and the later one is meant to win.
 */
export function setHeader(headers: Record<string, string>, name: string, value: string): void {
  const other = headerName(headers, name.toLowerCase());
  if (other !== name) delete headers[other];
  headers[name] = value;
}

/**
 * The name in `headers` that lower-cases to `lower`; '' when none ('' is no header name: it is
 * no token, so `headers['']` is undefined and deleting it does nothing).
 */
export function headerName(headers: Readonly<Record<string, string>>, lower: string): string {
  for (const n in headers) {
    // Lengths first: most names differ there, and lower-casing would make a string.
    if (n.length === lower.length && n.toLowerCase() === lower) return n;
  }
  return '';
}

/** `headers["x-a"]`: how a message names a member of an option. */
export function member(field: string, name: string): string {
  return `${field}[${JSON.stringify(name)}]`;
}

/** An array of strings: `expected` says what the array should be, `item` what each element. */
export function checkStrings(
  name: string,
  value: unknown,
  expected: string,
  item = 'a string',
): readonly string[] {
  if (!Array.isArray(value)) throw typeError(name, expected, value);
  for (let i = 0; i < value.length; i++) {
    if (typeof value[i] !== 'string') throw typeError(`${name}[${i}]`, item, value[i]);
  }
  return value;
}

const BODY_TYPES = ['json', 'text', 'arrayBuffer', 'blob', 'stream'] as const;

/**
 * `responseType`: one of the body types; undefined gives `fallback` (the client's, for a
 * request; for the client, undefined: from the Content-Type).
 */
export function checkResponseType(
  value: unknown,
  fallback?: ResponseBodyType,
): ResponseBodyType | undefined {
  return value === undefined ? fallback : oneOf('responseType', value, BODY_TYPES);
}

/**
 * `maxResponseBytes`: an integer >= 0; Infinity (no limit) resolves to undefined, undefined to
 * `fallback` (the client's, for a request).
 */
export function checkMaxBytes(value: unknown, fallback?: number): number | undefined {
  if (value === undefined) return fallback;
  return value === Infinity ? undefined : checkInteger('maxResponseBytes', value, 0, true);
}
