// A real @keel/server on 127.0.0.1:0 for the black-box React tests: a todo list, a mutation that
// announces itself through the event hub, and counters of what the browser side asked for.
import type { AddressInfo } from 'node:net';
import type { Clock, TimerHandle } from '@keel/core';
import { createApp, createEventHub, HttpException, type SseStream } from '@keel/server';
import { afterEach } from 'vitest';

export interface Todo {
  id: number;
  title: string;
}

const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((c) => c()));
});

export async function liveServer() {
  const app = createApp({ sse: { heartbeatMs: 0 } });
  const hub = createEventHub();
  const errors: unknown[] = [];
  // A 5xx the test asks for is reported here rather than logged.
  app.onError((err) => {
    errors.push(err);
  });
  const state = {
    todos: [
      { id: 1, title: 'a' },
      { id: 2, title: 'b' },
    ] as Todo[],
    gets: 0,
    /** GET /todos requests whose client left before the answer. */
    abandoned: 0,
    /** GET /todos/:id requests. */
    byId: 0,
    /** Last-Event-ID of every connect (undefined when absent). */
    connects: [] as (string | undefined)[],
    streams: [] as SseStream[],
    /** Answer the next POSTs with 500 after applying nothing. */
    failPosts: false,
    sources: [] as (string | undefined)[],
    /** The request target of every POST /todos. */
    posts: [] as string[],
    /** When set, GET /todos and GET /todos/:id wait for it. */
    hold: undefined as Promise<void> | undefined,
  };
  app.get('/todos', async (ctx) => {
    state.gets++;
    const res = ctx.res;
    ctx.req.once('close', () => {
      if (!res.headersSent) state.abandoned++;
    });
    if (state.hold) await state.hold;
    return ctx.json(state.todos);
  });
  app.get('/todos/:id', async (ctx) => {
    state.byId++;
    if (state.hold) await state.hold;
    const todo = state.todos.find((t) => String(t.id) === ctx.params.id);
    if (!todo) throw new HttpException(404, 'No such todo');
    return ctx.json(todo);
  });
  app.post('/todos', async (ctx) => {
    state.sources.push(ctx.header('x-keel-source'));
    state.posts.push(ctx.req.url ?? '');
    if (state.failPosts) throw new HttpException(500, 'refused');
    const { title } = ctx.validate({ title: { type: 'string', required: true, min: 1 } });
    const todo = { id: state.todos.length + 1, title: String(title) };
    state.todos = [...state.todos, todo];
    await hub.invalidate('/todos', { source: ctx });
    return ctx.status(201).json(todo);
  });
  app.get('/events', (ctx) => {
    state.connects.push(ctx.header('last-event-id'));
    const stream = hub.connect(ctx);
    state.streams.push(stream);
    return stream;
  });
  await hub.ready;
  const server = await app.listen(0, '127.0.0.1');
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  closers.push(async () => {
    await hub.close();
    await app.close({ timeoutMs: 1000 });
  });
  return { app, hub, base, state, errors };
}

/** A manual clock in the core's `Clock` shape. */
export class ManualClock implements Clock {
  time = 1_000_000;
  #seq = 0;
  readonly timers = new Map<number, { at: number; fn: () => void }>();
  now(): number {
    return this.time;
  }
  setTimeout(fn: () => void, ms: number): TimerHandle {
    const id = ++this.#seq;
    this.timers.set(id, { at: this.time + Math.max(0, ms), fn });
    return id as unknown as TimerHandle;
  }
  clearTimeout(handle: TimerHandle): void {
    this.timers.delete(handle as unknown as number);
  }
  advance(ms: number): void {
    const until = this.time + ms;
    for (;;) {
      let next: [number, { at: number; fn: () => void }] | undefined;
      for (const t of this.timers)
        if (t[1].at <= until && (!next || t[1].at < next[1].at)) next = t;
      if (!next) break;
      this.timers.delete(next[0]);
      this.time = next[1].at;
      next[1].fn();
    }
    this.time = until;
  }
}
