import { Intelligence } from '../intelligence/intelligence';
import { resolveIntelligenceOptions } from '../intelligence/options';
import type { ClientFeature } from '../types/features';
import type { IntelligenceOptions } from '../types/options';
import { controllerOf, feature, recommender } from './feature';

/**
 * Request observation for `createBaseClient({ features })`: per-endpoint counters, latency
 * percentiles and `client.intelligence().snapshot()`, with the adaptive timeout and
 * stale-while-revalidate recommendations when their switches are on. Takes what
 * `createClient`'s `intelligence` option takes; invalid options throw here.
 *
 * @param options - IntelligenceOptions.
 * @default { enabled: true, adaptiveTimeout: false, adaptiveStaleWhileRevalidate: false }
 * @example
 * const client = createBaseClient({ features: [withIntelligence({ adaptiveTimeout: true })] });
 */
export function withIntelligence(options?: IntelligenceOptions): ClientFeature<'intelligence'> {
  const resolved = resolveIntelligenceOptions(options);
  return feature(
    'intelligence',
    ({ events, clock }, circuits, adaptive) => {
      const intelligence = new Intelligence(resolved, { circuits, adaptive, clock });
      intelligence.observe(events);
      return {
        observer: intelligence,
        controller: controllerOf(intelligence, ['snapshot', 'endpoint', 'reset']),
      };
    },
    recommender,
  );
}
