import { compileTarget } from './cache/match';
import { asMatchable } from './cache/store';
import { internalsOf } from './client';
import { checkMs, checkNumber, checkObject, rangeError, typeError } from './internal/checks';
import { type KeyParts, parseKey } from './internal/fingerprint';
import { keyBaseOf } from './internal/url';
import { checkStrings, headerName } from './request/fields';
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
  /**
   * When the response was stored, in ms since the epoch on the dehydrating client's clock. Absent
   * from states made before it was added: those are read by their `age` alone.
   */
  readonly storedAt?: number | undefined;
  /** ms the response was fresh for when stored (its cache ttl). */
  readonly ttl: number;
  /**
   * The names of the request headers in the key as the request wrote them (the key lower-cases
   * them): the hydrated entry refetches with them. Absent when all are lower-case.
   */
  readonly headerNames?: readonly string[] | undefined;
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
  include?: InvalidateTarget | undefined;
}

/**
 * The client's cached GET responses as JSON-serializable data, to hand to the browser (embed it
 * in the page with `JSON.stringify(state).replace(/</g, '\\u003c')`) and `hydrate` there.
 * Response headers are included (as pairs), except `set-cookie`. Each entry carries when it was
 * stored (and its age), so what was fresh on the server is fresh in the browser for the rest of
 * its ttl, and a page kept by a cache hands over data as old as it is.
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
    // The key lower-cases header names: the spec has them as the request wrote them.
    const names = Object.keys(parseKey(entry.key)?.headers ?? {}).map(
      (name) => headerName(entry.spec?.headers ?? {}, name) || name,
    );
    const headers: [string, string][] = [];
    // An entry written by hand may be `{ data }` alone (setCached after an optimistic update):
    // it hands over as a 200 with no headers, as hydrate accepts. Its headers may be a plain
    // object or pairs: read through Headers, as a Response would take them.
    const given = response.headers;
    let read: Headers | null | undefined;
    try {
      read = given instanceof Headers || given == null ? given : new Headers(given);
    } catch (cause) {
      throw typeError(
        `dehydrate: the entry ${entry.key}.response.headers`,
        'a Headers, a plain object of header strings or [name, value] pairs',
        given,
        cause,
      );
    }
    read?.forEach((value, name) => {
      if (name !== 'set-cookie') headers.push([name, value]);
    });
    const out: DehydratedEntry = {
      key: entry.key,
      tags: [...entry.tags],
      age: Math.max(0, now - entry.storedAt),
      // Before the clock's epoch (hydrated with an age longer than this clock has run): no
      // time hydrate takes, so the age alone tells it, as in a state made before storedAt.
      storedAt: entry.storedAt >= 0 ? entry.storedAt : undefined,
      ttl: Math.max(0, entry.expiresAt - entry.storedAt),
      headerNames: names.some((name) => name !== name.toLowerCase()) ? names : undefined,
      response: {
        data: response.data,
        status: response.status ?? 200,
        statusText: response.statusText ?? '',
        headers,
      },
    };
    // hydrate's own checks: a value written by hand (status 99) fails here, naming its key,
    // not in the browser.
    checkEntry(out, `dehydrate: the entry ${entry.key}`);
    entries.push(out);
  }
  return { keel: 1, entries };
}

/**
 * Writes a dehydrated state into the client's cache and returns how many entries it wrote. Each
 * entry is stored with the spec this client resolves for its key (so invalidation refetches it
 * here) and with the time it was stored (never newer than its age says: see the README on
 * clocks), so a response that was fresh is answered from the cache without a request. An entry
 * the client already holds newer data for is skipped. A state that is not a DehydratedState is
 * a TypeError (a RangeError for a wrong value) naming the field.
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
  /** A digest of the dehydrated entry's JSON (undefined when JSON cannot hold it): tells a repeat. */
  readonly digest: number | undefined;
}

/**
 * hydrate's first half: checks every entry of `state` and resolves it for `client`, writing
 * nothing (a bad state throws before any write). For `@keel/core/internals`: @keel/react's
 * HydrationBoundary writes some entries during render and the others after the commit.
 */
