import { QueryErrorBoundary, useSuspenseQuery } from '@keel/react';
import { Suspense } from 'react';
import { explain } from './explain';

/** `GET /api/stats`: read with suspense, so `data` is there when it renders. */
function Count() {
  const { data } = useSuspenseQuery<{ count: number }>('/stats');
  return (
    <p className="stats" data-testid="stats">
      {data.count} {data.count === 1 ? 'todo' : 'todos'} on the server
    </p>
  );
}

/**
 * The stats line behind a suspense boundary and keel's error boundary: a failed read says why
 * once (it is not read again in a loop), and Try again reads it again.
 */
export function Stats() {
  return (
    <QueryErrorBoundary
      fallback={({ error, reset }) => (
        <div className="stats">
          <div className="notice" role="alert" data-testid="stats-error">
            <p>Stats are unavailable. {explain(error)}</p>
            <button type="button" className="button button-quiet" onClick={reset}>
              Try again
            </button>
          </div>
        </div>
      )}
    >
      <Suspense fallback={<p className="stats">Loading stats…</p>}>
        <Count />
      </Suspense>
    </QueryErrorBoundary>
  );
}
