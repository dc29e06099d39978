import { useMutation, useQuery, useServerEvents } from '@keel/react';
import { type FormEvent, useRef, useState } from 'react';
import type { NewTodo, Todo } from '../server/todos';

let optimisticId = 0;

/**
 * A todo list that stays in sync across tabs:
 * - the list is one `useQuery`;
 * - adding goes through `useMutation` with an optimistic row (rolled back if the server refuses);
 *   the core's mutation invalidation refetches the list in this tab;
 * - every other tab hears the server's `keel:invalidate` for /api/todos on the event stream and
 *   refetches the list (the tab that made the change skips it: it already refetched).
 */
export function App() {
  const [received, setReceived] = useState(0);
  // The server's hub.invalidate('/api/todos') refetches the list here with no handler code; the
  // handler only counts the events (the end-to-end test reads it).
  const live = useServerEvents('/api/events', {
    'keel:invalidate': () => setReceived((n) => n + 1),
  });
  const todos = useQuery<Todo[]>('/api/todos');
  const add = useMutation<Todo, NewTodo>('POST', '/api/todos', {
    onMutate: (todo, { setQueryData }) =>
      setQueryData<Todo[]>('/api/todos', (list = []) => [
        ...list,
        { id: --optimisticId, title: todo.title, pending: true },
      ]),
  });
  const remove = useMutation<null, number>('DELETE', (id) => `/api/todos/${id}`, {
    // DELETE /api/todos/7 invalidates /api/todos/7 and below; the list is its parent.
    invalidate: ['/api/todos'],
  });
  const input = useRef<HTMLInputElement>(null);

  function submit(event: FormEvent) {
    event.preventDefault();
    const title = input.current?.value.trim() ?? '';
    if (title === '') return;
    add.mutate({ title });
    input.current!.value = '';
  }

  return (
    <main>
      <h1>Live todos</h1>
      <p className="status">
        events: <span data-testid="live">{live.status}</span> · updates received:{' '}
        <span data-testid="received">{received}</span>
        {todos.isFetching ? ' · refreshing…' : ''}
      </p>
      <form onSubmit={submit}>
        <input ref={input} aria-label="New todo" placeholder="What needs doing?" maxLength={200} />
        <button type="submit">Add</button>
      </form>
      {add.error ? <p role="alert">Could not add: {add.error.message}</p> : null}
      {todos.error ? <p role="alert">Could not load: {todos.error.message}</p> : null}
      {todos.isPending ? (
        <p>Loading…</p>
      ) : (
        <ul data-testid="todos">
          {todos.data?.map((todo) => (
            <li key={todo.id} data-pending={todo.pending ? '' : undefined}>
              <span>{todo.title}</span>
              {todo.pending ? null : (
                <button type="button" onClick={() => remove.mutate(todo.id)}>
                  Delete
                </button>
              )}
            </li>
          ))}
        </ul>
      )}
    </main>
  );
}
