import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createClient } from '@keel/core';
import { render, waitFor } from '@testing-library/react';
import { afterEach, describe, expect, it } from 'vitest';
import { type ServerEventHandlers, useServerEvents } from '../src/index';
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
