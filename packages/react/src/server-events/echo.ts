import type { Client, InvalidateTarget } from '@keel/core';
import { type RunningMutation, specOf } from '../mutation/registry';
import { storeFor } from '../query/store';

/**
 * A `keel:invalidate` naming this tab as its source is the echo of one of its own mutations. It
 * is skipped only when that adds nothing: when one mutation of this client, running or
 * successful in the last ECHO_WINDOW_MS, invalidates all that `target` names, by its path (the
 * core invalidates the request path and everything under it), its tags or its `invalidate`
 * option. A server that invalidates more (`DELETE /todos/7` answered with
 * `hub.invalidate('/todos')`, the list) is applied, or this tab would keep the old list.
 */
export function echoCovered(client: Client, target: InvalidateTarget): boolean {
  const { mutations, clock } = storeFor(client);
  const now = clock.now();
  const own = [...mutations.running];
  for (const [mutation, until] of mutations.settled) if (until > now) own.push(mutation);
  return own.some((mutation) => covers(client, mutation, target));
}

function covers(client: Client, mutation: RunningMutation, target: InvalidateTarget): boolean {
  const spec = specOf(client, mutation);
  const extra = mutation.invalidate;
  if (spec === null || typeof target === 'function') return false;
  if (Array.isArray(target)) {
    return target.every(
      (tag) => spec.tags.includes(tag) || (Array.isArray(extra) && extra.includes(tag)),
    );
  }
  try {
    // The top of the path, read under the client's base path and as written (the core's two
    // readings of a relative target); the one the mutation covers is the one the server meant.
    const joined = client.resolve('GET', target);
    const own = new URL(spec.path, spec.url).href;
    return [joined, client.resolve('GET', new URL(target, joined.url).href)].some(
      (top) =>
        client.matches(own, top) || (typeof extra === 'string' && client.matches(extra, top)),
    );
  } catch {
    return false; // a target that does not resolve names nothing this tab read
  }
}
