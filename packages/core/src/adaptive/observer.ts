import { classifyError } from '../circuit/outcome';
import { isAbortError } from '../errors/cancelled-error';
import { isHttpError } from '../errors/http-error';
import { isKeelError } from '../errors/keel-error';
import { type Emitter, onEach } from '../events/emitter';
import type { Tracker } from '../tracker/tracker';
import type { ClientEvents } from '../types/events';
import type { AdaptiveEngine } from './engine';
import type { Outcome } from './outcome-ring';

/**
 * The `cancel` event as the client emits it: with the tracker of the flight the caller left, an
 * internal field (its public `tracker` is the caller's own; see the client's #cancelConsumer).
 */
type CancelEvent = ClientEvents['cancel'] & { readonly flight: Tracker };

/** One flight as the observer follows it. */
interface Watched {
  readonly endpoint: string;
  readonly key: string;
  readonly tracker: Tracker;
  /** The scheduler job id (the flight id), bound at its first `request-queued`; -1 before. */
  id: number;
  /** An attempt is being measured (it counts in the engine's `active`). */
  measuring: boolean;
  /** When the attempt being measured started (whatever the injected clock said, NaN included). */
  startedAt: number;
  /**
   * Attempts made before the one being measured: the tracker's count not past it at the end
   * means no attempt reached fetch. Taken from the events, not the live tracker: an event
   * emitted while another is being delivered reaches us later, maybe once the attempt began.
   * With a scheduler, each `request-started` is followed by one attempt unless the job ends, so
   * the n-th start measures attempt n (-1 before the first).
   */
  attempts: number;
  /** The classified error of the last failed attempt (from `retry`), for `request-delayed`. */
  lastOutcome: Outcome | undefined;
  /** The live flight of the same key that came before (older) / after (newer) this one. */
  older: Watched | undefined;
  newer?: Watched | undefined;
}

/**
 * Feeds the adaptive engine from lifecycle events only (events rule 3): one sample per network
 * attempt, its latency measured from `request-started` (or `request` in transparent mode) to the
 * attempt's terminal event: `success`, `error`, or `request-delayed` (a retry park). In
 * transparent mode there is no `request-delayed`: `retry` marks the same moment (the attempt
 * failed, the flight waits `delay`), and the next attempt is taken to start when that wait ends.
 * Cancellations end a measurement without a sample; cache hits and dedup joins are never seen.
 *
 * Events name a flight in two ways: flight events carry its `tracker`, scheduler events its job
 * `id`. They are tied together at the flight's first `request-queued`, which the client emits
 * synchronously right after `request` (the flight's `#run` reaches `acquire` without awaiting):
 * a flight of that key whose `request` is heard in between (made by a `request` listener) has
 * had its `request-queued` heard too, so the newest unbound flight with that key is the one.
 * A final `cancel` may carry a joiner's tracker: the client adds the flight's own (CancelEvent),
 * so the flight it ended is found in O(1).
 */
export class AdaptiveObserver {
  readonly #engine: AdaptiveEngine;
  readonly #clock: { now(): number };
  readonly #scheduled: boolean;
  readonly #byTracker = new Map<Tracker, Watched>();
  readonly #byId = new Map<number, Watched>();
  /**
   * The newest live flight per key, the head of a list linked by `older` (rarely more than one
   * flight: dedup keeps reads unique, but 100,000 identical POSTs are 100,000 flights of one key,
   * so a flight leaves its list in O(1), never by a search).
   */
  readonly #byKey = new Map<string, Watched>();

  constructor(engine: AdaptiveEngine, clock: { now(): number }, scheduled: boolean) {
    this.#engine = engine;
    this.#clock = clock;
    this.#scheduled = scheduled;
  }

  /** Subscribes to the lifecycle events; returns the unsubscribe. */
  observe(events: Emitter<ClientEvents>): () => void {
    const scheduled = this.#scheduled
      ? {
          'request-queued': this.#onQueued,
          'request-started': this.#onStarted,
          'request-delayed': this.#onDelayed,
          'request-rejected': this.#onRejected,
        }
      : {};
    return onEach(events, {
      request: this.#onRequest,
      retry: this.#onRetry,
      success: this.#onSuccess,
      error: this.#onError,
      cancel: this.#onCancel,
      ...scheduled,
    });
  }

  /** Flights being followed (for leak checks). */
  get size(): number {
    return this.#byTracker.size;
  }

  /** Forgets every flight: measurements in progress at a reset are never recorded. */
  reset(): void {
    this.#byTracker.clear();
    this.#byId.clear();
    this.#byKey.clear();
  }

  // ── flight events ───────────────────────────────────────────────────────────────────────────

  readonly #onRequest = (e: ClientEvents['request']): void => {
    const w: Watched = {
      endpoint: e.endpoint,
      key: e.key,
      tracker: e.tracker,
      id: -1,
      measuring: false,
      startedAt: 0,
      attempts: -1,
      lastOutcome: undefined,
      older: this.#byKey.get(e.key),
    };
    this.#byTracker.set(e.tracker, w);
    if (w.older !== undefined) w.older.newer = w;
    this.#byKey.set(e.key, w);
    if (!this.#scheduled) this.#begin(w, this.#now(), 0);
  };

