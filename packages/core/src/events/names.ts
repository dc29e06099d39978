/**
 * Every event a client emits, by name: the one list. `ClientEventName` is derived from it, the
 * `ClientEvents` payload map is checked against it (test/types.test-d.ts), and `client.on`
 * refuses any other name, so a typo is an error rather than a listener that never runs.
 */
export const CLIENT_EVENT_NAMES = [
  'request',
  'success',
  'error',
  'retry',
  'cancel',
  'dedup',
  'cache-hit',
  'cache-write',
  'invalidate',
  'revalidate',
  'circuit-open',
  'circuit-half-open',
  'circuit-closed',
  'circuit-rejected',
  'request-queued',
  'request-dequeued',
  'request-started',
  'request-delayed',
  'request-scheduled',
  'request-prioritized',
  'request-rejected',
  'queue-paused',
  'queue-resumed',
] as const;
