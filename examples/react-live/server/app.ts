import { createApp, createEventHub, HttpException, type HubStore } from '@keel/server';
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
 * changed, and the built page.
 *
 *   GET    /api/todos       the list
 *   POST   /api/todos       { title } -> 201 the new todo; invalidates /api/todos in other tabs
 *   DELETE /api/todos/:id   204; invalidates /api/todos in other tabs
 *   GET    /api/events      the event stream (Last-Event-ID replays what a tab missed)
 *   GET    /*               the page
 */
export function createLiveApp(options: LiveAppOptions) {
  const app = createApp();
  const hub = createEventHub({ store: options.events });
  const todos =
    options.todoStore ?? memoryTodos(options.todos ?? ['Try keel', 'Open a second tab']);

  app.get('/api/todos', async (ctx) => ctx.json(await todos.list()));
  app.post('/api/todos', async (ctx) => {
    const { title } = ctx.validate({ title: { type: 'string', required: true, min: 1, max: 200 } });
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
  app.get('/api/events', (ctx) => hub.connect(ctx));
  app.get('/*', (ctx) => {
    const path = ctx.params['*'] ?? '';
    return ctx.sendFile(path === '' ? 'index.html' : path, { root: options.distDir });
  });

  return { app, hub, todos: () => todos.list() };
}
