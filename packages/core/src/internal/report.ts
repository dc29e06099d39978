import type { ListenerErrorContext } from '../types/events';

/** Where a user callback's error goes: the client's `onError`. */
export type ErrorReporter = (error: unknown, context: ListenerErrorContext) => void;

/**
 * The default `onError`: logs. A listener's error must never escape as an uncaught exception
 * (in Node that ends the process), so it is reported here and the pipeline goes on.
 */
export const logListenerError: ErrorReporter = (error, context) => {
  console.error(`keel: ${describe(context)} threw`, error);
};

/** Calls `report`; should the reporter itself throw, that is logged, never rethrown. */
export function report(
  reporter: ErrorReporter,
  error: unknown,
  context: ListenerErrorContext,
): void {
  try {
    reporter(error, context);
  } catch (failure) {
    if (reporter !== logListenerError) logListenerError(failure, { source: 'onError' });
  }
}

function describe(context: ListenerErrorContext): string {
  switch (context.source) {
    case 'event':
      return `a listener of "${context.event}"`;
    case 'subscriber':
      return `a subscriber of ${context.key}`;
    case 'matcher':
      return `a subscribe matcher (for ${context.key})`;
    case 'onError':
      return 'the onError handler';
    case 'internal':
      return 'an internal step (a keel bug)';
  }
}
