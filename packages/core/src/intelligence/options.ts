import { checkBoolean, checkObject } from '../internal/checks';
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
  checkObject('intelligence', options);
  const resolved = {
    enabled: options.enabled ?? INTELLIGENCE_DEFAULTS.enabled,
    adaptiveTimeout: options.adaptiveTimeout ?? INTELLIGENCE_DEFAULTS.adaptiveTimeout,
    adaptiveStaleWhileRevalidate:
      options.adaptiveStaleWhileRevalidate ?? INTELLIGENCE_DEFAULTS.adaptiveStaleWhileRevalidate,
  };
  for (const field of ['enabled', 'adaptiveTimeout', 'adaptiveStaleWhileRevalidate'] as const) {
    checkBoolean(`intelligence.${field}`, resolved[field]);
  }
  return Object.freeze(resolved);
}
