import type { IntelligenceOptions } from '../types/options';

/** Intelligence options after defaults and validation; fixed at client creation. */
export interface ResolvedIntelligenceOptions {
  readonly enabled: boolean;
  readonly adaptiveTimeout: boolean;
  readonly adaptiveStaleWhileRevalidate: boolean;
}

export const INTELLIGENCE_DEFAULTS: ResolvedIntelligenceOptions = Object.freeze({
  enabled: true,
  adaptiveTimeout: false,
  adaptiveStaleWhileRevalidate: false,
});

/** Resolves `ClientOptions.intelligence` once; a bad value throws a TypeError naming the field. */
export function resolveIntelligenceOptions(
  options: IntelligenceOptions = {},
): ResolvedIntelligenceOptions {
  if (typeof options !== 'object' || options === null) {
    throw new TypeError(
      `keel: intelligence must be an object, got ${options === null ? 'null' : typeof options}`,
    );
  }
  const resolved = {
    enabled: options.enabled ?? true,
    adaptiveTimeout: options.adaptiveTimeout ?? false,
    adaptiveStaleWhileRevalidate: options.adaptiveStaleWhileRevalidate ?? false,
  };
  for (const field of ['enabled', 'adaptiveTimeout', 'adaptiveStaleWhileRevalidate'] as const) {
    if (typeof resolved[field] !== 'boolean') {
      throw new TypeError(
        `keel: intelligence.${field} must be a boolean, got ${typeof options[field]}`,
      );
    }
  }
  return Object.freeze(resolved);
}
