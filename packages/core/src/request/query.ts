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
    // One level: an array value repeats the key, a plain value is an array of one.
    for (const value of [values].flat() as ParamValue[]) {
      if (value === null || value === undefined) continue;
      // An object or a function has no query form ("[object Object]" would be sent).
      if (Object(value) === value) throw typeError(member('params', key), PARAM, value);
      out += `${out && '&'}${encodeURIComponent(key)}=${encodeURIComponent(String(value))}`;
    }
  }
  return out;
}
