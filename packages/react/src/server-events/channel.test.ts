// @vitest-environment node
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createClient } from '@keel/core';
import { describe, expect, it, vi } from 'vitest';
import { channelCount, channelFor } from './channel';

describe('ServerEventsOptions.reconnect', () => {
  const client = createClient({
    baseURL: 'http://127.0.0.1:1',
    fetch: () => new Promise(() => {}),
  });

  it('a bad value is refused with the option name and the value, and opens no channel', () => {
    const spec = client.resolve('GET', '/events');
    const open = (reconnect: object) => () => channelFor(client, spec, { reconnect } as never);
    expect(open({ initialDelay: -1 })).toThrow(
      new RangeError(
        'keel: `reconnect.initialDelay` must be a non-negative number of ms, at most 2147483647, got -1',
      ),
    );
    expect(open({ initialDelay: '5' })).toThrow(TypeError);
    expect(open({ initialDelay: 500, maxDelay: 100 })).toThrow(
      new RangeError(
        'keel: `reconnect.maxDelay` must be at least reconnect.initialDelay (500), got 100',
      ),
    );
    expect(open({ jitter: 'yes' })).toThrow(TypeError);
    expect(channelCount(client)).toBe(0);
  });
});

describe('reconnect backoff against a stream that ends at once', () => {
  /**
   * A real loopback server answering every connect with `body` then ending the stream (a proxy
   * that sends `: ok` and closes); the channel's clock is manual, so each reconnect's delay is
   * read as it is armed, and fired by the test.
   */
  async function endsAtOnce(body: string) {
    const server = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end(body);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const client = createClient({ baseURL: `http://127.0.0.1:${port}` });
    const delays: number[] = [];
    const timers: (() => void)[] = [];
    let time = 0;
    const clock = {
      now: () => time,
      setTimeout: (fn: () => void, ms: number) => {
        delays.push(ms);
        timers.push(() => {
          time += ms;
          fn();
        });
        return timers.length;
      },
      clearTimeout: () => {},
    };
    const channel = channelFor(client, client.resolve('GET', '/events'), {
      clock,
      reconnect: { initialDelay: 100, maxDelay: 10_000, jitter: false },
    });
    channel.start();
    /** Waits for the reconnect timer of connect n (1-based), then fires it. */
    async function reconnect(n: number) {
      await vi.waitFor(() => expect(delays).toHaveLength(n));
      timers[n - 1]!();
    }
    return {
      delays,
      reconnect,
      async close() {
        channel.stop();
        server.closeAllConnections();
        await new Promise((resolve) => server.close(resolve));
      },
    };
  }

  it('a comment alone does not reset it: the delay doubles at each reconnect', async () => {
    const t = await endsAtOnce(': ok\n\n');
    try {
      for (let n = 1; n <= 4; n++) await t.reconnect(n);
      await vi.waitFor(() => expect(t.delays).toHaveLength(5));
      expect(t.delays).toEqual([100, 200, 400, 800, 1600]);
    } finally {
      await t.close();
    }
  });

  it('an event resets it: every reconnect waits the base delay', async () => {
    const t = await endsAtOnce(': ok\n\ndata: x\n\n');
    try {
      for (let n = 1; n <= 3; n++) await t.reconnect(n);
      await vi.waitFor(() => expect(t.delays).toHaveLength(4));
      expect(t.delays).toEqual([100, 100, 100, 100]);
    } finally {
      await t.close();
    }
  });
});

describe('UTF-8 split across the chunks of a stream', () => {
  /** A channel over a fetch whose body is `chunks`, exactly as given, then its end. */
  function streamOf(chunks: Uint8Array[]) {
    const client = createClient({ baseURL: 'http://127.0.0.1:1' });
    const delays: number[] = [];
    const clock = {
      now: () => 0,
      setTimeout: (_fn: () => void, ms: number) => delays.push(ms),
      clearTimeout: () => {},
    };
    const fetch = async () =>
      new Response(
        new ReadableStream<Uint8Array>({
          start(controller) {
            for (const chunk of chunks) controller.enqueue(chunk);
            controller.close();
          },
        }),
        { headers: { 'content-type': 'text/event-stream' } },
      );
    const channel = channelFor(client, client.resolve('GET', '/events'), { clock, fetch });
    const raws: string[] = [];
    const leave = channel.join({
      handlers: () => ({ message: (_data, event) => raws.push(event.raw) }),
      onState: () => {},
    });
    return { channel, delays, raws, leave };
  }
  const bytes = (text: string) => new TextEncoder().encode(text);

  it('a character split between two chunks is dispatched whole', async () => {
    const [c3, a9] = bytes('é');
    const t = streamOf([
      Uint8Array.of(...bytes('data: caf'), c3!),
      Uint8Array.of(a9!, ...bytes('\n\n')),
    ]);
    // The stream ended: the reconnect is armed (and never fired), after the event.
    await vi.waitFor(() => expect(t.delays).toHaveLength(1));
    expect(t.raws).toEqual(['café']);
    t.leave();
  });

  it('a character cut by the end of the stream is in the unterminated last event, which is dropped (WHATWG: pending data is discarded at the end), and corrupts nothing dispatched', async () => {
    const euro = bytes('€');
    const t = streamOf([
      bytes('data: 1 €\n\n'),
      Uint8Array.of(...bytes('data: 2 '), euro[0]!, euro[1]!),
    ]);
    await vi.waitFor(() => expect(t.delays).toHaveLength(1));
    expect(t.raws).toEqual(['1 €']);
    expect(t.channel.state.error).toMatchObject({ message: expect.stringMatching(/ended/) });
    t.leave();
  });

  it('a stream cut after the last blank line but inside a character dispatches the events before it intact', async () => {
    const euro = bytes('€');
    const t = streamOf([Uint8Array.of(...bytes('data: €\n\n'), euro[0]!)]);
    await vi.waitFor(() => expect(t.delays).toHaveLength(1));
    expect(t.raws).toEqual(['€']);
    t.leave();
  });
});
