import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createClient } from '@keel/core';
import { useServerEvents } from '@keel/react';
import { act, waitFor, within } from '@testing-library/react';
import { afterEach, describe, expect, it } from 'vitest';
import {
  handWritten,
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
