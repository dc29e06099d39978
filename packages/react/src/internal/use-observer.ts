import { useState } from 'react';
import { useClient } from '../provider';
import { type QueryStore, storeFor } from '../query/store';

/**
 * The hook's observer over the store of the nearest client: made once per component, and made
 * again when a different client is provided below the same component (start over with its store).
 */
export function useObserver<T extends { readonly store: QueryStore }>(
  Observer: new (store: QueryStore) => T,
): T {
  const store = storeFor(useClient());
  const [holder] = useState(() => ({ observer: new Observer(store) }));
  if (holder.observer.store !== store) holder.observer = new Observer(store);
  return holder.observer;
}
