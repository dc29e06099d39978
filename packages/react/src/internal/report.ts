/** A user callback threw: surface it like an uncaught error without breaking the caller's loop. */
export function reportError(err: unknown): void {
  queueMicrotask(() => {
    throw err;
  });
}

/** The core's own: one empty function in an app's bundle. */
export { noop } from '@keel/core/internals';
