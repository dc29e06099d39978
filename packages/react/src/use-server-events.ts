import type { RequestSpec } from '@keel/core';
import { checkInvalidateTarget, checkObject, freeze, shown } from '@keel/core/internals';
import { useEffect, useLayoutEffect, useMemo, useRef, useSyncExternalStore } from 'react';
import { jsonText } from './internal/json-text';
import { noop } from './internal/report';
import { useClient } from './provider';
import {
  channelFor,
  invalidateMap,
  peekChannel,
  type ServerEventHandlers,
  type ServerEventsOptions,
} from './server-events/channel';
import { STOPPED as CLOSED, type ConnectionState } from './server-events/connection';

const NO_HANDLERS: ServerEventHandlers = /* @__PURE__ */ freeze({});
const CONNECTING: ConnectionState = /* @__PURE__ */ freeze({ status: 'connecting', error: null });

// Layout effects do not run on the server; picking the effect once at import keeps `document`
// out of render.
const useIsomorphicLayoutEffect = typeof document === 'undefined' ? useEffect : useLayoutEffect;

/** Throws a TypeError naming the entry of `handlers.invalidate` that is not a target. */
function checkHandlers(handlers: ServerEventHandlers): void {
  if (typeof handlers !== 'object' || handlers === null) {
    throw new TypeError(
      `keel: useServerEvents \`handlers\` must be an object, got ${shown(handlers)}`,
    );
  }
  const map = invalidateMap(handlers);
  for (const name in map) {
    checkInvalidateTarget(map[name], `handlers.invalidate[${JSON.stringify(name)}]`);
  }
}

/**
 * Listens to a server-sent-events stream. Every component using the same URL (with the same
 * client) shares one connection; it opens with the first and closes when the last unmounts.
 * Reconnects with exponential backoff and sends `Last-Event-ID`, so a server that keeps a replay
 * buffer (the @keel/server event hub) resends what was missed.
 *
 * With no handlers it applies the server's invalidations: a `keel:invalidate` event (from
 * `hub.invalidate(target)`) runs `client.invalidate(target)`, which refetches every mounted query
 * under it; the tab whose mutation caused it skips it (its mutation already invalidated).
 *
 * `handlers` maps event names to functions of the (JSON-parsed) data; `invalidate` maps event
 * names to `client.invalidate` targets (a path, an array of tags or a predicate). The latest
 * handlers are used without reconnecting, so inline objects are fine.
 *
 * @example
 * useServerEvents('/api/events'); // hub.invalidate('/api/todos') refetches useQuery('/api/todos')
 * useServerEvents('/api/events', {
 *   'todo-added': (todo) => console.log('added', todo),
 *   invalidate: { 'todos-changed': '/api/todos' },
 * });
 */
export function useServerEvents(
  url: string | null,
  handlers: ServerEventHandlers = NO_HANDLERS,
  options?: ServerEventsOptions,
): ConnectionState {
  checkHandlers(handlers);
  const client = useClient();
  const handlersRef = useRef(handlers);
  useIsomorphicLayoutEffect(() => {
    handlersRef.current = handlers;
  });
  const optionsRef = useRef(options);
  optionsRef.current = options;

  const headers = options?.headers;
  // At render, for every component (they name the stream): only undefined means none, as in the
  // core, where `null` is a TypeError. Header values are the client's to check (see below).
  if (headers !== undefined) checkObject('headers', headers, 'an object of header strings');
  // By their entries: a Headers object is `{}` to JSON, so a new token did not reconnect. (Only
  // the object itself can be one: a header value that is not a string is the client's error.)
  const headersId = headers && jsonText(headers);
  // The stream's spec (its key names the channel), resolved once per URL and headers; without
  // one (no URL, or an invalid one: its error), the closed state the hook returns.
  // biome-ignore lint/correctness/useExhaustiveDependencies: headersId stands for headers
  const spec = useMemo((): RequestSpec | ConnectionState => {
    if (url === null) return CLOSED;
    try {
      return client.resolve('GET', url, headers && { headers });
    } catch (error) {
      return { status: 'closed', error };
    }
  }, [client, url, headersId]);

  // The key covers the URL and headers; other option changes apply to the next connection.
  const [subscribe, getSnapshot, getServerSnapshot] = useMemo(
    () =>
      'key' in spec
        ? [
            (onChange: () => void) =>
              channelFor(client, spec, optionsRef.current).join({
                handlers: () => handlersRef.current,
                onState: onChange,
              }),
            () => peekChannel(client, spec.key)?.state ?? CONNECTING,
            () => CONNECTING,
          ]
        : [() => noop, () => spec, () => CLOSED],
    [client, spec],
  );
  return useSyncExternalStore<ConnectionState>(subscribe, getSnapshot, getServerSnapshot);
}
