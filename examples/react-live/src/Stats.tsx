import { HttpError } from '@keel/core';
import { QueryErrorBoundary, useSuspenseQuery } from '@keel/react';
import { Suspense } from 'react';

/** `GET /api/stats`: read with suspense, so `data` is there when it renders. */
function Count() {
  const { data } = useSuspenseQuery<{ count: number }>('/stats');
  return (
    <p className="status" data-testid="stats">
      {data.count} {data.count === 1 ? 'todo' : 'todos'} on the server
    </p>
  );
}

/**
 * The stats line behind a suspense boundary and keel's error boundary: a failed read shows the
 * HTTP error once (it is not read again in a loop), and Retry reads it again.
 */
export function Stats() {
  return (
    <QueryErrorBoundary
      fallback={({ error, reset }) => (
        <p role="alert" data-testid="stats-error">
          Stats failed: {error instanceof HttpError ? `HTTP ${error.status}` : String(error)}{' '}
          <button type="button" onClick={reset}>
            Retry
          </button>
        </p>
      )}
    >
      <Suspense fallback={<p className="status">Loading stats…</p>}>
        <Count />
      </Suspense>
    </QueryErrorBoundary>
  );
}
