import type { SchedulerJob } from '../scheduler/gate';
import { Tracker } from '../tracker/tracker';
import type { ApiResponse, RequestSpec } from '../types';

/**
 * One caller attached to a flight. Internal consumers (SWR refresh, post-invalidation refetch)
 * have no promise: they keep the flight alive and swallow its outcome.
 */
export class Consumer {
  settled = false;
  onAbort: (() => void) | undefined = undefined;
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

/**
 * The unit below dedup: one owner's network work, shared by every consumer that joined it.
 * It is aborted only when its last consumer leaves (or on cancelAll / a group cancel).
 */
export class Flight implements SchedulerJob {
  readonly controller = new AbortController();
  readonly tracker: Tracker;
  readonly consumers = new Set<Consumer>();
  /** An invalidation landed while in flight: the response must not be stored as fresh. */
  stale = false;
  /** Deliver the cache write as `revalidate` (a background or post-invalidation refetch). */
  revalidate = false;
  settled = false;

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

  get signal(): AbortSignal {
    return this.controller.signal;
  }
}
