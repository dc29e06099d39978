import type {
  CircuitView,
  Client,
  ClientInspector,
  EndpointAdaptiveState,
  EndpointStats,
} from '@keel/core';
import { useCallback } from 'react';
import { formatMs, formatPercent, MAX_ROWS, preview } from '../format';
import { onEvents, useRefresh, useTick } from '../live/refresh';
import { Sparkline } from './sparkline';

/** Events after which a row's counters or its circuit changed (cache hits wait for the tick). */
const ENDPOINT_EVENTS = [
  'request',
  'success',
  'error',
  'retry',
  'dedup',
  'cancel',
  'circuit-open',
  'circuit-half-open',
  'circuit-closed',
  'circuit-rejected',
] as const;

interface Row {
  endpoint: string;
  stats: EndpointStats | undefined;
  circuit: CircuitView | undefined;
  adaptive: EndpointAdaptiveState | undefined;
}

/** The right-aligned figure columns of the table, in order. */
const NUMERIC_COLUMNS = ['Requests', 'Hit rate', 'Failures', 'Retries', 'p50', 'p95'] as const;

/**
 * The Endpoints view: intelligence's table (requests, cache hit rate, failures, retries, p50 and
 * p95 with a sparkline of the recent samples), each endpoint's circuit with a countdown to its
 * probe, and, with the adaptive engine, the concurrency ceiling configured and in effect with
 * the reason of its last decision. Re-read on each lifecycle event (a circuit opening shows in
 * the render that follows it) and once a second (cache hits, countdowns).
 */
export function EndpointsView({
  client,
  inspector,
}: {
  client: Client;
  inspector: ClientInspector;
}) {
  const subscribe = useCallback(
    (changed: () => void) => onEvents(client, ENDPOINT_EVENTS, changed),
    [client],
  );
  useRefresh(subscribe);
  useTick(client, 1000);

  const { endpoints, summary } = client.intelligence().snapshot();
  const circuits = inspector.circuits();
  const adaptive = client.adaptive().snapshot();
  const rows = new Map<string, Row>();
  const row = (endpoint: string): Row => {
    let r = rows.get(endpoint);
    if (r === undefined) {
      r = { endpoint, stats: undefined, circuit: undefined, adaptive: undefined };
      rows.set(endpoint, r);
    }
    return r;
  };
  for (const stats of endpoints) row(`${stats.method} ${stats.path}`).stats = stats;
  for (const circuit of circuits) row(circuit.endpoint).circuit = circuit;
  for (const [endpoint, state] of Object.entries(adaptive.endpoints))
    row(endpoint).adaptive = state;
  const now = inspector.now();
  const shown = drawn([...rows.values()]);

  if (rows.size === 0) {
    return (
      <div className="kdt-view">
        <div className="kdt-empty">
          <strong>No endpoint seen yet</strong>
          Each endpoint (<code>METHOD pathname</code>) gets a row with its traffic, cache hit rate,
          failures, retries and latency, its circuit breaker, and the adaptive ceiling when the
          engine is on.
        </div>
      </div>
    );
  }

  return (
    <div className="kdt-view">
      <div className="kdt-toolbar">
        <span>
          <strong>{summary.totalRequests}</strong> requests ·{' '}
          {formatPercent(summary.cacheHits, summary.totalRequests)} from cache · {summary.failures}{' '}
          failed · {summary.retriesPerformed} retries
        </span>
        <span className="kdt-spacer" />
        {summary.circuits.open + summary.circuits.halfOpen > 0 ? (
          <span className="kdt-badge" data-tone="bad">
            {summary.circuits.open} open · {summary.circuits.halfOpen} half-open
          </span>
        ) : (
          <span className="kdt-badge" data-tone="ok">
            all circuits closed
          </span>
        )}
      </div>
      <div className="kdt-table-wrap">
        <table className="kdt-table" aria-label="Endpoints">
          <thead>
            <tr>
              <th scope="col">Endpoint</th>
              {NUMERIC_COLUMNS.map((name) => (
                <th key={name} scope="col" className="kdt-num">
                  {name}
                </th>
              ))}
              <th scope="col">Recent</th>
              <th scope="col">Circuit</th>
              {adaptive.enabled ? <th scope="col">Ceiling</th> : null}
            </tr>
          </thead>
          <tbody>
            {shown.map((r) => (
              <EndpointRow
                key={r.endpoint}
                row={r}
                now={now}
                samples={inspector.latencies(r.endpoint)}
                showAdaptive={adaptive.enabled}
              />
            ))}
          </tbody>
        </table>
      </div>
      {rows.size > shown.length ? (
        <p className="kdt-muted">
          … {rows.size - shown.length} quieter endpoints not drawn (open circuits and the busiest
          come first).
        </p>
      ) : null}
    </div>
  );
}

