/** A user callback threw: surface it like an uncaught error without breaking the pipeline. */
export function reportError(err: unknown): void {
  queueMicrotask(() => {
    throw err;
  });
}
