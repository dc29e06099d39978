import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createClient } from '@keel/core';
import { render, screen, waitFor } from '@testing-library/react';
import { afterEach, describe, expect, it, onTestFinished, vi } from 'vitest';
import {
  isServerEventsError,
  type ServerEventHandlers,
  type ServerEventsOptions,
  useServerEvents,
} from '../src/index';
import { channelCount, channelFor } from '../src/server-events/channel';
import { debugOf, flush, ManualClock, wrapperFor } from './helpers';

const servers: Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  }
});

/**
 * A loopback event stream scripted per connection: `script(n, req, res)` writes what the n-th
 * connection (from 0) gets; the response stays open unless the script ends it.
 */
async function scripted(script: (n: number, req: IncomingMessage, res: ServerResponse) => void) {
  const state = { base: '', connects: [] as (string | undefined)[], urls: [] as string[] };
  const server = createServer((req, res) => {
    const n = state.connects.length;
    state.connects.push(req.headers['last-event-id'] as string | undefined);
    state.urls.push(req.url!);
    if (req.url === '/never') {
      // Any other path is a request nobody should have made.
      res.writeHead(500).end();
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    script(n, req, res);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  servers.push(server);
  state.base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return state;
}

function Feed({
  url,
  handlers,
  options,
}: {
  url: string;
  handlers: ServerEventHandlers;
  options?: ServerEventsOptions;
}) {
  const { status } = useServerEvents(url, handlers, options);
  return <p data-testid="status">{status}</p>;
}

type Seen = { state?: ReturnType<typeof useServerEvents> };

/** Keeps the hook's latest state in `seen` and the `message` events' data in `got`. */
function Probe({
  seen,
  got,
  options,
}: {
  seen: Seen;
  got: unknown[];
  options?: ServerEventsOptions;
}) {
  seen.state = useServerEvents('/sse', { message: (d) => got.push(d) }, options);
  return null;
}

describe('useServerEvents against a hostile server', () => {
  it('the server closes after each event: reconnects after its retry: delay, resuming from the last id', async () => {
    const live = await scripted((n, _req, res) => {
      res.end(`retry: 5000\nid: ${n + 1}\ndata: ${n + 1}\n\n`);
    });
    const clock = new ManualClock();
    const client = createClient({ baseURL: live.base, clock });
    const got: unknown[] = [];
    render(
      <Feed
        url="/sse"
        handlers={{ message: (data) => got.push(data) }}
        options={{ reconnect: { jitter: false } }}
      />,
      { wrapper: wrapperFor(client) },
    );
    await waitFor(() => expect(clock.timers.size).toBe(1));
    expect(got).toEqual([1]);
    expect(clock.delays).toEqual([5000]);
    clock.runNext();
    await waitFor(() => expect(got).toEqual([1, 2]));
    expect(live.connects).toEqual([undefined, '1']);
  });

  it('malformed events: data that is not JSON arrives as text, a bad keel:invalidate goes to onError, the stream stays open', async () => {
    const live = await scripted((_n, _req, res) => {
      res.write('data: {not json\n\n');
      res.write('event: keel:invalidate\ndata: "nope"\n\n');
      res.write('event: keel:invalidate\ndata: {"target": 5}\n\n');
      res.write('data\n\n');
      res.write('nonsense line without colon\n\n');
      res.write('event: done\ndata: 1\n\n');
    });
    const client = createClient({ baseURL: live.base });
    const got: unknown[] = [];
    const onError = vi.fn();
    render(
      <Feed
        url="/sse"
        handlers={{ message: (data) => got.push(data), done: () => got.push('done') }}
        options={{ onError }}
      />,
      { wrapper: wrapperFor(client) },
    );
    await waitFor(() => expect(got).toContain('done'));
    expect(got).toEqual(['{not json', '', 'done']);
    expect(onError).toHaveBeenCalledTimes(2);
    expect(onError.mock.calls.map(([e]) => (e as Error).name)).toEqual(['TypeError', 'TypeError']);
    expect(screen.getByTestId('status').textContent).toBe('open');
    expect(live.connects).toHaveLength(1);
  });

  it('a huge event (4 MB of JSON, written in pieces) arrives whole', async () => {
    const items = Array.from({ length: 100_000 }, (_, i) => ({
      id: i,
      title: `todo ${i} ${'x'.repeat(20)}`,
    }));
    const text = JSON.stringify(items);
    const live = await scripted((_n, _req, res) => {
      res.write('event: snapshot\ndata: ');
      for (let at = 0; at < text.length; at += 10_000) res.write(text.slice(at, at + 10_000));
      res.write('\n\n');
    });
    const client = createClient({ baseURL: live.base });
    let got: unknown;
    render(<Feed url="/sse" handlers={{ snapshot: (data) => (got = data) }} />, {
      wrapper: wrapperFor(client),
    });
    await waitFor(() => expect(got).toBeDefined(), { timeout: 5000 });
    expect(got).toEqual(items);
  });

  it('20 MB with no line end: closed for good with a ServerEventsError naming the limit, the socket closed, no reconnect', async () => {
    const left: string[] = [];
    const live = await scripted((_n, req, res) => {
      req.on('close', () => left.push('closed'));
      const chunk = 'x'.repeat(64 * 1024);
      let sent = 0;
      // Honours backpressure: once the client stops reading, writing stops too.
      const pump = () => {
        while (sent < 20 * 1024 * 1024 && !res.destroyed) {
          sent += chunk.length;
          if (!res.write(chunk)) return void res.once('drain', pump);
        }
        if (!res.destroyed) res.end();
      };
      pump();
    });
    const clock = new ManualClock();
    const client = createClient({ baseURL: live.base, clock });
    const got: unknown[] = [];
    const seen: Seen = {};
    const { unmount } = render(<Probe seen={seen} got={got} />, { wrapper: wrapperFor(client) });
    await waitFor(() => expect(seen.state?.status).toBe('closed'), { timeout: 5000 });
    expect(isServerEventsError(seen.state!.error)).toBe(true);
    expect((seen.state!.error as Error).message).toBe(
      `Event not ended within maxEventLength (8388608 characters) (GET ${live.base}/sse)`,
    );
    expect((seen.state!.error as { status?: number }).status).toBe(200);
    await waitFor(() => expect(left).toEqual(['closed']));
    expect(got).toEqual([]);
    expect(clock.timers.size).toBe(0);
    expect(live.connects).toHaveLength(1);
    unmount();
    await flush();
    expect(channelCount(client)).toBe(0);
  });

  it('maxEventLength sets the limit; an event within it still arrives, and a bad value is a RangeError naming it', async () => {
    const live = await scripted((_n, _req, res) => {
      res.write(`data: ${'y'.repeat(50)}\n\n`);
      for (let i = 0; i < 20; i++) res.write('data: zzzzzzzzzz\n');
    });
    const client = createClient({ baseURL: live.base, clock: new ManualClock() });
    const got: unknown[] = [];
    const seen: Seen = {};
    render(<Probe seen={seen} got={got} options={{ maxEventLength: 100 }} />, {
      wrapper: wrapperFor(client),
    });
    await waitFor(() => expect(seen.state?.status).toBe('closed'));
    expect(got).toEqual(['y'.repeat(50)]);
    expect((seen.state!.error as Error).message).toMatch(
      /^Event not ended within maxEventLength \(100 characters\)/,
    );
    const spec = client.resolve('GET', '/other');
    expect(() => channelFor(client, spec, { maxEventLength: 0 })).toThrow(
      new RangeError('keel: `maxEventLength` must be an integer >= 1 (or Infinity), got 0'),
    );
  });

  it('an invalidation for a key nobody reads sends nothing and breaks nothing', async () => {
    const live = await scripted((_n, _req, res) => {
      res.write('event: keel:invalidate\ndata: {"target": "/never"}\n\n');
      res.write('event: changed\ndata: 1\n\n');
      res.write('event: done\ndata: 1\n\n');
    });
    const client = createClient({ baseURL: live.base });
    const onError = vi.fn();
    let done = false;
    render(
      <Feed
        url="/sse"
        handlers={{ invalidate: { changed: ['never-read'] }, done: () => (done = true) }}
        options={{ onError }}
      />,
      { wrapper: wrapperFor(client) },
    );
    await waitFor(() => expect(done).toBe(true));
    await flush();
    expect(onError).not.toHaveBeenCalled();
    expect(live.connects).toHaveLength(1);
    expect(debugOf(client)).toMatchObject({ flights: 0 });
  });

  it('unmounted while connecting to a server that never answers: the request is aborted, nothing is left', async () => {
    const live = await scripted(() => {});
    const client = createClient({ baseURL: live.base });
    const { unmount } = render(<Feed url="/sse" handlers={{}} />, {
      wrapper: wrapperFor(client),
    });
    await waitFor(() => expect(live.connects).toHaveLength(1));
    unmount();
    await flush();
    expect(channelCount(client)).toBe(0);
  });
});

describe('useServerEvents: an event id that is not ASCII', () => {
  it('is sent back as Last-Event-ID in UTF-8 on reconnect, and the stream resumes', async () => {
    const live = await scripted((n, _req, res) => {
      if (n === 0) res.end('id: ✓ café 1\ndata: 1\n\n');
      else res.write(`data: ${n + 1}\n\n`);
    });
    const clock = new ManualClock();
    const client = createClient({ baseURL: live.base, clock });
    const got: unknown[] = [];
    render(<Feed url="/sse" handlers={{ message: (data) => got.push(data) }} />, {
      wrapper: wrapperFor(client),
    });
    await waitFor(() => expect(clock.timers.size).toBe(1));
    clock.runNext();
    await waitFor(() => expect(got).toEqual([1, 2]));
    // Node reads header bytes as latin1: the UTF-8 bytes of the id.
    expect(Buffer.from(live.connects[1]!, 'latin1').toString('utf8')).toBe('✓ café 1');
    expect(screen.getByTestId('status').textContent).toBe('open');
  });
});

describe('useServerEvents: an event id with a control character', () => {
  it('is not sent back (fetch may refuse it as a header value): the reconnect resyncs instead of failing for ever', async () => {
    const live = await scripted((n, _req, res) => {
      if (n === 0) res.end('id: a\x01b\x7f\ndata: 1\n\n');
      else res.write(`data: ${n + 1}\n\n`);
    });
    const clock = new ManualClock();
    const client = createClient({ baseURL: live.base, clock });
    const invalidate = vi.spyOn(client, 'invalidate');
    const got: unknown[] = [];
    const ids: unknown[] = [];
    render(
      <Feed
        url="/sse"
        handlers={{
          message: (data, event) => {
            got.push(data);
            ids.push(event.id);
          },
        }}
      />,
      { wrapper: wrapperFor(client) },
    );
    await waitFor(() => expect(clock.timers.size).toBe(1));
    // The event carries its id as the server sent it.
    expect(ids).toEqual(['a\x01b\x7f']);
    clock.runNext();
    await waitFor(() => expect(got).toEqual([1, 2]));
    expect(live.connects).toEqual([undefined, undefined]);
    expect(screen.getByTestId('status').textContent).toBe('open');
    // Nothing to resume from: events may have been missed, so every query is invalidated.
    expect(invalidate).toHaveBeenCalledTimes(1);
  });
});

describe('useServerEvents without crypto.getRandomValues (React Native without a polyfill)', () => {
  it("applies the server's keel:invalidate events, another tab's included", async () => {
    vi.stubGlobal('crypto', undefined);
    onTestFinished(() => {
      vi.unstubAllGlobals();
    });
    const live = await scripted((_n, _req, res) => {
      res.write('event: keel:invalidate\ndata: {"target": "/todos"}\n\n');
      res.write('event: keel:invalidate\ndata: {"target": ["t"], "source": "other-tab"}\n\n');
      res.write('event: done\ndata: 1\n\n');
    });
    const client = createClient({ baseURL: live.base });
    const invalidate = vi.spyOn(client, 'invalidate');
    const onError = vi.fn();
    let done = false;
    render(<Feed url="/sse" handlers={{ done: () => (done = true) }} options={{ onError }} />, {
      wrapper: wrapperFor(client),
    });
    await waitFor(() => expect(done).toBe(true));
    expect(onError).not.toHaveBeenCalled();
    expect(invalidate.mock.calls).toEqual([['/todos'], [['t']]]);
  });
});

describe('useServerEvents: the stream URL', () => {
  it('is requested as written (its query not sorted: a signature over it still holds), on reconnect too', async () => {
    const live = await scripted((n, _req, res) => {
      if (n === 0) res.end('data: 1\n\n');
      else res.write(`data: ${n + 1}\n\n`);
    });
    const clock = new ManualClock();
    const client = createClient({ baseURL: live.base, clock });
    const got: unknown[] = [];
    render(<Feed url="/sse?z=1&a=2&sig=abc" handlers={{ message: (data) => got.push(data) }} />, {
      wrapper: wrapperFor(client),
    });
    await waitFor(() => expect(clock.timers.size).toBe(1));
    clock.runNext();
    await waitFor(() => expect(got).toEqual([1, 2]));
    expect(live.urls).toEqual(['/sse?z=1&a=2&sig=abc', '/sse?z=1&a=2&sig=abc']);
  });
});
