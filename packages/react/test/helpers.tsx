import { type Client, type ClientOptions, type Clock, createClient } from '@keel/core';
import { act } from '@testing-library/react';
import { HttpResponse, http } from 'msw';
import { type SetupServerApi, setupServer } from 'msw/node';
import type { ReactNode } from 'react';
import { afterAll, afterEach, beforeAll, beforeEach, onTestFinished, vi } from 'vitest';
import { ClientProvider } from '../src/index';

export const API = 'http://api.test';

/**
 * An msw server for the test file: listening for its tests (an unhandled request is an error),
 * handlers reset after each test.
 */
export function mswServer(): SetupServerApi {
  const server = setupServer();
  beforeAll(() => server.listen({ onUnhandledRequest: 'error' }));
  afterEach(() => server.resetHandlers());
  afterAll(() => server.close());
  return server;
}

/** A client for tests: absolute base URL, no retries unless asked. */
export function testClient(options: ClientOptions = {}): Client {
  return createClient({ baseURL: API, retry: { attempts: 1 }, ...options });
}

/** A wrapper bound to one client; made once per render() call, so its identity is stable. */
export function wrapperFor(client: Client) {
  // biome-ignore lint/correctness/noComponentHookFactories: one wrapper per test render, never re-created
  return function Wrapper({ children }: { children?: ReactNode }) {
    return <ClientProvider client={client}>{children}</ClientProvider>;
  };
}

export interface Todo {
  id: number;
  title: string;
}

/**
 * An in-memory todo API for msw: GET/POST /todos, DELETE /todos/:id, with request counts and a
 * switch to make the next writes fail.
 */
export function todoApi(initial: string[] = ['a', 'b']) {
  const state = {
    todos: initial.map((title, i) => ({ id: i + 1, title })) as Todo[],
    nextId: initial.length + 1,
    gets: 0,
    posts: 0,
    failWrites: false,
    /** Resolves GETs only when released (for in-flight tests); null = answer at once. */
    gate: null as Promise<void> | null,
  };
  const handlers = [
    http.get(`${API}/todos`, async () => {
      state.gets++;
      if (state.gate) await state.gate;
      return HttpResponse.json(state.todos);
    }),
    http.post(`${API}/todos`, async ({ request }) => {
      state.posts++;
      if (state.failWrites) return HttpResponse.json({ message: 'nope' }, { status: 422 });
      const body = (await request.json()) as { title: string };
      const todo = { id: state.nextId++, title: body.title };
      state.todos = [...state.todos, todo];
      return HttpResponse.json(todo, { status: 201 });
    }),
    http.delete(`${API}/todos/:id`, ({ params }) => {
      if (state.failWrites) return HttpResponse.json({ message: 'nope' }, { status: 500 });
      state.todos = state.todos.filter((t) => t.id !== Number(params.id));
      return new HttpResponse(null, { status: 204 });
    }),
  ];
  return { state, handlers };
}

/** A promise with its resolve function, for gating handlers. */
export function deferred<T = void>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

/** The client's internal counters (not in the public type). */
export function debugOf(client: Client): {
  flights: number;
  inflight: number;
  cacheSize: number;
  subscriptions: number;
  listeners: number;
} {
  return (client as unknown as { debug: ReturnType<typeof debugOf> }).debug;
}

/**
 * Sets React's act environment (`IS_REACT_ACT_ENVIRONMENT`) for each test of the file, restored
 * after it. On: React warns about an update outside act (Testing Library turns it on only with
 * test globals, off here). Off: tests drive React as a browser does.
 */
export function actEnvironment(on: boolean): void {
  const env = globalThis as { IS_REACT_ACT_ENVIRONMENT?: boolean };
  let was: boolean | undefined;
  beforeEach(() => {
    was = env.IS_REACT_ACT_ENVIRONMENT;
    env.IS_REACT_ACT_ENVIRONMENT = on;
  });
  afterEach(() => {
    env.IS_REACT_ACT_ENVIRONMENT = was;
  });
}

/** Lets pending promises and timers of 0 ms run, inside act. Uses the real setTimeout only. */
export async function flush(): Promise<void> {
  await act(async () => {
    await new Promise<void>((resolve) => realSetTimeout(resolve, 0));
  });
}

const realSetTimeout = globalThis.setTimeout;

/** Flushes until `condition` holds (at most `max` rounds); for tests that fake setInterval. */
export async function until(condition: () => boolean, max = 200): Promise<void> {
  for (let i = 0; i < max; i++) {
    if (condition()) return;
    await flush();
  }
  throw new Error(`condition not met after ${max} rounds: ${condition.toString()}`);
}

/**
 * Reads every field of a hook result during render, as a component that shows them all would:
 * results track the fields a component reads, and renderHook reads only after rendering.
 */
export function readAll<T extends object>(result: T): T {
  return { ...result };
}

/** A manual clock for reconnect timers: nothing runs until `runNext()`. */
export class ManualClock implements Clock {
  time = 0;
  #next = 1;
  readonly timers = new Map<number, { fn: () => void; ms: number }>();
  /** Every delay ever scheduled, in order. */
  readonly delays: number[] = [];

  now(): number {
    return this.time;
  }

  setTimeout(fn: () => void, ms: number): number {
    const id = this.#next++;
    this.timers.set(id, { fn, ms });
    this.delays.push(ms);
    return id;
  }

  clearTimeout(handle: unknown): void {
    this.timers.delete(handle as number);
  }

  /** Runs the earliest pending timer (advancing time to it); false when none is pending. */
  runNext(): boolean {
    const first = this.timers.entries().next();
    if (first.done) return false;
    const [id, timer] = first.value;
    this.timers.delete(id);
    this.time += timer.ms;
    timer.fn();
    return true;
  }
}

/** React's warnings (console.error) during the test, silenced; restored after it. */
export function consoleErrors() {
  const spy = vi.spyOn(console, 'error').mockImplementation(() => {});
  onTestFinished(() => spy.mockRestore());
  return spy;
}
