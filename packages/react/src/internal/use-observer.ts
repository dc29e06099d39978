import { useInsertionEffect, useRef } from 'react';
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
  // A ref, not a useState initializer: no closure allocated per render.
  const ref = useRef<T | undefined>(undefined);
  if (ref.current?.store !== store) ref.current = new Observer(store);
  return ref.current;
}

/** An observer whose callbacks act on the inputs of the render React committed. */
export interface Committable {
  /** The inputs of this render (a new object only when they change). */
  readonly inputs: object;
  /** Called once React committed the render that had `inputs`. */
  commit(inputs: object): void;
}

/**
 * Tells `observer` which render React committed, so what a callback acts on (`refetch()`,
 * `fetchNextPage()`, `mutate()`) is what is on screen, never a render React may still throw away
 * (a pending transition). The earliest effect: a child's effects already see it.
 */
export function useCommit(observer: Committable): void {
  const inputs = observer.inputs;
  useInsertionEffect(() => observer.commit(inputs), [observer, inputs]);
}
