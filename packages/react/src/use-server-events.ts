import { useCallback, useEffect, useLayoutEffect, useMemo, useRef } from 'react';
import { useSyncExternalStore } from 'use-sync-external-store/shim';
import { noop } from './internal/report';
import { useClient } from './provider';
import {
  type ChannelSubscriber,
  channelFor,
  channelKey,
  peekChannel,
  type ServerEventHandlers,
  type ServerEventsOptions,
} from './server-events/channel';
import type { ConnectionState } from './server-events/connection';

const CLOSED: ConnectionState = Object.freeze({ status: 'closed', error: null });
const CONNECTING: ConnectionState = Object.freeze({ status: 'connecting', error: null });

// Layout effects do not run on the server; picking the effect once at import keeps `document`
// out of render.
const useIsomorphicLayoutEffect = typeof document === 'undefined' ? useEffect : useLayoutEffect;

/**
 * Listens to a server-sent-events stream. Every component using the same URL (with the same
 * client) shares one connection; it opens with the first and closes when the last unmounts.
 * Reconnects with exponential backoff and sends `Last-Event-ID`, so a server that keeps a replay
 * buffer (the @keel/server event hub) resends what was missed.
 *
 * `handlers` maps event names to functions of the (JSON-parsed) data; `invalidate` maps event
 * names to `client.invalidate` targets, which refetches every mounted query they match. The
 * latest handlers are used without reconnecting, so inline objects are fine.
 *
 * @example
 * useServerEvents('/api/events', {
 *   'todo-added': (todo) => console.log('added', todo),
 *   invalidate: { 'todos-changed': '/api/todos' },
 * });
 */
export function useServerEvents(
  url: string | null,
  handlers: ServerEventHandlers,
  options?: ServerEventsOptions,
): ConnectionState {
  const client = useClient();
  const handlersRef = useRef(handlers);
  useIsomorphicLayoutEffect(() => {
    handlersRef.current = handlers;
  });
  const optionsRef = useRef(options);
  optionsRef.current = options;

  const headers = options?.headers;
  const headersId = headers ? JSON.stringify(headers) : '';
  // The channel key (or the error of an invalid URL), computed once per URL and headers.
  // biome-ignore lint/correctness/useExhaustiveDependencies: headersId stands for headers
  const { key, invalid } = useMemo(() => {
    if (url === null) return { key: null, invalid: CLOSED };
    try {
      return { key: channelKey(client, url, headers), invalid: CLOSED };
    } catch (error) {
      return { key: null, invalid: { status: 'closed', error } as ConnectionState };
    }
  }, [client, url, headersId]);

  const subscribe = useCallback(
    (onChange: () => void) => {
      if (url === null || key === null) return noop;
      const channel = channelFor(client, url, optionsRef.current);
      const subscriber: ChannelSubscriber = { handlers: () => handlersRef.current };
      const offState = channel.connection.onStateChange(onChange);
      const leave = channel.join(subscriber);
      return () => {
        offState();
        leave();
      };
    },
    // The key covers the URL and headers; other option changes apply to the next connection.
    [client, url, key],
  );
  const getSnapshot = useCallback(() => {
    if (key === null) return invalid;
    return peekChannel(client, key)?.state ?? CONNECTING;
  }, [client, key, invalid]);
  const getServerSnapshot = useCallback(() => (key === null ? CLOSED : CONNECTING), [key]);
  return useSyncExternalStore(subscribe, getSnapshot, getServerSnapshot);
}