/**
 * The rows drawn: all of them up to MAX_ROWS, in intelligence's order; past it (intelligence
 * keeps up to 2,000 endpoints, one per id in `/items/123`-style paths) the circuits that are not
 * closed, then the most requested, so a re-render per event stays cheap.
 */
function drawn(rows: Row[]): Row[] {
  if (rows.length <= MAX_ROWS) return rows;
  const tripped = (r: Row) => (r.circuit !== undefined && r.circuit.state !== 'closed' ? 1 : 0);
  return rows
    .sort((a, b) => tripped(b) - tripped(a) || (b.stats?.requests ?? 0) - (a.stats?.requests ?? 0))
    .slice(0, MAX_ROWS);
}

function EndpointRow({
  row,
  now,
  samples,
  showAdaptive,
}: {
  row: Row;
  now: number;
  samples: number[];
  showAdaptive: boolean;
}) {
  const { stats, circuit, adaptive } = row;
  const latency = stats?.latency;
  // An endpoint is a pathname: a hostile megabyte-long one is cut like a key's URL.
  const name = preview(row.endpoint, 1_000);
  return (
    <tr data-endpoint={name}>
      <th scope="row" className="kdt-mono" style={{ fontWeight: 500 }}>
        {name}
      </th>
      <td className="kdt-num">{stats?.requests ?? 0}</td>
      <td className="kdt-num">{stats ? formatPercent(stats.cacheHits, stats.requests) : '—'}</td>
      <td className="kdt-num">{stats?.failures ?? 0}</td>
      <td className="kdt-num">{stats?.retriesPerformed ?? 0}</td>
      <td className="kdt-num">{latency && latency.samples > 0 ? formatMs(latency.p50) : '—'}</td>
      <td className="kdt-num">{latency && latency.samples > 0 ? formatMs(latency.p95) : '—'}</td>
      <td>
        <Sparkline values={samples} label={`Recent latencies of ${name}`} />
      </td>
      <td>
        <Circuit circuit={circuit} now={now} />
      </td>
      {showAdaptive ? (
        <td>
          <Ceiling state={adaptive} />
        </td>
      ) : null}
    </tr>
  );
}

function Circuit({ circuit, now }: { circuit: CircuitView | undefined; now: number }) {
  if (circuit === undefined) return <span className="kdt-muted">—</span>;
  if (circuit.state === 'closed') {
    return (
      <span>
        <span className="kdt-badge" data-tone="ok">
          closed
        </span>
        {circuit.consecutiveFailures > 0 ? (
          <span className="kdt-muted"> · {circuit.consecutiveFailures} failed in a row</span>
        ) : null}
      </span>
    );
  }
  if (circuit.state === 'halfOpen') {
    return (
      <span>
        <span className="kdt-badge" data-tone="warn" data-live="">
          half-open
        </span>
        <span className="kdt-muted"> · probe in flight</span>
      </span>
    );
  }
  const left = circuit.probeAt === undefined ? 0 : circuit.probeAt - now;
  return (
    <span>
      <span className="kdt-badge" data-tone="bad">
        open
      </span>
      <span className="kdt-muted">
        {left > 0 ? ` · half-open in ${formatMs(left)}` : ' · next request probes'}
      </span>
    </span>
  );
}

function Ceiling({ state }: { state: EndpointAdaptiveState | undefined }) {
  if (state === undefined) return <span className="kdt-muted">—</span>;
  const tone =
    state.health === 'good'
      ? 'ok'
      : state.health === 'recovering'
        ? 'info'
        : state.health === 'throttled'
          ? 'park'
          : 'warn';
  const ceiling = Number.isFinite(state.configured)
    ? `${state.effective} of ${state.configured}`
    : 'no scheduler';
  return (
    <div>
      <span className="kdt-badge" data-tone={tone}>
        {state.health}
      </span>{' '}
      <span>{ceiling}</span>
      {state.retryMode === 'throttled' ? (
        <span className="kdt-muted"> · retry ×{state.retryMultiplier}</span>
      ) : null}
      <div className="kdt-flight-note" title={state.reason}>
        {state.reason}
      </div>
    </div>
  );
}
