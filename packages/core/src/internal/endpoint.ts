import { typeError } from './checks';
import { normalizeMethod } from './methods';
import { parseCanonical, resolveURL } from './url';

/**
 * The endpoint key `METHOD pathname` for a controller call, named by the same steps as a
 * request's (resolveURL, then parseCanonical, on a root base): the method upper-cased, the path
 * percent-encoded where the URL parser encodes it (spaces, non-ASCII), dot segments resolved, a
 * query or fragment dropped. So `/a b`, `/a%20b` and a request to `/a b` are one endpoint; an
 * absolute URL names its own pathname.
 */
export function endpointKey(method: unknown, path: unknown): string {
  // A method no request can have is the error a request gets: no circuit or record is made.
  const m = normalizeMethod(method);
  if (typeof path !== 'string') throw typeError('path', 'a path string', path);
  return joinEndpoint(m, parseCanonical(resolveURL(path, 'http://h')).pathname);
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
