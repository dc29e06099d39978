import type { Client } from '@keel/core';
import { freeze, shown } from '@keel/core/internals';
import { type Channel, channelsOf, setInspector } from './channel';
import type { ConnectionStatus, ServerEvent } from './connection';
import { addWatcher, tellWatchers } from './watchers';

/** The last events a channel keeps for inspection. */
export const RECENT_EVENTS = 20;

/**
 * The most of an event's text kept for inspection (65,536 characters): a multi-megabyte event
 * is not held 20 times over while tooling is loaded. A longer one is kept cut, its parsed data
 * not at all.
 */
export const RECENT_RAW_CHARS = 65536;

/** A server event as a channel received it: with the time it arrived (the channel's clock). */
export interface ReceivedServerEvent<T = unknown> extends ServerEvent<T> {
  readonly receivedAt: number;
  /**
   * Present when the event's text was longer than 65536 characters: its full length. `raw` is
   * then its first 65536 characters and `data` that same cut text (the parsed data is not kept).
   */
  readonly rawLength?: number;
}

interface History {
  /** Events received since the channel was made. */
  readonly received: number;
  /** The last events received (at most RECENT_EVENTS), oldest first. */
  readonly recent: readonly ReceivedServerEvent[];
}

const NONE: History = /* @__PURE__ */ freeze({ received: 0, recent: /* @__PURE__ */ freeze([]) });

/**
 * The history of each channel, kept from when this module is loaded: a channel tells the
 * inspector set here of each event (recorded) and of every other change (watchers told).
 * Pure: a bundler drops it, and the bookkeeping, from an app that uses neither export.
 */
const histories = /* @__PURE__ */ record();

function record(): WeakMap<Channel, History> {
  const map = new WeakMap<Channel, History>();
  setInspector((channel, event) => {
    if (event === undefined) return tellWatchers(channel.client);
    const { received, recent } = map.get(channel) ?? NONE;
    // A new array per event (at most RECENT_EVENTS long): readers may hold the previous one.
    const next = recent.slice(1 - RECENT_EVENTS);
    const receivedAt = channel.options.clock.now();
    const { raw } = event;
    if (raw.length > RECENT_RAW_CHARS) {
      const cut = raw.slice(0, RECENT_RAW_CHARS);
      next.push({ ...event, data: cut, raw: cut, rawLength: raw.length, receivedAt });
    } else next.push({ ...event, receivedAt });
    map.set(channel, { received: received + 1, recent: next });
  });
  return map;
}

/** One `useServerEvents` connection as it is now (see `inspectServerEvents`). */
export interface ServerEventsConnectionView {
  /** The stream's URL, resolved against the client's base (its query as written). */
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
   * connection's clock: the client's unless the options gave one); one longer than 65536
   * characters kept cut, with `rawLength`.
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
    const { received, recent } = histories.get(channel) ?? NONE;
    out.push({
      url: channel.url,
      key: channel.key,
      status: state.status,
      error: state.error,
      users: channel.users,
      lastEventId: channel.lastEventId,
      received,
      recent,
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
      `keel: watchServerEvents \`listener\` must be a function, got ${shown(listener)}`,
    );
  }
  // Through `histories`: watching alone also installs the inspector.
  return histories && addWatcher(client, listener);
}
