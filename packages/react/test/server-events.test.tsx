import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createClient } from '@keel/core';
import { type App, createApp, createEventHub, type EventHub, type SseStream } from '@keel/server';
import { act, render, screen, waitFor } from '@testing-library/react';
import { StrictMode } from 'react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { type ServerEventsOptions, useQuery, useServerEvents } from '../src/index';
import { channelCount, peekChannel } from '../src/server-events/channel';
import { ServerEventsError } from '../src/server-events/connection';
import { debugOf, flush, ManualClock, type Todo, wrapperFor } from './helpers';

interface Live {
  app: App;
  hub: EventHub;
  base: string;
  todos: Todo[];
  streams: SseStream[];
  /** The Last-Event-ID header of every connect to /api/events (undefined when absent). */
  connects: (string | undefined)[];
  /** Answers the next connects to /api/events with these statuses instead of a stream. */
  refuse: number[];
  gets: number;
  add(title: string): Todo;
}

const apps: { app: App; http: Server }[] = [];
afterEach(async () => {
  const closing = apps.map(({ app }) => app.close());
  // fetch's connection pool may hold a connected socket it never sent a request on; the server
  // would wait for it to time out.
  for (const { http } of apps.splice(0)) http.closeAllConnections();
  await Promise.all(closing);
});

/** A real @keel/server on 127.0.0.1:0: a todo list and an event hub announcing its changes. */
async function live(bufferSize = 100): Promise<Live> {
  const app = createApp();
  const hub = createEventHub({ bufferSize });
  const state: Live = {
    app,
    hub,
    base: '',
    todos: [{ id: 1, title: 'a' }],
    streams: [],
    connects: [],
    refuse: [],
    gets: 0,
    add(title) {
      const todo = { id: state.todos.length + 1, title };
      state.todos = [...state.todos, todo];
      void hub.publish('todos-changed', todo);
      return todo;
    },
  };
  app.get('/api/todos', (ctx) => {
    state.gets++;
    return ctx.json(state.todos);
  });
  app.get('/api/events', (ctx) => {
    state.connects.push(ctx.header('last-event-id'));
    const status = state.refuse.shift();
    if (status !== undefined) return ctx.status(status).json({ status });
    const stream = hub.connect(ctx);
    state.streams.push(stream);
    return stream;
  });
  const server = await app.listen(0, '127.0.0.1');
  apps.push({ app, http: server });
  state.base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return state;
}

function List() {
  const { data } = useQuery<Todo[]>('/api/todos');
  return <p data-testid="list">{data?.map((t) => t.title).join(',') ?? '-'}</p>;
}

function Events({
  onAdded,
  options,
}: {
  onAdded?: (todo: Todo) => void;
  options?: ServerEventsOptions;
}) {
  const { status } = useServerEvents(
    '/api/events',
    {
      'todos-changed': (todo: Todo) => onAdded?.(todo),
      invalidate: { 'todos-changed': '/api/todos' },
    },
    options,
  );
  return <p data-testid="status">{status}</p>;
}

const list = () => screen.getByTestId('list').textContent;

function Maybe({ url }: { url: string | null }) {
  return <p data-testid="status">{useServerEvents(url, {}).status}</p>;
}

