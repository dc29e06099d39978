import { typeError } from '../internal/checks';
import type { ParamValue, QueryParams } from '../types/options';
import { member } from './fields';

const PARAM = 'a string, number or boolean';

/**
 * Serializes params into a query string (no leading `?`). Arrays repeat the key; `null` and
 * `undefined` are dropped (also inside arrays). Keys keep their insertion order.
 *
 * @example buildQuery({ q: 'a b', tag: ['x', 'y'], skip: null }) // 'q=a%20b&tag=x&tag=y'
 */
export function buildQuery(params?: QueryParams | URLSearchParams | null): string {
  if (!params) return '';
  let out = '';
  // A URLSearchParams (or any iterable of pairs) has no own keys: read as a map, it would add
  // nothing.
  for (const [key, values] of Symbol.iterator in params ? params : Object.entries(params)) {
    // One level: an array value repeats the key. A plain value, the common case, is added as it
    // is: wrapping it in an array to flatten was half of a params request's resolve time.
    if (!Array.isArray(values)) out = addParam(out, key, values as ParamValue);
    else for (const value of values) out = addParam(out, key, value);
  }
  return out;
}

/** `out` with `key=value` after it; null and undefined add nothing. */
function addParam(out: string, key: string, value: ParamValue): string {
  if (value === null || value === undefined) return out;
  // An object, a function or a symbol has no query form ("[object Object]", "Symbol(x)" would
  // be sent).
  if (Object(value) === value || typeof value === 'symbol')
    throw typeError(member('params', key), PARAM, value);
  return `${out && `${out}&`}${encodeURIComponent(key)}=${encodeURIComponent(String(value))}`;
}
