import type { HttpMethod } from '../types/options';

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
