import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  type Context,
  createApp,
  createEventHub,
  HttpException,
  type HubStore,
} from '@keel/server';
import { RENDER_HEADER, RENDER_READ_TIMEOUT_MS, renderPage } from './render';
import { memoryTodos, type TodoStore } from './todos';

export interface LiveAppOptions {
  /** The built page (vite build output). */
  distDir: string;
  /** Starting todos (in memory, when no `todoStore` is given). */
  todos?: string[];
  /** Where the todos live; default in this process's memory. */
  todoStore?: TodoStore;
  /** The event hub's store; default in memory (one instance). `redisStreams` for several. */
  events?: HubStore;
}

/**
 * The example's server: a JSON todo API, an event hub that tells every open tab when the list
 * changed, and the page, rendered on the server.
 *
 *   GET    /api/todos       the list
 *   POST   /api/todos       { title } -> 201 the new todo; invalidates /api/todos in other tabs
 *   DELETE /api/todos/:id   204; invalidates /api/todos in other tabs
 *   GET    /api/stats       { count }
 *   GET    /api/events      the event stream (Last-Event-ID replays what a tab missed)
 *   GET    /                the page, rendered with the data (server/render.tsx)
 *   GET    /*               the built assets
 *
 * `control` is for the end-to-end tests: it counts the browser's reads, slows the list and the
 * adds down, and makes the stats fail.
 */
export function createLiveApp(options: LiveAppOptions) {
  const app = createApp();
  const hub = createEventHub({ store: options.events });
  const todos =
    options.todoStore ?? memoryTodos(options.todos ?? ['Try keel', 'Open a second tab']);
  const control = {
    /** Reads made by browsers (not by the server's own rendering), by path. */
    browserReads: new Map<string, number>(),
    /** The list answers after this many ms, with the list as it was when asked. */
    todosDelay: 0,
    /** An add takes this many ms. */
    postDelay: 0,
    /** /api/stats answers 500. */
    failStats: false,
    /** With failStats: answer 503 with this Retry-After (seconds) instead. */
    statsRetryAfter: 0,
    /** Adds are refused (422), as the validation refuses a bad title. */
    refuseAdds: false,
    /** The server's own reads (rendering the page) fail, so the browser loads the data itself. */
    failRenderReads: false,
    /** How long server rendering waits for each read (RENDER_READ_TIMEOUT_MS). */
    renderReadTimeoutMs: RENDER_READ_TIMEOUT_MS,
  };
  app.use(async (ctx, next) => {
    const rendering = ctx.header(RENDER_HEADER) !== undefined;
    if (ctx.method === 'GET' && !rendering) {
      control.browserReads.set(ctx.path, (control.browserReads.get(ctx.path) ?? 0) + 1);
    }
    if (rendering && control.failRenderReads) throw new HttpException(503, 'Not now');
    await next();
  });

  app.get('/api/todos', async (ctx) => {
    const snapshot = await todos.list();
    if (control.todosDelay > 0) await sleep(control.todosDelay);
    return ctx.json(snapshot);
  });
  app.post('/api/todos', async (ctx) => {
    const { title } = ctx.validate({ title: { type: 'string', required: true, min: 1, max: 200 } });
    if (control.refuseAdds) throw new HttpException(422, 'This title is not accepted');
    if (control.postDelay > 0) await sleep(control.postDelay);
    const todo = await todos.add(String(title));
    // Every tab's useServerEvents refetches /api/todos; the tab that added skips this echo.
    await hub.invalidate('/api/todos', { source: ctx });
    return ctx.status(201).json(todo);
  });
  app.delete('/api/todos/:id', async (ctx) => {
    if (!(await todos.remove(Number(ctx.params.id)))) throw new HttpException(404, 'No such todo');
    await hub.invalidate('/api/todos', { source: ctx });
    return ctx.status(204).send(null);
  });
  app.get('/api/stats', async (ctx) => {
    if (control.failStats && control.statsRetryAfter > 0) {
      return ctx
        .status(503)
        .setHeader('retry-after', String(control.statsRetryAfter))
        .json({ message: 'Stats are down' });
    }
    if (control.failStats) throw new HttpException(500, 'Stats are down');
    return ctx.json({ count: (await todos.list()).length });
  });
  app.get('/api/events', (ctx) => hub.connect(ctx));

  let template: string | undefined;
  const page = (ctx: Context) => {
    template ??= readFileSync(join(options.distDir, 'index.html'), 'utf8');
    const { localAddress, localPort } = ctx.req.socket;
    const host = localAddress?.includes(':') ? `[${localAddress}]` : localAddress;
    const res = ctx.res;
    // The browser went away (the response closed before it ended): stop rendering for it, and
    // abort the reads it started, instead of waiting for them on nobody's behalf.
    const gone = new AbortController();
    const onClose = () => {
      if (!res.writableFinished) gone.abort();
    };
    res.once('close', onClose);
    return renderPage({
      signal: gone.signal,
      template,
      // The server reads its own API over loopback: an internal URL, not the page's origin.
      apiBase: `http://${host}:${localPort}/api`,
      readTimeoutMs: control.renderReadTimeoutMs,
      start(status) {
        res.statusCode = status;
        res.setHeader('content-type', 'text/html; charset=utf-8');
      },
      write: (chunk) => res.write(chunk),
      end: () => res.end(),
    }).finally(() => {
      res.off('close', onClose);
      // Nobody reads it, but an open response would be reported as "sent no response".
      if (gone.signal.aborted) res.end();
    });
  };
  app.get('/', page);
  app.get('/index.html', page);
  app.get('/*', (ctx) => ctx.sendFile(ctx.params['*'] ?? '', { root: options.distDir }));

  return { app, hub, control, todos: () => todos.list() };
}
