/** Opaque timer handle: whatever the clock's setTimeout returns. */
export type TimerHandle = unknown;

/**
 * The one source of time for a client. Every timer keel starts (timeouts, retry waits, circuit
 * windows, scheduler parking) goes through it, so tests can substitute a fake clock.
 *
 * `@keel/server`'s `Clock` has exactly this shape (its type test checks it), so one fake clock
 * object can drive a client and a server in the same test.
 */
export interface Clock {
  /** Milliseconds since the epoch, as `Date.now()`. */
  now(): number;
  /** Calls `fn` once after `ms` milliseconds; returns a handle for `clearTimeout`. */
  setTimeout(fn: () => void, ms: number): TimerHandle;
  /** Cancels a timer from `setTimeout`; a handle that already fired is ignored. */
  clearTimeout(handle: TimerHandle): void;
}

/**
 * The real clock. It looks up the globals at call time (not at import), so vitest's
 * `vi.useFakeTimers()` installed after import still takes effect.
 */
export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => globalThis.setTimeout(fn, ms),
  clearTimeout: (handle) => globalThis.clearTimeout(handle as ReturnType<typeof setTimeout>),
};

/**
 * The longest delay a timer can take: Node and browsers store it in a signed 32-bit int and fire
 * a longer one after 1 ms. Timer options are validated against it and every delay keel arms is
 * clamped to it (`timerDelay`).
 */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/** A delay safe to hand to a timer: NaN and negatives become 0, anything above the cap the cap. */
export function timerDelay(ms: number): number {
  return ms > 0 ? Math.min(ms, MAX_TIMER_MS) : 0;
}
