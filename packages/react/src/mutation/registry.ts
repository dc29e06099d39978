import type { Client, HttpMethod, InvalidateTarget, RequestOptions, RequestSpec } from '@keel/core';
import { notifyLater } from '../internal/batch';

/** A mutation call from `mutate()` until its state settles. */
export interface RunningMutation {
  readonly method: HttpMethod;
  readonly url: string;
  readonly options: RequestOptions | undefined;
  /** The hook's `invalidate` option: what the mutation invalidates on success, beyond its own. */
  readonly invalidate?: InvalidateTarget | undefined;
  /** Resolved on first use by a filter (a mutation nobody filters is never resolved twice). */
  spec?: RequestSpec | null;
  /**
   * The `keel:invalidate` echoes skipped on this running mutation's word (server-events/echo.ts):
   * applied if it fails, since a failed request invalidates nothing, yet the server changed.
   */
  skipped?: InvalidateTarget[];
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
  /**
   * Mutations that succeeded lately, with when they stop counting (ms on the client's clock):
   * the echo of this tab's change may arrive after the response (see server-events/echo.ts).
   */
  readonly settled: Map<RunningMutation, number>;
}

/** How long a successful mutation still explains a `keel:invalidate` echo that names this tab. */
export const ECHO_WINDOW_MS = 10_000;
/** The most settled mutations kept for that (the oldest goes first). */
const SETTLED_MAX = 16;

/**
 * Records a running mutation; returns the function that ends it (once), told whether it
 * succeeded and the time now: a success is kept a while in `settled`.
 */
export function startMutation(
  registry: MutationRegistry,
  mutation: RunningMutation,
): (succeeded?: boolean, now?: number) => void {
  const changed = () => {
    for (const listener of registry.listeners) notifyLater(listener);
  };
  registry.running.add(mutation);
  changed();
  return (succeeded = false, now = 0) => {
    if (!registry.running.delete(mutation)) return;
    if (succeeded) {
      const { settled } = registry;
      if (settled.size === SETTLED_MAX) settled.delete(settled.keys().next().value!);
      settled.set(mutation, now + ECHO_WINDOW_MS);
    }
    changed();
  };
}

/** The request of a recorded mutation, resolved once (null when its URL does not resolve). */
export function specOf(client: Client, mutation: RunningMutation): RequestSpec | null {
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
  return mutation.spec;
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
    const spec = specOf(client, mutation);
    if (spec !== null && client.matches(target, spec)) n++;
  }
  return n;
}

/**
 * `target` adds nothing to what `mutation`'s success invalidated: a path its own covers (the
 * request path and everything under it, on its origin: its URL as the target, as the core
 * matches it), tags among its own, or so does `extra` (its `invalidate` option). A relative
 * `target` is judged by its URL on the client's base: reads of the same path on another origin,
 * which `client.invalidate(target)` would reach too, are not looked at (a documented limit, see
 * the README's "Invalidation": knowing whether the app has any means scanning the cache).
 */
export function covered(
  client: Client,
  mutation: RunningMutation,
  target: InvalidateTarget,
  extra?: InvalidateTarget,
): boolean {
  // The core invalidates a request's own path and tags only for a method that changes state:
  // a GET, HEAD or OPTIONS mutation covers nothing of its own.
  const resolved = specOf(client, mutation);
  const spec = resolved && !'GET HEAD OPTIONS'.includes(resolved.method) ? resolved : undefined;
  return Array.isArray(target)
    ? target.every(
        (tag) => spec?.tags.includes(tag) || (Array.isArray(extra) && extra.includes(tag)),
      )
    : typeof target === 'string' &&
        (under(client, target, spec?.path, spec?.url) || under(client, target, extra));
}

/**
 * A read of `target` falls under `path` as an invalidation target: the core's own segment-aware
 * matcher, on the target resolved as the client resolves any URL (its base, an absolute form).
 */
function under(client: Client, target: string, path: unknown, url?: string): boolean {
  if (typeof path !== 'string') return false;
  try {
    const read = client.resolve('GET', target);
    // A path target is matched as the core matches one (on the base, or from the root: a
    // server's `/api/todos` echo with baseURL `/api`); `url`, the mutation's own, pins its origin.
    return client.matches(path, read) && (url === undefined || sameOrigin(url, read.url));
  } catch {
    return false; // a target the client cannot resolve is applied, not skipped
  }
}

/**
 * `new URL(a).origin === new URL(b).origin` for two canonical URLs (a RequestSpec's `url`, as
 * URL serializes it: `scheme://[userinfo@]host[:port]/...`), parsing nothing in the usual case:
 * two that begin with the same `scheme://authority/` have the same origin (the scheme, host and
 * port are in that text; a non-special scheme's origin is always "null"). Only URLs written
 * otherwise (other user info, no authority) are parsed.
 */
function sameOrigin(a: string, b: string): boolean {
  const head = /^\w+:\/\/[^/]*\//.exec(a);
  return (head !== null && b.startsWith(head[0])) || new URL(a).origin === new URL(b).origin;
}
