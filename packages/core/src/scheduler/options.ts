import {
  checkBoolean,
  checkInteger,
  checkNumber,
  checkObject,
  keysOf,
  rangeError,
  typeError,
  withDefaults,
} from '../internal/checks';
import { MAX_TIMER_MS } from '../internal/clock';
import { freeze } from '../internal/freeze';
import type { SchedulerOptions } from '../types/options';

/** SchedulerOptions after defaults and validation. */
export interface SchedulerConfig {
  readonly enabled: boolean;
  /** Max simultaneous network attempts. Default 8. */
  readonly concurrency: number;
  /** high / normal / low lanes (weighted 4:2:1) instead of one FIFO. Default false. */
  readonly priority: boolean;
  /** Per-host caps, keyed by lower-cased hostname without a root dot (all ports share the cap). */
  readonly hosts: ReadonlyMap<string, number>;
  /** At most `requests` attempts start in any window of `interval` ms. */
  readonly rateLimit: { readonly requests: number; readonly interval: number } | undefined;
  /**
   * Seam for the adaptive engine: track every endpoint so `setEndpointCeiling` can cap it.
   * Off unless the adaptive concurrency switch needs it (it costs one job class per endpoint).
   */
  readonly endpointCeilings: boolean;
}

/** What `scheduler: {}` gives (without the option there is no scheduler at all). */
export const SCHEDULER_DEFAULTS = /* @__PURE__ */ freeze({
  enabled: true,
  concurrency: 8,
  priority: false,
});

const SCHEDULER_KEYS = /* @__PURE__ */ keysOf('hosts rateLimit', SCHEDULER_DEFAULTS);
const RATE_LIMIT_KEYS = /* @__PURE__ */ keysOf('requests interval');

/**
 * Validates the `scheduler` option once, at createClient. Undefined when the option is absent.
 * A bad value throws a RangeError (a TypeError for a wrong type) naming the field.
 */
export function resolveSchedulerOptions(
  options: SchedulerOptions | undefined,
  endpointCeilings = false,
): SchedulerConfig | undefined {
  if (options === undefined) return undefined;
  checkObject('scheduler', options, undefined, SCHEDULER_KEYS);
  // Only undefined means "the default": null is a wrong type, as for the other option blocks.
  const o = withDefaults(options, SCHEDULER_DEFAULTS);
  const enabled = checkBoolean('scheduler.enabled', o.enabled);
  const priority = checkBoolean('scheduler.priority', o.priority);
  const concurrency = checkInteger('scheduler.concurrency', o.concurrency, 1);

  const hosts = new Map<string, number>();
  if (options.hosts !== undefined) {
    // A Map holds its entries as no own properties: it would read as no caps at all.
    if (options.hosts instanceof Map) {
      throw typeError('scheduler.hosts', 'a plain object {hostname: cap}', options.hosts);
    }
    checkObject('scheduler.hosts', options.hosts);
    for (const [host, cap] of Object.entries(options.hosts)) {
      hosts.set(hostnameOf(host), checkInteger(`scheduler.hosts[${JSON.stringify(host)}]`, cap, 1));
    }
  }

  let rateLimit: SchedulerConfig['rateLimit'];
  if (options.rateLimit !== undefined) {
    const rl = options.rateLimit;
    checkObject('scheduler.rateLimit', rl, undefined, RATE_LIMIT_KEYS);
    const requests = checkInteger('scheduler.rateLimit.requests', rl.requests, 1);
    // Above 2^31-1 ms a timer fires at once: the budget timer would re-arm in a busy loop.
    const interval = checkNumber(
      'scheduler.rateLimit.interval',
      rl.interval,
      `a positive number of ms, at most ${MAX_TIMER_MS}`,
      (n) => n > 0 && n <= MAX_TIMER_MS,
    );
    rateLimit = freeze({ requests, interval });
  }

  return freeze({ enabled, concurrency, priority, hosts, rateLimit, endpointCeilings });
}

/**
 * A `hosts` key as a URL writes its hostname (lower case, punycode, `[v6]`), which is what a
 * request's host is matched against; a key with a scheme, port, path or user would never match.
 */
function hostnameOf(key: string): string {
  let url: URL | undefined;
  try {
    url = new URL(`http://${key}`);
  } catch {}
  if (url === undefined || url.host !== url.hostname || url.href !== `http://${url.host}/`) {
    throw rangeError('scheduler.hosts', 'keyed by hostname (no scheme, port or path)', key);
  }
  // `api.x.` (fully qualified) is the host `api.x`: the root dot is dropped, as for requests.
  return url.hostname.replace(/\.$/, '');
}
