import {
  createServer,
  type IncomingHttpHeaders,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';
import { type ClientOptions, createClient } from '@keel/core';
import { act, render, waitFor } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { isServerEventsError, type ServerEventsOptions, useServerEvents } from '../src/index';
import { ManualClock, wrapperFor } from './helpers';

/*
 * What the stream request carries (fetch, credentials and the other fetch options, headers) and
 * what answer it takes for an event stream, against a real loopback server.
 */

const servers: Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  }
});

/** A loopback server: each request's headers are kept; `answer` writes the response (left open). */
async function stream(
  answer: (res: ServerResponse) => void = (res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write('data: 1\n\n');
  },
) {
  const requests: IncomingHttpHeaders[] = [];
  const server = createServer((req, res) => {
    requests.push(req.headers);
    answer(res);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  servers.push(server);
  return { base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests };
}

/** The global fetch, recording what each call was given (the request still goes out). */
function recordingFetch() {
  const inits: RequestInit[] = [];
  const fetch = vi.fn((url: RequestInfo | URL, init?: RequestInit) => {
    inits.push(init!);
    return globalThis.fetch(url, init);
  });
  return { fetch, inits };
}

type Seen = { state?: ReturnType<typeof useServerEvents> };

function Probe({ seen, options }: { seen: Seen; options?: ServerEventsOptions }) {
  seen.state = useServerEvents('/sse', {}, options);
  return null;
}

function open(client: ReturnType<typeof createClient>, options?: ServerEventsOptions) {
  const seen: Seen = {};
  const view = render(<Probe seen={seen} options={options} />, { wrapper: wrapperFor(client) });
  return { seen, view };
}

describe("useServerEvents: the client's fetch options", () => {
  it("uses the client's fetch and credentials (a cross-origin cookie-authenticated stream)", async () => {
    const live = await stream();
    const recorded = recordingFetch();
    const client = createClient({
      baseURL: live.base,
      fetch: recorded.fetch,
      credentials: 'include',
      mode: 'cors',
      referrerPolicy: 'no-referrer',
    } as ClientOptions);
    const { seen } = open(client);
    await waitFor(() => expect(seen.state?.status).toBe('open'));
    expect(recorded.fetch).toHaveBeenCalledTimes(1);
    expect(recorded.inits[0]).toMatchObject({
      credentials: 'include',
      mode: 'cors',
      referrerPolicy: 'no-referrer',
      cache: 'no-store',
    });
    expect(live.requests).toHaveLength(1);
  });

  it("its own fetch and credentials win over the client's", async () => {
    const live = await stream();
    const clientFetch = recordingFetch();
    const own = recordingFetch();
    const client = createClient({
      baseURL: live.base,
      fetch: clientFetch.fetch,
      credentials: 'include',
    });
    const { seen } = open(client, { fetch: own.fetch, credentials: 'omit' });
    await waitFor(() => expect(seen.state?.status).toBe('open'));
    expect(clientFetch.fetch).not.toHaveBeenCalled();
    expect(own.inits[0]).toMatchObject({ credentials: 'omit', cache: 'no-store' });
  });

  it("a client's fetchCache, integrity or keepalive are not the stream's: always cache no-store", async () => {
    const live = await stream();
    const recorded = recordingFetch();
    const client = createClient({
      baseURL: live.base,
      fetch: recorded.fetch,
      fetchCache: 'force-cache',
      keepalive: true,
      integrity: 'sha256-abc',
    } as ClientOptions);
    const { seen } = open(client);
    await waitFor(() => expect(seen.state?.status).toBe('open'));
    expect(recorded.inits[0]!.cache).toBe('no-store');
    expect(recorded.inits[0]!.integrity).toBeUndefined();
    expect(recorded.inits[0]!.keepalive).toBeUndefined();
  });

  it("sends the client's default headers, its own over them", async () => {
    const live = await stream();
    const client = createClient({
      baseURL: live.base,
      headers: { authorization: 'Bearer client', 'x-app': 'a' },
    });
    const { seen } = open(client, { headers: { 'x-app': 'own' } });
    await waitFor(() => expect(seen.state?.status).toBe('open'));
    expect(live.requests[0]).toMatchObject({ authorization: 'Bearer client', 'x-app': 'own' });
  });
});

describe('useServerEvents: the request headers', () => {
  it('sends Accept: text/event-stream and no Cache-Control (not CORS-safelisted: a preflight on every first connect)', async () => {
    const live = await stream();
    const recorded = recordingFetch();
    const client = createClient({ baseURL: live.base, fetch: recorded.fetch });
    const { seen } = open(client);
    await waitFor(() => expect(seen.state?.status).toBe('open'));
    // The author headers (what decides a CORS preflight): Accept only, which is safelisted.
    const init = recorded.inits[0]!;
    expect([...new Headers(init.headers)]).toEqual([['accept', 'text/event-stream']]);
    // What keeps a cache out of it, as EventSource does: the fetch cache mode. With it, fetch
    // itself adds Cache-Control and Pragma (not author headers: no preflight for them).
    expect(init.cache).toBe('no-store');
    const headers = live.requests[0]!;
    expect(headers.accept).toBe('text/event-stream');
    expect(headers.pragma).toBe('no-cache');
    expect(headers['last-event-id']).toBeUndefined();
  });

  it('header names as written; an Accept of any case is replaced, not sent twice', async () => {
    const live = await stream();
    const recorded = recordingFetch();
    const client = createClient({
      baseURL: live.base,
      fetch: recorded.fetch,
      headers: { Authorization: 'Bearer c', Accept: 'application/json' },
    });
    const { seen } = open(client, { headers: { 'X-App': 'own' } });
    await waitFor(() => expect(seen.state?.status).toBe('open'));
    expect(recorded.inits[0]!.headers).toEqual({
      Authorization: 'Bearer c',
      'X-App': 'own',
      accept: 'text/event-stream',
    });
    expect(live.requests[0]!.accept).toBe('text/event-stream');
  });

  it('a Headers object: a changed token reconnects with it', async () => {
    const live = await stream();
    const client = createClient({ baseURL: live.base });
    const seen: Seen = {};
    const { rerender } = render(
      <Probe seen={seen} options={{ headers: new Headers({ authorization: 'Bearer a' }) }} />,
      { wrapper: wrapperFor(client) },
    );
    await waitFor(() => expect(seen.state?.status).toBe('open'));
    // The same entries in a new object: the same stream, no reconnect.
    rerender(
      <Probe seen={seen} options={{ headers: new Headers({ authorization: 'Bearer a' }) }} />,
    );
    rerender(
      <Probe seen={seen} options={{ headers: new Headers({ authorization: 'Bearer b' }) }} />,
    );
    await waitFor(() => expect(live.requests).toHaveLength(2));
    expect(live.requests.map((h) => h.authorization)).toEqual(['Bearer a', 'Bearer b']);
    await waitFor(() => expect(seen.state?.status).toBe('open'));
  });
});

describe('useServerEvents: what is an event stream', () => {
  it.each([
    'text/event-stream',
    'Text/Event-Stream',
    'text/event-stream; charset=utf-8',
    'text/event-stream;charset=UTF-8',
    ' text/event-stream ; x=1',
  ])('%j is one', async (type) => {
    const live = await stream((res) => {
      res.writeHead(200, { 'content-type': type });
      res.write('data: 1\n\n');
    });
    const { seen } = open(createClient({ baseURL: live.base }));
    await waitFor(() => expect(seen.state?.status).toBe('open'));
  });

  it.each([
    'text/event-streamx',
    'text/event-stream-v2',
    'text/event-streams; charset=utf-8',
    'text/plain',
    '',
  ])('%j is not: closed for good', async (type) => {
    const live = await stream((res) => {
      res.writeHead(200, type ? { 'content-type': type } : {});
      res.write('data: 1\n\n');
    });
    const { seen } = open(createClient({ baseURL: live.base }));
    await waitFor(() => expect(seen.state?.status).toBe('closed'));
    const error = seen.state!.error as Error;
    expect(isServerEventsError(error)).toBe(true);
    expect(error.message).toContain(`Not an event stream (content-type "${type}")`);
    expect(live.requests).toHaveLength(1);
  });

  it.each([
    [404, 'text/html'],
    [404, 'text/event-stream'],
    [410, 'application/json'],
  ])(
    'an answer %i (%s) is not: closed for good, the error names the status',
    async (code, type) => {
      const live = await stream((res) => {
        res.writeHead(code, { 'content-type': type }).end('gone');
      });
      const { seen } = open(createClient({ baseURL: live.base }));
      await waitFor(() => expect(seen.state?.status).toBe('closed'));
      const error = seen.state!.error as Error;
      expect(isServerEventsError(error)).toBe(true);
      expect(error).toMatchObject({ status: code });
      expect(error.message).toBe(`Event stream answered HTTP ${code} (GET ${live.base}/sse)`);
      expect(live.requests).toHaveLength(1);
    },
  );

  it("a fetch that gives no readable body (React Native's): the error says so", async () => {
    const live = await stream();
    // The platform's fetch as React Native's: the answer without a streaming body.
    const noBody = async (url: RequestInfo | URL, init?: RequestInit) => {
      const response = await globalThis.fetch(url, init);
      await response.body?.cancel();
      return new Response(null, { status: response.status, headers: response.headers });
    };
    const { seen } = open(createClient({ baseURL: live.base }), { fetch: noBody });
    await waitFor(() => expect(seen.state?.status).toBe('closed'));
    const error = seen.state!.error as Error;
    expect(isServerEventsError(error)).toBe(true);
    expect(error.message).toMatch(/^The fetch returned no readable body \(GET /);
    expect(error.message).not.toContain('Not an event stream');
  });
});

describe('useServerEvents: a stream the server ends', () => {
  it('reconnects, and the state says why while it waits (the error names the end)', async () => {
    let ends = true;
    const live = await stream((res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      // The first answer ends cleanly after its event (a server restarting, a proxy's limit).
      if (ends) res.end('data: 1\n\n');
      else res.write('data: 2\n\n');
      ends = false;
    });
    const clock = new ManualClock();
    const { seen } = open(createClient({ baseURL: live.base }), { clock });
    await waitFor(() => expect(clock.timers.size).toBe(1));
    expect(seen.state?.status).toBe('connecting');
    const error = seen.state!.error as Error;
    expect(isServerEventsError(error)).toBe(true);
    expect(error).toMatchObject({ status: 200 });
    expect(error.message).toBe(`The server ended the event stream (GET ${live.base}/sse)`);
    act(() => {
      clock.runNext();
    });
    await waitFor(() => expect(seen.state).toEqual({ status: 'open', error: null }));
    expect(live.requests).toHaveLength(2);
  });
});

describe('useServerEvents: a custom clock', () => {
  it('without now() is a TypeError naming it when the stream opens', () => {
    const client = createClient({ baseURL: 'http://127.0.0.1:9' });
    const clock = new ManualClock();
    const spy = vi.spyOn(console, 'error').mockImplementation(() => {});
    try {
      expect(() =>
        open(client, {
          clock: { setTimeout: clock.setTimeout, clearTimeout: clock.clearTimeout } as never,
        }),
      ).toThrow('keel: `clock.now` must be a function, got undefined');
    } finally {
      spy.mockRestore();
    }
  });
});

describe('useServerEvents: credentials', () => {
  it('a value fetch does not know is a RangeError naming the option, not a retried network error', () => {
    const client = createClient({ baseURL: 'http://127.0.0.1:9' });
    const spy = vi.spyOn(console, 'error').mockImplementation(() => {});
    try {
      expect(() => open(client, { credentials: 'bogus' as never })).toThrow(
        "keel: `credentials` must be one of 'omit', 'same-origin', 'include', got \"bogus\"",
      );
    } finally {
      spy.mockRestore();
    }
  });
});
