// The bounded wait of the SSE test clients (helpers.ts `sse`, blackbox/helpers.ts `openSse`).

/** How long `waitFor` waits unless told: a missed event fails with a message, not a timeout. */
export const SSE_WAIT_MS = 10_000;

/** A stream's address for the messages: port, path and the Last-Event-ID it was opened with. */
export function where(port: number, path: string, headers: Record<string, string>): string {
  const last = headers['last-event-id'] ?? headers['Last-Event-ID'];
  return `:${port}${path}${last === undefined ? '' : ` (last-event-id ${last})`}`;
}

/**
 * Waiters for `events` to reach a count: each rejects after its bound, naming `where`, how many
 * it wanted and the events received so far (a bare test timeout says nothing of what was missing).
 */
export function eventWaiters(events: readonly unknown[], where: string) {
  const waiters = new Set<{ n: number; done: () => void }>();
  let ended = false;
  return {
    waitFor(n: number, ms = SSE_WAIT_MS): Promise<void> {
      if (events.length >= n) return Promise.resolve();
      return new Promise<void>((resolve, reject) => {
        const waiter = {
          n,
          done: () => {
            clearTimeout(timer);
            waiters.delete(waiter);
            resolve();
          },
        };
        const timer = setTimeout(() => {
          waiters.delete(waiter);
          const state = ended ? ', and the stream ended' : '';
          reject(
            new Error(
              `waited for ${n} events on ${where} within ${ms} ms; got ${events.length}${state}: ` +
                JSON.stringify(events),
            ),
          );
        }, ms);
        timer.unref();
        waiters.add(waiter);
      });
    },
    /** After new events: resolves the waiters now satisfied. */
    notify(): void {
      for (const w of [...waiters]) if (events.length >= w.n) w.done();
    },
    /** The stream ended: said in the message of waits still pending. */
    end(): void {
      ended = true;
    },
  };
}
