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

/**
 * Calls `reporter`; should it throw, or return a promise that rejects (an async `onError`, which
 * its `=> void` type accepts), that is logged, never rethrown nor left unhandled.
 */
export function report(
  reporter: ErrorReporter,
  error: unknown,
  context: ListenerErrorContext,
): void {
  // The executor runs `reporter` now; a throw or a rejection both end in the catch.
  new Promise((resolve) => resolve(reporter(error, context))).then(undefined, (failure) => {
    if (reporter !== logListenerError) logListenerError(failure, { source: 'onError' });
  });
}

/** What callUser calls: a listener (named by its event), a subscriber or a matcher (by key). */
type CallSource = 'event' | 'subscriber' | 'matcher';

/**
 * Calls a user callback (a listener, subscriber or matcher) with `arg`: its throw, or the
 * rejection of a promise it returns (an async listener, which a `=> void` type accepts), goes to
 * `reporter` as `source` for `name` (the event, or the key), never up. Returns what it returned.
 */
export function callUser<T, R>(
  reporter: ErrorReporter,
  fn: (arg: T) => R,
  arg: T,
  source: CallSource,
  name: string,
): R | undefined {
  try {
    const result = fn(arg);
    // No closure unless it returned a promise: listeners run on every request.
    if (typeof (result as PromiseLike<unknown> | null)?.then === 'function') {
      (result as PromiseLike<unknown>).then(undefined, (error) =>
        reportAs(reporter, error, source, name),
      );
    }
    return result;
  } catch (error) {
    reportAs(reporter, error, source, name);
  }
}

function reportAs(reporter: ErrorReporter, error: unknown, source: CallSource, name: string): void {
  const context = source === 'event' ? { source, event: name } : { source, key: name };
  report(reporter, error, context as ListenerErrorContext);
}

function describe(context: ListenerErrorContext): string {
  switch (context.source) {
    case 'event':
      return `a listener of "${context.event}"`;
    case 'subscriber':
    case 'cancel':
      return `a ${context.source} of ${context.key}`;
    case 'matcher':
      return `a subscribe matcher (for ${context.key})`;
    case 'onError':
      return 'the onError handler';
    case 'internal':
      return 'an internal step (a keel bug)';
  }
}
