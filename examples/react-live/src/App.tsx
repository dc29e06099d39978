import { useMutation, useQuery, useServerEvents } from '@keel/react';
import { type FormEvent, useEffect, useRef, useState } from 'react';
import type { NewTodo, Todo } from '../server/todos';
import { Stats } from './Stats';

let optimisticId = 0;

/**
 * A todo list that stays in sync across tabs:
 * - the list is one `useQuery`; the server rendered it (server/render.tsx) and the browser
 *   hydrates it with the server's data, without asking again;
 * - adding goes through `useMutation` with an optimistic row (rolled back if the server refuses);
 *   reads of the list already in flight are cancelled first, so one cannot land on top of the
 *   row; the core's mutation invalidation refetches the list in this tab;
 * - every other tab hears the server's `keel:invalidate` for /api/todos on the event stream and
 *   refetches the list (the tab that made the change skips it: it already refetched);
 * - the stats line is a suspense query behind an error boundary with a Retry button.
 *
 * URLs are relative to the client's baseURL (`/api`).
 */
export function App() {
  const [received, setReceived] = useState(0);
  const [hydrated, setHydrated] = useState(false);
  useEffect(() => setHydrated(true), []);
  // The server's hub.invalidate('/api/todos') refetches the list here with no handler code; the
  // handler only counts the events (the end-to-end test reads it).
  const live = useServerEvents('/events', {
    'keel:invalidate': () => setReceived((n) => n + 1),
  });
  const todos = useQuery<Todo[]>('/todos');
  const add = useMutation<Todo, NewTodo>('POST', '/todos', {
    onMutate: (todo, { cancelReads, setQueryData }) => {
      cancelReads('/todos');
      setQueryData<Todo[]>('/todos', (list = []) => [
        ...list,
        { id: --optimisticId, title: todo.title, pending: true },
      ]);
    },
  });
  const remove = useMutation<null, number>('DELETE', (id) => `/todos/${id}`, {
    // DELETE /api/todos/7 invalidates /api/todos/7 and below; the list is its parent.
    invalidate: '/todos',
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
    <main data-hydrated={hydrated ? '' : undefined}>
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
      <Stats />
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
