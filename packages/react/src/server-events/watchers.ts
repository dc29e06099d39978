import type { Client } from '@keel/core';
import { reportError } from '../internal/report';

/**
 * Who watches a client's server-event connections (tooling: `watchServerEvents`). Kept apart
 * from the channels so that a channel tells its watchers without knowing who they are; with no
 * watcher, telling costs one WeakMap lookup.
 */
const watchers = new WeakMap<Client, Set<() => void>>();

/** Calls every watcher of `client`; one that throws is reported and the others still run. */
export function tellWatchers(client: Client): void {
  const set = watchers.get(client);
  if (set === undefined) return;
  for (const watcher of [...set]) {
    try {
      watcher();
    } catch (error) {
      reportError(error);
    }
  }
}

export function addWatcher(client: Client, listener: () => void): () => void {
  let set = watchers.get(client);
  if (set === undefined) watchers.set(client, (set = new Set()));
  // A wrapper per call: watching twice with one function needs two unwatches.
  const entry = () => listener();
  set.add(entry);
  return () => {
    const current = watchers.get(client);
    if (current === undefined) return;
    current.delete(entry);
    if (current.size === 0) watchers.delete(client);
  };
}
