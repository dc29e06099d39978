import type { Client } from '@keel/core';
import { reportError } from '../internal/report';

/**
 * Who watches a client's server-event connections (tooling: `watchServerEvents`). Kept apart
 * from the channels so that a channel tells its watchers without knowing who they are; with no
 * watcher, telling costs one WeakMap lookup.
 *
 * Copy on write: watching and unwatching (rare) replace the array, so a tell (per server event
 * while a tool watches) iterates it as it is, with no copy, and sees the watchers of when it
 * began: one added during a tell is told from the next change on (one that watches again from
 * its own call cannot make a tell endless).
 */
const watchers = new WeakMap<Client, readonly (() => void)[]>();

/** Calls every watcher of `client`; one that throws is reported and the others still run. */
export function tellWatchers(client: Client): void {
  const list = watchers.get(client);
  if (list === undefined) return;
  for (const watcher of list) {
    try {
      watcher();
    } catch (error) {
      reportError(error);
    }
  }
}

export function addWatcher(client: Client, listener: () => void): () => void {
  let live = true;
  // A wrapper per call: watching twice with one function needs two unwatches. One unwatched
  // during a tell (by an earlier watcher) is not called, though that tell's array still holds it.
  const entry = () => {
    if (live) listener();
  };
  watchers.set(client, [...(watchers.get(client) ?? []), entry]);
  return () => {
    if (!live) return;
    live = false;
    const rest = watchers.get(client)!.filter((w) => w !== entry);
    if (rest.length > 0) watchers.set(client, rest);
    else watchers.delete(client);
  };
}
