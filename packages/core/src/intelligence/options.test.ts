import { describe, expect, it } from 'vitest';
import { INTELLIGENCE_DEFAULTS, resolveIntelligenceOptions } from './options';

describe('resolveIntelligenceOptions', () => {
  it('defaults: enabled, no adaptive switches', () => {
    expect(resolveIntelligenceOptions()).toEqual(INTELLIGENCE_DEFAULTS);
    expect(INTELLIGENCE_DEFAULTS).toEqual({
      enabled: true,
      adaptiveTimeout: false,
      adaptiveStaleWhileRevalidate: false,
    });
  });

  it('rejects bad values naming the field', () => {
    expect(() => resolveIntelligenceOptions(null as never)).toThrow(
      'keel: `intelligence` must be an object, got null',
    );
    expect(() => resolveIntelligenceOptions({ enabled: 1 as never })).toThrow(
      'keel: `intelligence.enabled` must be true or false, got 1',
    );
    expect(() => resolveIntelligenceOptions({ adaptiveTimeout: 'x' as never })).toThrow(TypeError);
  });
});
