import type { HttpMethod } from '../types/options';
import { oneOf } from './checks';

/** Every method a request may use (HttpMethod), for validation. */
export const HTTP_METHODS: ReadonlySet<string> = new Set<HttpMethod>([
  'GET',
  'POST',
  'PUT',
  'PATCH',
  'DELETE',
  'HEAD',
  'OPTIONS',
]);

/** An HTTP method, upper-cased: TypeError for a non-string, RangeError for an unknown one. */
export function normalizeMethod(method: unknown): HttpMethod {
  // Fast path: the client's own helpers (get, post, ...) pass canonical names.
  if (HTTP_METHODS.has(method as string)) return method as HttpMethod;
  const upper = typeof method === 'string' ? method.toUpperCase() : method;
  if (HTTP_METHODS.has(upper as string)) return upper as HttpMethod;
  return oneOf('method', method, [...HTTP_METHODS]) as HttpMethod;
}
