import { createApp, createEventHub, HttpError } from '@keel/server';
import type { Todo } from './todos';

export interface LiveAppOptions {
  /** The built page (vite build output). */
  distDir: string;
  /** Starting todos. */
  todos?: string[];
}

/**
 * The example's server: a JSON todo API, an event hub that tells every open tab when the list
 * changed, and the built page.
 *
 *   GET    /api/todos       the list
 *   POST   /api/todos       { title } -> 201 the new todo; publishes `todos-changed`
 *   DELETE /api/todos/:id   204; publishes `todos-changed`
 *   GET    /api/events      the event stream (Last-Event-ID replays what a tab missed)
 *   GET    /*               the page
 */
export function createLiveApp(options: LiveAppOptions) {
  const app = createApp();
  const hub = createEventHub({ bufferSize: 100 });
  let nextId = 1;
  let todos: Todo[] = (options.todos ?? ['Try keel', 'Open a second tab']).map((title) => ({
    id: nextId++,
    title,
  }));

  app.get('/api/todos', (ctx) => ctx.json(todos));
  app.post('/api/todos', (ctx) => {
    const { title } = ctx.validate({ title: { type: 'string', required: true, min: 1, max: 200 } });
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
  app.get('/*', (ctx) => {
    const path = ctx.params['*'] ?? '';
    return ctx.sendFile(path === '' ? 'index.html' : path, { root: options.distDir });
  });

  return { app, hub, todos: () => todos };
}
