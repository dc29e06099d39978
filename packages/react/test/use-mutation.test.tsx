import { createClient, HttpError } from '@keel/core';
import { act, render, renderHook, screen, waitFor } from '@testing-library/react';
import { HttpResponse, http } from 'msw';
import { describe, expect, it, vi } from 'vitest';
import { type MutationResult, type UseMutationOptions, useMutation, useQuery } from '../src/index';
import {
  API,
  deferred,
  flush,
  mswServer,
  readAll,
  type Todo,
  testClient,
  todoApi,
  wrapperFor,
} from './helpers';

const server = mswServer();

function List({ onText }: { onText?: (text: string) => void }) {
  const { data } = useQuery<Todo[]>('/todos');
  const text = data?.map((t) => t.title).join(',') ?? '-';
  onText?.(text);
  return <p data-testid="list">{text}</p>;
}

function AddButton({
  expose,
  options,
}: {
  expose: (m: MutationResult<Todo, { title: string }>) => void;
  options?: UseMutationOptions<Todo, { title: string }, { marker: number }>;
}) {
  const add = useMutation<Todo, { title: string }, { marker: number }>('POST', '/todos', options);
  expose(add);
  return <p data-testid="add">{add.status}</p>;
}
const list = () => screen.getByTestId('list').textContent;

