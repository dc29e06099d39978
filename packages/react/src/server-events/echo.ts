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
  // Walked in place, no copy per echo: judging runs no app code, so neither collection changes.
  for (const mutation of mutations.running) {
    if (covered(client, mutation, target, mutation.invalidate)) {
      // Skipped on the word of a mutation that may still fail (the server applied the change,
      // its response says otherwise): it keeps the target, applied if it fails
      // (mutation/observer.ts). One that already succeeded (below) has no use for it.
      (mutation.skipped ??= []).push(target);
      return true;
    }
  }
  for (const [mutation, until] of mutations.settled) {
    if (until > now && covered(client, mutation, target, mutation.invalidate)) return true;
  }
  return false;
}
