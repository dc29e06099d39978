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
 */
export class Consumer {
  settled = false;
  onAbort: (() => void) | undefined = undefined;
  /** A joiner's own deadline, when it ends before the flight's (cleared when it settles). */
  deadlineTimer: TimerHandle | undefined = undefined;
  constructor(
    readonly flight: Flight,
    readonly tracker: Tracker,
    readonly resolve: ((r: ApiResponse) => void) | undefined,
    readonly reject: ((e: unknown) => void) | undefined,
    readonly signal: AbortSignal | undefined,
  ) {}

  get internal(): boolean {
    return this.resolve === undefined;
  }
}

export interface RetryWait {
  readonly reason: 'backoff' | 'retry-after';
  readonly delay: number;
  /** When it ends (clock time). */
  readonly until: number;
}

/**
 * The unit below dedup: one owner's network work, shared by every consumer that joined it.
 * It is aborted only when its last consumer leaves (or on cancelAll / a group cancel).
 *
 * A queued flight may wait a long time behind thousands of others, so it holds as little as it
 * can meanwhile: no AbortController (each attempt creates its own, and the attempt or retry wait
 * in progress is told of an abort through `onAbort`), and a lone consumer sits in a field; the Set exists only once a second
 * consumer joins (bench/scheduler.bench.mjs: GC was the largest cost with 100,000 queued).
 */
export class Flight implements SchedulerJob, AbortSource {
  readonly tracker: Tracker;
  /** Set by `abort`, with the first reason. */
  aborted = false;
  reason: unknown = undefined;
  /** An invalidation landed while in flight: the response must not be stored as fresh. */
  stale = false;
  /** Deliver the cache write as `revalidate` (a background or post-invalidation refetch). */
  revalidate = false;
  settled = false;
  /** The scheduler's record while the flight is a scheduler job (see SchedulerJob). */
  gateEntry: Entry | undefined = undefined;
  /** The retry wait in progress (for inspection): what set its delay and when it ends. */
  wait: RetryWait | undefined = undefined;
  /** When the running (or last) attempt started, on the client's clock. */
  attemptStartedAt = 0;
  /** When the flight's `deadline` runs out (clock time), or 0 without one. */
  deadlineAt = 0;
  deadlineTimer: TimerHandle | undefined = undefined;
  /**
   * The deadline ran out: the flight was aborted to stop its work, but it ends as a failure
   * (`error`), not as a cancellation.
   */
  expired = false;
  /** The running attempt's or retry wait's abort (attempt.ts AbortSource): called by `abort`. */
  onAbort: ((reason: unknown) => void) | undefined = undefined;
  /** The only consumer while there is one; undefined once `#many` holds them all. */
  #one: Consumer | undefined = undefined;
  #many: Set<Consumer> | undefined = undefined;

  constructor(
    readonly id: number,
    readonly spec: RequestSpec,
    readonly probe: boolean,
  ) {
    this.tracker = new Tracker(spec.key);
  }

  get key(): string {
    return this.spec.key;
  }

  /** Aborts the flight; the first reason wins, like AbortController.abort. */
  abort(reason: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    this.onAbort?.(reason);
  }

  get consumerCount(): number {
    return this.#many !== undefined ? this.#many.size : this.#one !== undefined ? 1 : 0;
  }

  addConsumer(consumer: Consumer): void {
    if (this.#many !== undefined) this.#many.add(consumer);
    else if (this.#one === undefined || this.#one === consumer) this.#one = consumer;
    else {
      this.#many = new Set([this.#one, consumer]);
      this.#one = undefined;
    }
  }

  deleteConsumer(consumer: Consumer): void {
    if (this.#many !== undefined) this.#many.delete(consumer);
    else if (this.#one === consumer) this.#one = undefined;
  }

  /** The consumers now, as a snapshot the caller may iterate while consumers leave. */
  consumers(): readonly Consumer[] {
    if (this.#many !== undefined) return [...this.#many];
    return this.#one !== undefined ? [this.#one] : NONE;
  }

  /** Removes and returns every consumer (the flight settled: each is answered once). */
  takeConsumers(): Iterable<Consumer> {
    const many = this.#many;
    const one = this.#one;
    this.#many = undefined;
    this.#one = undefined;
    if (many !== undefined) return many;
    return one !== undefined ? [one] : NONE;
  }
}

const NONE: readonly Consumer[] = [];
