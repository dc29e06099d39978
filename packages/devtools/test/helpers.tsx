import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { type Client, type ClientOptions, createClient } from '@keel/core';
import { ClientProvider } from '@keel/react';
import { type App, createApp, createEventHub, type EventHub } from '@keel/server';
import { act, type RenderResult, render, screen, within } from '@testing-library/react';
import type { ReactNode } from 'react';
import { afterEach, vi } from 'vitest';
import { KeelDevtools, type KeelDevtoolsProps } from '../src/index';
import { REFRESH_INTERVAL } from '../src/live/refresh';

/** What a route answers: a JSON body by default, after `delay` ms. */
export interface Answer {
  status?: number;
  body?: unknown;
  headers?: Record<string, string>;
  delay?: number;
  /** Answers once this settles (after `delay`, if any): a test decides when a request ends. */
  held?: Promise<unknown>;
}

export interface Loopback {
  /** `http://127.0.0.1:<port>` */
  url: string;
  /** Requests received, as `METHOD /path?query`. */
  requests: string[];
  /** How many requests a path (query ignored) received. */
  count(path: string): number;
}

const servers: { server: Server; sockets: Set<Socket> }[] = [];

afterEach(async () => {
  for (const { server, sockets } of servers.splice(0)) {
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
});

/**
 * A real node:http server on 127.0.0.1:0 for one test: `answer` decides each response from the
 * request and the number of requests its path got so far (1 for the first). Closed after the test.
 */
export async function loopback(
  answer: (request: { method: string; path: string; nth: number }) => Answer,
): Promise<Loopback> {
  const requests: string[] = [];
  const counts = new Map<string, number>();
  const sockets = new Set<Socket>();
  const server = createServer((req: IncomingMessage, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    requests.push(`${req.method} ${url.pathname}${url.search}`);
    const nth = (counts.get(url.pathname) ?? 0) + 1;
    counts.set(url.pathname, nth);
    const out = answer({ method: req.method ?? 'GET', path: url.pathname, nth });
    const send = () => {
      if (res.destroyed) return;
      res.writeHead(out.status ?? 200, { 'content-type': 'application/json', ...out.headers });
      res.end(out.body === undefined ? '' : JSON.stringify(out.body));
    };
    const sendNow = out.held ? () => void out.held!.finally(send) : send;
    if (out.delay) setTimeout(sendNow, out.delay);
    else sendNow();
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  servers.push({ server, sockets });
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    count: (path) => counts.get(path) ?? 0,
  };
}

/** A client on the loopback server: one attempt unless asked, no jitter. */
export function clientFor(server: Loopback, options: ClientOptions = {}): Client {
  return createClient({
    baseURL: server.url,
    ...options,
    retry: {
      attempts: 1,
      jitter: false,
      ...(typeof options.retry === 'object' ? options.retry : {}),
    },
  });
}

/**
 * A client clock the test moves: its timers fire only inside `advance`, in due order (a timer
 * set by one that fires, due within the advance, fires in it too). No real time is involved.
 */
export function manualClock(start = 1_000_000) {
  let now = start;
  let next = 0;
  const timers = new Map<number, { at: number; fn: () => void }>();
  return {
    now: () => now,
    setTimeout: (fn: () => void, ms: number): number => {
      timers.set(++next, { at: now + Math.max(0, ms), fn });
      return next;
    },
    clearTimeout: (id: unknown): void => {
      timers.delete(id as number);
    },
    /** Timers set and neither fired nor cleared. */
    get pending(): number {
      return timers.size;
    },
    advance(ms: number): void {
      const target = now + ms;
      for (;;) {
        let due: [number, { at: number; fn: () => void }] | undefined;
        for (const entry of timers) {
          if (entry[1].at <= target && (due === undefined || entry[1].at < due[1].at)) due = entry;
        }
        if (due === undefined) break;
        timers.delete(due[0]);
        now = Math.max(now, due[1].at);
        due[1].fn();
      }
      now = target;
    },
  };
}

/** `children` and the devtools (open unless told) for `client`, in its provider. */
export function devtoolsTree(
  client: Client,
  props: Partial<KeelDevtoolsProps> = {},
  children: ReactNode = null,
): ReactNode {
  return (
    <ClientProvider client={client}>
      {children}
      <KeelDevtools client={client} initialIsOpen {...props} />
    </ClientProvider>
  );
}

/** Renders `children` and the devtools (open unless told) for `client`. */
export function renderDevtools(
  client: Client,
  props: Partial<KeelDevtoolsProps> = {},
  children: ReactNode = null,
): RenderResult {
  return render(devtoolsTree(client, props, children));
}

/** The open panel. */
export function panel(): HTMLElement {
  return screen.getByRole('region', { name: 'keel devtools' });
}

/** The shown view. */
export function view(): HTMLElement {
  return within(panel()).getByRole('tabpanel');
}

/** Selects a view by its tab. */
export function showView(name: string): void {
  act(() => {
    within(panel())
      .getByRole('tab', { name: new RegExp(`^${name}`) })
      .click();
  });
}

/**
 * Lets the microtasks, fetch callbacks and one refresh interval pass: whatever changed before
 * shows after (a view refreshes at most once per REFRESH_INTERVAL; the timer of the last one,
 * set earlier, fires first).
 */
export async function settle(): Promise<void> {
  await act(async () => {
    await new Promise((resolve) => setTimeout(resolve, REFRESH_INTERVAL));
  });
}

/** The internal counters of a client (`client.debug`, not in the public type). */
export function debugOf(client: Client): {
  listeners: number;
  subscriptions: number;
  flights: number;
} {
  return (client as unknown as { debug: ReturnType<typeof debugOf> }).debug;
}

export const noop = (): void => {};

/** A response written by hand, as `setCached` takes it. */
export const handWritten = (data: unknown, headers?: Headers) => ({
  data,
  status: 200,
  statusText: 'OK',
  headers: headers ?? new Headers(),
});

/** A client whose requests go nowhere (its cache is written by hand). */
export const offlineClient = (): Client => createClient({ baseURL: 'http://127.0.0.1:9' });

/** Selects the Cache view's entry whose row ends with `url` (a pattern); returns its detail. */
export function selectEntry(url: string): HTMLElement {
  act(() => {
    within(view())
      .getByRole('button', { name: new RegExp(`${url}$`) })
      .click();
  });
  return within(view()).getByRole('region', { name: /^Cache entry / });
}

/** Silences and records console.error, where React reports duplicate keys and render errors. */
export function watchConsoleErrors() {
  return vi.spyOn(console, 'error').mockImplementation(() => {});
}

const apps: { app: App; http: Server }[] = [];
afterEach(async () => {
  const closing = apps.map(({ app }) => app.close());
  for (const { http } of apps.splice(0)) http.closeAllConnections();
  await Promise.all(closing);
});

/** A real @keel/server on 127.0.0.1:0 with an event hub on /api/events (404 on /api/gone). */
export async function live(): Promise<{ hub: EventHub; base: string }> {
  const app = createApp();
  const hub = createEventHub();
  app.get('/api/events', (ctx) => hub.connect(ctx));
  app.get('/api/gone', (ctx) => ctx.status(404).json({ gone: true }));
  const http = await app.listen(0, '127.0.0.1');
  apps.push({ app, http });
  return { hub, base: `http://127.0.0.1:${(http.address() as AddressInfo).port}` };
}