describe('useMutation', () => {
  it('invalidates the list it writes to, which refetches and re-renders', async () => {
    const api = todoApi(['a']);
    server.use(...api.handlers);
    const client = testClient();
    let add!: MutationResult<Todo, { title: string }>;
    render(
      <>
        <List />
        <AddButton
          expose={(m) => {
            add = m;
          }}
        />
      </>,
      { wrapper: wrapperFor(client) },
    );
    await waitFor(() => expect(list()).toBe('a'));
    expect(screen.getByTestId('add').textContent).toBe('idle');
    let created: Todo | undefined;
    await act(async () => {
      created = await add.mutateAsync({ title: 'b' });
    });
    expect(created).toEqual({ id: 2, title: 'b' });
    expect(screen.getByTestId('add').textContent).toBe('success');
    expect(add.data).toEqual({ id: 2, title: 'b' });
    await waitFor(() => expect(list()).toBe('a,b'));
    expect(api.state.gets).toBe(2);
    expect(api.state.posts).toBe(1);
  });

  it('rolls an optimistic update back when the mutation fails', async () => {
    const api = todoApi(['a']);
    server.use(...api.handlers);
    const client = testClient();
    const seen: string[] = [];
    const onError = vi.fn();
    const settled = vi.fn();
    let add!: MutationResult<Todo, { title: string }>;
    render(
      <>
        <List
          onText={(text) => {
            if (seen.at(-1) !== text) seen.push(text);
          }}
        />
        <AddButton
          expose={(m) => {
            add = m;
          }}
          options={{
            onMutate: (vars, { setQueryData }) => {
              setQueryData<Todo[]>('/todos', (prev = []) => [
                ...prev,
                { id: -1, title: vars.title },
              ]);
              return { marker: 7 };
            },
            onError,
            onSettled: settled,
          }}
        />
      </>,
      { wrapper: wrapperFor(client) },
    );
    await waitFor(() => expect(list()).toBe('a'));
    const before = client.getCached(client.resolve('GET', '/todos').key);
    api.state.failWrites = true;
    const gate = deferred();
    server.use(
      http.post(`${API}/todos`, async () => {
        await gate.promise;
        return HttpResponse.json({ message: 'nope' }, { status: 422 });
      }),
    );
    act(() => {
      add.mutate({ title: 'b' });
    });
    await waitFor(() => expect(list()).toBe('a,b'));
    gate.resolve();
    await waitFor(() => expect(list()).toBe('a'));
    expect(seen).toEqual(['-', 'a', 'a,b', 'a']);
    await waitFor(() => expect(add.status).toBe('error'));
    expect(add.error).toBeInstanceOf(HttpError);
    expect((add.error as HttpError).status).toBe(422);
    expect(onError).toHaveBeenCalledWith(add.error, { title: 'b' }, { marker: 7 });
    expect(settled).toHaveBeenCalledWith(undefined, add.error, { title: 'b' }, { marker: 7 });
    // Exactly what was cached before, and no refetch was needed.
    expect(client.getCached(client.resolve('GET', '/todos').key)).toBe(before);
    expect(api.state.gets).toBe(1);
  });

  it('keeps an optimistic item until the refetch brings the real one', async () => {
    const api = todoApi(['a']);
    server.use(...api.handlers);
    const client = testClient();
    const { result } = renderHook(
      () => ({
        list: readAll(useQuery<Todo[]>('/todos')),
        add: readAll(
          useMutation<Todo, { title: string }>('POST', '/todos', {
            onMutate: (vars, { setQueryData }) =>
              setQueryData<Todo[]>('/todos', (prev = []) => [...prev, { id: -1, ...vars }]),
          }),
        ),
      }),
      { wrapper: wrapperFor(client) },
    );
    await waitFor(() => expect(result.current.list.data).toHaveLength(1));
    await act(async () => {
      await result.current.add.mutateAsync({ title: 'b' });
    });
    await waitFor(() =>
      expect(result.current.list.data).toEqual([
        { id: 1, title: 'a' },
        { id: 2, title: 'b' },
      ]),
    );
  });

  it('rolls back to "nothing cached" and reads again when the key was empty', async () => {
    const api = todoApi(['a']);
    server.use(...api.handlers);
    const client = testClient();
    const gate = deferred();
    api.state.gate = gate.promise;
    api.state.failWrites = true;
    const { result } = renderHook(
      () => ({
        list: readAll(useQuery<Todo[]>('/todos')),
        add: readAll(
          useMutation<Todo, { title: string }>('POST', '/todos', {
            onMutate: (vars, { setQueryData }) =>
              setQueryData<Todo[]>('/todos', (prev = []) => [...prev, { id: -1, ...vars }]),
          }),
        ),
      }),
      { wrapper: wrapperFor(client) },
    );
    await act(async () => {
      await expect(result.current.add.mutateAsync({ title: 'b' })).rejects.toBeInstanceOf(
        HttpError,
      );
    });
    gate.resolve();
    await waitFor(() => expect(result.current.list.data).toEqual([{ id: 1, title: 'a' }]));
  });

  it('runs extra invalidate targets after success', async () => {
    const api = todoApi(['a']);
    let stats = 0;
    server.use(
      ...api.handlers,
      http.get(`${API}/stats`, () => HttpResponse.json({ version: ++stats })),
    );
    const client = testClient();
    const { result } = renderHook(
      () => ({
        stats: readAll(useQuery<{ version: number }>('/stats')),
        add: readAll(
          useMutation<Todo, { title: string }>('POST', '/todos', { invalidate: '/stats' }),
        ),
      }),
      { wrapper: wrapperFor(client) },
    );
    await waitFor(() => expect(result.current.stats.data).toEqual({ version: 1 }));
    await act(async () => {
      await result.current.add.mutateAsync({ title: 'b' });
    });
    await waitFor(() => expect(result.current.stats.data).toEqual({ version: 2 }));
  });

  it.each([
    ['its own path', '/todos', undefined],
    ['a path under its own', '/todos?done=1', undefined],
    ['its own tags', ['todos'], ['todos', 'lists']],
  ])(
    'an `invalidate` naming what the core already invalidated (%s) refetches once',
    async (_, invalidate, tags) => {
      const api = todoApi(['a']);
      server.use(...api.handlers);
      const client = testClient();
      const { result } = renderHook(
        () => ({
          list: readAll(useQuery<Todo[]>('/todos', { tags: ['todos'] })),
          add: readAll(
            useMutation<Todo, { title: string }>('POST', '/todos', {
              invalidate: invalidate as string,
              tags,
            }),
          ),
        }),
        { wrapper: wrapperFor(client) },
      );
      await waitFor(() => expect(result.current.list.data).toHaveLength(1));
      await act(async () => {
        await result.current.add.mutateAsync({ title: 'b' });
      });
      await waitFor(() => expect(result.current.list.data).toHaveLength(2));
      await flush();
      expect(result.current.list.isFetching).toBe(false);
      // The first read and one refetch: not a second one for the same change.
      expect(api.state.gets).toBe(2);
    },
  );

  it('a GET mutation applies its `invalidate`: the core invalidates nothing for a read', async () => {
    // The core invalidates a request's own path and tags only for methods that change state; a
    // GET/HEAD/OPTIONS mutation's `invalidate` naming its own path is the only invalidation.
    const api = todoApi(['a']);
    server.use(...api.handlers);
    const client = testClient();
    const { result } = renderHook(
      () => ({
        list: readAll(useQuery<Todo[]>('/todos')),
        reload: readAll(useMutation<Todo[], void>('GET', '/todos', { invalidate: '/todos' })),
      }),
      { wrapper: wrapperFor(client) },
    );
    await waitFor(() => expect(result.current.list.data).toHaveLength(1));
    const before = api.state.gets;
    await act(async () => {
      await result.current.reload.mutateAsync();
    });
    // Refetched after the mutation (its own GET may come from the cache).
    await waitFor(() => expect(api.state.gets).toBeGreaterThan(before));
    await flush();
    const settled = api.state.gets;
    await act(async () => {
      await result.current.reload.mutateAsync();
    });
    await waitFor(() => expect(api.state.gets).toBeGreaterThan(settled));
  });

  it("a GET mutation's `invalidate` is no reaction to a write: a read in flight since an earlier write is read again", async () => {
    // The earlier POST's refetch started after that write was answered; the GET mutation is
    // another change the server may have made since, so its invalidation applies in full.
    const api = todoApi(['a']);
    server.use(
      ...api.handlers,
      http.get(`${API}/ping`, () => HttpResponse.json({})),
    );
    const client = testClient();
    const { result } = renderHook(
      () => ({
        list: readAll(useQuery<Todo[]>('/todos')),
        add: readAll(useMutation<Todo, { title: string }>('POST', '/todos')),
        ping: readAll(useMutation<object, void>('GET', '/ping', { invalidate: '/todos' })),
      }),
      { wrapper: wrapperFor(client) },
    );
    await waitFor(() => expect(result.current.list.data).toHaveLength(1));
    const gate = deferred();
    api.state.gate = gate.promise;
    await act(async () => {
      await result.current.add.mutateAsync({ title: 'b' });
    });
    await waitFor(() => expect(api.state.gets).toBe(2));
    await act(async () => {
      await result.current.ping.mutateAsync();
    });
    await waitFor(() => expect(api.state.gets).toBe(3));
    api.state.gate = null;
    gate.resolve();
    await waitFor(() => expect(result.current.list.data).toHaveLength(2));
    await flush();
    expect(api.state.gets).toBe(3);
  });

  it('an `invalidate` path of another origin than the request is applied (the core invalidated only its own)', async () => {
    const api = todoApi(['a']);
    server.use(
      ...api.handlers,
      http.post('http://other.test/todos', () => HttpResponse.json({ id: 9 }, { status: 201 })),
    );
    const client = testClient();
    const { result } = renderHook(
      () => ({
        list: readAll(useQuery<Todo[]>('/todos')),
        add: readAll(
          useMutation<Todo, { title: string }>('POST', 'http://other.test/todos', {
            invalidate: '/todos',
          }),
        ),
      }),
      { wrapper: wrapperFor(client) },
    );
    await waitFor(() => expect(result.current.list.data).toHaveLength(1));
    await act(async () => {
      await result.current.add.mutateAsync({ title: 'b' });
    });
    await waitFor(() => expect(api.state.gets).toBe(2));
  });

  it('a relative `invalidate` means what it means for client.invalidate: the read of its path on another origin is refetched too, the base one once', async () => {
    const api = todoApi(['a']);
    let mirrorGets = 0;
    server.use(
      ...api.handlers,
      http.get('http://mirror.test/todos', () => {
        mirrorGets++;
        return HttpResponse.json([]);
      }),
    );
    const client = testClient();
    const { result, rerender } = renderHook(
      ({ invalidate }) => ({
        list: readAll(useQuery<Todo[]>('/todos')),
        mirror: readAll(useQuery<Todo[]>('http://mirror.test/todos')),
        add: readAll(useMutation<Todo, { title: string }>('POST', '/todos', { invalidate })),
      }),
      { wrapper: wrapperFor(client), initialProps: { invalidate: '/todos' } },
    );
    await waitFor(() => expect(result.current.mirror.data).toEqual([]));
    await waitFor(() => expect(result.current.list.data).toHaveLength(1));
    await act(async () => {
      await result.current.add.mutateAsync({ title: 'b' });
    });
    await waitFor(() => expect(result.current.list.data).toHaveLength(2));
    await waitFor(() => expect(mirrorGets).toBe(2));
    await flush();
    expect(api.state.gets).toBe(2);
    expect(mirrorGets).toBe(2);
    // Named by its absolute URL, the other origin's read is refetched (the base's is not again).
    rerender({ invalidate: 'http://mirror.test/todos' });
    await act(async () => {
      await result.current.add.mutateAsync({ title: 'c' });
    });
    await waitFor(() => expect(mirrorGets).toBe(3));
    await waitFor(() => expect(result.current.list.data).toHaveLength(3));
    await flush();
    expect(api.state.gets).toBe(3);
  });

  it('builds the URL from the variables and sends no body for DELETE', async () => {
    const api = todoApi(['a', 'b']);
    const bodies: string[] = [];
    server.use(
      http.delete(`${API}/todos/:id`, async ({ request, params }) => {
        bodies.push(await request.text());
        api.state.todos = api.state.todos.filter((t) => t.id !== Number(params.id));
        return new HttpResponse(null, { status: 204 });
      }),
      ...api.handlers,
    );
    const client = testClient();
    const { result } = renderHook(
      () => ({
        list: readAll(useQuery<Todo[]>('/todos')),
        // DELETE /todos/1 invalidates /todos/1 and below; the list is its parent: name it.
        remove: readAll(
          useMutation<null, number>('DELETE', (id) => `/todos/${id}`, { invalidate: '/todos' }),
        ),
      }),
      { wrapper: wrapperFor(client) },
    );
    await waitFor(() => expect(result.current.list.data).toHaveLength(2));
    await act(async () => {
      await result.current.remove.mutateAsync(1);
    });
    expect(bodies).toEqual(['']);
    await waitFor(() => expect(result.current.list.data).toEqual([{ id: 2, title: 'b' }]));
  });

  it('mutate() never rejects; reset() goes back to idle; only the latest call writes state', async () => {
    const gates = [deferred(), deferred()];
    let n = 0;
    server.use(
      http.post(`${API}/echo`, async ({ request }) => {
        const body = (await request.json()) as { n: number };
        await gates[n++]!.promise;
        return body.n === 1
          ? HttpResponse.json({ n: body.n }, { status: 500 })
          : HttpResponse.json({ n: body.n });
      }),
    );
    const client = testClient();
    const { result } = renderHook(
      () => readAll(useMutation<{ n: number }, { n: number }>('POST', '/echo')),
      { wrapper: wrapperFor(client) },
    );
    act(() => {
      result.current.mutate({ n: 1 });
    });
    await waitFor(() => expect(n).toBe(1));
    act(() => {
      result.current.mutate({ n: 2 });
    });
    await waitFor(() => expect(n).toBe(2));
    gates[1]!.resolve();
    await waitFor(() => expect(result.current.status).toBe('success'));
    gates[0]!.resolve(); // the older call fails late: it must not overwrite the newer success
    await act(async () => {});
    expect(result.current).toMatchObject({
      status: 'success',
      data: { n: 2 },
      variables: { n: 2 },
    });
    act(() => {
      result.current.reset();
    });
    expect(result.current).toMatchObject({ status: 'idle', data: undefined, error: null });
  });

  describe('`invalidate` means what it means for client.invalidate', () => {
    /** Counts GETs per path; every read answers its own path and count. */
    function countingApi() {
      const gets: Record<string, number> = {};
      server.use(
        http.get(`${API}/:name`, ({ params }) => {
          const name = String(params.name);
          gets[name] = (gets[name] ?? 0) + 1;
          return HttpResponse.json({ name, n: gets[name] });
        }),
        http.post(`${API}/todos`, () => HttpResponse.json({ id: 1 }, { status: 201 })),
      );
      return gets;
    }

    function mountReads(client: ReturnType<typeof testClient>, invalidate: unknown) {
      return renderHook(
        () => ({
          stats: readAll(useQuery('/stats', { tags: ['counts'] })),
          other: readAll(useQuery('/other')),
          add: readAll(
            useMutation<{ id: number }, { title: string }>('POST', '/todos', {
              invalidate: invalidate as never,
            }),
          ),
        }),
        { wrapper: wrapperFor(client) },
      );
    }

    it.each([
      ['a string is one path (not a list of characters)', '/stats'],
      ['an array of strings is tags', ['counts']],
      [
        'a function is a predicate over CacheMeta',
        (meta: { key: string }) => meta.key.includes('stats'),
      ],
    ])('%s', async (_, target) => {
      const gets = countingApi();
      const client = testClient();
      const { result } = mountReads(client, target);
      await waitFor(() => expect(result.current.other.data).toBeDefined());
      await waitFor(() => expect(result.current.stats.data).toEqual({ name: 'stats', n: 1 }));
      await act(async () => {
        await result.current.add.mutateAsync({ title: 'x' });
      });
      await waitFor(() => expect(result.current.stats.data).toEqual({ name: 'stats', n: 2 }));
      // Nothing else was touched: `'/'` (the first character of a path) would have emptied all.
      expect(gets.other).toBe(1);
      expect(result.current.other.isFetching).toBe(false);
    });

    const TARGET = 'a path string, an array of tag strings or a predicate function';
    it.each([
      [5, `keel: \`invalidate\` must be ${TARGET}, got 5`],
      [{ path: '/stats' }, `keel: \`invalidate\` must be ${TARGET}, got an object`],
      [
        ['/stats', 2],
        'keel: `invalidate[1]` must be a tag string (an array target lists tags), got 2',
      ],
    ])('any other shape (%o) is a TypeError naming the option, at render', (target, message) => {
      const client = testClient();
      const errors = vi.spyOn(console, 'error').mockImplementation(() => {});
      try {
        expect(() => mountReads(client, target)).toThrow(message);
      } finally {
        errors.mockRestore();
      }
    });
  });
});

