import type { Emitter } from '../events/emitter';
import type { AdaptiveController } from '../types/controllers';
import type { ClientEvents } from '../types/events';
import { AdaptiveEngine } from './engine';
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
}

/**
 * The adaptive stage as the client uses it: the engine (whose `strategy`, `retryScale` and
 * `metrics` the retry loop, the cache and intelligence read per request), the observer that
 * feeds it from lifecycle events, and the application of its ceiling decisions to the scheduler.
 */
export class Adaptive extends AdaptiveEngine {
  readonly observer: AdaptiveObserver;
  readonly controller: AdaptiveController;

  constructor(options: ResolvedAdaptiveOptions, seams: AdaptiveSeams) {
    const ceilings = options.concurrency ? seams.ceilings : undefined;
    super({
      options,
      schedulerConcurrency: seams.ceilings?.concurrency,
      onDecision: (d) => {
        if (d.type === 'ceiling' && ceilings !== undefined) {
          // Back at the configured ceiling: remove the cap (the global limit is the same).
          ceilings.setEndpointCeiling(d.endpoint, d.to >= ceilings.concurrency ? undefined : d.to);
        }
      },
    });
    this.observer = new AdaptiveObserver(this, seams.clock, seams.scheduled);
    this.controller = this.facade(() => {
      for (const endpoint of this.reducedEndpoints()) {
        ceilings?.setEndpointCeiling(endpoint, undefined);
      }
      this.observer.reset();
    });
  }

  observe(events: Emitter<ClientEvents>): () => void {
    return this.observer.observe(events);
  }
}
