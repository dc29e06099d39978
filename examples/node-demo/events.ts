import { CancelledError, CircuitOpenError, type Client, HttpError, TimeoutError } from '@keel/core';
import type { Narrator } from './narrator';

/** Everything the summary reports, counted from the client's lifecycle events only. */
export interface Tally {
  /** Flights that went to the network (`request`). */
  requests: number;
  /** Callers answered from memory (`cache-hit`). */
  cacheHits: number;
  /** Callers that joined an identical in-flight request instead of sending their own (`dedup`). */
  dedupJoins: number;
  /** Retries scheduled (`retry`). */
  retries: number;
  /** Flights that retried at least once and then succeeded. */
  recovered: number;
  /** Attempts that ran past their timeout (`retry` or `error` carrying a TimeoutError). */
  timeouts: number;
  /** Callers cancelled (`cancel`). */
  cancels: number;
  /** Flights that ended in an error (`error`). */
  errors: number;
  /** Cache keys removed by invalidation (`invalidate`). */
  invalidated: number;
  /** Background refetches that refreshed a key (`revalidate`). */
  revalidated: number;
  /** Circuits that opened (`circuit-open`). */
  circuitOpened: number;
  /** Requests refused by an open circuit without a network call (`circuit-rejected`). */
  circuitRejected: number;
  /** Half-open probes let through after the reset timeout (`circuit-half-open`). */
  circuitProbes: number;
  /** Circuits closed again by a successful probe (`circuit-closed`). */
  circuitClosed: number;
}

/**
 * Counts and narrates the client's events. Dedup joins and cache hits are only counted (50 joins
 * would drown the story); the scenarios print those totals themselves.
 */
export function watchClient(client: Client, log: Narrator, origin: string) {
  const tally: Tally = {
    requests: 0,
    cacheHits: 0,
    dedupJoins: 0,
    retries: 0,
    recovered: 0,
    timeouts: 0,
    cancels: 0,
    errors: 0,
    invalidated: 0,
    revalidated: 0,
    circuitOpened: 0,
    circuitRejected: 0,
    circuitProbes: 0,
    circuitClosed: 0,
  };
  const short = (keyOrUrl: string) => keyOrUrl.replace(origin, '');
  // A flight's tracker is the same object in its `retry` and `success` events.
  const retried = new WeakSet<object>();

  const offs = [
    client.on('request', () => {
      tally.requests++;
    }),
    client.on('cache-hit', () => {
      tally.cacheHits++;
    }),
    client.on('dedup', () => {
      tally.dedupJoins++;
    }),
    client.on('retry', ({ key, tracker, attempts, delay, error }) => {
      tally.retries++;
      if (error instanceof TimeoutError) tally.timeouts++;
      retried.add(tracker);
      log.event(
        'retry',
        `${short(key)}: attempt ${attempts} ${describe(error)}; attempt ${attempts + 1} in ${delay} ms`,
      );
    }),
    client.on('success', ({ key, tracker, response }) => {
      if (!retried.has(tracker)) return;
      tally.recovered++;
      log.event('recovered', `${short(key)}: ${response.status} on attempt ${tracker.attempts}`);
    }),
    client.on('error', ({ key, tracker, error }) => {
      tally.errors++;
      if (error instanceof TimeoutError) tally.timeouts++;
      log.event(
        'error',
        `${short(key)}: gave up after ${tracker.attempts} attempt(s), ${describe(error)}`,
      );
    }),
    client.on('cancel', ({ key, final }) => {
      tally.cancels++;
      log.event(
        'cancel',
        `${short(key)}: ${final ? 'last caller left, the fetch is aborted' : 'one caller left, the others keep the flight'}`,
      );
    }),
    client.on('invalidate', ({ keys }) => {
      tally.invalidated += keys.length;
      log.event('invalidate', `removed ${keys.map(short).join(', ')}`);
    }),
    client.on('revalidate', ({ key }) => {
      tally.revalidated++;
      log.event('revalidate', `${short(key)} refetched after the invalidation`);
    }),
    client.on('circuit-open', ({ endpoint, method, path }) => {
      tally.circuitOpened++;
      // The breaker has already moved when listeners run, so its status tells why it opened.
      const { consecutiveFailures } = client.circuitBreaker().status(method, path);
      log.event(
        'circuit',
        `${endpoint}: OPEN after ${consecutiveFailures} failures in a row; calls are refused without a request`,
      );
    }),
    // Refusals are only counted: the section prints their total (and they can come by the dozen).
    client.on('circuit-rejected', () => {
      tally.circuitRejected++;
    }),
    client.on('circuit-half-open', ({ endpoint }) => {
      tally.circuitProbes++;
      log.event('circuit', `${endpoint}: HALF-OPEN, reset timeout over; this request is the probe`);
    }),
    client.on('circuit-closed', ({ endpoint }) => {
      tally.circuitClosed++;
      log.event('circuit', `${endpoint}: CLOSED, the probe succeeded`);
    }),
  ];

  return {
    tally: tally as Readonly<Tally>,
    stop: () => {
      for (const off of offs) off();
    },
  };
}

export function describe(error: unknown): string {
  if (error instanceof HttpError) {
    const retryAfter = error.headers?.get('retry-after');
    return `failed with HTTP ${error.status}${retryAfter ? ` (Retry-After: ${retryAfter})` : ''}`;
  }
  if (error instanceof TimeoutError) return `timed out (${error.timeout} ms)`;
  if (error instanceof CancelledError) return 'was cancelled';
  if (error instanceof CircuitOpenError) return `refused: ${error.message}`;
  return `failed: ${error instanceof Error ? error.message : String(error)}`;
}
