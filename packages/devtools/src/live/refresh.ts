import { type Client, type ClientEventName, inspect, type TimerHandle } from '@keel/core';
import { useEffect, useState } from 'react';

/** The shortest time between two refreshes of one component, in ms. */
export const REFRESH_INTERVAL = 100;

/**
 * Re-renders the component when `subscribe`'s source says something changed: a change after a
 * quiet spell renders at the end of its microtask (a burst of events in one task, such as a
 * hundred dedup joins, costs one render), then at most once per REFRESH_INTERVAL while changes
 * keep coming, in separate tasks too (server events at thousands a second). A change inside the
 * interval is never lost: it renders when the interval ends. `subscribe` must be stable (a module
 * function or a useCallback): it runs when the component mounts and its cleanup when it unmounts,
 * so a view subscribes only while it is shown. Returns a number that changes with each refresh
 * (for memo dependencies).
 */
export function useRefresh(subscribe: (changed: () => void) => () => void): number {
  const [version, setVersion] = useState(0);
  useEffect(() => {
    let live = true;
    // A change not rendered yet; and the interval since the last render, while it lasts.
    let pending = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const flush = () => {
      pending = false;
      if (!live) return;
      timer = setTimeout(cool, REFRESH_INTERVAL);
      setVersion((v) => v + 1);
    };
    const cool = () => {
      timer = undefined;
      if (pending) flush();
    };
    const stop = subscribe(() => {
      if (pending) return;
      pending = true;
      // Inside the interval, its end renders.
      if (timer === undefined) queueMicrotask(flush);
    });
    return () => {
      live = false;
      clearTimeout(timer);
      stop();
    };
  }, [subscribe]);
  return version;
}

/**
 * Re-renders every `ms` of the client's clock (ages, countdowns, growing bars, all read from
 * `inspect(client).now()`); `null` stops. On the client's clock, not the global timers: with an
 * injected clock (a test's, a replay's) the panel moves when the client's time does. (useRefresh
 * stays on the global timers: it limits real renders per second, whatever the client's time.)
 */
export function useTick(client: Client, ms: number | null): void {
  const [, setTick] = useState(0);
  useEffect(() => {
    if (ms === null) return;
    const { clock } = inspect(client);
    let timer: TimerHandle;
    const tick = () => {
      timer = clock.setTimeout(tick, ms);
      setTick((t) => t + 1);
    };
    timer = clock.setTimeout(tick, ms);
    return () => clock.clearTimeout(timer);
  }, [client, ms]);
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
