import type { SchedulerController, SchedulerStats } from '../types/controllers';
import type { Priority } from '../types/options';

/** `prioritize` needs lanes; the priority must be one of them. */
export function checkPrioritize(lanes: boolean, selector: unknown, priority: unknown): void {
  if (!lanes) {
    throw new Error(
      'keel: scheduler().prioritize() needs priority lanes: create the client with `scheduler: { priority: true }`',
    );
  }
  if (typeof selector !== 'string') {
    throw new TypeError(
      `keel: prioritize selector must be a group name or request key, got ${typeof selector}`,
    );
  }
  if (priority !== 'high' && priority !== 'normal' && priority !== 'low') {
    throw new RangeError(
      `keel: prioritize priority must be 'high', 'normal' or 'low', got ${String(priority)}`,
    );
  }
}

export function checkGroup(group: unknown, method: string): asserts group is string {
  if (typeof group !== 'string') {
    throw new TypeError(
      `keel: scheduler().${method}() group must be a string, got ${typeof group}`,
    );
  }
}

/**
 * The controller of a client without a scheduler (option absent or `enabled: false`): nothing
 * is ever queued, so stats are zeros and group operations have nothing to act on.
 */
export class TransparentController implements SchedulerController {
  readonly #lanes: boolean;
  constructor(lanes: boolean) {
    this.#lanes = lanes;
  }
  stats(): SchedulerStats {
    return {
      active: 0,
      queued: 0,
      delayed: 0,
      completed: 0,
      rejected: 0,
      lanes: { high: 0, normal: 0, low: 0 },
    };
  }
  pauseGroup(group: string): void {
    checkGroup(group, 'pauseGroup');
  }
  resumeGroup(group: string): void {
    checkGroup(group, 'resumeGroup');
  }
  cancelGroup(group: string): void {
    checkGroup(group, 'cancelGroup');
  }
  prioritize(selector: string, priority: Priority): number {
    checkPrioritize(this.#lanes, selector, priority);
    return 0;
  }
}
