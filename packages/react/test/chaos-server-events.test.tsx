import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createClient } from '@keel/core';
import { act, render, waitFor } from '@testing-library/react';
import { afterEach, describe, expect, it } from 'vitest';
import { type ServerEventHandlers, useServerEvents } from '../src/index';
import { channelCount, peekChannel } from '../src/server-events/channel';
import { flush, wrapperFor } from './helpers';

const servers: Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  }
});

/** A loopback server answering /sse with `body` as one event stream, held open. */
async function sseServer(body: string): Promise<string> {
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write(body);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  servers.push(server);
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** A loopback event stream the test writes to: every connection, and a push to all of them. */
async function liveSse() {
  const open: ServerResponse[] = [];
  const state = {
    base: '',
    connects: 0,
    push: (text: string) => {
      for (const res of open) res.write(text);
    },
  };
  const server = createServer((_req, res) => {
    state.connects++;
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write(': hi\n\n');
    open.push(res);
    res.on('close', () => open.splice(open.indexOf(res), 1));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  servers.push(server);
  state.base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return state;
}

/** Collects what is thrown out of band (reportError's queueMicrotask) while `fn` runs. */
async function uncaught(fn: () => Promise<void>): Promise<unknown[]> {
  const caught: unknown[] = [];
  const on = (error: unknown) => caught.push(error);
  process.prependListener('uncaughtException', on);
  try {
    await fn();
    await flush();
  } finally {
    process.off('uncaughtException', on);
  }
  return caught;
}

function Feed({ url, handlers }: { url: string; handlers: ServerEventHandlers }) {
  useServerEvents(url, handlers);
  return null;
}

describe('useServerEvents: event names of Object.prototype', () => {
  it('an event named like an Object.prototype member calls no inherited method; an own handler of that name runs', async () => {
    const names = [
      'valueOf',
      'hasOwnProperty',
      'isPrototypeOf',
      'propertyIsEnumerable',
      'toString',
      'constructor',
      '__proto__',
      '__defineGetter__',
    ];
    const base = await sseServer(
      `${names.map((name) => `event: ${name}\ndata: {"x":1}\n\n`).join('')}event: done\ndata: 1\n\n`,
    );
    const client = createClient({ baseURL: base });
    const seen: string[] = [];
    const handlers: ServerEventHandlers = {
      done: () => seen.push('done'),
      constructor: (data: unknown) => seen.push(`constructor:${JSON.stringify(data)}`),
    };
    const errors = await uncaught(async () => {
      render(<Feed url="/sse" handlers={handlers} />, { wrapper: wrapperFor(client) });
      await waitFor(() => expect(seen).toContain('done'));
    });
    expect(seen).toEqual(['constructor:{"x":1}', 'done']);
    expect(errors).toEqual([]);
  });
});

function Named({ name, seen }: { name: string; seen: string[] }) {
  // New handler objects and functions at every render, as inline ones are.
  const { status } = useServerEvents('/sse', {
    ping: (data) => seen.push(`${name}:${String(data)}`),
  });
  return <p>{status}</p>;
}

function Two({ both, seen, n }: { both: boolean; seen: string[]; n: number }) {
  return (
    <>
      <Named name="a" seen={seen} />
      {both && <Named name="b" seen={seen} />}
      <p>{n}</p>
    </>
  );
}

describe('useServerEvents: sharing, re-rendering, unmounting', () => {
  it('new handlers at every render reconnect nothing; two components each get their own; one unmounting leaves the other', async () => {
    const sse = await liveSse();
    const client = createClient({ baseURL: sse.base });
    const seen: string[] = [];
    const { rerender, unmount } = render(<Two both seen={seen} n={0} />, {
      wrapper: wrapperFor(client),
    });
    await waitFor(() =>
      expect(peekChannel(client, client.resolve('GET', '/sse').key)?.state.status).toBe('open'),
    );
    for (let n = 1; n <= 20; n++) rerender(<Two both seen={seen} n={n} />);
    sse.push('event: ping\ndata: 1\n\n');
    await waitFor(() => expect(seen).toEqual(['a:1', 'b:1']));
    rerender(<Two both={false} seen={seen} n={21} />);
    await flush();
    sse.push('event: ping\ndata: 2\n\n');
    await waitFor(() => expect(seen).toEqual(['a:1', 'b:1', 'a:2']));
    expect(sse.connects).toBe(1);
    unmount();
    await flush();
    expect(channelCount(client)).toBe(0);
    await act(async () => {});
  });
});

describe('useServerEvents: a component unmounted by an earlier handler of the same event', () => {
  it('does not get that event', async () => {
    const sse = await liveSse();
    const client = createClient({ baseURL: sse.base });
    const seen: string[] = [];
    let unmountB = () => {};
    render(
      <Feed
        url="/sse"
        handlers={{
          ping: () => {
            seen.push('a');
            // A handler that closes a part of the page at once (a modal, a route).
            unmountB();
          },
        }}
      />,
      { wrapper: wrapperFor(client) },
    );
    const b = render(<Feed url="/sse" handlers={{ ping: () => seen.push('b') }} />, {
      wrapper: wrapperFor(client),
    });
    unmountB = b.unmount;
    await waitFor(() =>
      expect(peekChannel(client, client.resolve('GET', '/sse').key)?.state.status).toBe('open'),
    );
    sse.push('event: ping\ndata: 1\n\nevent: ping\ndata: 2\n\n');
    await waitFor(() => expect(seen.filter((s) => s === 'a')).toHaveLength(2));
    await flush();
    expect(seen).toEqual(['a', 'a']);
  });
});
