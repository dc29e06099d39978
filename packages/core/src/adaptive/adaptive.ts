import type { EventEmitter } from '../events/emitter';
import type { AdaptiveController, AdaptiveMetrics } from '../types/controllers';
import type { ClientEvents } from '../types/events';
import type { AdaptiveDecision } from './decision';
import { AdaptiveEngine, type RetryScale } from './engine';
import { AdaptiveObserver } from './observer';
import type { ResolvedAdaptiveOptions } from './options';

/** The scheduler's per-endpoint ceiling seam, as the client hands it over. */
export interface CeilingSeam {
  /** The scheduler's configured concurrency: the ceiling every endpoint starts at. */
  readonly concurrency: number;
  /** Caps one endpoint's simultaneous attempts; undefined removes the cap. */
  setEndpointCeiling(endpoint: string, ceiling: number | undefined): void;
}

export interface AdaptiveSeams {
  clock: { now(): number };
  /** The scheduler is enabled (its events exist); attempts are measured from `request-started`. */
  scheduled: boolean;
  /** Present when the concurrency switch can act: a scheduler created with endpoint ceilings. */
  ceilings: CeilingSeam | undefined;
  /** Sees every decision after it is applied (tests, demos). */
  onDecision?: ((decision: AdaptiveDecision) => void) | undefined;
}

/**
 * The adaptive stage as the client uses it: the engine, the observer that feeds it from
 * lifecycle events, and the application of its ceiling decisions to the scheduler. What the
 * retry loop and the cache apply is read per request (`retryScale`, `strategy`).
 */
export class Adaptive {
  readonly engine: AdaptiveEngine;
  readonly observer: AdaptiveObserver;
  readonly controller: AdaptiveController;
  readonly #ceilings: CeilingSeam | undefined;

  constructor(options: ResolvedAdaptiveOptions, seams: AdaptiveSeams) {
    const ceilings = options.concurrency ? seams.ceilings : undefined;
    this.#ceilings = ceilings;
    const onDecision = seams.onDecision;
    this.engine = new AdaptiveEngine({
      options,
      clock: seams.clock,
      schedulerConcurrency: seams.ceilings?.concurrency,
      onDecision: (d) => {
        if (d.type === 'ceiling' && ceilings !== undefined) {
          // Back at the configured ceiling: remove the cap (the global limit is the same).
          ceilings.setEndpointCeiling(d.endpoint, d.to >= ceilings.concurrency ? undefined : d.to);
        }
        onDecision?.(d);
      },
    });
    this.observer = new AdaptiveObserver(this.engine, seams.clock, seams.scheduled);
    this.controller = this.engine.controller(() => {
      for (const endpoint of this.engine.reducedEndpoints()) {
        this.#ceilings?.setEndpointCeiling(endpoint, undefined);
      }
      this.observer.reset();
    });
  }

  observe(events: EventEmitter<ClientEvents>): () => void {
    return this.observer.observe(events);
  }

  /** `stale-while-revalidate` for a degraded endpoint (SWR switch on), else undefined. */
  strategy(endpoint: string): 'stale-while-revalidate' | undefined {
    return this.engine.strategy(endpoint);
  }

  retryScale(endpoint: string, baseDelay: number): RetryScale | undefined {
    return this.engine.retryScale(endpoint, baseDelay);
  }

  metrics(): AdaptiveMetrics {
    return this.engine.metrics();
  }
}
