import { createClient } from '@keel/core';
import { ClientProvider, useServerEvents } from '@keel/react';
import { act, render, within } from '@testing-library/react';
import { Profiler } from 'react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { KeelDevtools } from '../src/index';
import { view } from './helpers';

// The panel's refresh is throttled: a source that changes in many separate tasks (server events
// at thousands a second) costs a bounded number of renders, and the last change always shows.

afterEach(() => {
  vi.useRealTimers();
});

/** An event stream the test writes to, one event at a time. */
function controlledStream() {
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  const body = new ReadableStream<Uint8Array>({
    start(c) {
      controller = c;
    },
  });
  const encoder = new TextEncoder();
  return {
    fetch: (async () =>
      new Response(body, {
        status: 200,
        headers: { 'content-type': 'text/event-stream' },
      })) as typeof globalThis.fetch,
    send(id: number) {
      controller.enqueue(encoder.encode(`id: ${id}\nevent: tick\ndata: {"n":${id}}\n\n`));
    },
  };
}

/** A component on the stream at `/events`, read with `fetch`. */
function Stream({ fetch }: { fetch: typeof globalThis.fetch }) {
  useServerEvents('/events', {}, { fetch });
  return null;
}

/** One macrotask on the real loop: the stream's reads and the panel's microtasks run first. */
const task = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('refresh throttle', () => {
  it('1,000 server events, each in its own task, 1 ms apart: a bounded number of renders, the last event shown', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    const stream = controlledStream();
    const client = createClient({ baseURL: 'http://127.0.0.1:9' });
    const commits = { n: 0 };
    render(
      <ClientProvider client={client}>
        <Stream fetch={stream.fetch} />
        <Profiler id="devtools" onRender={() => commits.n++}>
          <KeelDevtools client={client} initialIsOpen initialView="events" />
        </Profiler>
      </ClientProvider>,
    );
    await act(task);
    const section = () =>
      within(view()).getByRole('region', { name: 'Event stream http://127.0.0.1:9/events' });
    expect(within(section()).getByText('open')).toBeTruthy();

    const before = commits.n;
    const N = 1_000;
    for (let i = 1; i <= N; i++) {
      await act(async () => {
        stream.send(i);
        await task();
        vi.advanceTimersByTime(1);
      });
    }
    // 1,000 events over 1 s of the clock: one render per 100 ms at most (plus the first).
    expect(commits.n - before).toBeLessThanOrEqual(12);
    // The last event shows: the refresh after the last one always comes.
    await act(async () => {
      vi.advanceTimersByTime(100);
      await task();
    });
    expect(within(section()).getByText(/^1000 events/)).toBeTruthy();
    const newest = within(section()).getAllByRole('listitem')[0]!;
    expect(newest.textContent).toContain('#1000');
    expect(newest.textContent).toContain('{"n":1000}');
  });

  it('a change in the quiet after a throttled burst shows at the end of the window, not later', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    const stream = controlledStream();
    const client = createClient({ baseURL: 'http://127.0.0.1:9' });
    render(
      <ClientProvider client={client}>
        <Stream fetch={stream.fetch} />
        <KeelDevtools client={client} initialIsOpen initialView="events" />
      </ClientProvider>,
    );
    await act(task);
    const received = () =>
      within(view())
        .getByRole('region', { name: /^Event stream / })
        .querySelectorAll('dd')[2]!.textContent;
    // The first event after a quiet spell (the connection opening rendered, 100 ms ago) shows
    // at once (this task's microtasks).
    await act(async () => {
      vi.advanceTimersByTime(100);
      stream.send(1);
      await task();
    });
    expect(received()).toMatch(/^1 event/);
    // The second comes inside the window: it shows when the window ends.
    await act(async () => {
      vi.advanceTimersByTime(10);
      stream.send(2);
      await task();
    });
    expect(received()).toMatch(/^1 event/);
    await act(async () => {
      vi.advanceTimersByTime(89);
      await task();
    });
    expect(received()).toMatch(/^1 event/);
    await act(async () => {
      vi.advanceTimersByTime(1);
      await task();
    });
    expect(received()).toMatch(/^2 events/);
  });
});
