import type { RequestSpec } from '../request/resolve';
import type { ApiResponse, CacheMeta } from '../types/client';

/** One cached GET response, with what it takes to refetch it after invalidation. */
export interface CacheEntry {
  readonly key: string;
  /** URL pathname, for path invalidation. */
  readonly path: string;
  /** Scheme + host + port, for invalidation targets written as absolute URLs. */
  readonly origin: string;
  response: ApiResponse;
  /** The full request description; undefined for entries written by hand without one. */
  readonly spec: RequestSpec | undefined;
  /** Frozen; shared with the spec it was written from (copied only for a CacheMeta). */
  readonly tags: readonly string[];
  storedAt: number;
  expiresAt: number;
}

/** The spec's `RemovedEntry`: an entry `invalidate` removed (its key is in the result). */
export type RemovedEntry = CacheEntry;

export function metaOf(entry: CacheEntry): CacheMeta {
  return {
    key: entry.key,
    // A copy: the predicate that reads it may keep or change it.
    tags: [...entry.tags],
    storedAt: entry.storedAt,
    expiresAt: entry.expiresAt,
  };
}

/**
 * Not expired at `now`, and stored no later: an entry stored after `now` (the clock stepped back)
 * is not fresh, or it would stay so for as long as the clock was set back.
 */
export function isFreshAt(entry: CacheEntry, now: number): boolean {
  return entry.expiresAt > now && now >= entry.storedAt;
}