// A value thrown that is no Error (a validation object from onMutate, a body function's throw)
// became `Error("[object Object]")`: the callbacks, the state and mutateAsync lost what was thrown.
describe('a thrown value that is no Error', () => {
  it.each([
    ['an object', { code: 'VALIDATION', field: 'title' }],
    ['undefined', undefined],
  ])('%s reaches onError, the state and mutateAsync as it is', async (_, thrown) => {
    const client = testClient();
    const onError = vi.fn();
    const onSettled = vi.fn();
    const { result } = renderHook(
      () =>
        useMutation<Todo, { title: string }, unknown, unknown>('POST', '/todos', {
          onMutate: () => {
            throw thrown;
          },
          onError,
          onSettled,
        }),
      { wrapper: wrapperFor(client) },
    );
    let rejected: unknown = 'not rejected';
    await act(async () => {
      await result.current.mutateAsync({ title: 'x' }).catch((err: unknown) => {
        rejected = err;
      });
    });
    expect(rejected).toBe(thrown);
    expect(onError).toHaveBeenCalledTimes(1);
    expect(onError.mock.calls[0]![0]).toBe(thrown);
    expect(onSettled.mock.calls[0]![1]).toBe(thrown);
    expect(result.current.status).toBe('error');
    expect(result.current.error).toBe(thrown);
  });
});

