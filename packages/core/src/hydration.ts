import { compileTarget } from './cache/match';
import { asMatchable } from './cache/store';
import { internalsOf } from './client';
import { checkMs, checkNumber, checkObject, rangeError, typeError } from './internal/checks';
import { parseKey } from './internal/fingerprint';
import type { RequestSpec } from './request/resolve';
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
    // An entry due for collection is gone for every other read (getCached, a read, invalidate).
    if (cache.isCollectable(entry, now)) continue;
    if (matcher !== undefined && !matcher(asMatchable(entry))) continue;
    const { response } = entry;
    const headers: [string, string][] = [];
    // An entry written by hand may be `{ data }` alone (setCached after an optimistic update):
    // it hands over as a 200 with no headers, as hydrate accepts.
    response.headers?.forEach((value, name) => {
      if (name !== 'set-cookie') headers.push([name, value]);
    });
    entries.push({
      key: entry.key,
      tags: [...entry.tags],
      age: Math.max(0, now - entry.storedAt),
      ttl: Math.max(0, entry.expiresAt - entry.storedAt),
      response: {
        data: response.data,
        status: response.status ?? 200,
        statusText: response.statusText ?? '',
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
 * is not a DehydratedState is a TypeError (a RangeError for a wrong value) naming the field.
 *
 * @example
 * hydrate(client, window.__KEEL_STATE__);
 */
export function hydrate(client: Client, state: DehydratedState): number {
  return writeHydration(client, prepareHydration(client, state));
}

/** One entry of a DehydratedState, checked and resolved for a client: what hydrate writes. */
export interface PreparedEntry {
  readonly spec: RequestSpec;
  readonly value: ApiResponse;
  readonly storedAt: number;
  readonly ttl: number;
  /**
   * The client holds the key or a subscription wants it (data or not): a component may show it,
   * so writing it notifies someone (HydrationBoundary writes these after the commit).
   */
  readonly shown: boolean;
  /** The dehydrated entry as JSON (undefined when JSON cannot hold it): tells a repeat. */
  readonly text: string | undefined;
}

/**
 * hydrate's first half: checks every entry of `state` and resolves it for `client`, writing
 * nothing (a bad state throws before any write). For `@keel/core/internals`: @keel/react's
 * HydrationBoundary writes some entries during render and the others after the commit.
 */
export function prepareHydration(client: Client, state: DehydratedState): PreparedEntry[] {
  const { cache, clock } = internalsOf(client, 'hydrate');
  checkObject('state', state, 'what dehydrate returned ({ keel: 1, entries })');
  if (state.keel !== 1) throw rangeError('state.keel', '1', state.keel);
  if (!Array.isArray(state.entries)) {
    throw typeError('state.entries', 'an array of dehydrated entries', state.entries);
  }
  const now = clock.now();
  // Array.from, not map: a hole is an entry too (undefined, refused below), not skipped.
  return Array.from(state.entries, (entry, i) => {
    const field = `state.entries[${i}]`;
    checkEntry(entry, field);
    const parts = parseKey(entry.key);
    if (parts.method !== 'GET') {
      throw rangeError(`${field}.key`, 'the key of a GET request', entry.key);
    }
    const spec = client.resolve('GET', parts.url, {
      headers: parts.headers,
      responseType: parts.responseType,
      tags: [...entry.tags],
      cache: { ttl: entry.ttl },
    });
    const { response } = entry;
    let headers: Headers;
    try {
      headers = new Headers(response.headers as [string, string][]);
    } catch (cause) {
      throw typeError(
        `${field}.response.headers`,
        'an array of [name, value] pairs',
        response.headers,
        cause,
      );
    }
    const value: ApiResponse = {
      data: response.data,
      status: response.status,
      statusText: response.statusText,
      headers,
    };
    const shown = cache.get(spec.key) !== undefined || cache.hasInterest(spec.key);
    // The same entry handed again keeps the time its first arrival gave it (see `arrived`).
    let text: string | undefined;
    try {
      text = JSON.stringify(entry);
    } catch {}
    const first = arrivals(client).get(spec.key);
    const storedAt = first !== undefined && first[0] === text ? first[1] : now - entry.age;
    return { spec, value, storedAt, ttl: entry.ttl, shown, text };
  });
}

/**
 * Per client, the last dehydrated entry of each key (as JSON) and the time its arrival stored
 * it at. An age counts from the entry's arrival: without this, the same state handed again (a
 * page state parsed anew at each render, `hydrate` called twice) would count its ages from the
 * second arrival and put the server's data back over what the client read since.
 */
const arrived = new WeakMap<Client, Map<string, readonly [string | undefined, number]>>();

function arrivals(client: Client): Map<string, readonly [string | undefined, number]> {
  let byKey = arrived.get(client);
  if (byKey === undefined) arrived.set(client, (byKey = new Map()));
  return byKey;
}

/** hydrate's second half: writes prepared entries, except where the client holds newer data. */
export function writeHydration(client: Client, entries: readonly PreparedEntry[]): number {
  const { cache } = internalsOf(client, 'hydrate');
  let written = 0;
  const seen = arrivals(client);
  for (const { spec, value, storedAt, ttl, text } of entries) {
    if (text !== undefined) seen.set(spec.key, [text, storedAt]);
    const current = cache.get(spec.key);
    if (current !== undefined && current.storedAt >= storedAt) continue;
    cache.set(spec.key, value, { spec, storedAt, ttl });
    written++;
  }
  return written;
}

function checkEntry(entry: DehydratedEntry, field: string): void {
  checkObject(field, entry);
  if (typeof entry.key !== 'string') throw typeError(`${field}.key`, 'a string', entry.key);
  if (!Array.isArray(entry.tags))
    throw typeError(`${field}.tags`, 'an array of strings', entry.tags);
  entry.tags.forEach((tag, i) => {
    if (typeof tag !== 'string') throw typeError(`${field}.tags[${i}]`, 'a string', tag);
  });
  checkMs(`${field}.age`, entry.age, Number.MAX_VALUE);
  checkMs(`${field}.ttl`, entry.ttl, Number.MAX_VALUE);
  const r = entry.response;
  checkObject(`${field}.response`, r);
  checkNumber(`${field}.response.status`, r.status, 'an HTTP status', Number.isInteger);
  if (typeof r.statusText !== 'string') {
    throw typeError(`${field}.response.statusText`, 'a string', r.statusText);
  }
  if (!Array.isArray(r.headers)) {
    throw typeError(`${field}.response.headers`, 'an array of [name, value] pairs', r.headers);
  }
}
