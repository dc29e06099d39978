import {
  checkBoolean,
  checkMs,
  checkObject,
  keysOf,
  oneOf,
  typeError,
  withDefaults,
} from '../internal/checks';
import { freeze } from '../internal/freeze';
import type { CacheOptions, CacheStrategy } from '../types/options';

export interface ResolvedCacheOptions {
  enabled: boolean;
  ttl: number;
  strategy: CacheStrategy;
}

/** The cache configuration of a client created without a `cache` option. */
export const CACHE_DEFAULTS: Readonly<ResolvedCacheOptions> = /* @__PURE__ */ freeze({
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
  checkObject(field, options, 'true, false or an object', CACHE_KEYS);
  if (!clientLevel && (options.gcTime !== undefined || options.maxEntries !== undefined)) {
    const name = options.gcTime !== undefined ? 'gcTime' : 'maxEntries';
    throw typeError(
      `${field}.${name}`,
      `absent on a request (it is a client option: createClient({ cache: { ${name} } }))`,
      options[name],
    );
  }
  if (
    options.enabled === undefined &&
    options.ttl === undefined &&
    options.strategy === undefined
  ) {
    return base;
  }
  // Only undefined is absent: a null the caller wrote is checked, and refused.
  const given = withDefaults(options, base);
  const ttl = checkMs(`${field}.ttl`, given.ttl, Number.MAX_VALUE);
  const strategy: CacheStrategy = oneOf(`${field}.strategy`, given.strategy, [
    'cache-first',
    'stale-while-revalidate',
  ]);
  const enabled = checkBoolean(`${field}.enabled`, given.enabled);
  return freeze({ enabled, ttl, strategy });
}

/**
 * The client-only cache options (the store's): an expired, unwatched entry is kept 5 minutes;
 * the number of entries is unbounded.
 */
export const CACHE_STORE_DEFAULTS = /* @__PURE__ */ freeze({
  gcTime: 5 * 60_000,
  maxEntries: Infinity,
});

const CACHE_KEYS = /* @__PURE__ */ keysOf('gcTime maxEntries', CACHE_DEFAULTS);
