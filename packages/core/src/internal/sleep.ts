import type { AbortSource } from '../attempt/attempt';
import { type Clock, timerDelay } from './clock';

/**
 * Waits `ms` on the clock, or rejects with the source's abort reason as soon as it aborts. The
 * wait takes the source's `onAbort` slot (a flight runs no attempt while it waits to retry) and
 * gives it back, and clears its timer, on every exit path.
 */
export function sleep(clock: Clock, ms: number, source?: AbortSource): Promise<void> {
  if (source?.aborted) return Promise.reject(source.reason);
  return new Promise<void>((resolve, reject) => {
    const timer = clock.setTimeout(() => {
      if (source) source.onAbort = undefined;
      resolve();
    }, timerDelay(ms));
    if (source) {
      source.onAbort = (reason) => {
        source.onAbort = undefined;
        clock.clearTimeout(timer);
        reject(reason);
      };
    }
  });
}
