import type { CancelledError } from '../errors/cancelled-error';
import type { Clock } from '../internal/clock';
import { noop } from '../internal/noop';
import type { ErrorReporter } from '../internal/report';
import { sleep } from '../internal/sleep';
import type { RequestSpec } from '../request/resolve';
import type { SchedulerController } from '../types/controllers';
import type { ParkReason } from '../types/events';
import { transparentController } from './controller';
import type { Entry } from './entry';

/**
 * What the scheduler sees of a flight. Only flight owners become jobs; dedup joiners never take
 * a slot.
 */
export interface SchedulerJob {
  readonly id: number;
  readonly spec: RequestSpec;
  /** A half-open circuit probe: skips the pre-start circuit gate and the adaptive ceiling. */
  readonly probe: boolean;
  /**
   * The flight's abort state (every consumer left, or cancelAll / cancelGroup): `aborted`,
   * `reason`, and the `onAbort` slot a retry wait takes.
   */
  readonly aborted: boolean;
  readonly reason: unknown;
  onAbort: ((reason: unknown) => void) | undefined;
  /**
   * The scheduler's record of this job while it is entered (set and cleared by the scheduler
   * only): kept on the job so no job -> entry table grows with the queue.
   */
  gateEntry?: Entry | undefined;
}

/**
 * The pipeline's scheduler stage, called around every network attempt of a flight:
 *
 *   enter ─► acquire ─► attempt ─┬─► finish
 *               ▲                └─► park (retry wait: the slot is released) ─┐
 *               └────────────────────────────────────────────────────────────┘
 *
 * A job holds its slot from `acquire` until `park` or `finish`, so it is counted as exactly one
 * of active / queued / delayed at every moment (no gap between an attempt and its outcome).
 * `acquire` returns true when the job may start at once (always, in transparent mode). When it
 * returns false, the gate answers later through `SchedulerHooks.resume`: a callback rather than
 * a promise, because a queued job may wait behind 100,000 others and a promise, its resolvers and
 * a suspended async frame per waiting job were most of what the garbage collector had to copy.
 */
export interface AttemptGate {
  readonly enabled: boolean;
  /** The public face: `client.scheduler()`. */
  readonly controller: SchedulerController;
  enter(job: SchedulerJob): void;
  acquire(job: SchedulerJob): boolean;
  /** A retry wait (backoff / Retry-After): releases the slot; the job holds none while parked. */
  park(job: SchedulerJob, reason: ParkReason, delay: number): Promise<void>;
  /**
   * The client aborted the job (a caller cancel, cancelAll, a group cancel): drop the
   * job now, whatever its state, so the slot frees and stats move at once. Every path that aborts
   * a job must call this; the scheduler adds no abort hook of its own.
   */
  cancel(job: SchedulerJob): void;
  /** The job's lifecycle ended: `completed` (success or error) or `rejected` (cancelled). */
  finish(job: SchedulerJob, outcome: 'completed' | 'rejected'): void;
  /** Runs `fn` with dispatch held, then dispatches once (no job starts only to be cancelled). */
  batch(fn: () => void): void;
}

/** What the scheduler needs from the client: time, events, the circuit peek, cancellation. */
export interface SchedulerHooks {
  clock: Clock;
  /**
   * The answer to an `acquire` that returned false, given exactly once: `error` undefined when
   * the job got its slot, else what ended it while it waited (its cancellation reason, or
   * CircuitOpenError from the pre-start gate). It can be called from inside any gate call, even
   * that `acquire`, so the client must not run the attempt synchronously from here.
   */
  resume(job: SchedulerJob, error?: unknown): void;
  /** The circuit guard's `permits(endpoint)` peek for the pre-start gate. */
  permits(endpoint: string): boolean;
  /**
   * Cancels a job's flight for a group cancel: every consumer is rejected with `error` and the
   * client calls `cancel(job)` as it aborts the flight (or `finish(job)`, when the flight was
   * ending already: the scheduler drops no job on its own).
   */
  cancelJob(job: SchedulerJob, error: CancelledError): void;
  /**
   * `prioritize`'s selector as the client writes a key by hand (any spelling of a request's key
   * names it), or as given when it is no key (a group name).
   */
  keyOf(selector: string): string;
}

/**
 * What the client hands the scheduler feature: SchedulerHooks, except that `resumeNow` acts on
 * the answer at once (it may start the attempt), so the feature defers the scheduler's `resume`
 * calls to a microtask batch (a client without a scheduler never carries the batch) and reports
 * a throw from `resumeNow` to `onError`.
 */
export interface ClientSchedulerHooks extends Omit<SchedulerHooks, 'resume'> {
  resumeNow(job: SchedulerJob, error: unknown): void;
  onError: ErrorReporter;
}

/**
 * No scheduler: every attempt starts at once, a retry wait is a plain sleep, nothing is emitted.
 * `priority` mirrors the (disabled) option so `prioritize` answers as it would when enabled.
 */
export function transparentGate(
  clock: Clock,
  prioritize?: Parameters<typeof transparentController>[0],
): AttemptGate {
  return {
    enabled: false,
    controller: transparentController(prioritize),
    enter: noop,
    acquire: () => true,
    park: (job, _reason, delay) => sleep(clock, delay, job),
    cancel: noop,
    finish: noop,
    batch: (fn) => fn(),
  };
}
