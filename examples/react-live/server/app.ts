import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { type Context, createApp, createEventHub, HttpError } from '@keel/server';
import { RENDER_HEADER, renderPage } from './render';
import type { Todo } from './todos';

export interface LiveAppOptions {
  /** The built page (vite build output). */
  distDir: string;
  /** Starting todos. */
  todos?: string[];
}

/**
 * The example's server: a JSON todo API, an event hub that tells every open tab when the list
 * changed, and the page, rendered on the server.
 *
 *   GET    /api/todos       the list
 *   POST   /api/todos       { title } -> 201 the new todo; publishes `todos-changed`
 *   DELETE /api/todos/:id   204; publishes `todos-changed`
 *   GET    /api/stats       { count }
 *   GET    /api/events      the event stream (Last-Event-ID replays what a tab missed)
 *   GET    /                the page, rendered with the data (server/render.tsx)
 *   GET    /*               the built assets
 *
 * `control` is for the end-to-end test: it counts the browser's reads, slows the list down and
 * makes the stats fail.
 */
export function createLiveApp(options: LiveAppOptions) {
  const app = createApp();
  const hub = createEventHub({ bufferSize: 100 });
  let nextId = 1;
  let todos: Todo[] = (options.todos ?? ['Try keel', 'Open a second tab']).map((title) => ({
    id: nextId++,
    title,
  }));

  const control = {
    /** Reads made by browsers (not by the server's own rendering), by path. */
    browserReads: new Map<string, number>(),
    /** The list answers after this many ms, with the list as it was when asked. */
    todosDelay: 0,
    /** An add takes this many ms. */
    postDelay: 0,
    /** /api/stats answers 500. */
    failStats: false,
  };
  app.use(async (ctx, next) => {
    if (ctx.method === 'GET' && ctx.header(RENDER_HEADER) === undefined) {
      control.browserReads.set(ctx.path, (control.browserReads.get(ctx.path) ?? 0) + 1);
    }
    await next();
  });

  app.get('/api/todos', async (ctx) => {
    const snapshot = todos;
    if (control.todosDelay > 0) await sleep(control.todosDelay);
    return ctx.json(snapshot);
  });
  app.get('/api/stats', (ctx) => {
    if (control.failStats) throw new HttpError(500, 'Stats are down');
    return ctx.json({ count: todos.length });
  });
  app.post('/api/todos', async (ctx) => {
    const { title } = ctx.validate({ title: { type: 'string', required: true, min: 1, max: 200 } });
    if (control.postDelay > 0) await sleep(control.postDelay);
    const todo: Todo = { id: nextId++, title: String(title) };
    todos = [...todos, todo];
    hub.publish('todos-changed', { added: todo.id });
    return ctx.status(201).json(todo);
  });
  app.delete('/api/todos/:id', (ctx) => {
    const id = Number(ctx.params.id);
    if (!todos.some((t) => t.id === id)) throw new HttpError(404, 'No such todo');
    todos = todos.filter((t) => t.id !== id);
    hub.publish('todos-changed', { removed: id });
    return ctx.status(204).send(null);
  });
  app.get('/api/events', (ctx) => hub.connect(ctx));
  let template: string | undefined;
  const page = (ctx: Context) => {
    template ??= readFileSync(join(options.distDir, 'index.html'), 'utf8');
    const { localAddress, localPort } = ctx.req.socket;
    const host = localAddress?.includes(':') ? `[${localAddress}]` : localAddress;
    const res = ctx.res;
    return renderPage({
      template,
      // The server reads its own API over loopback: an internal URL, not the page's origin.
      apiBase: `http://${host}:${localPort}/api`,
      start(status) {
        res.statusCode = status;
        res.setHeader('content-type', 'text/html; charset=utf-8');
      },
      write: (chunk) => res.write(chunk),
      end: () => res.end(),
    });
  };
  app.get('/', page);
  app.get('/index.html', page);
  app.get('/*', (ctx) => {
    const path = ctx.params['*'] ?? '';
    return ctx.sendFile(path, { root: options.distDir });
  });

  return { app, hub, control, todos: () => todos };
}
