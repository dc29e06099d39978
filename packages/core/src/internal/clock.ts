/** Opaque timer handle: whatever the clock's setTimeout returns. */
export type TimerHandle = unknown;

/**
 * The one source of time for a client. Every timer keel starts (timeouts, retry waits, circuit
 * windows, scheduler parking) goes through it, so tests can substitute a fake clock.
 */
export interface Clock {
  now(): number;
  setTimeout(fn: () => void, ms: number): TimerHandle;
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
