import type { Client, InvalidateTarget } from '@keel/core';
import { covered } from '../mutation/registry';
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
  return own.some((mutation) => {
    const covers = covered(client, mutation, target, mutation.invalidate);
    // Skipped on the word of a mutation that may still fail (the server applied the change, its
    // response says otherwise): it keeps the target, applied if it fails (mutation/observer.ts).
    // Running ones come first; one that already succeeded never reads it.
    if (covers) (mutation.skipped ??= []).push(target);
    return covers;
  });
}
