import type { TimerHandle } from '../internal/clock';
import type { SchedulerJob } from './gate';
import type { JobClass } from './job-class';
import type { LaneQueue } from './lane-queue';

/**
 * `new` (entered, about to acquire) ─► `queued` ─► `active` ─► `delayed` (parked) ─► `queued` …
 * and `done` from any of them (finished, cancelled, or refused by the circuit gate).
 */
export type EntryState = 'new' | 'queued' | 'active' | 'delayed' | 'done';

/** The scheduler's record of one job. It is also the node of its lane queue's linked list. */
export class Entry {
  state: EntryState = 'new';
  /** Arrival order: within a lane, jobs start in ascending `seq` (FIFO). */
  seq = 0;
  /** Lane index now (prioritize moves it). */
  lane: number;
  queue: LaneQueue | undefined = undefined;
  prev: Entry | undefined = undefined;
  next: Entry | undefined = undefined;
  /** An `acquire` returned false: the `resume` hook owes the job its answer. */
  waiting = false;
  /** The pending park promise (resolved when the retry wait ends). */
  resolve: (() => void) | undefined = undefined;
  reject: ((error: unknown) => void) | undefined = undefined;
  /** The retry-wait timer while parked for backoff / Retry-After. */
  timer: TimerHandle | undefined = undefined;
  /**
   * Parked waiting for rate budget since this clock time (the scheduler re-queues it; the client
   * is not involved); -1 when not (a clock counts from the epoch). A time, not a flag: tooling
   * draws the wait from when it began (inspect's `rate-wait` phase `since`).
   */
  rateParkedAt = -1;
  /** The error of a job that ended before its client asked (the next acquire answers with it). */
  error: unknown = undefined;

  constructor(
    readonly job: SchedulerJob,
    readonly cls: JobClass,
    lane: number,
  ) {
    this.lane = lane;
  }
}