describe('useServerEvents (live @keel/server)', () => {
  it('an event invalidates the list, which refetches and re-renders', async () => {
    const server = await live();
    const client = createClient({ baseURL: server.base, retry: { attempts: 1 } });
    const added: Todo[] = [];
    render(
      <>
        <List />
        <Events onAdded={(t) => added.push(t)} />
      </>,
      { wrapper: wrapperFor(client) },
    );
    await waitFor(() => expect(list()).toBe('a'));
    await waitFor(() => expect(server.hub.size).toBe(1));
    expect(screen.getAllByTestId('status')[0]!.textContent).toBe('open');
    server.add('b');
    await waitFor(() => expect(list()).toBe('a,b'));
    expect(added).toEqual([{ id: 2, title: 'b' }]);
    expect(server.gets).toBe(2);
  });

  it('shares one connection among every component, and closes it with the last', async () => {
    const server = await live();
    const client = createClient({ baseURL: server.base, retry: { attempts: 1 } });
    const calls = [vi.fn(), vi.fn(), vi.fn()];
    const { rerender, unmount } = render(
      <StrictMode>
        <List />
        {calls.map((fn, i) => (
          // biome-ignore lint/suspicious/noArrayIndexKey: a fixed list
          <Events key={i} onAdded={fn} />
        ))}
      </StrictMode>,
      { wrapper: wrapperFor(client) },
    );
    await waitFor(() => expect(server.hub.size).toBe(1));
    await waitFor(() => expect(list()).toBe('a'));
    server.add('b');
    await waitFor(() => expect(list()).toBe('a,b'));
    for (const fn of calls) expect(fn).toHaveBeenCalledTimes(1);
    // One refetch although three components name the same target.
    expect(server.gets).toBe(2);
    expect(server.connects).toHaveLength(1);

    rerender(
      <StrictMode>
        <List />
        <Events onAdded={calls[0]} />
      </StrictMode>,
    );
    await flush();
    expect(server.hub.size).toBe(1);
    unmount();
    await flush();
    await waitFor(() => expect(server.hub.size).toBe(0));
    expect(channelCount(client)).toBe(0);
    expect(debugOf(client)).toMatchObject({ subscriptions: 0, listeners: 0, flights: 0 });
    expect(server.connects).toHaveLength(1);
  });

  it('reconnects after the server drops the stream, resuming with Last-Event-ID', async () => {
    const server = await live();
    const client = createClient({ baseURL: server.base, retry: { attempts: 1 } });
    const clock = new ManualClock();
    const added: Todo[] = [];
    render(
      <>
        <List />
        <Events
          onAdded={(t) => added.push(t)}
          options={{ clock, reconnect: { initialDelay: 500, jitter: false } }}
        />
      </>,
      { wrapper: wrapperFor(client) },
    );
    await waitFor(() => expect(server.hub.size).toBe(1));
    server.add('b'); // event id 1
    await waitFor(() => expect(list()).toBe('a,b'));

    server.streams[0]!.close(); // the server drops the stream
    await waitFor(() => expect(screen.getByTestId('status').textContent).toBe('connecting'));
    expect(clock.delays).toEqual([500]);
    server.add('c'); // missed while disconnected: ids 2 and 3
    server.add('d');
    act(() => {
      clock.runNext();
    });
    await waitFor(() => expect(screen.getByTestId('status').textContent).toBe('open'));
    expect(server.connects).toEqual([undefined, expect.stringMatching(/^[0-9a-f]{8}-1$/)]);
    await waitFor(() => expect(list()).toBe('a,b,c,d'));
    expect(added.map((t) => t.title)).toEqual(['b', 'c', 'd']);
  });

  it('backs off exponentially on refusals, resets once events flow, stops on a 4xx', async () => {
    const server = await live();
    server.refuse.push(503, 503, 503);
    const client = createClient({ baseURL: server.base, retry: { attempts: 1 } });
    const clock = new ManualClock();
    const options: ServerEventsOptions = {
      clock,
      reconnect: { initialDelay: 100, maxDelay: 250, jitter: false },
    };
    render(<Events options={options} />, { wrapper: wrapperFor(client) });
    for (let i = 0; i < 3; i++) {
      await waitFor(() => expect(clock.timers.size).toBe(1));
      act(() => {
        clock.runNext();
      });
    }
    await waitFor(() => expect(server.hub.size).toBe(1));
    expect(clock.delays).toEqual([100, 200, 250]);
    server.add('x'); // an event resets the backoff
    await waitFor(() => expect(server.todos).toHaveLength(2));
    await flush();
    server.refuse.push(404);
    server.streams[0]!.close();
    await waitFor(() => expect(clock.timers.size).toBe(1));
    expect(clock.delays).toEqual([100, 200, 250, 100]);
    act(() => {
      clock.runNext();
    });
    await waitFor(() => expect(screen.getByTestId('status').textContent).toBe('closed'));
    const channel = peekChannel(client, client.resolve('GET', '/api/events').key)!;
    expect(channel.state.error).toBeInstanceOf(ServerEventsError);
    expect((channel.state.error as ServerEventsError).status).toBe(404);
    expect(clock.timers.size).toBe(0);
  });

  it('a replay gap (keel:reset) invalidates every target', async () => {
    const server = await live(1);
    const client = createClient({ baseURL: server.base, retry: { attempts: 1 } });
    const clock = new ManualClock();
    render(
      <>
        <List />
        <Events options={{ clock, reconnect: { jitter: false } }} />
      </>,
      { wrapper: wrapperFor(client) },
    );
    await waitFor(() => expect(server.hub.size).toBe(1));
    server.add('b');
    await waitFor(() => expect(list()).toBe('a,b'));
    server.streams[0]!.close();
    await waitFor(() => expect(clock.timers.size).toBe(1));
    // Two changes while away, the buffer keeps one: the hub answers with keel:reset first.
    server.todos = [...server.todos, { id: 3, title: 'c' }];
    void server.hub.publish('other', {});
    server.add('d');
    act(() => {
      clock.runNext();
    });
    await waitFor(() => expect(list()).toBe('a,b,c,d'));
  });

  it('a reconnect without Last-Event-ID invalidates every target', async () => {
    const server = await live();
    const client = createClient({ baseURL: server.base, retry: { attempts: 1 } });
    const clock = new ManualClock();
    render(
      <>
        <List />
        <Events options={{ clock, reconnect: { jitter: false } }} />
      </>,
      { wrapper: wrapperFor(client) },
    );
    await waitFor(() => expect(server.hub.size).toBe(1));
    await waitFor(() => expect(list()).toBe('a'));
    // Dropped before any event carried an id: nothing to resume from.
    server.streams[0]!.close();
    await waitFor(() => expect(clock.timers.size).toBe(1));
    server.add('b');
    act(() => {
      clock.runNext();
    });
    await waitFor(() => expect(list()).toBe('a,b'));
    expect(server.connects).toEqual([undefined, undefined]);
    expect(server.gets).toBe(2);
  });

  it('sends the client default headers and stays closed for a null URL', async () => {
    const server = await live();
    const seen: (string | undefined)[] = [];
    server.app.use((ctx, next) => {
      if (ctx.path === '/api/events') seen.push(ctx.header('authorization'));
      return next();
    });
    const client = createClient({
      baseURL: server.base,
      headers: { authorization: 'Bearer t' },
    });
    const { rerender } = render(<Maybe url={null} />, { wrapper: wrapperFor(client) });
    expect(screen.getByTestId('status').textContent).toBe('closed');
    rerender(<Maybe url="/api/events" />);
    await waitFor(() => expect(screen.getByTestId('status').textContent).toBe('open'));
    expect(seen).toEqual(['Bearer t']);
  });
});
