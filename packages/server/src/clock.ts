import { checkObject, typeError } from './checks';

/** Opaque timer handle: whatever the clock's `setTimeout` returns. */
export type TimerHandle = unknown;

/**
 * The one source of time for an app: every timer the server starts (SSE heartbeats,
 * `ctx.sseInterval` ticks, the `close()` deadline) goes through it, so tests can substitute a
 * manual clock and count what is left running.
 *
 * The same shape as `@keel/core`'s `Clock` (the server does not depend on core): one fake clock
 * object can drive a client and a server in the same test. Repeating timers are one-shot
 * timers re-armed on each tick.
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
 * The longest delay a timer can take: Node stores it in a signed 32-bit int and fires a longer
 * one after 1 ms. Timer options are checked against it.
 */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/** The global timers, read at call time so fake-timer libraries that patch them still apply. */
export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => {
    const handle = setTimeout(fn, ms);
    // Timers alone never keep the process alive: the server's sockets do.
    handle.unref();
    return handle;
  },
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

/** `createApp({ clock })`: the system clock when undefined, else an object with the 3 methods. */
export function checkClock(clock: Clock | undefined): Clock {
  if (clock === undefined) return systemClock;
  checkObject('clock', clock);
  for (const method of ['now', 'setTimeout', 'clearTimeout'] as const) {
    if (typeof clock[method] !== 'function') {
      throw typeError(`clock.${method}`, 'a function', clock[method]);
    }
  }
  return clock;
}

/**
 * Calls `fn` every `ms` until the returned function is called. One pending timer at a time: the
 * next is armed before `fn` runs, so a `fn` that stops the repeat cancels it.
 */
export function repeat(clock: Clock, ms: number, fn: () => void): () => void {
  let handle: TimerHandle;
  let stopped = false;
  const tick = (): void => {
    if (stopped) return;
    handle = clock.setTimeout(tick, ms);
    fn();
  };
  handle = clock.setTimeout(tick, ms);
  return () => {
    if (stopped) return;
    stopped = true;
    clock.clearTimeout(handle);
  };
}
