import { checkBoolean, checkObject, keysOf, withDefaults } from '../internal/checks';
import { freeze } from '../internal/freeze';
import type { IntelligenceOptions } from '../types/options';

/** Intelligence options after defaults and validation; fixed at client creation. */
export interface ResolvedIntelligenceOptions {
  readonly enabled: boolean;
  readonly adaptiveTimeout: boolean;
  readonly adaptiveStaleWhileRevalidate: boolean;
}

export const INTELLIGENCE_DEFAULTS: ResolvedIntelligenceOptions = /* @__PURE__ */ freeze({
  enabled: true,
  adaptiveTimeout: false,
  adaptiveStaleWhileRevalidate: false,
});

const INTELLIGENCE_KEYS = /* @__PURE__ */ keysOf('', INTELLIGENCE_DEFAULTS);

/** Resolves `ClientOptions.intelligence` once; a bad value throws a TypeError naming the field. */
export function resolveIntelligenceOptions(
  options: IntelligenceOptions = {},
): ResolvedIntelligenceOptions {
  checkObject('intelligence', options, undefined, INTELLIGENCE_KEYS);
  const resolved = withDefaults(options, INTELLIGENCE_DEFAULTS);
  for (const field in resolved) {
    checkBoolean(`intelligence.${field}`, resolved[field as keyof ResolvedIntelligenceOptions]);
  }
  return freeze(resolved);
}
