import type { Entry } from './entry';
import { LaneQueue } from './lane-queue';

/** A cap on simultaneous attempts of some jobs: one host (`hosts`) or one endpoint (a ceiling). */
export class Limiter {
  active = 0;
  /** The job classes it counts: re-admitted to the lanes when it stops being saturated. */
  readonly classes = new Set<JobClass>();
  constructor(
    readonly key: string,
    public cap: number,
  ) {}

  get saturated(): boolean {
    return this.active >= this.cap;
  }
}

/** A queue group (`RequestOptions.scheduler.group`): paused, resumed and cancelled as one. */
export class Group {
  paused = false;
  /** Live jobs of the group, in any state. */
  readonly entries = new Set<Entry>();
  readonly classes = new Set<JobClass>();
  constructor(readonly name: string) {}

  /** Nothing to remember: the group can be forgotten. */
  get idle(): boolean {
    return !this.paused && this.entries.size === 0 && this.classes.size === 0;
  }
}

/**
 * Jobs that are blocked and unblocked together: same capped host, same group, same ceilinged
 * endpoint (and probe flag). A class has one FIFO per lane; a lane serves the earliest job of
 * its classes that are not blocked, so a saturated host or a paused group is skipped as a
 * whole, in O(log classes), and its jobs keep their place (their `seq`) for when it frees.
 * Most jobs share one default class, which makes the common case a plain FIFO.
 */
export class JobClass {
  readonly queues: LaneQueue[];
  /** Live entries of this class (any state); the scheduler forgets the class at 0. */
  refs = 0;

  constructor(
    readonly key: string,
    readonly group: Group | undefined,
    /** Limiters that hold this class back when saturated. */
    readonly blockers: readonly Limiter[],
    /** Limiters that count this class's running jobs (a probe is counted but not held back). */
    readonly counted: readonly Limiter[],
    lanes: number,
  ) {
    this.queues = [];
    for (let i = 0; i < lanes; i++) this.queues.push(new LaneQueue(this, i));
  }

  get blocked(): boolean {
    if (this.group?.paused) return true;
    for (let i = 0; i < this.blockers.length; i++) {
      if (this.blockers[i]!.saturated) return true;
    }
    return false;
  }
}
