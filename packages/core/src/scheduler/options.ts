import { MAX_TIMER_MS } from '../internal/clock';
import type { SchedulerOptions } from '../types/options';

/** SchedulerOptions after defaults and validation. */
export interface SchedulerConfig {
  readonly enabled: boolean;
  /** Max simultaneous network attempts. Default 8. */
  readonly concurrency: number;
  /** high / normal / low lanes (weighted 4:2:1) instead of one FIFO. Default false. */
  readonly priority: boolean;
  /** Per-host caps, keyed by lower-cased hostname (all ports of a host share the cap). */
  readonly hosts: ReadonlyMap<string, number>;
  /** At most `requests` attempts start in any window of `interval` ms. */
  readonly rateLimit: { readonly requests: number; readonly interval: number } | undefined;
  /**
   * Seam for the adaptive engine: track every endpoint so `setEndpointCeiling` can cap it.
   * Off unless the adaptive concurrency switch needs it (it costs one job class per endpoint).
   */
  readonly endpointCeilings: boolean;
}

export const SCHEDULER_DEFAULTS = Object.freeze({ concurrency: 8, priority: false });

/**
 * Validates the `scheduler` option once, at createClient. Undefined when the option is absent.
 * Bad values throw a RangeError (or TypeError for a wrong type) naming the field.
 */
export function resolveSchedulerOptions(
  options: SchedulerOptions | undefined,
  endpointCeilings = false,
): SchedulerConfig | undefined {
  if (options === undefined) return undefined;
  if (typeof options !== 'object' || options === null) {
    throw new TypeError(`keel: scheduler must be an object, got ${describe(options)}`);
  }
  const enabled = options.enabled ?? true;
  if (typeof enabled !== 'boolean') {
    throw new TypeError(`keel: scheduler.enabled must be a boolean, got ${describe(enabled)}`);
  }
  const priority = options.priority ?? SCHEDULER_DEFAULTS.priority;
  if (typeof priority !== 'boolean') {
    throw new TypeError(`keel: scheduler.priority must be a boolean, got ${describe(priority)}`);
  }
  const concurrency = options.concurrency ?? SCHEDULER_DEFAULTS.concurrency;
  checkCount('scheduler.concurrency', concurrency);

  const hosts = new Map<string, number>();
  if (options.hosts !== undefined) {
    if (typeof options.hosts !== 'object' || options.hosts === null) {
      throw new TypeError(
        `keel: scheduler.hosts must be an object, got ${describe(options.hosts)}`,
      );
    }
    for (const [host, cap] of Object.entries(options.hosts)) {
      checkCount(`scheduler.hosts[${JSON.stringify(host)}]`, cap);
      hosts.set(host.toLowerCase(), cap);
    }
  }

  let rateLimit: SchedulerConfig['rateLimit'];
  if (options.rateLimit !== undefined) {
    const rl = options.rateLimit;
    if (typeof rl !== 'object' || rl === null) {
      throw new TypeError(`keel: scheduler.rateLimit must be an object, got ${describe(rl)}`);
    }
    checkCount('scheduler.rateLimit.requests', rl.requests);
    if (
      typeof rl.interval !== 'number' ||
      !Number.isFinite(rl.interval) ||
      rl.interval <= 0 ||
      rl.interval > MAX_TIMER_MS
    ) {
      // Above 2^31-1 ms a timer fires at once: the budget timer would re-arm in a busy loop.
      throw new RangeError(
        `keel: scheduler.rateLimit.interval must be a number of ms > 0 and at most ${MAX_TIMER_MS}, got ${describe(rl.interval)}`,
      );
    }
    rateLimit = Object.freeze({ requests: rl.requests, interval: rl.interval });
  }

  return Object.freeze({ enabled, concurrency, priority, hosts, rateLimit, endpointCeilings });
}

/** Counts of slots or attempts: integers >= 1. */
function checkCount(field: string, value: unknown): asserts value is number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1) {
    throw new RangeError(`keel: ${field} must be an integer >= 1, got ${describe(value)}`);
  }
}

function describe(value: unknown): string {
  return typeof value === 'string' ? JSON.stringify(value) : `${String(value)} (${typeof value})`;
}