// setQueryData('/todos', ...) wrote the entry through a spec of the URL alone: the tags the
// query stored it with (useQuery('/todos', { tags: ['todos'] })) were dropped, and so from the
// refetch on (it reads through the entry's request): a later invalidate(['todos']) (another
// tab's change, over server events) no longer found the list.
describe('an optimistic write keeps the entry its query stored', () => {
  it("the query's tags (and request) stay: a tag invalidation still finds the key", async () => {
    const api = todoApi(['a']);
    server.use(...api.handlers);
    const client = testClient();
    const { result } = renderHook(
      () => {
        useQuery<Todo[]>('/todos', { tags: ['todos'] });
        return useMutation<Todo, { title: string }>('POST', '/todos', {
          onMutate: (todo, { setQueryData }) => {
            setQueryData<Todo[]>('/todos', (list = []) => [...list, { id: -1, ...todo }]);
          },
        });
      },
      { wrapper: wrapperFor(client) },
    );
    const key = client.resolve('GET', '/todos').key;
    await waitFor(() => expect(client.getCached(key)).toBeDefined());
    await act(async () => {
      await result.current.mutateAsync({ title: 'b' });
    });
    await waitFor(() => expect(client.isFetching(key)).toBe(false));
    expect(client.invalidate(['todos'], { refetch: false })).toEqual([key]);
  });
});

