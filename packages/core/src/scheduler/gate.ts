import type { Clock } from '../internal/clock';
import { sleep } from '../internal/sleep';
import type { ParkReason, RequestSpec } from '../types';

/**
 * What the scheduler sees of a flight. Only flight owners become jobs; dedup joiners never take
 * a slot.
 */
export interface SchedulerJob {
  readonly id: number;
  readonly spec: RequestSpec;
  /** A half-open circuit probe: skips the pre-start circuit gate and the adaptive ceiling. */
  readonly probe: boolean;
  /** Aborted when the flight is cancelled (every consumer left, or cancelAll / cancelGroup). */
  readonly signal: AbortSignal;
}

/**
 * The pipeline's scheduler stage, called around every network attempt of a flight:
 *
 *   enter ─► acquire ─► attempt ─► release ─┬─► finish
 *               ▲                           └─► park (retry wait) ─┐
 *               └──────────────────────────────────────────────────┘
 *
 * `acquire` returns null when the job may start at once, so transparent mode costs no await.
 */
export interface AttemptGate {
  readonly enabled: boolean;
  enter(job: SchedulerJob): void;
  acquire(job: SchedulerJob): Promise<void> | null;
  release(job: SchedulerJob): void;
  /** A retry wait (backoff / Retry-After): the job holds no slot while parked. */
  park(job: SchedulerJob, reason: ParkReason, delay: number): Promise<void>;
  /** The job's lifecycle ended: `completed` (success or error) or `rejected` (cancelled). */
  finish(job: SchedulerJob, outcome: 'completed' | 'rejected'): void;
}

/** No scheduler: every attempt starts at once and a retry wait is a plain sleep. */
export class TransparentGate implements AttemptGate {
  readonly enabled = false;
  constructor(private readonly clock: Clock) {}
  enter(): void {}
  acquire(): null {
    return null;
  }
  release(): void {}
  park(job: SchedulerJob, _reason: ParkReason, delay: number): Promise<void> {
    return sleep(this.clock, delay, job.signal);
  }
  finish(): void {}
}
