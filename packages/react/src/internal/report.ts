/** A user callback threw: surface it like an uncaught error without breaking the caller's loop. */
export function reportError(err: unknown): void {
  queueMicrotask(() => {
    throw err;
  });
}

export function noop(): void {}
