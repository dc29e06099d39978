import type { Client, ClientInspector } from '@keel/core';
import { useCallback } from 'react';
import { formatMs, MAX_ROWS, preview } from '../format';
import { onEvents, useRefresh, useTick } from '../live/refresh';

/** Characters of a group name shown (an app's name for it; a hostile one is cut). */
const MAX_GROUP = 1_000;

const SCHEDULER_EVENTS = [
  'request',
  'request-queued',
  'request-dequeued',
  'request-started',
  'request-delayed',
  'request-scheduled',
  'request-prioritized',
  'request-rejected',
  'queue-paused',
  'queue-resumed',
  'success',
  'error',
  'cancel',
] as const;

/**
 * The Scheduler view: attempts running against the concurrency limit, the depth of each lane,
 * parked (delayed) jobs, the rate budget in use, host caps and paused groups (with Resume).
 * Re-read on every scheduler event, and once a second (the rate window slides with time).
 */
export function SchedulerView({
  client,
  inspector,
}: {
  client: Client;
  inspector: ClientInspector;
}) {
  const subscribe = useCallback(
    (changed: () => void) => onEvents(client, SCHEDULER_EVENTS, changed),
    [client],
  );
  useRefresh(subscribe);
  useTick(client, 1000);
  const view = inspector.scheduler();

  if (!view.enabled) {
    return (
      <div className="kdt-view">
        <div className="kdt-empty">
          <strong>No scheduler on this client</strong>
          Requests start as soon as they are made. Create the client with{' '}
          <code>scheduler: {'{ concurrency: 8 }'}</code> to queue them, with priority lanes,
          per-host caps and a rate limit; this view then shows the lanes and the budget live.
        </div>
      </div>
    );
  }

  const { stats, rateLimit } = view;
  const lanes = view.priorityLanes
    ? ([
        ['high', stats.lanes.high],
        ['normal', stats.lanes.normal],
        ['low', stats.lanes.low],
      ] as const)
    : ([['queue', stats.lanes.normal]] as const);
  const deepest = Math.max(1, ...lanes.map(([, n]) => n));
  return (
    <div className="kdt-view">
      <div className="kdt-meters">
        <section className="kdt-card" aria-label="Active attempts">
          <h3>Active</h3>
          <div className="kdt-big">
            {stats.active} <span className="kdt-muted">/ {view.concurrency}</span>
          </div>
          <Meter value={stats.active} max={view.concurrency} />
        </section>
        <section className="kdt-card" aria-label="Queued jobs">
          <h3>Queued</h3>
          <div className="kdt-big">{stats.queued}</div>
          <div className="kdt-lanes">
            {lanes.map(([name, depth]) => (
              <LaneRow key={name} name={name} depth={depth} deepest={deepest} />
            ))}
          </div>
        </section>
        <section className="kdt-card" aria-label="Delayed jobs">
          <h3>Delayed</h3>
          <div className="kdt-big">{stats.delayed}</div>
          <div className="kdt-muted">parked: retry waits and rate-limit waits, holding no slot</div>
        </section>
        <section className="kdt-card" aria-label="Rate budget">
          <h3>Rate budget</h3>
          {rateLimit ? (
            <>
              <div className="kdt-big">
                {rateLimit.used} <span className="kdt-muted">/ {rateLimit.requests}</span>
              </div>
              <div className="kdt-muted">
                attempts started in the last {formatMs(rateLimit.interval)}
              </div>
              <Meter
                value={rateLimit.used}
                max={rateLimit.requests}
                warn={rateLimit.used >= rateLimit.requests}
              />
            </>
          ) : (
            <div className="kdt-muted">
              no rate limit (<code>scheduler.rateLimit</code>)
            </div>
          )}
        </section>
        <section className="kdt-card" aria-label="Totals">
          <h3>Totals</h3>
          <div>
            <strong>{stats.completed}</strong> completed · <strong>{stats.rejected}</strong>{' '}
            cancelled
          </div>
        </section>
        {view.hosts.length > 0 ? (
          <section className="kdt-card" aria-label="Host caps">
            <h3>Host caps</h3>
            {view.hosts.slice(0, MAX_ROWS).map((host) => (
              <div key={host.host}>
                <span className="kdt-mono">{preview(host.host, MAX_GROUP)}</span>: {host.active} /{' '}
                {host.cap}
                <Meter value={host.active} max={host.cap} />
              </div>
            ))}
            {view.hosts.length > MAX_ROWS ? (
              <div className="kdt-muted">… {view.hosts.length - MAX_ROWS} more not drawn.</div>
            ) : null}
          </section>
        ) : null}
        {view.pausedGroups.length > 0 ? (
          <section className="kdt-card" aria-label="Paused groups">
            <h3>Paused groups</h3>
            {view.pausedGroups.slice(0, MAX_ROWS).map((group) => (
              <div key={group} className="kdt-toolbar">
                <span className="kdt-mono">{preview(group, MAX_GROUP)}</span>
                <button
                  type="button"
                  className="kdt-button"
                  onClick={() => client.scheduler().resumeGroup(group)}
                >
                  Resume {preview(group, MAX_GROUP)}
                </button>
              </div>
            ))}
            {view.pausedGroups.length > MAX_ROWS ? (
              <div className="kdt-muted">
                … {view.pausedGroups.length - MAX_ROWS} more not drawn: resume these to see them.
              </div>
            ) : null}
          </section>
        ) : null}
      </div>
    </div>
  );
}

function LaneRow({ name, depth, deepest }: { name: string; depth: number; deepest: number }) {
  return (
    <>
      <span className="kdt-muted">{name}</span>
      <div className="kdt-meter" aria-hidden="true">
        <span style={{ width: `${(depth / deepest) * 100}%` }} />
      </div>
      <span data-lane={name}>{depth}</span>
    </>
  );
}

/** A bar for the eye; the numbers beside it say the same in text. */
function Meter({ value, max, warn }: { value: number; max: number; warn?: boolean }) {
  const ratio = max > 0 && Number.isFinite(max) ? Math.min(1, value / max) : 0;
  return (
    <div className="kdt-meter" aria-hidden="true" data-tone={warn ? 'warn' : undefined}>
      <span style={{ width: `${ratio * 100}%` }} />
    </div>
  );
}
