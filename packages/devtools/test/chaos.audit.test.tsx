import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createClient } from '@keel/core';
import { useServerEvents } from '@keel/react';
import { act, render, waitFor, within } from '@testing-library/react';
import { Profiler } from 'react';
import { afterEach, describe, expect, it } from 'vitest';
import { type DevtoolsView, KeelDevtools } from '../src/index';
import {
  debugOf,
  handWritten,
  manualClock,
  offlineClient,
  panel,
  renderDevtools,
  selectEntry,
  settle,
  view,
  watchConsoleErrors,
} from './helpers';

// Text a hostile peer or app controls, at sizes no view foresaw: every place the panel writes
// it is cut, so a megabyte costs what a long line does.

const MEGA = 1_000_000;

const sse: Server[] = [];
afterEach(async () => {
  for (const server of sse.splice(0)) {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
});

/** A raw SSE server on 127.0.0.1:0 that sends `body` once to each connection and holds it open. */
async function rawStream(body: string): Promise<string> {
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  sse.push(server);
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

function Listener({ url }: { url: string }) {
  useServerEvents(url, {});
  return null;
}

describe('Live events view: a megabyte event name and id', () => {
  it('the name, the id and the last event id are cut in the list and the facts', async () => {
    const errors = watchConsoleErrors();
    const name = 'n'.repeat(MEGA);
    const id = 'i'.repeat(MEGA);
    const base = await rawStream(`id: ${id}\nevent: ${name}\ndata: {"ok":1}\n\n`);
    renderDevtools(
      createClient({ baseURL: base }),
      { initialView: 'events' },
      <Listener url="/s" />,
    );
    const stream = () => within(view()).getByRole('region', { name: `Event stream ${base}/s` });
    // Two megabytes to parse on a machine shared with other tests: a roomy wait.
    await waitFor(() => expect(within(stream()).getByText('1 event')).toBeTruthy(), {
      timeout: 10_000,
    });
    expect(within(stream()).getAllByRole('listitem')).toHaveLength(1);
    expect(stream().textContent).toContain('{"ok":1}');
    expect(stream().textContent!.length).toBeLessThan(10_000);
    expect(errors).not.toHaveBeenCalled();
  });
});

describe('Cache view: megabyte tags and headers', () => {
  it('a tag, a header name and a header value are cut in the row and the detail', () => {
    const client = offlineClient();
    const tag = 't'.repeat(MEGA);
    client.setCached(
      client.resolve('GET', '/big-meta', { tags: [tag] }),
      handWritten({ ok: 1 }, new Headers([[`x-${'h'.repeat(MEGA)}`, 'v'.repeat(MEGA)]])),
    );
    renderDevtools(client);
    expect(view().querySelector('tbody')!.textContent!.length).toBeLessThan(10_000);
    const detail = selectEntry('/big-meta');
    expect(within(detail).getByText('1')).toBeTruthy();
    expect(detail.textContent!.length).toBeLessThan(10_000);
  });
});

describe('Requests view: a megabyte error', () => {
  it('what a failed request got is cut in its row', async () => {
    const client = createClient({
      baseURL: 'http://127.0.0.1:9',
      retry: false,
      // A platform code is read from the error as it is: a hostile fetch can make it any length.
      fetch: () =>
        Promise.reject(Object.assign(new TypeError('failed'), { code: 'C'.repeat(MEGA) })),
    });
    renderDevtools(client, { initialView: 'requests' });
    await act(async () => {
      await client.get('/boom').catch(() => {});
    });
    await settle();
    const row = within(view()).getAllByRole('listitem')[0]!;
    expect(row.getAttribute('data-state')).toBe('failed');
    expect(row.textContent!.length).toBeLessThan(10_000);
    expect(panel().textContent!.length).toBeLessThan(20_000);
  });
});

describe('panels, clients and views swapped', () => {
  it('two panels on one client, one switched between two clients on every view: all given back', async () => {
    const clockA = manualClock();
    const clockB = manualClock();
    const a = createClient({ baseURL: 'http://127.0.0.1:9', clock: clockA });
    const b = createClient({ baseURL: 'http://127.0.0.1:9', clock: clockB });
    a.setCached('GET /a', handWritten(1));
    b.setCached('GET /b', handWritten(2));
    const idle = [debugOf(a).listeners, debugOf(b).listeners, clockA.pending, clockB.pending];
    const tree = (client: typeof a, view: DevtoolsView) => (
      <>
        <KeelDevtools client={a} initialIsOpen initialView={view} />
        <KeelDevtools client={client} initialIsOpen initialView={view} />
      </>
    );
    const views: DevtoolsView[] = ['cache', 'requests', 'endpoints', 'scheduler', 'events'];
    const { rerender, unmount } = render(tree(a, 'cache'));
    for (const v of views) {
      rerender(null);
      rerender(tree(a, v));
      rerender(tree(b, v));
      rerender(tree(a, v));
      rerender(tree(b, v));
      await settle();
    }
    unmount();
    await settle();
    expect([debugOf(a).listeners, debugOf(b).listeners, clockA.pending, clockB.pending]).toEqual(
      idle,
    );
  });
});

/** A revoked Proxy: every operation on it throws. */
function revoked(): object {
  const { proxy, revoke } = Proxy.revocable({}, {});
  revoke();
  return proxy;
}

describe('Cache view: a response written by hand as anything', () => {
  // `setCached` and `hydrate` take what they are given (state from elsewhere, a test's fake):
  // one odd entry must not take the Cache view down when it is selected.
  it.each([
    ['a status that is an object', { data: 1, status: { x: 1 }, statusText: 'OK' }, /\{"x":1\} OK/],
    ['a symbol statusText', { data: 1, status: 200, statusText: Symbol('s') }, /200 Symbol\(s\)/],
    [
      'headers whose forEach throws',
      {
        data: 1,
        status: 200,
        headers: {
          forEach() {
            throw new Error('no headers today');
          },
        },
      },
      /unreadable: Error: no headers today/,
    ],
    [
      'headers yielding non-strings',
      {
        data: 1,
        status: 200,
        headers: {
          forEach(fn: (value: unknown, name: unknown) => void) {
            fn({ v: 1 }, 5);
            fn(Symbol('v'), Symbol('k'));
          },
        },
      },
      /Symbol\(k\)Symbol\(v\)/,
    ],
    ['a revoked Proxy as headers', { data: 1, status: 200, headers: revoked() }, /unreadable/],
    ['a revoked Proxy as the response', revoked(), /unreadable/],
  ])('%s: the entry opens and shows what it can', (_, response, shows) => {
    const errors = watchConsoleErrors();
    const client = offlineClient();
    client.setCached('GET /odd', response as never);
    renderDevtools(client);
    const detail = selectEntry('/odd');
    expect(within(view()).queryByRole('alert')).toBeNull();
    expect(detail.textContent).toMatch(shows);
    expect(errors).not.toHaveBeenCalled();
  });
});

describe('a storm of refused requests', () => {
  it('50,000 requests refused by an open circuit in one task: a few renders, 100 rows kept, no listener added', async () => {
    const clock = manualClock();
    const client = createClient({
      baseURL: 'http://127.0.0.1:9',
      retry: false,
      clock,
      circuitBreaker: { failureThreshold: 1, resetTimeout: 60_000 },
      fetch: () => Promise.reject(Object.assign(new TypeError('failed'), { code: 'ECONNREFUSED' })),
    });
    let commits = 0;
    render(
      <Profiler id="devtools" onRender={() => commits++}>
        <KeelDevtools client={client} initialIsOpen initialView="requests" />
      </Profiler>,
    );
    await act(() => client.get('/down').catch(() => {})); // opens the circuit
    await settle();
    const listeners = debugOf(client).listeners;
    const before = commits;
    await act(async () => {
      const refused: Promise<unknown>[] = [];
      for (let i = 0; i < 50_000; i++) refused.push(client.get('/down').catch(() => {}));
      await Promise.all(refused);
    });
    await settle();
    // Each event costs the panel a constant: the same listeners, one render per burst.
    expect(debugOf(client).listeners).toBe(listeners);
    expect(commits - before).toBeLessThan(10);
    expect(within(view()).getByText(/in flight ·/).textContent).toBe('0 in flight · 100 ended');
    const rows = within(view()).getAllByRole('listitem');
    expect(rows).toHaveLength(100);
    expect(rows.every((row) => row.getAttribute('data-state') === 'refused')).toBe(true);
  }, 60_000);
});
