import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createClient } from '@keel/core';
import { act, render, waitFor } from '@testing-library/react';
import { afterEach, describe, expect, it } from 'vitest';
import { type ServerEvent, useServerEvents } from '../src/index';
import { environmentListenerCount } from '../src/internal/environment';
import { channelCount } from '../src/server-events/channel';
import { flush, ManualClock, wrapperFor } from './helpers';

const servers: Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  }
});

/** A loopback event stream; `script(n, req, res)` writes what the n-th connection gets. */
async function scripted(script: (n: number, req: IncomingMessage, res: ServerResponse) => void) {
  const state = { base: '', connects: [] as (string | undefined)[] };
  const server = createServer((req, res) => {
    const n = state.connects.length;
    state.connects.push(req.headers['last-event-id'] as string | undefined);
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    script(n, req, res);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  servers.push(server);
  state.base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return state;
}

type Seen = { events: ServerEvent[]; status?: string };
function Live({ seen }: { seen: Seen }) {
  seen.status = useServerEvents(
    '/sse',
    { message: (_d, e) => seen.events.push(e) },
    { reconnect: { jitter: false } },
  ).status;
  return null;
}

describe('retry: fields a server should not send', () => {
  it.each([
    ['huge', 'retry: 99999999999999999999999999\n', [30000]],
    ['negative', 'retry: -5000\n', [1000]],
    ['not a number', 'retry: soon\nretry: 1e4\nretry: 5 000\n', [1000]],
  ])('%s: the delay stays within the backoff bounds', async (_name, field, delays) => {
    const live = await scripted((_n, _req, res) => res.end(`${field}data: 1\n\n`));
    const clock = new ManualClock();
    const client = createClient({ baseURL: live.base, clock });
    const seen: Seen = { events: [] };
    render(<Live seen={seen} />, { wrapper: wrapperFor(client) });
    await waitFor(() => expect(clock.timers.size).toBe(1));
    expect(clock.delays).toEqual(delays);
  });
});

describe('an id: with NUL', () => {
  it('is ignored: the last good id is resumed from, the event carries none', async () => {
    const live = await scripted((n, _req, res) => {
      if (n === 0) res.end('id: 5\ndata: a\n\nid: 6\0x\ndata: b\n\n');
      else res.write('data: c\n\n');
    });
    const clock = new ManualClock();
    const client = createClient({ baseURL: live.base, clock });
    const seen: Seen = { events: [] };
    render(<Live seen={seen} />, { wrapper: wrapperFor(client) });
    await waitFor(() => expect(clock.timers.size).toBe(1));
    clock.runNext();
    await waitFor(() => expect(seen.events).toHaveLength(3));
    expect(seen.events.map((e) => [e.raw, e.id])).toEqual([
      ['a', '5'],
      ['b', undefined],
      ['c', undefined],
    ]);
    expect(live.connects).toEqual([undefined, '5']);
  });
});

describe('offline, then online', () => {
  it('a stream waiting out its backoff reconnects when the page is back online', async () => {
    const live = await scripted((n, _req, res) => {
      if (n === 0) res.end('retry: 20000\nid: 1\ndata: a\n\n');
      else res.write('data: b\n\n');
    });
    const clock = new ManualClock();
    const client = createClient({ baseURL: live.base, clock });
    const seen: Seen = { events: [] };
    const { unmount } = render(<Live seen={seen} />, { wrapper: wrapperFor(client) });
    await waitFor(() => expect(clock.timers.size).toBe(1));
    act(() => {
      window.dispatchEvent(new Event('online'));
    });
    await waitFor(() => expect(seen.events.map((e) => e.raw)).toEqual(['a', 'b']));
    expect(live.connects).toEqual([undefined, '1']);
    // The wait is over: its timer and its online listener are gone.
    expect(clock.timers.size).toBe(0);
    expect(environmentListenerCount()).toBe(0);
    unmount();
    await flush();
    expect(channelCount(client)).toBe(0);
  });

  it('unmounted while waiting to reconnect: no timer and no online listener is left', async () => {
    const live = await scripted((_n, _req, res) => res.end('data: a\n\n'));
    const clock = new ManualClock();
    const client = createClient({ baseURL: live.base, clock });
    const seen: Seen = { events: [] };
    const { unmount } = render(<Live seen={seen} />, { wrapper: wrapperFor(client) });
    await waitFor(() => expect(clock.timers.size).toBe(1));
    expect(environmentListenerCount()).toBe(1);
    unmount();
    await flush();
    expect(clock.timers.size).toBe(0);
    expect(environmentListenerCount()).toBe(0);
    expect(channelCount(client)).toBe(0);
    act(() => {
      window.dispatchEvent(new Event('online'));
    });
    await flush();
    expect(live.connects).toHaveLength(1);
  });
});
