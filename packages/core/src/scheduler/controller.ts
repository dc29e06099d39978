import { oneOf, typeError } from '../internal/checks';
import type { SchedulerController, SchedulerStats } from '../types/controllers';
import type { Priority } from '../types/options';

const PRIORITIES = ['high', 'normal', 'low'] as const;

/** `prioritize` needs lanes; the priority must be one of them. */
export function checkPrioritize(lanes: boolean, selector: unknown, priority: unknown): void {
  if (!lanes) {
    throw new Error(
      'keel: scheduler().prioritize() needs priority lanes: create the client with `scheduler: { priority: true }`',
    );
  }
  if (typeof selector !== 'string') {
    throw typeError('selector', 'a group name or a request key', selector);
  }
  oneOf('priority', priority, PRIORITIES);
}

export function checkGroup(group: unknown): asserts group is string {
  if (typeof group !== 'string') throw typeError('group', 'a group name string', group);
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
    checkGroup(group);
  }
  resumeGroup(group: string): void {
    checkGroup(group);
  }
  cancelGroup(group: string): void {
    checkGroup(group);
  }
  prioritize(selector: string, priority: Priority): number {
    checkPrioritize(this.#lanes, selector, priority);
    return 0;
  }
}
