import { useClient, useMutation, useQuery, useServerEvents } from '@keel/react';
import { type FormEvent, useEffect, useState } from 'react';
import type { NewTodo, Todo } from '../server/todos';
import { indicatorOf, useOnline } from './connection';
import { explain } from './explain';
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
  // handler counts the events (the end-to-end test reads it) and reads the count again, which
  // changes with the list.
  const client = useClient();
  const live = useServerEvents('/events', {
    'keel:invalidate': () => {
      setReceived((n) => n + 1);
      client.invalidate('/stats');
    },
  });
  const indicator = indicatorOf(useOnline(), live);
  const todos = useQuery<Todo[]>('/todos');
  const add = useMutation<Todo, NewTodo>('POST', '/todos', {
    // POST /api/todos invalidates the list (its path); the count is elsewhere.
    invalidate: '/stats',
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
    onSuccess: () => client.invalidate('/stats'),
  });
  const [title, setTitle] = useState('');

  function submit(event: FormEvent) {
    event.preventDefault();
    const text = title.trim();
    if (text === '' || add.isPending) return;
    add.mutate({ title: text });
    setTitle('');
  }

  const list = todos.data;
  return (
    <main className="page" data-hydrated={hydrated ? '' : undefined}>
      <header className="header">
        <h1>Live todos</h1>
        <span
          className="connection"
          data-testid="live"
          data-status={indicator.status}
          title={`Live updates: ${indicator.label.toLowerCase()}`}
        >
          {indicator.label}
        </span>
      </header>
      <p className="lede">
        Open this page in a second tab: a change in one shows in the other at once.
      </p>

      <form className="card add" onSubmit={submit}>
        <input
          aria-label="New todo"
          placeholder="What needs doing?"
          maxLength={200}
          value={title}
          onChange={(event) => setTitle(event.target.value)}
        />
        <button type="submit" className="button" disabled={add.isPending} aria-busy={add.isPending}>
          {add.isPending ? <span className="spinner" aria-hidden="true" /> : null}
          Add
        </button>
      </form>

      {add.error ? (
        <div className="notice" role="alert">
          <p>
            Couldn’t add “{add.variables?.title}”. {explain(add.error)}
          </p>
          <button
            type="button"
            className="button button-quiet"
            onClick={() => add.variables && add.mutate(add.variables)}
          >
            Try again
          </button>
          <button type="button" className="button button-quiet" onClick={add.reset}>
            Dismiss
          </button>
        </div>
      ) : null}
      {remove.error ? (
        <div className="notice" role="alert">
          <p>Couldn’t delete that item. {explain(remove.error)}</p>
          <button type="button" className="button button-quiet" onClick={remove.reset}>
            Dismiss
          </button>
        </div>
      ) : null}

      <div className="list-head">
        <span>
          {list ? `${list.length} ${list.length === 1 ? 'item' : 'items'}` : 'Your list'}
          {/* Only once there is a list: the first load says "Loading" below instead. */}
          {list && todos.isFetching ? <span> · refreshing…</span> : null}
        </span>
        <span>
          updates received: <span data-testid="received">{received}</span>
        </span>
      </div>
      <section className="card" aria-label="Todos">
        {list === undefined ? (
          todos.error ? (
            <div className="notice" role="alert" style={{ margin: 0 }}>
              <p>Couldn’t load the list. {explain(todos.error)}</p>
              <button type="button" className="button button-quiet" onClick={() => todos.refetch()}>
                Try again
              </button>
            </div>
          ) : (
            <div className="loading" aria-busy="true">
              <div className="skeleton" />
              <div className="skeleton" style={{ width: '60%' }} />
              Loading…
            </div>
          )
        ) : (
          <>
            {todos.error ? (
              <div
                className="notice"
                role="alert"
                style={{ margin: 0, borderRadius: '12px 12px 0 0' }}
              >
                <p>Showing the last list: refreshing it failed. {explain(todos.error)}</p>
                <button
                  type="button"
                  className="button button-quiet"
                  onClick={() => todos.refetch()}
                >
                  Try again
                </button>
              </div>
            ) : null}
            {list.length === 0 ? (
              <div className="empty">
                <strong>Nothing to do.</strong>
                Add the first item above; every open tab shows it.
              </div>
            ) : null}
            <ul className="todos" data-testid="todos">
              {list.map((todo) => {
                const deleting = remove.isPending && remove.variables === todo.id;
                return (
                  <li key={todo.id} data-pending={todo.pending ? '' : undefined}>
                    <span>{todo.title}</span>
                    {todo.pending ? null : (
                      <button
                        type="button"
                        className="button button-quiet"
                        disabled={deleting}
                        aria-label={`Delete “${todo.title}”`}
                        onClick={() => remove.mutate(todo.id)}
                      >
                        {deleting ? 'Deleting…' : 'Delete'}
                      </button>
                    )}
                  </li>
                );
              })}
            </ul>
          </>
        )}
      </section>
      <Stats />
    </main>
  );
}
