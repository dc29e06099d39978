import type { ServerResponse } from 'node:http';
import { type SendWatch, watchEnded } from './send-watch';

/** RFC 9110 §6.4.1: a 204, 205 or 304 response carries no content. */
export function isBodiless(status: number): boolean {
  return status === 204 || status === 205 || status === 304;
}

/**
 * Writes the head of a bodiless response (`head`: a flat name/value list) and ends it. A 205 says
 * "no content" with Content-Length: 0 (§15.3.6): without it Node sends a body, which a keep-alive
 * client would read as the next answer. A 204 has no Content-Length at all (RFC 9110 §8.6): one a
 * handler set is dropped, as a proxy could read that many bytes of the next response for it (a
 * 304's stays: it tells the length of the representation). Watched as any one-piece reply
 * (`watchEnded`).
 */
export function endBodiless(
  res: ServerResponse,
  status: number,
  head: string[],
  watch: SendWatch,
): void {
  if (status !== 304) res.removeHeader('content-length');
  res.writeHead(status, status === 205 ? [...head, 'content-length', '0'] : head);
  res.end();
  watchEnded(res, watch);
}