  readonly #onRetry = (e: ClientEvents['retry']): void => {
    const w = this.#byTracker.get(e.tracker);
    if (w === undefined) return;
    w.lastOutcome = classify(e.error);
    if (this.#scheduled) return; // `request-delayed` ends the attempt
    const now = this.#now();
    this.#end(w, w.lastOutcome, now);
    this.#begin(w, now + e.delay, e.attempts);
  };

  readonly #onSuccess = (e: ClientEvents['success']): void => {
    this.#close(this.#byTracker.get(e.tracker), 'took');
  };

  readonly #onError = (e: ClientEvents['error']): void => {
    // An error of the app's own callback (see flightVerdict) is no sample of the endpoint.
    this.#close(
      this.#byTracker.get(e.tracker),
      isKeelError(e.error) ? classify(e.error) : undefined,
    );
  };

  readonly #onCancel = (e: ClientEvents['cancel']): void => {
    // By the flight's own tracker: the public one is the caller's (a joiner's, when it was last).
    if (e.final) this.#close(this.#byTracker.get((e as CancelEvent).flight));
  };

  // ── scheduler events ────────────────────────────────────────────────────────────────────────

  readonly #onQueued = (e: ClientEvents['request-queued']): void => {
    // Known id: re-queued after a retry wait. Every flight bound (each followed flight with an
    // id is in #byId): a job whose wait began before a reset; return at once rather than walk
    // every flight of its key (O(n^2) over a burst of identical POSTs).
    const byId = this.#byId;
    if (byId.size === this.#byTracker.size || byId.has(e.id)) return;
    for (let w = this.#byKey.get(e.key); w !== undefined; w = w.older) {
      if (w.id !== -1) continue;
      w.id = e.id;
      byId.set(e.id, w);
      return;
    }
  };

  readonly #onStarted = (e: ClientEvents['request-started']): void => {
    const w = this.#byId.get(e.id);
    if (w !== undefined) this.#begin(w, this.#now(), w.attempts + 1);
  };

  readonly #onDelayed = (e: ClientEvents['request-delayed']): void => {
    // A rate-budget park happens before the attempt starts: nothing is being measured then.
    const w = this.#byId.get(e.id);
    if (w !== undefined) this.#end(w, w.lastOutcome ?? 'error', this.#now());
  };

  readonly #onRejected = (e: ClientEvents['request-rejected']): void => {
    this.#close(this.#byId.get(e.id));
  };

  // ── measurement ─────────────────────────────────────────────────────────────────────────────

  /**
   * The clock's time; NaN when it throws (an attempt measured from or to it is no latency). The
   * client meets that throw itself: thrown here, it was reported as an app's listener failing.
   */
  #now(): number {
    try {
      return this.#clock.now();
    } catch {
      return Number.NaN;
    }
  }

  #begin(w: Watched, at: number, attemptsBefore: number): void {
    if (!w.measuring) this.#engine.started(w.endpoint, at);
    w.measuring = true;
    w.startedAt = at;
    w.attempts = attemptsBefore;
  }

  /**
   * Ends the attempt being measured, if any; `undefined` outcome = no sample. A job whose
   * deadline ran out at the very moment it got its slot never called fetch: no sample either.
   */
  #end(w: Watched, outcome: Outcome | undefined, now: number): void {
    if (!w.measuring) return;
    w.measuring = false;
    this.#engine.ended(
      w.endpoint,
      now - w.startedAt,
      w.tracker.attempts > w.attempts ? outcome : undefined,
      now,
    );
  }

  /**
   * The flight ended: its attempt being measured ends with `outcome` when the client ended it
   * (NaN: its clock could not tell), and it is forgotten.
   */
  #close(w: Watched | undefined, outcome?: Outcome): void {
    if (w === undefined) return;
    this.#end(w, outcome, w.tracker.endedAt);
    this.#forget(w);
  }

  #forget(w: Watched): void {
    // Forgotten once: a reset may have forgotten it already (its list is gone then).
    if (!this.#byTracker.delete(w.tracker)) return;
    if (w.id !== -1) this.#byId.delete(w.id);
    const { older, newer } = w;
    if (older) older.newer = newer;
    if (newer) newer.older = older;
    else if (older) this.#byKey.set(w.key, older);
    else this.#byKey.delete(w.key);
  }
}

/**
 * An attempt's outcome. `rateLimited`: a 429. `error`: what the circuit breaker counts too
 * (5xx, a timeout, a network error). `took`: any other answer (2xx, other 4xx, an unparsable
 * body): the endpoint answered, which is not pressure. Cancellation is no sample at all.
 */
export function classify(error: unknown): Outcome | undefined {
  // The breaker's verdict, refined: a 429 is its own outcome, and only 5xx count as errors.
  const verdict = classifyError(error);
  if (verdict === 'neutral') return isAbortError(error) ? undefined : 'took';
  if (verdict === 'answered') return 'took';
  if (!isHttpError(error)) return 'error'; // TimeoutError, or a network error from fetch
  const { status } = error;
  return status === 429 ? 'rateLimited' : status === undefined ? 'took' : 'error';
}
