import type { ClientOptions } from './options';

/** The optional machinery a client built by createBaseClient can be given. */
export type FeatureName = 'intelligence' | 'circuitBreaker' | 'scheduler' | 'adaptive';

/**
 * A feature for `createBaseClient({ features })`, made by `withIntelligence`,
 * `withCircuitBreaker`, `withScheduler` or `withAdaptive`. Opaque: only its name is public.
 */
export interface ClientFeature<N extends FeatureName = FeatureName> {
  readonly name: N;
}

/**
 * The options of createBaseClient: ClientOptions without the options of the features, which
 * their feature takes instead (`withScheduler(options)` rather than `scheduler: options`).
 */
export interface BaseClientOptions extends Omit<ClientOptions, FeatureName> {
  /**
   * The optional machinery this client has, each given the options its ClientOptions field
   * takes: `[withIntelligence(), withCircuitBreaker()]` is what createClient has by default.
   * A client without a feature still answers its controller (`client.scheduler()`, ...), as a
   * client with the feature disabled does.
   * @default [] (cache, dedup, retry, timeouts, cancellation, invalidation and subscriptions only)
   */
  features?: readonly ClientFeature[] | undefined;
  /**
   * Not an option here (a TypeError naming the feature): pass `withIntelligence(options)` in `features`.
   * @default none
   */
  intelligence?: undefined;
  /**
   * Not an option here (a TypeError naming the feature): pass `withCircuitBreaker(options)` in `features`.
   * @default none
   */
  circuitBreaker?: undefined;
  /**
   * Not an option here (a TypeError naming the feature): pass `withScheduler(options)` in `features`.
   * @default none
   */
  scheduler?: undefined;
  /**
   * Not an option here (a TypeError naming the feature): pass `withAdaptive(options)` in `features`.
   * @default none
   */
  adaptive?: undefined;
}
