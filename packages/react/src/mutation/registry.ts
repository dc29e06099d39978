import type { Client, HttpMethod, InvalidateTarget, RequestOptions, RequestSpec } from '@keel/core';
import { notifyLater } from '../internal/batch';

/** A mutation call from `mutate()` until its state settles. */
export interface RunningMutation {
  readonly method: HttpMethod;
  readonly url: string;
  readonly options: RequestOptions | undefined;
  /** Resolved on first use by a filter (a mutation nobody filters is never resolved twice). */
  spec?: RequestSpec | null;
}

/**
 * The mutations of one client that are running now, for `useIsMutating`, and its listeners
 * (woken through the same batching as query state: one task per burst). Plain data on purpose:
 * useMutation only records (`startMutation`); counting and filtering live with useIsMutating,
 * so an app that never calls it does not carry them.
 */
export interface MutationRegistry {
  readonly running: Set<RunningMutation>;
  readonly listeners: Set<() => void>;
}

/** Records a running mutation; returns the function that ends it (once). */
export function startMutation(registry: MutationRegistry, mutation: RunningMutation): () => void {
  const changed = () => {
    for (const listener of registry.listeners) notifyLater(listener);
  };
  registry.running.add(mutation);
  changed();
  return () => {
    if (registry.running.delete(mutation)) changed();
  };
}

/** How many mutations are running, all or those whose request `target` matches. */
export function countMutations(
  client: Client,
  registry: MutationRegistry,
  target: InvalidateTarget | undefined,
): number {
  if (target === undefined) return registry.running.size;
  let n = 0;
  for (const mutation of registry.running) {
    if (mutation.spec === undefined) {
      try {
        // Without its body: only the URL, tags and base decide what a target matches.
        const options = mutation.options && { ...mutation.options, body: undefined };
        mutation.spec = client.resolve(mutation.method, mutation.url, options);
      } catch {
        // A URL that does not resolve fails the mutation itself; no target can match it.
        mutation.spec = null;
      }
    }
    if (mutation.spec !== null && client.matches(target, mutation.spec)) n++;
  }
  return n;
}
