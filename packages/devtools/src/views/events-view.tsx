import type { Client } from '@keel/core';
import {
  inspectServerEvents,
  type ReceivedServerEvent,
  type ServerEventsConnectionView,
  watchServerEvents,
} from '@keel/react';
import { useCallback } from 'react';
import { describeError, formatClock, MAX_TEXT, preview } from '../format';
import { useRefresh } from '../live/refresh';
import { Disclosure, JsonTree } from './json-tree';

const TONE = { open: 'ok', connecting: 'warn', closed: 'neutral' } as const;

/** Characters of an event's data shown in its summary. */
const PREVIEW_LENGTH = 80;

/**
 * The preview of each listed event, made once: the view re-renders on every event and status
 * change, and an event (a new object per event received) is listed up to 20 times.
 */
const previews = new WeakMap<ReceivedServerEvent, string>();

function previewOf(event: ReceivedServerEvent): string {
  let text = previews.get(event);
  if (text === undefined) previews.set(event, (text = preview(event.data, PREVIEW_LENGTH)));
  return text;
}

/**
 * The Live events view: each `useServerEvents` connection of the client (one per stream URL),
 * its status (and why it is not open), the last event id it would resume from, and the last
 * events it received, newest first, each expandable to its data. Re-read whenever the
 * connections change (`watchServerEvents`).
 */
export function EventsView({ client }: { client: Client }) {
  const subscribe = useCallback(
    (changed: () => void) => watchServerEvents(client, changed),
    [client],
  );
  useRefresh(subscribe);
  const connections = inspectServerEvents(client);

  if (connections.length === 0) {
    return (
      <div className="kdt-view">
        <div className="kdt-empty">
          <strong>No server-event connection</strong>A component calling{' '}
          <code>useServerEvents(url)</code> opens one (shared by every component on that URL); it
          shows here with its status, the last event id and the events it received.
        </div>
      </div>
    );
  }
  return (
    <div className="kdt-view">
      {connections.map((connection) => (
        <Connection key={connection.key} connection={connection} />
      ))}
    </div>
  );
}

function Connection({ connection }: { connection: ServerEventsConnectionView }) {
  const { status, error, recent } = connection;
  // A stream's URL, event names and ids are the app's and the server's: any length, cut.
  const url = preview(connection.url, MAX_TEXT);
  return (
    <section className="kdt-conn" aria-label={`Event stream ${url}`}>
      <div className="kdt-conn-head">
        <span
          className="kdt-badge"
          data-tone={TONE[status]}
          data-live={status === 'connecting' ? '' : undefined}
        >
          {status}
        </span>
        <span className="kdt-mono">{url}</span>
      </div>
      {error ? (
        <p className="kdt-muted" role="status">
          {status === 'closed' ? 'Stopped: ' : 'Reconnecting after: '}
          {describeError(error)}
        </p>
      ) : null}
      <dl className="kdt-facts">
        <dt>Components</dt>
        <dd>{connection.users}</dd>
        <dt>Last event id</dt>
        <dd className="kdt-mono">
          {connection.lastEventId === undefined ? (
            <span className="kdt-muted">none yet</span>
          ) : (
            preview(connection.lastEventId, MAX_TEXT)
          )}
        </dd>
        <dt>Received</dt>
        <dd>
          {connection.received} {connection.received === 1 ? 'event' : 'events'}
          {connection.received > recent.length ? (
            <span className="kdt-muted"> (the last {recent.length} below)</span>
          ) : null}
        </dd>
      </dl>
      {recent.length === 0 ? (
        <p className="kdt-muted">No event received yet.</p>
      ) : (
        <ul className="kdt-events" aria-label={`Last events of ${url}, newest first`}>
          {[...recent].reverse().map((event, i) => (
            // biome-ignore lint/suspicious/noArrayIndexKey: `received - i` is the event's number among all received, stable while it is listed
            <li key={connection.received - i}>
              <Disclosure
                summary={
                  <>
                    <span className="kdt-muted kdt-mono">{formatClock(event.receivedAt)}</span>
                    <strong className="kdt-mono">{preview(event.event, MAX_TEXT)}</strong>
                    {event.id ? (
                      <span className="kdt-muted kdt-mono">#{preview(event.id, MAX_TEXT)}</span>
                    ) : null}
                    <span className="kdt-mono kdt-muted">{previewOf(event)}</span>
                    {event.rawLength === undefined ? null : (
                      <span className="kdt-muted">
                        {' '}
                        (cut: {event.raw.length} of {event.rawLength} characters kept)
                      </span>
                    )}
                  </>
                }
              >
                {() => <JsonTree value={event.data} openDepth={2} />}
              </Disclosure>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
