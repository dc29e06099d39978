import type { Adaptive, CeilingSeam } from '../adaptive/adaptive';
import type { CircuitGuard } from '../circuit/guard';
import type { Emitter } from '../events/emitter';
import type { CircuitView, Intelligence } from '../intelligence/intelligence';
import { rangeError, typeError } from '../internal/checks';
import type { Clock } from '../internal/clock';
import { freeze } from '../internal/freeze';
import { applyRecommendation, type RequestSpec } from '../request/resolve';
import type { AttemptGate, ClientSchedulerHooks } from '../scheduler/gate';
import type {
  AdaptiveMetrics,
  CircuitBreakerController,
  CircuitStatus,
  IntelligenceController,
} from '../types/controllers';
import type { ClientEvents } from '../types/events';
import type { FeatureName } from '../types/features';
import type { RequestOptions } from '../types/options';

/*
 * How a feature made by withIntelligence / withCircuitBreaker / withScheduler / withAdaptive is
 * installed into a client (client.ts). Internal: the public ClientFeature type shows `name` only.
 *
 * The client installs the features it is given in one fixed order, whatever their order in
 * `features`: scheduler, circuit breaker, adaptive, intelligence. Observers subscribe to the
 * lifecycle events as they are installed (the breaker first, then intelligence, then the
 * adaptive engine), before any user listener.
 */

/** What every feature is installed with. */
export interface FeatureContext {
  readonly clock: Clock;
  readonly events: Emitter<ClientEvents>;
}

export interface SchedulerPart {
  readonly gate: AttemptGate;
  /** The per-endpoint ceiling seam for the adaptive engine: an enabled scheduler only. */
  readonly ceilings: CeilingSeam | undefined;
}

export interface CircuitPart {
  readonly guard: CircuitGuard;
  readonly controller: CircuitBreakerController;
  /** What the intelligence snapshot reads of the circuits (none when disabled). */
  readonly view?: CircuitView;
  /** What inspect(client) reads: every circuit's status, and when an open one may probe. */
  readonly inspectable?: CircuitInspectable;
}

export interface CircuitInspectable {
  statuses(): CircuitStatus[];
  readonly resetTimeout: number;
}

/** The install step of each feature, keyed by its name. */
export interface Installers {
  scheduler: (
    context: FeatureContext,
    hooks: ClientSchedulerHooks,
    endpointCeilings: boolean,
  ) => SchedulerPart;
  circuitBreaker: (context: FeatureContext) => CircuitPart;
  /** Undefined when its options say `enabled: false`. */
  adaptive: (context: FeatureContext, scheduler: SchedulerPart) => Adaptive | undefined;
  intelligence: (
    context: FeatureContext,
    circuits: CircuitView | undefined,
    adaptive: (() => AdaptiveMetrics) | undefined,
  ) => IntelligencePart;
}

export interface IntelligencePart {
  readonly observer: Intelligence;
  readonly controller: IntelligenceController;
}

/**
 * A frozen facade exposing only a controller's public methods, bound to its implementation
 * (what `client.circuitBreaker()` and `client.intelligence()` return).
 */
export function controllerOf<T extends object, K extends keyof T>(
  impl: T,
  methods: K[],
): Pick<T, K> {
  const facade = {} as Pick<T, K>;
  for (const name of methods) {
    facade[name] = (impl[name] as (...args: unknown[]) => unknown).bind(impl) as T[K];
  }
  return freeze(facade);
}

/** A feature as the client sees it. */
export interface InstallableFeature<N extends FeatureName = FeatureName> {
  readonly name: N;
  readonly install: Installers[N];
  /** adaptive only: the concurrency switch needs the scheduler to track every endpoint. */
  readonly endpointCeilings?: boolean;
  /** intelligence and adaptive: the recommendation stage they bring to the client. */
  readonly recommender?: typeof recommender;
}

/** Builds a feature value: frozen, with its installer out of the public type. */
export function feature<N extends FeatureName>(
  name: N,
  install: Installers[N],
  recommends?: typeof recommender,
  endpointCeilings?: boolean,
): InstallableFeature<N> {
  return freeze({ name, install, endpointCeilings, recommender: recommends });
}

/** Layers the observers' recommendation for a request's endpoint onto its resolved spec. */
export type Recommender = (spec: RequestSpec, options: RequestOptions | undefined) => RequestSpec;

/**
 * The recommendation stage of a client with intelligence or the adaptive engine (undefined when
 * neither can ever recommend): intelligence's timeout / strategy, with the adaptive engine's
 * strategy (SWR for a degraded endpoint) taking over for cached reads. Reached only through
 * those features, so a client without them bundles none of it.
 */
export function recommender(
  intelligence: Intelligence | undefined,
  adaptive: Adaptive | undefined,
): Recommender | undefined {
  if (!intelligence?.recommends && adaptive === undefined) return undefined;
  return (spec, options) => {
    const observed = intelligence?.recommend(spec.endpoint);
    const strategy = spec.cache ? adaptive?.strategy(spec.endpoint) : undefined;
    const recommendation = strategy === undefined ? observed : { ...observed, strategy };
    return recommendation === undefined ? spec : applyRecommendation(spec, options, recommendation);
  };
}

const NAMES: readonly FeatureName[] = ['intelligence', 'circuitBreaker', 'scheduler', 'adaptive'];
/** The function that makes a feature: `withScheduler` for `scheduler`. */
const maker = (name: FeatureName): string => `with${name[0]!.toUpperCase()}${name.slice(1)}`;

export type FeatureSet = { [N in FeatureName]?: InstallableFeature<N> };

/**
 * Checks createBaseClient's `features` and that no feature's options were given as a client
 * option (they would be ignored: the feature takes them).
 */
export function collectFeatures(options: Record<string, unknown>): FeatureSet {
  for (const name of NAMES) {
    if (options[name] !== undefined) {
      throw typeError(
        name,
        `passed to ${maker(name)}() in \`features\`: createBaseClient({ features: [${maker(name)}(options)] })`,
        options[name],
      );
    }
  }
  const list = options.features ?? [];
  if (!Array.isArray(list)) throw typeError('features', 'an array of features', list);
  const set: Record<string, InstallableFeature> = {};
  for (const item of list as unknown[]) {
    const name = (item as InstallableFeature | null)?.name;
    if (
      typeof (item as InstallableFeature | null)?.install !== 'function' ||
      !NAMES.includes(name!)
    ) {
      throw typeError(
        'features',
        'features made by withIntelligence(), withCircuitBreaker(), withScheduler() or withAdaptive()',
        item,
      );
    }
    if (set[name!] !== undefined)
      throw rangeError('features', `${maker(name!)}() at most once`, list);
    set[name!] = item as InstallableFeature;
  }
  return set as FeatureSet;
}