export function prepareHydration(client: Client, state: DehydratedState): PreparedEntry[] {
  const { cache, clock, baseURL } = internalsOf(client, 'hydrate');
  checkObject('state', state, 'what dehydrate returned ({ keel: 1, entries })');
  if (state.keel !== 1) throw rangeError('state.keel', '1', state.keel);
  if (!Array.isArray(state.entries)) {
    throw typeError('state.entries', 'an array of dehydrated entries', state.entries);
  }
  const now = clock.now();
  // Array.from, not map: a hole is an entry too (undefined, refused below), not skipped.
  return Array.from(state.entries, (entry, i) => {
    const field = `state.entries[${i}]`;
    const parts = checkEntry(entry, field);
    // `GET ` is the key base itself (the baseURL without its trailing slash), as in the store.
    const spec = client.resolve('GET', parts.url || (keyBaseOf(baseURL) ?? ''), {
      headers: spelled(parts.headers, entry.headerNames, field),
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
    let digest: number | undefined;
    try {
      digest = digestOf(JSON.stringify(entry));
    } catch {}
    const first = arrivals(client).byKey.get(spec.key);
    // The stored time counts what the age cannot: the time the state spent in transit or in a
    // cache (a CDN's copy of the page), so an old state is not newer than what the client read
    // since. The age bounds it, as neither clock is known right: a server clock ahead of this
    // one makes the entry no newer than its age says (the time in transit taken as 0).
    const storedAt =
      first !== undefined && first[0] === digest
        ? first[1]
        : // Bounded where ms still count (an age of 1e300 would make any expiry sum round off).
          Math.max(-(2 ** 53), Math.min(now - entry.age, entry.storedAt ?? now));
    return { spec, value, storedAt, ttl: entry.ttl, shown, digest };
  });
}

/**
 * Per client, the last dehydrated entry of each key (a digest of its JSON, not the text: the
 * data is not held twice) and the time its arrival stored
 * it at. An age counts from the entry's arrival: without this, the same state handed again (a
 * page state parsed anew at each render, `hydrate` called twice) would count its ages from the
 * second arrival and put the server's data back over what the client read since.
 */
const arrived = new WeakMap<Client, Arrivals>();

/**
 * A client's arrival records, by key: the entry's digest, the time its arrival stored it at,
 * and when that arrival expires. `pruneAt`: the count of records that prunes them next.
 */
interface Arrivals {
  readonly byKey: Map<string, readonly [digest: number, storedAt: number, expiresAt: number]>;
  pruneAt: number;
}

/**
 * Records kept whatever they protect: past it, the oldest arrivals go first (a repeat of one is
 * then taken for a new arrival). About 100 bytes each.
 */
const RECORD_LIMIT = 10_000;

/**
 * FNV-1a over the UTF-16 code units, mixed with the length: a 32-bit digest. Two different entries
 * of one key that collide (about 1 in 4 billion) would only keep the first one's arrival time.
 */
function digestOf(text: string): number {
  let h = 0x811c9dc5 ^ text.length;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return h;
}

/** How many keys of `client` have an arrival record (for tests: records must stay bounded). */
export function arrivalCount(client: Client): number {
  return arrived.get(client)?.byKey.size ?? 0;
}

function arrivals(client: Client): Arrivals {
  let records = arrived.get(client);
  if (records === undefined) arrived.set(client, (records = { byKey: new Map(), pruneAt: 32 }));
  return records;
}

/**
 * hydrate's second half: writes prepared entries, except where the client holds newer data.
 */
export function writeHydration(client: Client, entries: readonly PreparedEntry[]): number {
  const { cache, clock } = internalsOf(client, 'hydrate');
  const now = clock.now();
  let written = 0;
  const records = arrivals(client);
  const seen = records.byKey;
  for (const { spec, value, storedAt, ttl, digest } of entries) {
    // Expired before it arrived, it is kept as if it expired now (collected gcTime after, unless
    // read): the page was rendered with it, and a first render without it would not match the
    // server's markup. A read finds it stale and reads it again.
    const kept = Math.max(ttl, now - storedAt);
    if (digest !== undefined) {
      // Handed again (a page state parsed anew at each render): its first arrival wrote it, and
      // what the client did since stands: a newer read, and an invalidation or clear too (a
      // mutation's, whose removal a repeat would undo with the data from before it).
      if (seen.get(spec.key)?.[0] === digest) continue;
      seen.set(spec.key, [digest, storedAt, storedAt + kept]);
    }
    const current = cache.get(spec.key);
    if (current !== undefined && current.storedAt >= storedAt) continue;
    cache.set(spec.key, value, { spec, storedAt, ttl: kept });
    written++;
  }
  // A record outlives its entry (a newer read may replace the entry, or an invalidation or a
  // clear remove it: the record must still tell a repeat, or the repeat writes the data from
  // before it back, fresh), until its arrival expired with no entry left (a repeat then writes
  // it stale: read again). Records are only added here: pruned when they doubled since the last
  // prune (amortized, no timer), the oldest past RECORD_LIMIT whatever they keep.
  if (seen.size > records.pruneAt) {
    for (const [key, record] of seen) {
      if (record[2] <= now && cache.peek(key) === undefined) seen.delete(key);
    }
    for (const key of seen.keys()) {
      if (seen.size <= RECORD_LIMIT) break;
      seen.delete(key);
    }
    records.pruneAt = Math.max(2 * seen.size, 2 * cache.size + 32);
  }
  return written;
}

/**
 * The key's `headers` under the names `names` spells them with (a fetched entry's spec has them
 * so); a name not in the key is a RangeError.
 */
function spelled(
  headers: Record<string, string> = {},
  names: readonly string[] | undefined,
  field: string,
): Record<string, string> {
  if (names === undefined) return headers;
  checkStrings(`${field}.headerNames`, names, 'an array of header names').forEach((name, i) => {
    // Own names only: `constructor` or `__proto__` would find Object.prototype's.
    if (!Object.hasOwn(headers, name.toLowerCase())) {
      throw rangeError(`${field}.headerNames[${i}]`, 'the name of a header in the key', name);
    }
  });
  const out: Record<string, string> = {};
  for (const lower in headers) {
    out[names.find((name) => name.toLowerCase() === lower) ?? lower] = headers[lower]!;
  }
  return out;
}

/**
 * hydrate's checks of one entry, which dehydrate makes too (what it hands over, hydrate takes):
 * returns the parts of its key.
 */
function checkEntry(entry: DehydratedEntry, field: string): KeyParts {
  checkObject(field, entry);
  if (typeof entry.key !== 'string') throw typeError(`${field}.key`, 'a string', entry.key);
  const parts = parseKey(entry.key);
  // A mark no request writes would be dropped, the entry stored under another key; a GET
  // request has no body. (An entry written by hand with setCached may have any request's key.)
  if (parts?.method !== 'GET' || parts.body !== undefined) {
    throw rangeError(`${field}.key`, 'the key of a GET request', entry.key);
  }
  if (!Array.isArray(entry.tags))
    throw typeError(`${field}.tags`, 'an array of strings', entry.tags);
  entry.tags.forEach((tag, i) => {
    if (typeof tag !== 'string') throw typeError(`${field}.tags[${i}]`, 'a string', tag);
  });
  checkMs(`${field}.age`, entry.age, Number.MAX_VALUE);
  checkMs(`${field}.ttl`, entry.ttl, Number.MAX_VALUE);
  if (entry.storedAt !== undefined) checkMs(`${field}.storedAt`, entry.storedAt, Number.MAX_VALUE);
  const r = entry.response;
  checkObject(`${field}.response`, r);
  // What a Response can carry (its constructor refuses any other): a fetch never hands over 1xx.
  checkNumber(
    `${field}.response.status`,
    r.status,
    'an HTTP status (an integer from 200 to 599)',
    (n) => Number.isInteger(n) && n >= 200 && n < 600,
  );
  if (typeof r.statusText !== 'string') {
    throw typeError(`${field}.response.statusText`, 'a string', r.statusText);
  }
  if (!Array.isArray(r.headers)) {
    throw typeError(`${field}.response.headers`, 'an array of [name, value] pairs', r.headers);
  }
  return parts;
}
