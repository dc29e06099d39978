import type { Client } from '@keel/core';
import { channelsOf, type ReceivedServerEvent } from './channel';
import type { ConnectionStatus } from './connection';
import { addWatcher } from './watchers';

/** One `useServerEvents` connection as it is now (see `inspectServerEvents`). */
export interface ServerEventsConnectionView {
  /** The stream's URL, resolved against the client's base. */
  readonly url: string;
  /** The connection's key: the client's cache key of the stream (URL and headers). */
  readonly key: string;
  readonly status: ConnectionStatus;
  /** Why the last connect failed (a ServerEventsError, a network error); null once open. */
  readonly error: unknown;
  /** Components using it. */
  readonly users: number;
  /** The id of the last event that carried one: sent as `Last-Event-ID` on reconnect. */
  readonly lastEventId: string | undefined;
  /** Events received since the connection was made. */
  readonly received: number;
  /**
   * The last events received (at most 20), oldest first, each with `receivedAt` (ms, the
   * connection's clock: `Date.now()` unless the options gave one).
   */
  readonly recent: readonly ReceivedServerEvent[];
}

/**
 * The server-event connections a client has now (one per stream URL, shared by every
 * `useServerEvents` of it), for tooling such as `@keel/devtools`. Reading changes nothing.
 *
 * @example
 * for (const c of inspectServerEvents(client)) console.log(c.url, c.status, c.lastEventId);
 */
export function inspectServerEvents(client: Client): ServerEventsConnectionView[] {
  const out: ServerEventsConnectionView[] = [];
  for (const channel of channelsOf(client)) {
    const { state } = channel;
    out.push({
      url: channel.url,
      key: channel.key,
      status: state.status,
      error: state.error,
      users: channel.users,
      lastEventId: channel.lastEventId,
      received: channel.received,
      recent: channel.recent,
    });
  }
  return out;
}

/**
 * Calls `listener` (no argument) whenever what `inspectServerEvents(client)` returns may have
 * changed: a connection made or closed, a status change, an event received, a component joining
 * or leaving. A listener that throws is rethrown asynchronously (the others still run). Returns
 * the unwatch function.
 *
 * @example
 * const stop = watchServerEvents(client, () => render(inspectServerEvents(client)));
 */
export function watchServerEvents(client: Client, listener: () => void): () => void {
  if (typeof listener !== 'function') {
    throw new TypeError(
      `keel: watchServerEvents \`listener\` must be a function, got ${typeof listener}`,
    );
  }
  return addWatcher(client, listener);
}