describe('a success callback that invalidates what the mutation did', () => {
  it.each([
    ['onSuccess', 'hook'],
    ['onSettled', 'hook'],
    ['onSuccess', 'mutate'],
  ] as const)(
    '%s (%s) invalidating the path: one refetch of the active query, not two',
    async (name, where) => {
      const api = todoApi();
      server.use(...api.handlers);
      const client = testClient();
      const again = () => {
        client.invalidate('/todos');
      };
      const { result } = renderHook(
        () => ({
          todos: readAll(useQuery<Todo[]>('/todos')),
          add: useMutation<Todo, { title: string }>(
            'POST',
            '/todos',
            where === 'hook' ? { [name]: again } : {},
          ),
        }),
        { wrapper: wrapperFor(client) },
      );
      await waitFor(() => expect(result.current.todos.isSuccess).toBe(true));
      await act(() =>
        result.current.add.mutateAsync({ title: 'c' }, where === 'mutate' ? { [name]: again } : {}),
      );
      await waitFor(() => expect(result.current.todos.data).toHaveLength(3));
      await flush();
      expect(api.state.gets).toBe(2);
    },
  );

  it.each([
    [
      'in the callback after one that returned a promise',
      (again: () => void) => ({ onSuccess: async () => {}, onSettled: again }),
    ],
    [
      'after an await in the callback (another tab may have changed it meanwhile)',
      (again: () => void) => ({
        onSuccess: async () => {
          await Promise.resolve();
          again();
        },
      }),
    ],
  ])('an invalidation %s reads again', async (_, callbacks) => {
    const api = todoApi();
    server.use(...api.handlers);
    const client = testClient();
    const options = callbacks(() => {
      client.invalidate('/todos');
    });
    const { result } = renderHook(
      () => ({
        todos: readAll(useQuery<Todo[]>('/todos')),
        add: useMutation<Todo, { title: string }>('POST', '/todos', options),
      }),
      { wrapper: wrapperFor(client) },
    );
    await waitFor(() => expect(result.current.todos.isSuccess).toBe(true));
    await act(() => result.current.add.mutateAsync({ title: 'c' }));
    await waitFor(() => expect(api.state.gets).toBe(3));
  });
});

