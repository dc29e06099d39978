import { type DehydratedState, hydrate } from '@keel/core';
import { type ReactNode, useMemo } from 'react';
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
 * Puts a dehydrated state into the client of the nearest ClientProvider before its children
 * render, so queries below find their data in the cache: hydration matches the server's markup
 * and makes no request while the data is fresh. Hydrates once per `state` object; an entry the
 * client already holds newer data for is left alone.
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
  // During render, before the children read the cache. Writes notify subscribers through the
  // batched store (a later task), so no other component is updated while this one renders.
  useMemo(() => {
    if (state != null) hydrate(client, state);
  }, [client, state]);
  return children;
}
