import { compileTarget } from './cache/match';
import { asMatchable } from './cache/store';
import { internalsOf } from './client';
import { parseKey } from './internal/fingerprint';
import type { ApiResponse, Client, InvalidateTarget } from './types/client';

/**
 * A client's cache as plain JSON-serializable data: made on the server by `dehydrate`, put into
 * the browser client by `hydrate`. Keys do not depend on the origin the server used (see the
 * Key paragraph of the README), so the browser's queries find the entries.
 */
export interface DehydratedState {
  /** Format version. */
  readonly keel: 1;
  readonly entries: readonly DehydratedEntry[];
}

/** One cached GET response. */
export interface DehydratedEntry {
  /** The cache key (relative to the client's base when under it). */
  readonly key: string;
  readonly tags: readonly string[];
  /** ms since the response was stored, when dehydrated. */
  readonly age: number;
  /** ms the response was fresh for when stored (its cache ttl). */
  readonly ttl: number;
  readonly response: DehydratedResponse;
}

export interface DehydratedResponse {
  /** The parsed body: must be what JSON can carry for the state to travel as JSON. */
  readonly data: unknown;
  readonly status: number;
  readonly statusText: string;
  /** Header name / value pairs (`set-cookie` is left out: it would put cookies into the page). */
  readonly headers: readonly (readonly [string, string])[];
}

export interface DehydrateOptions {
  /**
   * Which entries to include, as an invalidation target (a path, an array of tags or a
   * predicate over CacheMeta).
   * @default every entry
   */
  include?: InvalidateTarget;
}

/**
 * The client's cached GET responses as JSON-serializable data, to hand to the browser (embed it
 * in the page with `JSON.stringify(state).replace(/</g, '\\u003c')`) and `hydrate` there.
 * Response headers are included (as pairs), except `set-cookie`. Each entry keeps its age, so
 * what was fresh on the server is fresh in the browser for the rest of its ttl.
 *
 * @example
 * await client.get('/todos');
 * const state = dehydrate(client);
 */
export function dehydrate(client: Client, options?: DehydrateOptions): DehydratedState {
  const { cache, clock, baseURL } = internalsOf(client, 'dehydrate');
  const matcher =
    options?.include === undefined ? undefined : compileTarget(options.include, baseURL, 'include');
  const now = clock.now();
  const entries: DehydratedEntry[] = [];
  for (const entry of cache.values()) {
    if (matcher !== undefined && !matcher(asMatchable(entry))) continue;
    const { response } = entry;
    const headers: [string, string][] = [];
    response.headers.forEach((value, name) => {
      if (name !== 'set-cookie') headers.push([name, value]);
    });
    entries.push({
      key: entry.key,
      tags: [...entry.tags],
      age: Math.max(0, now - entry.storedAt),
      ttl: Math.max(0, entry.expiresAt - entry.storedAt),
      response: {
        data: response.data,
        status: response.status,
        statusText: response.statusText,
        headers,
      },
    });
  }
  return { keel: 1, entries };
}

/**
 * Writes a dehydrated state into the client's cache and returns how many entries it wrote. Each
 * entry is stored with the spec this client resolves for its key (so invalidation refetches it
 * here) and with the age it had, so a response that was fresh is answered from the cache
 * without a request. An entry the client already holds newer data for is skipped. A state that
 * is not a DehydratedState is a TypeError naming the field.
 *
 * @example
 * hydrate(client, window.__KEEL_STATE__);
 */
export function hydrate(client: Client, state: DehydratedState): number {
  const { cache, clock } = internalsOf(client, 'hydrate');
  if (typeof state !== 'object' || state === null || !Array.isArray(state.entries)) {
    throw new TypeError(
      `keel: hydrate \`state\` must be what dehydrate returned ({ keel: 1, entries }), got ${state === null ? 'null' : typeof state}`,
    );
  }
  if (state.keel !== 1) {
    throw new RangeError(`keel: hydrate \`state.keel\` must be 1, got ${String(state.keel)}`);
  }
  const now = clock.now();
  let written = 0;
  state.entries.forEach((entry, i) => {
    const field = `state.entries[${i}]`;
    checkEntry(entry, field);
    const parts = parseKey(entry.key);
    if (parts.method !== 'GET') {
      throw new RangeError(`keel: hydrate \`${field}.key\` must be a GET key, got "${entry.key}"`);
    }
    const spec = client.resolve('GET', parts.url, {
      headers: parts.headers,
      tags: [...entry.tags],
      cache: { ttl: entry.ttl },
    });
    const storedAt = now - entry.age;
    const current = cache.get(spec.key);
    if (current !== undefined && current.storedAt >= storedAt) return;
    const { response } = entry;
    const value: ApiResponse = {
      data: response.data,
      status: response.status,
      statusText: response.statusText,
      headers: new Headers(response.headers as [string, string][]),
    };
    cache.set(spec.key, value, { spec, storedAt, ttl: entry.ttl });
    written++;
  });
  return written;
}

function checkEntry(entry: DehydratedEntry, field: string): void {
  const fail = (name: string, expected: string, got: unknown): never => {
    throw new TypeError(
      `keel: hydrate \`${field}${name}\` must be ${expected}, got ${JSON.stringify(got) ?? typeof got}`,
    );
  };
  if (typeof entry !== 'object' || entry === null) fail('', 'an object', entry);
  if (typeof entry.key !== 'string') fail('.key', 'a string', entry.key);
  if (!Array.isArray(entry.tags) || entry.tags.some((t) => typeof t !== 'string')) {
    fail('.tags', 'an array of strings', entry.tags);
  }
  if (!(Number.isFinite(entry.age) && entry.age >= 0)) fail('.age', 'a number >= 0', entry.age);
  if (!(Number.isFinite(entry.ttl) && entry.ttl >= 0)) fail('.ttl', 'a number >= 0', entry.ttl);
  const r = entry.response;
  if (typeof r !== 'object' || r === null) fail('.response', 'an object', r);
  if (!Number.isInteger(r.status)) fail('.response.status', 'an integer', r.status);
  if (typeof r.statusText !== 'string') fail('.response.statusText', 'a string', r.statusText);
  if (!Array.isArray(r.headers))
    fail('.response.headers', 'an array of [name, value] pairs', r.headers);
}
