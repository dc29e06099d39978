export type RequestState = 'idle' | 'pending' | 'retrying' | 'success' | 'error' | 'cancelled';

const TERMINAL: ReadonlySet<RequestState> = new Set(['success', 'error', 'cancelled']);

/**
 * The state machine of one request: idle -> pending -> retrying* -> success | error | cancelled.
 * One tracker exists per flight; dedup consumers and cache hits get their own (cheap) trackers
 * that mirror the outcome. Moves out of a terminal state are ignored, so a late callback cannot
 * resurrect a finished request.
 */
export class Tracker {
  state: RequestState = 'idle';
  /** Attempts started so far. */
  attempts = 0;
  startedAt = 0;
  endedAt = 0;
  /** When its last retry was scheduled (NaN: the clock could not tell, or it was not given). */
  retriedAt = 0;
  error: unknown;

  constructor(readonly key: string) {}

  get settled(): boolean {
    return TERMINAL.has(this.state);
  }

  start(now: number): void {
    if (this.state !== 'idle') return;
    this.state = 'pending';
    this.startedAt = now;
  }

  /** A new attempt begins; the second and later ones move to `retrying`. */
  attempt(): void {
    if (this.settled) return;
    this.attempts++;
    if (this.attempts > 1) this.state = 'retrying';
  }

  /** A retry was scheduled at `now`: the request is `retrying` from the moment it waits to try again. */
  retry(now = Number.NaN): void {
    if (this.settled) return;
    this.retriedAt = now;
    if (this.state === 'pending') this.state = 'retrying';
  }

  succeed(now: number): void {
    this.#end('success', now);
  }

  fail(now: number, error: unknown): void {
    this.#end('error', now, error);
  }

  cancel(now: number): void {
    this.#end('cancelled', now);
  }

  #end(state: RequestState, now: number, error?: unknown): void {
    if (this.settled) return;
    if (this.state === 'idle') this.startedAt = now;
    this.state = state;
    this.endedAt = now;
    this.error = error;
  }
}
