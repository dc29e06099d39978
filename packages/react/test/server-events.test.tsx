import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createClient } from '@keel/core';
import { type App, createApp, createEventHub, type EventHub, type SseStream } from '@keel/server';
import { act, render, renderHook, screen, waitFor } from '@testing-library/react';
import { HttpResponse, http } from 'msw';
import { setupServer } from 'msw/node';
import { StrictMode } from 'react';
import { afterEach, describe, expect, it, onTestFinished, vi } from 'vitest';
import {
  INVALIDATE_EVENT,
  inspectServerEvents,
  type ServerEventsOptions,
  SOURCE_HEADER,
  sourceHeaders,
  useMutation,
  useQuery,
  useServerEvents,
  watchServerEvents,
} from '../src/index';
import { channelCount, peekChannel } from '../src/server-events/channel';
import { isServerEventsError, ServerEventsError } from '../src/server-events/connection';
import { RECENT_RAW_CHARS } from '../src/server-events/inspect';
import { debugOf, deferred, flush, ManualClock, type Todo, wrapperFor } from './helpers';

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
  /** The x-keel-source header of every POST /api/todos. */
  sources: (string | undefined)[];
  /**
   * When set, POST /api/todos waits for it after applying the change and announcing it, then
   * answers 500: a write the server made whose response says it failed.
   */
  failAfter: Promise<void> | null;
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
    sources: [],
    failAfter: null,
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
  // A mutation announced the way the README says: the change, then hub.invalidate.
  app.post('/api/todos', async (ctx) => {
    state.sources.push(ctx.header('x-keel-source'));
    const todo = { id: state.todos.length + 1, title: String((ctx.body as Todo).title) };
    state.todos = [...state.todos, todo];
    await hub.invalidate('/api/todos', { source: ctx });
    if (state.failAfter) {
      await state.failAfter;
      return ctx.status(500).json({ message: 'applied, then failed' });
    }
    return ctx.status(201).json(todo);
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
    const error = channel.state.error;
    expect(error).toBeInstanceOf(ServerEventsError);
    if (!isServerEventsError(error)) throw error;
    expect(error).toMatchObject({ name: 'ServerEventsError', status: 404, method: 'GET' });
    expect(error.url).toMatch(/\/api\/events$/);
    expect(isServerEventsError({ name: 'ServerEventsError', status: 404 })).toBe(false);
    expect(clock.timers.size).toBe(0);
  });

  it('a stream closed for good stays closed for components joining it; once all left, the next mount opens it again', async () => {
    const server = await live();
    // 204: the protocol's "do not reconnect".
    server.refuse.push(204);
    const client = createClient({ baseURL: server.base, retry: { attempts: 1 } });
    const status = () => screen.getAllByTestId('status').map((p) => p.textContent);
    const { rerender, unmount } = render(<Maybe key="a" url="/api/events" />, {
      wrapper: wrapperFor(client),
    });
    await waitFor(() => expect(status()).toEqual(['closed']));
    // A component mounting while another still shows the dead stream: no new request.
    rerender(
      <>
        <Maybe key="a" url="/api/events" />
        <StrictMode>
          <Maybe key="b" url="/api/events" />
        </StrictMode>
      </>,
    );
    await flush();
    await flush();
    expect(status()).toEqual(['closed', 'closed']);
    expect(server.connects).toHaveLength(1);
    expect(server.hub.size).toBe(0);
    // Every one gone, then a new one: a new connection.
    unmount();
    await flush();
    render(<Maybe url="/api/events" />, { wrapper: wrapperFor(client) });
    await waitFor(() => expect(server.hub.size).toBe(1));
    expect(server.connects).toHaveLength(2);
    expect(status()).toEqual(['open']);
  });

  it('a component taking over a stream closed for good in the same commit opens it again', async () => {
    const server = await live();
    server.refuse.push(404);
    const client = createClient({ baseURL: server.base, retry: { attempts: 1 } });
    const { rerender } = render(<Maybe key="a" url="/api/events" />, {
      wrapper: wrapperFor(client),
    });
    await waitFor(() => expect(screen.getByTestId('status').textContent).toBe('closed'));
    rerender(<Maybe key="b" url="/api/events" />);
    await waitFor(() => expect(server.hub.size).toBe(1));
    expect(server.connects).toHaveLength(2);
    expect(screen.getByTestId('status').textContent).toBe('open');
  });

  it('the backoff doubles all the way to a maxDelay of days (the timer limit)', async () => {
    const server = await live();
    const refusals = 27;
    server.refuse.push(...Array<number>(refusals).fill(503));
    const client = createClient({ baseURL: server.base, retry: { attempts: 1 } });
    const clock = new ManualClock();
    const maxDelay = 2 ** 31 - 1; // about 24.8 days
    render(
      <Events options={{ clock, reconnect: { initialDelay: 100, maxDelay, jitter: false } }} />,
      { wrapper: wrapperFor(client) },
    );
    for (let i = 0; i < refusals; i++) {
      await waitFor(() => expect(clock.timers.size).toBe(1));
      act(() => {
        clock.runNext();
      });
    }
    await waitFor(() => expect(server.hub.size).toBe(1));
    // 100 ms doubled 24 times is 1677721600; the next doubling passes maxDelay.
    expect(clock.delays).toEqual([
      ...Array.from({ length: 25 }, (_, i) => 100 * 2 ** i),
      maxDelay,
      maxDelay,
    ]);
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

function WithHeaders({ headers }: { headers: unknown }) {
  const { status } = useServerEvents(
    '/api/events',
    {},
    {
      headers: headers as Record<string, string>,
    },
  );
  return <p data-testid="status">{status}</p>;
}

function BadHeaderValue() {
  const { status, error } = useServerEvents('/api/events', {}, { headers: { 'x-a': 'a\nb' } });
  return <p data-testid="status">{`${status} ${(error as Error | null)?.name}`}</p>;
}

describe('useServerEvents headers', () => {
  it('headers of the wrong type (null included, as in the core) are a TypeError naming them, at render; nothing is sent for them', async () => {
    const fetch = vi.fn(() => Promise.reject(new Error('not called')));
    const client = createClient({ baseURL: 'http://127.0.0.1:9', fetch });
    const spy = vi.spyOn(console, 'error').mockImplementation(() => {});
    try {
      for (const [headers, message] of [
        [null, 'keel: `headers` must be an object of header strings, got null'],
        ['x-a: 1', 'keel: `headers` must be an object of header strings, got "x-a: 1"'],
        [['x-a', '1'], 'keel: `headers` must be an object of header strings, got an array'],
      ] as const) {
        expect(() =>
          render(<WithHeaders headers={headers} />, { wrapper: wrapperFor(client) }),
        ).toThrow(new TypeError(message));
      }
      // Also beside a component that already holds the stream open (whose options decide it).
      render(<WithHeaders headers={undefined} />, { wrapper: wrapperFor(client) });
      expect(() => render(<WithHeaders headers={null} />, { wrapper: wrapperFor(client) })).toThrow(
        TypeError,
      );
    } finally {
      spy.mockRestore();
    }
    await flush();
    expect(fetch.mock.calls.length).toBeLessThanOrEqual(1);
    expect(channelCount(client)).toBe(1);
  });

  it('a header value the client refuses closes the stream with that error, as an invalid URL does', () => {
    const fetch = vi.fn(() => Promise.reject(new Error('not called')));
    const client = createClient({ baseURL: 'http://127.0.0.1:9', fetch });
    render(<BadHeaderValue />, { wrapper: wrapperFor(client) });
    expect(screen.getByTestId('status').textContent).toBe('closed RangeError');
    expect(fetch).not.toHaveBeenCalled();
  });
});

describe('inspectServerEvents / watchServerEvents', () => {
  it('shows each connection: status, users, last event id and the last events, as they change', async () => {
    const server = await live();
    const client = createClient({ baseURL: server.base, retry: { attempts: 1 } });
    let told = 0;
    const stop = watchServerEvents(client, () => told++);
    expect(inspectServerEvents(client)).toEqual([]);
    const { unmount } = render(
      <>
        <Events />
        <Events />
      </>,
      { wrapper: wrapperFor(client) },
    );
    await waitFor(() => expect(inspectServerEvents(client)[0]?.status).toBe('open'));
    expect(told).toBeGreaterThan(0);
    expect(inspectServerEvents(client)).toEqual([
      {
        url: `${server.base}/api/events`,
        key: client.resolve('GET', '/api/events').key,
        status: 'open',
        error: null,
        users: 2,
        lastEventId: undefined,
        received: 0,
        recent: [],
      },
    ]);

    const before = told;
    server.add('b');
    await waitFor(() => expect(inspectServerEvents(client)[0]!.received).toBe(1));
    expect(told).toBeGreaterThan(before);
    const [view] = inspectServerEvents(client);
    expect(view!.lastEventId).toMatch(/^[0-9a-f]{8}-1$/);
    expect(view!.recent).toEqual([
      {
        event: 'todos-changed',
        data: { id: 2, title: 'b' },
        raw: '{"id":2,"title":"b"}',
        id: view!.lastEventId,
        receivedAt: expect.any(Number),
      },
    ]);

    // The last 20 are kept, oldest first; a view read earlier is not changed by later events.
    for (let i = 0; i < 24; i++) server.add(`t${i}`);
    await waitFor(() => expect(inspectServerEvents(client)[0]!.received).toBe(25));
    const recent = inspectServerEvents(client)[0]!.recent;
    expect(recent).toHaveLength(20);
    expect(recent.map((e) => (e.data as Todo).title)).toEqual(
      Array.from({ length: 20 }, (_, i) => `t${i + 4}`),
    );
    expect(view!.recent).toHaveLength(1);

    unmount();
    await waitFor(() => expect(inspectServerEvents(client)).toEqual([]));
    stop();
    const after = told;
    render(<Events />, { wrapper: wrapperFor(client) });
    await waitFor(() => expect(inspectServerEvents(client)[0]?.status).toBe('open'));
    expect(told).toBe(after);
  });

  it('keeps at most RECENT_RAW_CHARS of an event: a huge one is cut, its parsed data not kept', async () => {
    const server = await live();
    const client = createClient({ baseURL: server.base, retry: { attempts: 1 } });
    const stop = watchServerEvents(client, () => {});
    onTestFinished(stop);
    render(<Events />, { wrapper: wrapperFor(client) });
    await waitFor(() => expect(inspectServerEvents(client)[0]?.status).toBe('open'));
    const title = 'x'.repeat(3 * RECENT_RAW_CHARS);
    server.add(title);
    server.add('small');
    await waitFor(() => expect(inspectServerEvents(client)[0]!.received).toBe(2));
    const [big, small] = inspectServerEvents(client)[0]!.recent;
    const raw = JSON.stringify({ id: 2, title });
    expect(big).toEqual({
      event: 'todos-changed',
      data: raw.slice(0, RECENT_RAW_CHARS),
      raw: raw.slice(0, RECENT_RAW_CHARS),
      rawLength: raw.length,
      id: expect.any(String),
      receivedAt: expect.any(Number),
    });
    // An event within the bound is kept whole, with no rawLength.
    expect(small).not.toHaveProperty('rawLength');
    expect(small!.data).toEqual({ id: 3, title: 'small' });
  });

  it('a closed connection shows its error', async () => {
    const server = await live();
    server.refuse.push(404);
    const client = createClient({ baseURL: server.base });
    render(<Events />, { wrapper: wrapperFor(client) });
    await waitFor(() => expect(inspectServerEvents(client)[0]?.status).toBe('closed'));
    expect(inspectServerEvents(client)[0]!.error).toBeInstanceOf(ServerEventsError);
  });

  it('a watcher that throws does not stop the others', async () => {
    const server = await live();
    const client = createClient({ baseURL: server.base });
    const errors: unknown[] = [];
    const onError = (event: ErrorEvent | Error) => errors.push(event);
    process.on('uncaughtException', onError);
    let calls = 0;
    const stops = [
      watchServerEvents(client, () => {
        throw new Error('tool bug');
      }),
      watchServerEvents(client, () => calls++),
    ];
    try {
      render(<Events />, { wrapper: wrapperFor(client) });
      await waitFor(() => expect(inspectServerEvents(client)[0]?.status).toBe('open'));
      expect(calls).toBeGreaterThan(0);
    } finally {
      for (const stop of stops) stop();
      await flush();
      process.off('uncaughtException', onError);
    }
    expect(errors.length).toBeGreaterThan(0);
    expect(() => watchServerEvents(client, 'x' as never)).toThrow(TypeError);
  });
});

function Live({ url = '/api/events', options }: { url?: string; options?: ServerEventsOptions }) {
  return <p data-testid="status">{useServerEvents(url, undefined, options).status}</p>;
}

function Tagged() {
  const { data } = useQuery<Todo[]>('/api/todos', { params: { view: 'tagged' }, tags: ['todos'] });
  return <p data-testid="tagged">{data?.length ?? '-'}</p>;
}

/** A tab: the list, a mutation (with explicit headers), and a sentinel handler. */
function Tab({
  name,
  headers,
  onSentinel,
  expose,
}: {
  name: string;
  headers?: Record<string, string>;
  onSentinel: () => void;
  expose?: (add: (title: string) => Promise<unknown>) => void;
}) {
  const { data } = useQuery<Todo[]>('/api/todos');
  const mutation = useMutation<Todo, { title: string }>('POST', '/api/todos', { headers });
  expose?.((title) => mutation.mutateAsync({ title }));
  useServerEvents('/api/events', { sentinel: onSentinel });
  return <p data-testid={name}>{data?.map((t) => t.title).join(',') ?? '-'}</p>;
}

function WrongMap() {
  useServerEvents(null, { invalidate: { changed: 42 as never } });
  return null;
}

function Mutations({
  expose,
}: {
  expose: (same: () => Promise<unknown>, cross: () => Promise<unknown>) => void;
}) {
  const a = useMutation('POST', '/same/todos');
  const b = useMutation('POST', 'http://api.test/todos');
  expose(
    () => a.mutateAsync(undefined),
    () => b.mutateAsync(undefined),
  );
  return null;
}

function SendWith({
  headers,
  expose,
}: {
  headers: Headers | Record<string, string>;
  expose: (send: () => Promise<unknown>) => void;
}) {
  const mutation = useMutation('POST', '/same/todos', { headers });
  expose(() => mutation.mutateAsync(undefined));
  return null;
}

describe('server invalidation (keel:invalidate)', () => {
  it('useServerEvents(url) applies hub.invalidate for a path and for tags, with no handler code', async () => {
    const server = await live();
    const client = createClient({ baseURL: server.base, retry: { attempts: 1 } });
    render(
      <>
        <List />
        <Tagged />
        <Live />
      </>,
      { wrapper: wrapperFor(client) },
    );
    await waitFor(() => expect(list()).toBe('a'));
    await waitFor(() => expect(screen.getByTestId('tagged').textContent).toBe('1'));
    await waitFor(() => expect(server.hub.size).toBe(1));
    expect(server.gets).toBe(2);

    server.todos = [...server.todos, { id: 2, title: 'b' }];
    // A path reaches its children and query variants: both queries refetch.
    await server.hub.invalidate('/api/todos');
    await waitFor(() => expect(list()).toBe('a,b'));
    await waitFor(() => expect(screen.getByTestId('tagged').textContent).toBe('2'));
    expect(server.gets).toBe(4);

    // Tags reach only the tagged query.
    server.todos = [...server.todos, { id: 3, title: 'c' }];
    await server.hub.invalidate(['todos']);
    await waitFor(() => expect(screen.getByTestId('tagged').textContent).toBe('3'));
    expect(list()).toBe('a,b');
    expect(server.gets).toBe(5);
  });

  it('the tab that made the mutation skips the echo; another tab applies it', async () => {
    const server = await live();
    const mine = createClient({ baseURL: server.base, retry: { attempts: 1 } });
    const other = createClient({ baseURL: server.base, retry: { attempts: 1 } });
    const seen: string[] = [];
    let add!: (title: string) => Promise<unknown>;
    // Cross-origin here (jsdom's page is another origin), so the header is added by hand.
    render(
      <Tab
        name="mine"
        headers={sourceHeaders(mine)}
        onSentinel={() => seen.push('mine')}
        expose={(fn) => {
          add = fn;
        }}
      />,
      { wrapper: wrapperFor(mine) },
    );
    render(<Tab name="other" onSentinel={() => seen.push('other')} />, {
      wrapper: wrapperFor(other),
    });
    const text = (name: string) => screen.getByTestId(name).textContent;
    await waitFor(() => expect(text('mine')).toBe('a'));
    await waitFor(() => expect(text('other')).toBe('a'));
    await waitFor(() => expect(server.hub.size).toBe(2));
    expect(server.gets).toBe(2);

    await act(() => add('b'));
    // Events arrive in order: once both tabs saw the sentinel, both saw the invalidation.
    await server.hub.publish('sentinel', {});
    await waitFor(() => expect(seen.sort()).toEqual(['mine', 'other']));
    await waitFor(() => expect(text('other')).toBe('a,b'));
    await waitFor(() => expect(text('mine')).toBe('a,b'));
    // One refetch per tab: the writer's own mutation invalidation, the reader's event.
    expect(server.gets).toBe(4);
    expect(server.sources).toEqual([sourceHeaders(mine)[SOURCE_HEADER]]);
  });

  it('an echo skipped while the covering mutation runs is applied when that mutation fails', async () => {
    const server = await live();
    const mine = createClient({ baseURL: server.base, retry: { attempts: 1 } });
    const seen: string[] = [];
    let add!: (title: string) => Promise<unknown>;
    render(
      <Tab
        name="mine"
        headers={sourceHeaders(mine)}
        onSentinel={() => seen.push('mine')}
        expose={(fn) => {
          add = fn;
        }}
      />,
      { wrapper: wrapperFor(mine) },
    );
    const text = () => screen.getByTestId('mine').textContent;
    await waitFor(() => expect(text()).toBe('a'));
    await waitFor(() => expect(server.hub.size).toBe(1));
    const release = deferred();
    server.failAfter = release.promise;
    let outcome: unknown;
    const running = add('b').then(
      () => 'resolved',
      (error: unknown) => error,
    );
    // The server applied the change and announced it; the tab got the echo (events arrive in
    // order) while its mutation still runs, and skipped it.
    await waitFor(() => expect(server.sources).toHaveLength(1));
    await server.hub.publish('sentinel', {});
    await waitFor(() => expect(seen).toEqual(['mine']));
    expect(server.gets).toBe(1);
    // The response says the mutation failed: the core invalidates nothing; the skipped echo was
    // the only news of the change, so it is applied now.
    release.resolve();
    await act(async () => {
      outcome = await running;
    });
    expect(String(outcome)).toMatch(/500/);
    await waitFor(() => expect(text()).toBe('a,b'));
    expect(server.gets).toBe(2);
  });

  it('ignores and reports a keel:invalidate event of the wrong shape, and stays open', async () => {
    const server = await live();
    const errors: unknown[] = [];
    server.app.get('/api/bad-events', (ctx) => {
      ctx.sseEvent(INVALIDATE_EVENT, { target: 42 });
      ctx.sseEvent(INVALIDATE_EVENT, 'not json');
      ctx.sseEvent(INVALIDATE_EVENT, { target: ['ok', 7] });
      ctx.sseEvent(INVALIDATE_EVENT, { target: '/api/todos' });
      ctx.sseStream();
    });
    const client = createClient({ baseURL: server.base, retry: { attempts: 1 } });
    render(
      <>
        <List />
        <Live url="/api/bad-events" options={{ onError: (e) => errors.push(e) }} />
      </>,
      { wrapper: wrapperFor(client) },
    );
    await waitFor(() => expect(server.gets).toBe(2)); // the well-formed one refetched
    expect(errors).toHaveLength(3);
    for (const error of errors) {
      expect(error).toBeInstanceOf(TypeError);
      expect(String(error)).toMatch(/`keel:invalidate data.target(\[1\])?` must be a/);
    }
    expect(screen.getByTestId('status').textContent).toBe('open');
  });

  it('a reset with no component naming targets invalidates every query', async () => {
    const server = await live(1);
    const client = createClient({ baseURL: server.base, retry: { attempts: 1 } });
    const clock = new ManualClock();
    render(
      <>
        <List />
        <Live options={{ clock, reconnect: { jitter: false } }} />
      </>,
      { wrapper: wrapperFor(client) },
    );
    await waitFor(() => expect(server.hub.size).toBe(1));
    await server.hub.publish('other', {});
    await waitFor(() => expect(server.gets).toBe(1));
    server.streams[0]!.close();
    await waitFor(() => expect(clock.timers.size).toBe(1));
    server.todos = [...server.todos, { id: 2, title: 'b' }];
    await server.hub.publish('other', {});
    await server.hub.publish('other', {}); // the buffer keeps one: the reconnect is a reset
    act(() => {
      clock.runNext();
    });
    await waitFor(() => expect(list()).toBe('a,b'));
    expect(server.gets).toBe(2);
  });

  it('rejects an invalidate map entry that is not a target, naming it', () => {
    const client = createClient({ baseURL: 'http://127.0.0.1:9', retry: { attempts: 1 } });
    const spy = vi.spyOn(console, 'error').mockImplementation(() => {});
    try {
      expect(() => render(<WrongMap />, { wrapper: wrapperFor(client) })).toThrow(
        /`handlers.invalidate\["changed"\]` must be a path string, an array of tag strings or a predicate function, got \d+$/,
      );
    } finally {
      spy.mockRestore();
    }
  });
});

describe('the source header on mutations', () => {
  const origin = globalThis.location.origin;
  const headers: (string | null)[] = [];
  const msw = setupServer(
    http.post(`${origin}/same/todos`, ({ request }) => {
      headers.push(request.headers.get(SOURCE_HEADER));
      return HttpResponse.json({}, { status: 201 });
    }),
    http.post('http://api.test/todos', ({ request }) => {
      headers.push(request.headers.get(SOURCE_HEADER));
      return HttpResponse.json({}, { status: 201 });
    }),
  );

  it('is sent on same-origin mutations only', async () => {
    msw.listen({ onUnhandledRequest: 'error' });
    try {
      const client = createClient({ baseURL: origin, retry: { attempts: 1 } });
      let same!: () => Promise<unknown>;
      let cross!: () => Promise<unknown>;
      render(
        <Mutations
          expose={(a, b) => {
            same = a;
            cross = b;
          }}
        />,
        { wrapper: wrapperFor(client) },
      );
      await act(() => same());
      await act(() => cross());
      expect(headers).toEqual([sourceHeaders(client)[SOURCE_HEADER], null]);
      expect(sourceHeaders(client)[SOURCE_HEADER]).toMatch(/^[a-z0-9]{24}$/);
    } finally {
      msw.close();
    }
  });

  it("is not sent where the mutation's own `baseURL` takes it to another origin", async () => {
    const seen: (string | null)[] = [];
    const msw = setupServer(
      http.post('http://api.test/todos', ({ request }) => {
        seen.push(request.headers.get(SOURCE_HEADER));
        return HttpResponse.json({}, { status: 201 });
      }),
      http.post(`${origin}/todos`, ({ request }) => {
        seen.push(request.headers.get(SOURCE_HEADER));
        return HttpResponse.json({}, { status: 201 });
      }),
    );
    msw.listen({ onUnhandledRequest: 'error' });
    try {
      const client = createClient({ baseURL: origin, retry: { attempts: 1 } });
      const { result } = renderHook(
        () => ({
          away: useMutation('POST', '/todos', { baseURL: 'http://api.test' }),
          home: useMutation('POST', 'todos', { baseURL: `${origin}/` }),
        }),
        { wrapper: wrapperFor(client) },
      );
      await act(() => result.current.away.mutateAsync(undefined));
      await act(() => result.current.home.mutateAsync(undefined));
      expect(seen).toEqual([null, sourceHeaders(client)[SOURCE_HEADER]]);
    } finally {
      msw.close();
    }
  });

  it("keeps the mutation's own headers given as a Headers object; one naming the source itself wins", async () => {
    const seen: Record<string, string | null>[] = [];
    const msw = setupServer(
      http.post(`${origin}/same/todos`, ({ request }) => {
        seen.push({
          authorization: request.headers.get('authorization'),
          source: request.headers.get(SOURCE_HEADER),
        });
        return HttpResponse.json({}, { status: 201 });
      }),
    );
    msw.listen({ onUnhandledRequest: 'error' });
    try {
      const client = createClient({ baseURL: origin, retry: { attempts: 1 } });
      let send!: () => Promise<unknown>;
      const expose = (fn: () => Promise<unknown>) => {
        send = fn;
      };
      const { rerender } = render(
        <SendWith headers={new Headers({ authorization: 'Bearer t' })} expose={expose} />,
        { wrapper: wrapperFor(client) },
      );
      await act(() => send());
      rerender(
        <SendWith
          headers={new Headers({ authorization: 'Bearer u', [SOURCE_HEADER]: 'mine' })}
          expose={expose}
        />,
      );
      await act(() => send());
      // A plain object naming it in another case wins too.
      rerender(
        <SendWith
          headers={{ authorization: 'Bearer v', 'X-Keel-Source': 'own' }}
          expose={expose}
        />,
      );
      await act(() => send());
      expect(seen).toEqual([
        { authorization: 'Bearer t', source: sourceHeaders(client)[SOURCE_HEADER] },
        { authorization: 'Bearer u', source: 'mine' },
        { authorization: 'Bearer v', source: 'own' },
      ]);
    } finally {
      msw.close();
    }
  });
});
