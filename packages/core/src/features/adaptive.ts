import { Adaptive } from '../adaptive/adaptive';
import { type ResolvedAdaptiveOptions, resolveAdaptiveOptions } from '../adaptive/options';
import type { ClientFeature } from '../types/features';
import type { AdaptiveOptions } from '../types/options';
import { feature, recommender } from './feature';

/**
 * The adaptive engine for `createBaseClient({ features })`: per-endpoint concurrency ceilings
 * (with withScheduler), retry backoff while throttled, and stale-while-revalidate for degraded
 * endpoints, each behind its switch. Takes what `createClient`'s `adaptive` option takes, except
 * that adding the feature turns it on (`enabled` defaults to true here; `enabled: false` keeps
 * it off). Invalid options throw here.
 *
 * @param options - AdaptiveOptions.
 * @default { enabled: true } and every switch off (see the README's Adaptive engine for the rest)
 * @example
 * const client = createBaseClient({
 *   features: [withScheduler({ concurrency: 8 }), withAdaptive({ concurrency: true })],
 * });
 */
export function withAdaptive(options: AdaptiveOptions = {}): ClientFeature<'adaptive'> {
  return adaptiveFeature(resolveAdaptiveOptions(options, true));
}

/** The feature for options already resolved; undefined (disabled) installs nothing. */
export function adaptiveFeature(
  resolved: ResolvedAdaptiveOptions | undefined,
): ClientFeature<'adaptive'> {
  return feature(
    'adaptive',
    ({ clock }, scheduler) => {
      if (resolved === undefined) return undefined;
      return new Adaptive(resolved, {
        clock,
        scheduled: scheduler.gate.enabled,
        ceilings: scheduler.ceilings,
      });
    },
    recommender,
    resolved?.concurrency === true,
  );
}
