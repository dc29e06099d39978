import type { Client, RequestOptions } from '@keel/core';

/**
 * The request header naming the tab (the client) that made a change. `@keel/server`'s
 * `hub.invalidate(target, { source: ctx })` copies it into the `keel:invalidate` event, and the
 * tab that sent it skips that event: its own mutation already invalidated.
 */
export const SOURCE_HEADER = 'x-keel-source';

const ids = new WeakMap<Client, string>();

/** This client's source id: random, made on first use, one per client (so per tab). */
export function sourceIdOf(client: Client): string {
  let id = ids.get(client);
  if (id === undefined) {
    // getRandomValues works in every browser context and in Node; randomUUID needs a secure one.
    // React Native has neither without a polyfill: the id only tells tabs apart, so Math.random
    // does (throwing here dropped every keel:invalidate event).
    const bytes = new Uint8Array(12).map(() => Math.random() * 256);
    globalThis.crypto?.getRandomValues(bytes);
    id = Array.from(bytes, (b) => b.toString(36).padStart(2, '0')).join('');
    ids.set(client, id);
  }
  return id;
}

/**
 * `{ 'x-keel-source': <id> }` for `client`. `useMutation` sends it by itself on same-origin
 * requests; add it to a cross-origin mutation's `headers` (and allow the header in the server's
 * CORS answer) to have the echo recognised there too.
 *
 * @example
 * useMutation('POST', 'https://api.example.com/todos', { headers: sourceHeaders(client) });
 */
export function sourceHeaders(client: Client): Record<string, string> {
  return { [SOURCE_HEADER]: sourceIdOf(client) };
}

/**
 * Adds the source header to a mutation's options when its URL has the page's origin. Never on a
 * cross-origin request: a custom header there makes the browser send a CORS preflight first, and
 * the server may not allow it. Outside a browser (no `location`) nothing is added.
 */
export function addSourceHeader(client: Client, url: string, request: RequestOptions): void {
  const origin = (globalThis as { location?: { origin?: string } }).location?.origin;
  if (origin === undefined || origin === 'null') return;
  let target: string;
  try {
    // With the request's options: its own `baseURL` may take it to another origin.
    target = new URL(client.resolve('GET', url, request).url).origin;
  } catch {
    return; // the request itself reports the bad URL
  }
  if (target !== origin) return;
  // First, so a source header of the mutation's own wins (the core takes the last of names
  // equal but for case). A Headers object (the core takes one) as a plain one: spread, it would
  // be `{}`, every header of the mutation (its authorization) dropped.
  const given = request.headers;
  request.headers = {
    [SOURCE_HEADER]: sourceIdOf(client),
    ...(given instanceof Headers ? Object.fromEntries(given) : given),
  };
}
