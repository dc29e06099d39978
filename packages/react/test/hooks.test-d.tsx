// Type tests of the public hooks (vitest typecheck: `expectTypeOf` is checked by tsc, not run).
import { HttpError, type HttpMethodInput, isHttpError, type RequestError } from '@keel/core';
import { describe, expectTypeOf, it } from 'vitest';
import {
  type InfiniteData,
  type QueryResult,
  queryOptions,
  type ServerEventHandlers,
  useInfiniteQuery,
  useMutation,
  useQueries,
  useQuery,
  useServerEvents,
  useSuspenseQuery,
} from '../src/index';

interface Todo {
  id: number;
  title: string;
}
interface Page {
  items: Todo[];
  next: string | null;
}

describe('useQuery', () => {
  it('types data from the response type, and errors as RequestError', () => {
    const { data, error } = useQuery<Todo[]>('/todos');
    expectTypeOf(data).toEqualTypeOf<Todo[] | undefined>();
    expectTypeOf(error).toEqualTypeOf<RequestError | null>();
    expectTypeOf(useQuery('/x').data).toEqualTypeOf<unknown>();
  });

  it('infers what select returns', () => {
    // From select's annotated parameter...
    expectTypeOf(
      useQuery('/todos', { select: (todos: Todo[]) => todos.length }).data,
    ).toEqualTypeOf<number | undefined>();
    // ...from queryOptions, which carries the response type...
    const todos = queryOptions<Todo[]>('/todos');
    expectTypeOf(useQuery(todos).data).toEqualTypeOf<Todo[] | undefined>();
    expectTypeOf(useQuery(todos, { select: (t) => t.length }).data).toEqualTypeOf<
      number | undefined
    >();
    expectTypeOf(useQuery(todos, { select: (t) => t.map((x) => x.title) }).data).toEqualTypeOf<
      string[] | undefined
    >();
    // ...or with both type arguments written out.
    expectTypeOf(
      useQuery<Todo[], number>('/todos', { select: (t) => t.length }).data,
    ).toEqualTypeOf<number | undefined>();
    // One type argument given turns inference off for the others (TypeScript has no partial
    // inference, microsoft/TypeScript#26242): the select's type then has to be written.
    // @ts-expect-error number is not Todo[]
    useQuery<Todo[]>('/todos', { select: (t) => t.length });
  });

  it('narrows an HttpError to its status', () => {
    const { error } = useQuery<Todo[]>('/todos');
    if (isHttpError(error)) expectTypeOf(error.status).toEqualTypeOf<number | undefined>();
  });

  it('rejects bad option types', () => {
    // @ts-expect-error refetchInterval is a number or false
    useQuery('/x', { refetchInterval: '1s' });
    // @ts-expect-error select takes the response data
    useQuery<Todo[], number>('/x', { select: (t: string) => t.length });
  });
});

describe('useSuspenseQuery', () => {
  it('data is never undefined', () => {
    expectTypeOf(useSuspenseQuery<Todo[]>('/todos').data).toEqualTypeOf<Todo[]>();
    const todos = queryOptions<Todo[]>('/todos');
    expectTypeOf(useSuspenseQuery(todos, { select: (t) => t[0]! }).data).toEqualTypeOf<Todo>();
    expectTypeOf(useSuspenseQuery(todos).status).toEqualTypeOf<'success' | 'error'>();
    // @ts-expect-error no `enabled`: a suspense query always reads
    useSuspenseQuery('/todos', { enabled: false });
  });
});

