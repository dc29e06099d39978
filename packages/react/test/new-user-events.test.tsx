import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createClient } from '@keel/core';
import { render, waitFor } from '@testing-library/react';
import { afterEach, describe, expect, it } from 'vitest';
import { isServerEventsError, useServerEvents } from '../src/index';
import { wrapperFor } from './helpers';

// useServerEvents pointed at a URL that is no event stream: a dev server's HTML fallback (200,
// text/html) is the usual one. The error must say what came back and what to check.

const servers: Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  }
});

async function serve(answer: (res: ServerResponse) => void): Promise<string> {
  const server = createServer((_req, res) => answer(res));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  servers.push(server);
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

type Seen = { state?: ReturnType<typeof useServerEvents> };

function Probe({ seen }: { seen: Seen }) {
  seen.state = useServerEvents('/events', {});
  return null;
}

describe('useServerEvents on a URL that is no event stream', () => {
  it('an HTML page (an SPA fallback): closed, the error names the type and asks about the URL', async () => {
    const base = await serve((res) => {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end('<!doctype html><div id="root"></div>');
    });
    const seen: Seen = {};
    render(<Probe seen={seen} />, { wrapper: wrapperFor(createClient({ baseURL: base })) });
    await waitFor(() => expect(seen.state?.status).toBe('closed'));
    const error = seen.state!.error as Error;
    expect(isServerEventsError(error)).toBe(true);
    expect(error.message).toBe(
      `Not an event stream (content-type "text/html; charset=utf-8"): the wrong URL? ` +
        `(GET ${base}/events)`,
    );
  });
});
