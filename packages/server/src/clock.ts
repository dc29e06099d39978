/** A timer handle as returned by {@link Clock.setInterval}. */
export type TimerHandle = unknown;

/**
 * Every timer the server starts goes through one Clock, so tests can substitute a manual one and
 * count what is left running.
 */
export interface Clock {
  now(): number;
  setInterval(fn: () => void, ms: number): TimerHandle;
  clearInterval(handle: TimerHandle): void;
}

/** Reads the globals at call time, so fake-timer libraries that patch them still apply. */
export const systemClock: Clock = {
  now: () => Date.now(),
  setInterval: (fn, ms) => {
    const handle = setInterval(fn, ms);
    // Timers alone never keep the process alive: the server's sockets do.
    (handle as { unref?: () => void }).unref?.();
    return handle;
  },
  clearInterval: (handle) => clearInterval(handle as ReturnType<typeof setInterval>),
};
