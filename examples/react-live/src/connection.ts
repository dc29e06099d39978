import type { ConnectionState } from '@keel/react';
import { useSyncExternalStore } from 'react';

function subscribe(onChange: () => void): () => void {
  window.addEventListener('online', onChange);
  window.addEventListener('offline', onChange);
  return () => {
    window.removeEventListener('online', onChange);
    window.removeEventListener('offline', onChange);
  };
}

/** The browser's own view of the network (`navigator.onLine`); the server renders "online". */
export function useOnline(): boolean {
  return useSyncExternalStore(
    subscribe,
    () => navigator.onLine,
    () => true,
  );
}

export type Indicator = 'open' | 'connecting' | 'closed' | 'offline';

/**
 * What the connection pill says. An event stream can look open for a while after the network
 * went away (nothing tells the socket), so the browser's offline state wins.
 */
export function indicatorOf(
  online: boolean,
  live: ConnectionState,
): { status: Indicator; label: string } {
  if (!online) return { status: 'offline', label: 'Offline' };
  if (live.status === 'open') return { status: 'open', label: 'Live' };
  if (live.status === 'connecting') {
    return { status: 'connecting', label: live.error ? 'Reconnecting…' : 'Connecting…' };
  }
  return { status: 'closed', label: 'Not live' };
}
