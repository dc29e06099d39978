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
 * The mutations of one client that are running now, for `useIsMutating`. Listeners are woken
 * through the same batching as query state (one task per burst).
 */
export class MutationRegistry {
  readonly #client: Client;
  readonly #running = new Set<RunningMutation>();
  readonly #listeners = new Set<() => void>();

  constructor(client: Client) {
    this.#client = client;
  }

  /** Records a running mutation; returns the function that ends it. */
  start(mutation: RunningMutation): () => void {
    this.#running.add(mutation);
    this.#changed();
    let active = true;
    return () => {
      if (!active) return;
      active = false;
      this.#running.delete(mutation);
      this.#changed();
    };
  }

  /** How many mutations are running, all or those whose request `target` matches. */
  count(target?: InvalidateTarget): number {
    if (target === undefined) return this.#running.size;
    let n = 0;
    for (const mutation of this.#running) {
      const spec = this.#specOf(mutation);
      if (spec !== null && this.#client.matches(target, spec)) n++;
    }
    return n;
  }

  subscribe = (listener: () => void): (() => void) => {
    const entry = () => listener();
    this.#listeners.add(entry);
    return () => {
      this.#listeners.delete(entry);
    };
  };

  #specOf(mutation: RunningMutation): RequestSpec | null {
    if (mutation.spec === undefined) {
      try {
        // Without its body: only the URL, tags and base decide what a target matches.
        const options = mutation.options && { ...mutation.options, body: undefined };
        mutation.spec = this.#client.resolve(mutation.method, mutation.url, options);
      } catch {
        // A URL that does not resolve fails the mutation itself; no target can match it.
        mutation.spec = null;
      }
    }
    return mutation.spec;
  }

  #changed(): void {
    for (const listener of this.#listeners) notifyLater(listener);
  }
}
