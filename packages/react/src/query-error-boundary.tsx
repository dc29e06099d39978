import type { Client } from '@keel/core';
import { Component, type ContextType, type ReactNode, useCallback } from 'react';
import { ClientContext, useClient } from './provider';
import { storeFor } from './query/store';

/**
 * Returns a function that lets the failed suspense queries of this client (whether or not their
 * error was the one shown) read again at their next render. Call it when your error boundary
 * resets (for react-error-boundary: `onReset={reset}`); `<QueryErrorBoundary>` does it by itself.
 * Without it, a thrown error is kept for one second after the last render that threw it.
 *
 * @example
 * const reset = useQueryErrorReset();
 * <ErrorBoundary onReset={reset} fallbackRender={...}>...</ErrorBoundary>
 */
export function useQueryErrorReset(): () => void {
  const client = useClient();
  return useCallback(() => releaseErrors(client), [client]);
}

/**
 * Lets every key of `client` with an error read again at its next suspending render (an error
 * boundary was reset): an error set before this is never thrown again (see QueryEntry.stale).
 */
function releaseErrors(client: Client): void {
  storeFor(client).resets++;
}

/** What `<QueryErrorBoundary fallback>` renders. */
export interface QueryErrorFallbackProps {
  /** The error a query (or anything else below) threw: an HttpError, a TimeoutError, ... */
  error: unknown;
  /** Reads the failed queries again and renders the children. */
  reset: () => void;
}

export interface QueryErrorBoundaryProps {
  children?: ReactNode;
  /** Rendered instead of the children while there is an error. */
  fallback: (props: QueryErrorFallbackProps) => ReactNode;
  /**
   * Values that reset the boundary when one of them changes (the page's route, a query's URL...).
   * @default none
   */
  resetKeys?: readonly unknown[] | undefined;
  /** Called when the boundary resets, before the children render again. */
  onReset?: (() => void) | undefined;
  /** Called once per error caught (for logging). */
  onError?: ((error: unknown) => void) | undefined;
}

interface State {
  error: unknown;
  failed: boolean;
}

/**
 * An error boundary for suspense queries. It shows `fallback` with the error; its `reset` (or a
 * change of `resetKeys`, or the boundary's own remount) lets the failed queries read again, once,
 * and renders the children. Put a `<Suspense>` inside or around it for the loading state.
 *
 * @example
 * <QueryErrorBoundary fallback={({ error, reset }) => (
 *   <p>{String(error)} <button onClick={reset}>Retry</button></p>
 * )}>
 *   <Suspense fallback={<Spinner />}><Todos /></Suspense>
 * </QueryErrorBoundary>
 */
export class QueryErrorBoundary extends Component<QueryErrorBoundaryProps, State> {
  static override contextType = ClientContext;
  declare context: ContextType<typeof ClientContext>;
  override state: State = { error: null, failed: false };

  static getDerivedStateFromError(error: unknown): State {
    return { error, failed: true };
  }

  override componentDidCatch(error: unknown): void {
    this.props.onError?.(error);
  }

  override componentDidUpdate(previous: QueryErrorBoundaryProps, before: State): void {
    // Only an error shown before this update: one thrown by the very render that brought the new
    // keys is that render's outcome (a reset would render it again, to throw again).
    if (before.failed && this.state.failed && changed(previous.resetKeys, this.props.resetKeys)) {
      this.reset();
    }
  }

  override componentWillUnmount(): void {
    // A boundary replaced while it shows an error (a `key` change): its queries read again.
    if (this.state.failed) this.#release();
  }

  reset = (): void => {
    this.#release();
    this.props.onReset?.();
    this.setState({ error: null, failed: false });
  };

  #release(): void {
    if (this.context !== null) releaseErrors(this.context);
  }

  override render(): ReactNode {
    if (this.state.failed)
      return this.props.fallback({ error: this.state.error, reset: this.reset });
    return this.props.children;
  }
}

function changed(a: readonly unknown[] | undefined, b: readonly unknown[] | undefined): boolean {
  if (a === b) return false;
  if (a === undefined || b === undefined || a.length !== b.length) return true;
  return a.some((value, i) => !Object.is(value, b[i]));
}
