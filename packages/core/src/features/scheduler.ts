import { MicrotaskBatch } from '../internal/microtask-batch';
import { checkPrioritize } from '../scheduler/controller';
import { transparentGate } from '../scheduler/gate';
import { resolveSchedulerOptions, type SchedulerConfig } from '../scheduler/options';
import { Scheduler } from '../scheduler/scheduler';
import type { ClientFeature } from '../types/features';
import type { SchedulerOptions } from '../types/options';
import { feature } from './feature';

/**
 * The request scheduler for `createBaseClient({ features })`: a concurrency limit, priority
 * lanes, per-host caps, a rate budget and queue groups. Takes what `createClient`'s `scheduler`
 * option takes (its presence enables it; `enabled: false` is transparent mode); invalid options
 * throw here.
 *
 * @param options - SchedulerOptions.
 * @default { enabled: true, concurrency: 8, priority: false }
 * @example
 * const client = createBaseClient({ features: [withScheduler({ concurrency: 4, priority: true })] });
 */
export function withScheduler(options: SchedulerOptions = {}): ClientFeature<'scheduler'> {
  // Checked now; the adaptive engine's need for endpoint ceilings is added at install. Defined
  // whenever options are (a default parameter makes them `{}`).
  const config = resolveSchedulerOptions(options) as SchedulerConfig;
  return feature('scheduler', ({ clock, events }, hooks, endpointCeilings) => {
    if (!config.enabled)
      return {
        gate: transparentGate(clock, (selector, priority) =>
          checkPrioritize(config.priority, selector, priority),
        ),
        ceilings: undefined,
      };
    const { resumeNow, onError, ...rest } = hooks;
    // The scheduler may answer from inside any gate call: the client acts on it a microtask later.
    const answers = new MicrotaskBatch(resumeNow, onError);
    const scheduler = new Scheduler({ ...config, endpointCeilings }, events, {
      ...rest,
      resume: (job, error) => answers.push(job, error),
    });
    return {
      gate: scheduler,
      ceilings: {
        concurrency: config.concurrency,
        setEndpointCeiling: (endpoint, ceiling) => scheduler.setEndpointCeiling(endpoint, ceiling),
      },
    };
  });
}
