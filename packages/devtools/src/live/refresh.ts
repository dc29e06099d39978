import type { Client, ClientEventName } from '@keel/core';
import { useEffect, useState } from 'react';

/**
 * Re-renders the component when `subscribe`'s source says something changed, at most once per
 * microtask: a burst of events (a hundred dedup joins, an invalidation removing fifty entries)
 * costs one render. `subscribe` must be stable (a module function or a useCallback): it runs
 * when the component mounts and its cleanup when it unmounts, so a view subscribes only while it
 * is shown. Returns a number that changes with each refresh (for memo dependencies).
 */
export function useRefresh(subscribe: (changed: () => void) => () => void): number {
  const [version, setVersion] = useState(0);
  useEffect(() => {
    let live = true;
    let scheduled = false;
    const flush = () => {
      scheduled = false;
      if (live) setVersion((v) => v + 1);
    };
    const stop = subscribe(() => {
      if (scheduled) return;
      scheduled = true;
      queueMicrotask(flush);
    });
    return () => {
      live = false;
      stop();
    };
  }, [subscribe]);
  return version;
}

/** Re-renders every `ms` (ages, countdowns, growing bars); `null` stops. */
export function useTick(ms: number | null): void {
  const [, setTick] = useState(0);
  useEffect(() => {
    if (ms === null) return;
    const timer = setInterval(() => setTick((t) => t + 1), ms);
    return () => clearInterval(timer);
  }, [ms]);
}

/** Listens to several client events with one function; returns the function removing them all. */
export function onEvents(
  client: Client,
  names: readonly ClientEventName[],
  listener: () => void,
): () => void {
  const offs = names.map((name) => client.on(name, listener));
  return () => {
    for (const off of offs) off();
  };
}
