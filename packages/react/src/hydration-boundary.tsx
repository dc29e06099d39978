import type { DehydratedState } from '@keel/core';
import { type PreparedEntry, prepareHydration, writeHydration } from '@keel/core/internals';
import { type ReactNode, useEffect, useMemo } from 'react';
import { isServer } from './internal/server';
import { useClient } from './provider';

export interface HydrationBoundaryProps {
  /**
   * What `dehydrate(client)` returned on the server (parsed back from the page). Undefined or
   * null renders the children with nothing hydrated.
   */
  state: DehydratedState | null | undefined;
  children?: ReactNode;
}

/**
 * Puts a dehydrated state into the client of the nearest ClientProvider, so queries below find
 * their data in the cache: hydration matches the server's markup and makes no request while the
 * data is fresh. Keys the client knows nothing of are written before the children render; keys
 * it already holds, or that a component subscribes to (data or not), are written once React
 * committed the render (so a transition that is thrown away changes nothing on screen, and no
 * other component is updated during render), and only with newer data than the cache's.
 * Hydrates once per `state` object.
 *
 * @example
 * <ClientProvider client={client}>
 *   <HydrationBoundary state={window.__KEEL_STATE__}>
 *     <App />
 *   </HydrationBoundary>
 * </ClientProvider>
 */
export function HydrationBoundary({ state, children }: HydrationBoundaryProps): ReactNode {
  const client = useClient();
  // During render (a bad state throws here, writing nothing): only keys nothing can show yet.
  const later = useMemo(() => {
    if (state == null) return undefined;
    const now: PreparedEntry[] = [];
    const held: PreparedEntry[] = [];
    for (const entry of prepareHydration(client, state)) {
      // A server render runs no effect: everything is written now.
      (isServer || !entry.shown ? now : held).push(entry);
    }
    writeHydration(client, now);
    return held;
  }, [client, state]);
  useEffect(() => {
    if (later !== undefined && later.length > 0) writeHydration(client, later);
  }, [client, later]);
  return children;
}