describe('useMutation retries as the core decides for its method', () => {
  /** POST/PUT /flaky: answers `status` and counts requests per method. */
  function flaky(status: number) {
    const sent = { POST: 0, PUT: 0 };
    server.use(
      http.post(`${API}/flaky`, () => {
        sent.POST++;
        return HttpResponse.json({ message: 'boom' }, { status });
      }),
      http.put(`${API}/flaky`, () => {
        sent.PUT++;
        return HttpResponse.json({ message: 'boom' }, { status });
      }),
    );
    return sent;
  }
  // The client's own retry defaults (3 attempts), with short waits.
  const client = () =>
    createClient({ baseURL: API, retry: { baseDelay: 1, maxDelay: 1, jitter: false } });

  async function run(
    method: 'POST' | 'PUT',
    options?: UseMutationOptions<unknown, { n: number }>,
  ): Promise<unknown> {
    const { result } = renderHook(() => useMutation(method, '/flaky', options), {
      wrapper: wrapperFor(client()),
    });
    let error: unknown;
    await act(async () => {
      error = await result.current.mutateAsync({ n: 1 } as never).catch((e: unknown) => e);
    });
    return error;
  }

  it('a POST answered 500 is sent once by default, and fails with the HttpError', async () => {
    const sent = flaky(500);
    const error = await run('POST');
    expect(sent.POST).toBe(1);
    expect(error).toBeInstanceOf(HttpError);
    expect((error as HttpError).status).toBe(500);
  });

  it('an idempotent PUT answered 503 is retried by default', async () => {
    const sent = flaky(503);
    await run('PUT');
    expect(sent.PUT).toBe(3);
  });

  it('the per-mutation `retry` option wins: opt a POST in, or turn retries off', async () => {
    const sent = flaky(500);
    await run('POST', { retry: { attempts: 2, methods: ['POST'], baseDelay: 1, jitter: false } });
    expect(sent.POST).toBe(2);
    await run('PUT', { retry: false });
    expect(sent.PUT).toBe(1);
  });
});

