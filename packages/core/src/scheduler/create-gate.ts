import type { EventEmitter } from '../events/emitter';
import type { ClientEvents } from '../types/events';
import type { SchedulerOptions } from '../types/options';
import { type AttemptGate, type SchedulerHooks, TransparentGate } from './gate';
import { resolveSchedulerOptions } from './options';
import { Scheduler } from './scheduler';

/**
 * The client's scheduler stage: a Scheduler when the `scheduler` option is present and not
 * `enabled: false`, else the TransparentGate (identical to having no scheduler; no scheduler
 * event is ever emitted). Options are validated either way, so a bad value throws from
 * createClient.
 */
export function createGate(
  options: SchedulerOptions | undefined,
  events: EventEmitter<ClientEvents>,
  hooks: SchedulerHooks,
  /** Track every endpoint so the adaptive engine can cap it (`setEndpointCeiling`). */
  endpointCeilings = false,
): AttemptGate {
  const config = resolveSchedulerOptions(options, endpointCeilings);
  if (config === undefined || !config.enabled) {
    return new TransparentGate(hooks.clock, config?.priority ?? false);
  }
  return new Scheduler(config, events, hooks);
}