describe('useMutation', () => {
  it('types data, variables and errors (HttpError with status)', () => {
    const add = useMutation<Todo, { title: string }>('POST', '/todos', {
      onError: (error) => {
        expectTypeOf(error).toEqualTypeOf<RequestError>();
        if (error instanceof HttpError) {
          expectTypeOf(error.status).toEqualTypeOf<number | undefined>();
        }
      },
      onSuccess: (todo, vars) => {
        expectTypeOf(todo).toEqualTypeOf<Todo>();
        expectTypeOf(vars).toEqualTypeOf<{ title: string }>();
      },
    });
    expectTypeOf(add.error).toEqualTypeOf<RequestError | null>();
    expectTypeOf(add.data).toEqualTypeOf<Todo | undefined>();
    expectTypeOf(add.mutateAsync).returns.toEqualTypeOf<Promise<Todo>>();
    // @ts-expect-error the variables are { title: string }
    add.mutate({ name: 'x' });
    // A fourth type argument narrows the error type.
    const typed = useMutation<Todo, void, unknown, HttpError<{ message: string }>>('POST', '/x');
    expectTypeOf(typed.error?.data).toEqualTypeOf<{ message: string } | undefined>();
  });

  it('takes the method in either case, as the core does (HttpMethodInput)', () => {
    useMutation('post', '/todos');
    useMutation<Todo, { title: string }>('patch', '/todos/1');
    const method: HttpMethodInput = 'delete';
    useMutation(method, '/todos/1');
    expectTypeOf(useMutation).parameter(0).toEqualTypeOf<HttpMethodInput>();
    // @ts-expect-error not a method
    useMutation('fetch', '/todos');
    // @ts-expect-error mixed case is no method either
    useMutation('Post', '/todos');
  });

  it('hook options take no method or url: the hook’s arguments give them (core RequestOptions has both, ignored)', () => {
    // @ts-expect-error the method is useMutation's first argument
    useMutation('POST', '/todos', { method: 'PUT' });
    // @ts-expect-error the url is useQuery's first argument
    useQuery('/todos', { url: '/other' });
  });

  it('invalidate takes one invalidation target', () => {
    useMutation('POST', '/todos', { invalidate: '/todos' });
    useMutation('POST', '/todos', { invalidate: ['todos', 'stats'] });
    useMutation('POST', '/todos', { invalidate: (meta) => meta.tags.includes('todos') });
    // @ts-expect-error not a target
    useMutation('POST', '/todos', { invalidate: 5 });
    // @ts-expect-error tags are strings
    useMutation('POST', '/todos', { invalidate: ['todos', 1] });
    // @ts-expect-error no (data, vars) function form: a function is a predicate over CacheMeta
    useMutation('POST', '/todos', { invalidate: (meta: { id: number }) => meta.id === 1 });
  });

  it('onMutate helpers read and write typed data', () => {
    const todos = queryOptions<Todo[]>('/todos');
    useMutation<Todo, { title: string }>('POST', '/todos', {
      onMutate: (vars, { cancelReads, getQueryData, setQueryData }) => {
        expectTypeOf(cancelReads('/todos')).toEqualTypeOf<string[]>();
        expectTypeOf(getQueryData(todos)).toEqualTypeOf<Todo[] | undefined>();
        setQueryData(todos, (list = []) => [...list, { id: -1, ...vars }]);
        // @ts-expect-error the list holds todos
        setQueryData(todos, (list = []) => [...list, 'x']);
      },
    });
  });
});

describe('useInfiniteQuery', () => {
  it('types pages and params', () => {
    const feed = useInfiniteQuery<Page, string | null>('/feed', {
      initialPageParam: null,
      paramsFor: (cursor) => ({ cursor }),
      getNextPageParam: (last) => last.next,
    });
    expectTypeOf(feed.data).toEqualTypeOf<InfiniteData<Page, string | null> | undefined>();
    expectTypeOf(feed.fetchNextPage).returns.toEqualTypeOf<Promise<void>>();
    const items = useInfiniteQuery<Page, string | null, Todo[]>('/feed', {
      initialPageParam: null,
      getNextPageParam: (last) => last.next,
      select: (data) => data.pages.flatMap((p) => p.items),
    });
    expectTypeOf(items.data).toEqualTypeOf<Todo[] | undefined>();
    useInfiniteQuery<Page, string | null>('/feed', {
      initialPageParam: null,
      // @ts-expect-error the next param is a string or null
      getNextPageParam: () => 1,
    });
  });
});

describe('useQueries', () => {
  it('types each result from its definition', () => {
    const [user, todos] = useQueries([
      queryOptions<{ name: string }>('/me'),
      queryOptions<Todo[]>('/todos'),
    ]);
    expectTypeOf(user).toEqualTypeOf<QueryResult<{ name: string }, RequestError>>();
    expectTypeOf(todos.data).toEqualTypeOf<Todo[] | undefined>();
    const many = useQueries([1, 2].map((id) => queryOptions<Todo>(`/todos/${id}`)));
    expectTypeOf(many).toEqualTypeOf<QueryResult<Todo, RequestError>[]>();
  });
});

describe('useServerEvents', () => {
  it('event data is unknown unless the handler annotates it, never any', () => {
    const handlers: ServerEventHandlers = {
      'todo-added': (data) => {
        expectTypeOf(data).toEqualTypeOf<unknown>();
      },
      'todo-removed': (todo: Todo) => {
        expectTypeOf(todo.id).toEqualTypeOf<number>();
      },
    };
    useServerEvents('/events', handlers);
  });
});
