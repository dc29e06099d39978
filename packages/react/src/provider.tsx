import type { Client } from '@keel/core';
import { createContext, type ReactNode, useContext } from 'react';

/** The client of the nearest ClientProvider (internal: read it with useClient). */
export const ClientContext = createContext<Client | null>(null);

export interface ClientProviderProps {
  client: Client;
  children?: ReactNode;
}

/**
 * Makes a keel client available to the hooks below it. Query state is kept per client (outside
 * React), so two providers with the same client share it.
 *
 * @example
 * const client = createClient({ baseURL: '/api' });
 * root.render(<ClientProvider client={client}><App /></ClientProvider>);
 */
export function ClientProvider({ client, children }: ClientProviderProps): ReactNode {
  return <ClientContext.Provider value={client}>{children}</ClientContext.Provider>;
}

/** The client of the nearest ClientProvider; throws outside one. */
export function useClient(): Client {
  const client = useContext(ClientContext);
  // Also a provider given no client (`client={undefined}` from JavaScript).
  if (client == null) {
    throw new Error('keel: the hooks need a <ClientProvider client={...}> above this component');
  }
  return client;
}
