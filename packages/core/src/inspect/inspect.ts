import { isFreshAt } from '../cache/entry';
import type { CountingStore } from '../cache/store';
import { watchStore } from '../cache/watch';
import { internalsOf } from '../client';
import type { Flight } from '../dedup/flight';
import { latenciesOf } from '../intelligence/intelligence';
import { rangeError, typeError } from '../internal/checks';
import { freeze } from '../internal/freeze';
import { PRIORITIES } from '../internal/priorities';
import { Scheduler, schedulerView } from '../scheduler/scheduler';
import type { Client } from '../types/client';
import type {
  CacheChange,
  CachedEntryView,
  CircuitView,
  ClientInspector,
  FlightPhase,
  FlightView,
  SchedulerView,
} from '../types/inspect';

const inspectors = new WeakMap<Client, ClientInspector>();

// Pure: the built package puts this module in the chunk every app takes the client from, and
// an unmarked call at the top of a module is kept in every bundle (about 30 B gzip per app).
const ACTIVE: FlightPhase = /* @__PURE__ */ freeze({ state: 'active' });
const QUEUED: FlightPhase = /* @__PURE__ */ freeze({ state: 'queued', paused: false });
const PAUSED: FlightPhase = /* @__PURE__ */ freeze({ state: 'queued', paused: true });

/**
 * Read-only views of what a client holds and does now: its cache entries, the flights in
 * progress, the scheduler's load, the circuits and the latency samples, for tooling such as
 * `@keel/devtools`. Nothing here changes the client; the actions a tool offers go through the
 * client's own API (`invalidate`, `prefetch(entry.spec)`, `setCached(key, undefined)`).
 * Each view is built when called (O(entries), O(flights)); the lifecycle events and
 * `watchCache` tell when to read again.
 *
 * @example
 * const inspector = inspect(client);
 * for (const entry of inspector.cache()) console.log(entry.key, entry.fresh ? 'fresh' : 'stale');
 * inspector.flights(); // [{ id: 3, key: 'GET /todos', phase: { state: 'active' }, attempts: 1, ... }]
 */
export function inspect(client: Client): ClientInspector {
  let inspector = inspectors.get(client);
  if (inspector === undefined) {
    inspector = createInspector(client);
    inspectors.set(client, inspector);
  }
  return inspector;
}

function createInspector(client: Client): ClientInspector {
  const { cache, clock, flights, gate, circuits, intelligence } = internalsOf(client, 'inspect');
  return freeze({
    clock,
    now: () => clock.now(),
    cache(): CachedEntryView[] {
      const now = clock.now();
      const out: CachedEntryView[] = [];
      for (const entry of cache.values()) {
        if (cache.isCollectable(entry, now)) continue;
        out.push({
          key: entry.key,
          path: entry.path,
          tags: [...entry.tags],
          storedAt: entry.storedAt,
          expiresAt: entry.expiresAt,
          age: Math.max(0, now - entry.storedAt),
          fresh: isFreshAt(entry, now),
          subscribers: (cache as unknown as CountingStore).hasInterest(entry.key, true),
          fetching: client.isFetching(entry.key),
          response: entry.response,
          spec: entry.spec,
        });
      }
      return out;
    },
    watchCache: (listener: (change: CacheChange) => void) => watchStore(cache, listener),
    flights(): FlightView[] {
      const lanes = gate instanceof Scheduler && gate.config.priority;
      const out: FlightView[] = [];
      for (const flight of flights) {
        if (flight.settled) continue;
        out.push(flightView(flight, lanes));
      }
      return out.sort((a, b) => a.id - b.id);
    },
    scheduler(): SchedulerView {
      if (gate instanceof Scheduler) return schedulerView(gate, clock.now());
      return {
        enabled: false,
        concurrency: Infinity,
        priorityLanes: false,
        stats: gate.controller.stats(),
        rateLimit: undefined,
        hosts: [],
        pausedGroups: [],
      };
    },
    circuits(): CircuitView[] {
      if (circuits === undefined) return [];
      const resetTimeout = circuits.resetTimeout;
      const now = clock.now();
      // A clock that stepped back before openedAt: the breaker lets the next request probe now.
      return circuits
        .statuses()
        .map((status) =>
          status.state === 'open' && status.openedAt !== undefined
            ? { ...status, probeAt: now < status.openedAt ? now : status.openedAt + resetTimeout }
            : status,
        );
    },
    latencies(endpoint: string): number[] {
      // A non-string or a bare path would answer [], as for an endpoint never seen.
      const isString = typeof endpoint === 'string';
      if (!isString || !endpoint.includes(' ')) {
        throw (isString ? rangeError : typeError)(
          'endpoint',
          'a `METHOD pathname` string',
          endpoint,
        );
      }
      return intelligence?.enabled ? latenciesOf(intelligence, endpoint) : [];
    },
  });
}

/** `lanes`: the client's scheduler has priority lanes (without, every job is `normal`). */
function flightView(flight: Flight, lanes: boolean): FlightView {
  const { spec, tracker } = flight;
  const entry = flight.gateEntry;
  return {
    id: flight.id,
    key: spec.key,
    method: spec.method,
    url: spec.url,
    endpoint: spec.endpoint,
    tracker,
    startedAt: tracker.startedAt,
    attempts: tracker.attempts,
    consumers: flight.consumerCount,
    probe: flight.probe,
    phase: phaseOf(flight),
    // The lane it waits in (`prioritize` moves it); started, the one it was asked for.
    priority: !lanes ? 'normal' : entry ? PRIORITIES[entry.lane]! : spec.priority,
    group: spec.group,
    deadlineAt: flight.deadlineAt === 0 ? undefined : flight.deadlineAt,
    detached: flight.stale,
  };
}

function phaseOf(flight: Flight): FlightPhase {
  const entry = flight.gateEntry;
  if (entry !== undefined) {
    switch (entry.state) {
      case 'new':
      case 'queued':
        return entry.cls.group?.paused ? PAUSED : QUEUED;
      case 'delayed':
        if (entry.rateParkedAt >= 0) return { state: 'rate-wait', since: entry.rateParkedAt };
        break;
      case 'active':
        return ACTIVE;
    }
  }
  const wait = flight.wait;
  if (wait !== undefined) {
    const { reason, delay, until } = wait;
    return { state: 'retry-wait', reason, delay, until };
  }
  return ACTIVE;
}
