import { oneOf, typeError } from '../internal/checks';
import { zeroCounters } from '../internal/counters';
import { PRIORITIES } from '../internal/priorities';
import type { SchedulerController } from '../types/controllers';

/** `prioritize` without priority lanes: a RangeError, whatever its arguments. */
export function noLanes(): never {
  // A RangeError: the client's `scheduler.priority` has the wrong value for this call.
  throw new RangeError(
    'keel: scheduler().prioritize() needs priority lanes: `scheduler: { priority: true }`',
  );
}

/** `prioritize` needs lanes; the priority must be one of them. */
export function checkPrioritize(lanes: boolean, selector: unknown, priority: unknown): void {
  if (!lanes) noLanes();
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
 * is ever queued, so stats are zeros and group operations have nothing to act on. `prioritize`
 * checks its arguments as the scheduler's would: noLanes unless the (disabled) options have
 * lanes, so a client that never configures a scheduler does not carry the lane checks.
 */
export function transparentController(
  prioritize: (selector: unknown, priority: unknown) => void = noLanes,
): SchedulerController {
  return {
    stats: () => ({
      ...zeroCounters(['active', 'queued', 'delayed', 'completed', 'rejected']),
      lanes: zeroCounters(PRIORITIES),
    }),
    pauseGroup: checkGroup,
    resumeGroup: checkGroup,
    cancelGroup: checkGroup,
    prioritize(selector, priority) {
      prioritize(selector, priority);
      return 0;
    },
  };
}
