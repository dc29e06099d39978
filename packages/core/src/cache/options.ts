import { checkMs } from '../attempt/retry-policy';
import type { CacheOptions, CacheStrategy } from '../types/options';

export interface ResolvedCacheOptions {
  enabled: boolean;
  ttl: number;
  strategy: CacheStrategy;
}

/** The cache configuration of a client created without a `cache` option. */
export const CACHE_DEFAULTS: Readonly<ResolvedCacheOptions> = Object.freeze({
  enabled: true,
  ttl: 30000,
  strategy: 'cache-first',
});

/**
 * Layers cache options over `base`. `gcTime` and `maxEntries` belong to the client's store:
 * given on a request (`clientLevel` false) they are a TypeError saying where they go.
 */
export function resolveCacheOptions(
  options: CacheOptions,
  base: ResolvedCacheOptions,
  field: string,
  clientLevel = false,
): ResolvedCacheOptions {
  if (typeof options !== 'object' || options === null) {
    throw new TypeError(`keel: ${field} must be a boolean or an object, got ${typeof options}`);
  }
  if (!clientLevel && (options.gcTime !== undefined || options.maxEntries !== undefined)) {
    const name = options.gcTime !== undefined ? 'gcTime' : 'maxEntries';
    throw new TypeError(
      `keel: ${field}.${name} is a client option: pass it to createClient({ cache: { ${name} } })`,
    );
  }
  if (
    options.enabled === undefined &&
    options.ttl === undefined &&
    options.strategy === undefined
  ) {
    return base;
  }
  const ttl = options.ttl ?? base.ttl;
  checkMs(`${field}.ttl`, ttl);
  const strategy: CacheStrategy = options.strategy ?? base.strategy;
  if (strategy !== 'cache-first' && strategy !== 'stale-while-revalidate') {
    throw new RangeError(
      `keel: ${field}.strategy must be 'cache-first' or 'stale-while-revalidate', got ${String(strategy)}`,
    );
  }
  return Object.freeze({ enabled: options.enabled ?? base.enabled, ttl, strategy });
}

/** How long an expired, unwatched entry is kept by default: 5 minutes. */
export const DEFAULT_GC_TIME = 5 * 60_000;

/** Validates a gcTime: a number of ms >= 0, `Infinity` allowed (never collect). */
export function checkGcTime(gcTime: unknown): number {
  if (typeof gcTime !== 'number') {
    throw new TypeError(`keel: cache.gcTime must be a number of ms, got ${typeof gcTime}`);
  }
  if (Number.isNaN(gcTime) || gcTime < 0) {
    throw new RangeError(
      `keel: cache.gcTime must be a number of ms >= 0 (or Infinity), got ${String(gcTime)}`,
    );
  }
  return gcTime;
}
