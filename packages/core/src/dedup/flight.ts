import type { AbortSource } from '../attempt/attempt';
import type { TimerHandle } from '../internal/clock';
import type { RequestSpec } from '../request/resolve';
import type { Entry } from '../scheduler/entry';
import type { SchedulerJob } from '../scheduler/gate';
import { Tracker } from '../tracker/tracker';
import type { ApiResponse } from '../types/client';

/**
 * One caller attached to a flight. Internal consumers (SWR refresh, post-invalidation refetch)
 * have no promise: they keep the flight alive and swallow its outcome.
 *
 * A joiner's own tracker would only ever mirror the flight's outcome, and the one place it is
 * handed out is its `cancel` event: so a joiner keeps the time it joined, and the client builds
 * its tracker when it cancels (10,000 joiners of one flight allocate no tracker).
 */
export class Consumer {
  /**
   * Answered, cancelled or timed out: out of its flight's consumer list (set by the flight, in
   * `deleteConsumer` and `takeConsumers`; a consumer is added once).
   */
  settled = false;
  onAbort: (() => void) | undefined;
  /** A joiner's own deadline timer, when it ends before the flight's (cleared when it settles). */
  timer: TimerHandle | undefined;
  /** The caller's promise; undefined for an internal consumer. */
  readonly promise: Promise<ApiResponse> | undefined;
  readonly resolve: ((r: ApiResponse) => void) | undefined;
  readonly reject: ((e: unknown) => void) | undefined;

  constructor(
    readonly flight: Flight,
    /** When a joiner joined (clock time); NaN for a consumer whose tracker is the flight's. */
    readonly joinedAt: number,
    /** A caller's consumer (with a promise) rather than an internal one. */
    caller: boolean,
    readonly signal?: AbortSignal,
  ) {
    // Declared fields start undefined (an internal consumer keeps them so; same shape either way).
    if (caller) {
      this.promise = new Promise(capture);
      this.resolve = captured.resolve;
      this.reject = captured.reject;
      // The slot keeps the last caller's pair (its promise, answer and client) until the next
      // caller's replaces it: one request's objects at most. Clearing it here, or once a flight
      // ends, made 10,000 joins ~3.5x slower after a full GC (bench/client dedup: with nothing
      // of the last request left, V8 deoptimizes the join path, "weak objects").
    }
  }
}

/**
 * The resolving functions of the promise being constructed, taken by `capture`; kept until the
 * next caller's replace them (see Consumer).
 */
const captured: {
  resolve: ((r: ApiResponse) => void) | undefined;
  reject: ((e: unknown) => void) | undefined;
} = { resolve: undefined, reject: undefined };

/** One shared executor: a caller's promise allocates no closure to hand its functions out. */
function capture(resolve: (r: ApiResponse) => void, reject: (e: unknown) => void): void {
  captured.resolve = resolve;
  captured.reject = reject;
}

export interface RetryWait {
  readonly reason: 'backoff' | 'retry-after';
  readonly delay: number;
  /** When it ends (clock time). */
  readonly until: number;
  /** The error it waits to retry after (a deadline running out meanwhile names it as `cause`). */
  readonly error: unknown;
}

/**
 * The unit below dedup: one owner's network work, shared by every consumer that joined it.
 * It is aborted only when its last consumer leaves (or on cancelAll / a group cancel).
 *
 * A queued flight may wait a long time behind thousands of others, so it holds as little as it
 * can meanwhile: no AbortController (each attempt creates its own, and the attempt or retry wait
 * in progress is told of an abort through `onAbort`), and a lone consumer sits in a field; the list
 * exists only once a second consumer joins (bench/scheduler.bench.mjs: GC was the largest cost with 100,000 queued).
 */
export class Flight implements SchedulerJob, AbortSource {
  readonly tracker: Tracker;
  /** The spec's key (read on every dedup map and cancel path). */
  readonly key: string;
  /** Set by `abort`, with the first reason. */
  aborted = false;
  reason: unknown;
  /** An invalidation landed while in flight: the response must not be stored as fresh. */
  stale = false;
  /** Deliver the cache write as `revalidate` (a background or post-invalidation refetch). */
  revalidate = false;
  settled = false;
  /** The scheduler's record while the flight is a scheduler job (see SchedulerJob). */
  gateEntry: Entry | undefined;
  /**
   * The retry wait in progress, or ended with the flight not yet running its next attempt
   * (queued for a slot): what set its delay, when it ends, the error it retries after.
   */
  wait: RetryWait | undefined;
  /** When the running (or last) attempt started, on the client's clock. */
  attemptAt = 0;
  /** When the flight's `deadline` runs out (clock time), or 0 without one. */
  deadlineAt = 0;
  /** The deadline's timer, armed when the flight flies (cleared when it ends). */
  timer: TimerHandle | undefined;
  /**
   * The deadline ran out: the flight was aborted to stop its work, but it ends as a failure
   * (`error`), not as a cancellation.
   */
  expired = false;
  /** The running attempt's or retry wait's abort (attempt.ts AbortSource): called by `abort`. */
  onAbort: ((reason: unknown) => void) | undefined;
  /** The only consumer while there is one; undefined once `#many` holds them all. */
  #one: Consumer | undefined;
  /**
   * Every consumer in joining order once a second one joined, some of them removed (`settled`): removal is O(1), and the holes are compacted once they outnumber the live ones. An
   * array rather than a Set: 10,000 joiners of one flight cost a slot each, and no hashing.
   */
  #many: Consumer[] | undefined;
  #count = 0;

  /** A half-open circuit probe (set when the circuit admits the flight). */
  probe = false;
  /**
   * The spec its response is cached under: its own when it caches, else that of the first
   * caching read or refetch that joined it (a `cache: false` read does not keep them uncached).
   */
  writer: RequestSpec | undefined;

  constructor(
    readonly id: number,
    readonly spec: RequestSpec,
  ) {
    this.tracker = new Tracker((this.key = spec.key));
    this.cacheFor(spec);
  }

  /** A request of `spec` rides on this flight: if it caches, the response is written for it. */
  cacheFor(spec: RequestSpec): void {
    if (spec.cache) this.writer ??= spec;
  }

  /** Aborts the flight; the first reason wins, like AbortController.abort. */
  abort(reason: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    this.onAbort?.(reason);
  }

  get consumerCount(): number {
    return this.#count;
  }

  addConsumer(consumer: Consumer): void {
    this.#count++;
    if (this.#many) this.#many.push(consumer);
    else if (this.#one) this.#many = [this.#one, consumer];
    else this.#one = consumer;
    if (this.#many) this.#one = undefined;
  }

  /** Takes a consumer that leaves out of the list: it is settled from now on. */
  deleteConsumer(consumer: Consumer): void {
    if (consumer.settled) return;
    consumer.settled = true;
    if (this.#one === consumer) this.#one = undefined;
    // Compacted once the holes outnumber the consumers: O(1) amortized per removal.
    if (--this.#count * 2 < (this.#many?.length ?? 0)) this.#many = this.consumers();
  }

  /** The consumers now, in joining order, as a snapshot the caller may iterate while they leave. */
  consumers(): Consumer[] {
    return this.#many ? this.#many.filter(isLive) : this.#one ? [this.#one] : [];
  }

  /** Removes and returns every consumer, each settled (the flight ended: each is answered once). */
  takeConsumers(): readonly Consumer[] {
    const taken = this.consumers();
    this.#one = this.#many = undefined;
    this.#count = 0;
    for (const consumer of taken) consumer.settled = true;
    return taken;
  }
}

function isLive(consumer: Consumer): boolean {
  return !consumer.settled;
}
