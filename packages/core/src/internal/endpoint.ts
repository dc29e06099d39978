import { rangeError, typeError } from './checks';

/**
 * The endpoint key `METHOD pathname` for a controller call: the method is upper-cased and a query
 * or fragment on the path is ignored, like the key the pipeline computes for a request.
 */
export function endpointKey(method: unknown, path: unknown): string {
  if (typeof method !== 'string' || method === '') {
    throw (method === '' ? rangeError : typeError)('method', 'an HTTP method', method);
  }
  if (typeof path !== 'string') throw typeError('path', 'a path string', path);
  return joinEndpoint(method.toUpperCase(), path.split(/[?#]/, 1)[0]!);
}

/** `METHOD pathname` from parts already normalized (request resolution). */
export function joinEndpoint(method: string, pathname: string): string {
  return `${method} ${pathname}`;
}

/** Splits `METHOD pathname` (the method never contains a space). */
export function splitEndpoint(endpoint: string): { method: string; path: string } {
  const i = endpoint.indexOf(' ');
  return i === -1
    ? { method: endpoint, path: '' }
    : { method: endpoint.slice(0, i), path: endpoint.slice(i + 1) };
}
