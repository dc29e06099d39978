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
  for (const key in params) {
    if (!Object.hasOwn(params, key)) continue;
    const value = params[key];
    if (Array.isArray(value)) {
      for (const v of value as readonly ParamValue[]) out = append(out, key, v);
    } else {
      out = append(out, key, value as ParamValue);
    }
  }
  return out;
}

function append(out: string, key: string, value: ParamValue): string {
  if (value === null || value === undefined) return out;
  const pair = `${encodeURIComponent(key)}=${encodeURIComponent(String(value))}`;
  return out === '' ? pair : `${out}&${pair}`;
}
