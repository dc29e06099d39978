import type { ParamValue, QueryParams } from '../types/options';

/**
 * Serializes params into a query string (no leading `?`). Arrays repeat the key; `null` and
 * `undefined` are dropped (also inside arrays). Keys keep their insertion order.
 *
 * @example buildQuery({ q: 'a b', tag: ['x', 'y'], skip: null }) // 'q=a%20b&tag=x&tag=y'
 */
export function buildQuery(params?: QueryParams | null): string {
  if (!params) return '';
  let out = '';
  for (const key of Object.keys(params)) {
    // One level: an array value repeats the key, a plain value is an array of one.
    for (const value of [params[key]].flat() as ParamValue[]) {
      if (value === null || value === undefined) continue;
      out += `${out && '&'}${encodeURIComponent(key)}=${encodeURIComponent(String(value))}`;
    }
  }
  return out;
}