describe('optimistic updates while a refetch is in flight', () => {
  /**
   * GET /todos answers the list as it was when the request arrived, after `getGate`; POST waits
   * for `postGate`. So a refetch started before the POST brings back the list without the row.
   */
  function slowApi() {
    const state = {
      todos: [{ id: 1, title: 'a' }] as Todo[],
      getGate: null as Promise<void> | null,
      postGate: null as Promise<void> | null,
      gets: 0,
    };
    server.use(
      http.get(`${API}/todos`, async () => {
        state.gets++;
        const snapshot = state.todos;
        if (state.getGate) await state.getGate;
        return HttpResponse.json(snapshot);
      }),
      http.post(`${API}/todos`, async ({ request }) => {
        const { title } = (await request.json()) as { title: string };
        if (state.postGate) await state.postGate;
        const todo = { id: state.todos.length + 1, title };
        state.todos = [...state.todos, todo];
        return HttpResponse.json(todo, { status: 201 });
      }),
    );
    return state;
  }

  /**
   * The list (each text it showed, in `shown`; an optimistic row marked `?`) and an add whose
   * onMutate writes the row, after cancelling the list's reads when `cancel`.
   */
  async function listWithAdd(client: ReturnType<typeof testClient>, cancel: boolean) {
    const shown: string[] = [];
    const { result } = renderHook(
      () => {
        const list = useQuery<Todo[]>('/todos');
        const text = list.data?.map((t) => (t.id < 0 ? `${t.title}?` : t.title)).join(',') ?? '-';
        if (shown.at(-1) !== text) shown.push(text);
        return useMutation<Todo, { title: string }>('POST', '/todos', {
          onMutate: (todo, { cancelReads, setQueryData }) => {
            if (cancel) cancelReads('/todos');
            setQueryData<Todo[]>('/todos', (list = []) => [...list, { id: -1, ...todo }]);
          },
        });
      },
      { wrapper: wrapperFor(client) },
    );
    await waitFor(() => expect(shown.at(-1)).toBe('a'));
    return { shown, result };
  }

  async function addWhileRefetching(cancel: boolean): Promise<string[]> {
    const api = slowApi();
    const client = testClient();
    const { shown, result } = await listWithAdd(client, cancel);
    const getGate = deferred();
    const postGate = deferred();
    api.getGate = getGate.promise;
    api.postGate = postGate.promise;
    act(() => {
      client.invalidate('/todos'); // a refetch, in flight (another tab changed something)
    });
    await waitFor(() => expect(api.gets).toBe(2));
    let done!: Promise<unknown>;
    act(() => {
      done = result.current.mutateAsync({ title: 'b' });
    });
    await waitFor(() => expect(shown.at(-1)).toBe('a,b?'));
    getGate.resolve(); // the old list arrives while the POST is still running
    await flush();
    await flush();
    api.getGate = null;
    postGate.resolve();
    await act(() => done);
    await waitFor(() => expect(shown.at(-1)).toBe('a,b'));
    return shown;
  }

  // The list changed elsewhere (its invalidation refetch in flight, cancelled by onMutate's
  // cancelReads), then the add failed: the rollback wrote back the list on screen from before
  // the invalidation, fresh for its ttl, and the tab never showed the other change.
  it('a failed add after an invalidation cancelled its refetch reads the list again', async () => {
    const api = slowApi();
    server.use(http.post(`${API}/todos`, () => HttpResponse.json({}, { status: 422 })));
    const client = testClient();
    const { shown, result } = await listWithAdd(client, true);
    api.todos = [...api.todos, { id: 2, title: 'elsewhere' }];
    const getGate = deferred();
    api.getGate = getGate.promise;
    act(() => {
      client.invalidate('/todos');
    });
    await waitFor(() => expect(api.gets).toBe(2));
    api.getGate = null;
    await act(async () => {
      await result.current.mutateAsync({ title: 'b' }).catch(() => {});
    });
    getGate.resolve();
    await waitFor(() => expect(shown.at(-1)).toBe('a,elsewhere'));
    expect(client.getCached(client.resolve('GET', '/todos').key)?.data).toEqual(api.todos);
  });

  it.each([
    ['succeeds', 'a,b,c'],
    ['fails', 'a,b'],
  ])(
    'two overlapping optimistic adds: the refetch of the first never hides the row of the second (which %s)',
    async (outcome, final) => {
      const api = slowApi();
      const posts: { title: string; release: () => void }[] = [];
      server.use(
        http.post(`${API}/todos`, async ({ request }) => {
          const { title } = (await request.json()) as { title: string };
          const gate = deferred();
          posts.push({ title, release: gate.resolve });
          await gate.promise;
          if (title === 'c' && outcome === 'fails') return HttpResponse.json({}, { status: 422 });
          const todo = { id: api.todos.length + 1, title };
          api.todos = [...api.todos, todo];
          return HttpResponse.json(todo, { status: 201 });
        }),
      );
      const client = testClient();
      // Every rendered value, repeats included.
      const shown: string[] = [];
      const { result } = renderHook(
        () => {
          const list = useQuery<Todo[]>('/todos');
          shown.push(list.data?.map((t) => (t.id < 0 ? `${t.title}?` : t.title)).join(',') ?? '-');
          return useMutation<Todo, { title: string }>('POST', '/todos', {
            onMutate: (todo, { cancelReads, setQueryData }) => {
              cancelReads('/todos');
              setQueryData<Todo[]>('/todos', (list = []) => [...list, { id: -1, ...todo }]);
            },
          });
        },
        { wrapper: wrapperFor(client) },
      );
      await waitFor(() => expect(shown.at(-1)).toBe('a'));
      let first!: Promise<unknown>;
      let second!: Promise<unknown>;
      act(() => {
        first = result.current.mutateAsync({ title: 'b' });
      });
      await waitFor(() => expect(posts).toHaveLength(1));
      act(() => {
        second = result.current.mutateAsync({ title: 'c' });
      });
      await waitFor(() => expect(posts).toHaveLength(2));
      expect(shown.at(-1)).toBe('a,b?,c?');
      // The first POST lands: its refetch reads the list without the second row.
      posts[0]!.release();
      await act(() => first);
      await waitFor(() => expect(api.gets).toBe(2));
      await flush();
      await flush();
      expect(shown.at(-1)).toBe('a,b?,c?');
      posts[1]!.release();
      await act(() => second.catch(() => {}));
      await waitFor(() => expect(shown.at(-1)).toBe(final));
      // Once the second row showed, every render shows it until the second mutation settled.
      const from = shown.indexOf('a,b?,c?');
      const to = shown.indexOf(final);
      for (const text of shown.slice(from, to)) expect(text).toBe('a,b?,c?');
      // One read per mutation: the held-back one, and the one after the last settled.
      expect(api.gets).toBe(3);
    },
  );

  it('cancelReads in onMutate: the optimistic row stays until the real one replaces it', async () => {
    expect(await addWhileRefetching(true)).toEqual(['-', 'a', 'a,b?', 'a,b']);
  });

  it('without it, the refetch that lands meanwhile is held back until the mutation settles', async () => {
    // No flicker either; the read was wasted (and cached a moment) where cancelReads saves it.
    expect(await addWhileRefetching(false)).toEqual(['-', 'a', 'a,b?', 'a,b']);
  });
});
