import { act, renderHook, waitFor } from '@testing-library/react';
import { HttpResponse, http } from 'msw';
import { describe, expect, it } from 'vitest';
import { type OptimisticHelpers, useMutation, useQuery } from '../src/index';
import { storeFor } from '../src/query/store';
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

/** Collects what is thrown out of band while `fn` runs. */
async function uncaught(fn: () => Promise<void>): Promise<unknown[]> {
  const caught: unknown[] = [];
  const on = (error: unknown) => caught.push(error);
  process.prependListener('uncaughtException', on);
  process.prependListener('unhandledRejection', on);
  try {
    await fn();
    await flush();
  } finally {
    process.off('uncaughtException', on);
    process.off('unhandledRejection', on);
  }
  return caught;
}

describe('useMutation, adversarially', () => {
  it('mutate() after unmount: sent, no state update, no callback of mutate, nothing thrown', async () => {
    const api = todoApi();
    server.use(...api.handlers);
    const client = testClient();
    const { result, unmount } = renderHook(
      () => readAll(useMutation<Todo, { title: string }>('POST', '/todos')),
      {
        wrapper: wrapperFor(client),
      },
    );
    const { mutate } = result.current;
    unmount();
    const calls: string[] = [];
    const errors = await uncaught(async () => {
      mutate({ title: 'late' }, { onSettled: () => calls.push('settled') });
      await waitFor(() => expect(api.state.posts).toBe(1));
      await flush();
    });
    expect(errors).toEqual([]);
    expect(calls).toEqual([]);
  });

  it('onMutate that throws after an optimistic write: error state, the write rolled back, the key not held', async () => {
    const api = todoApi();
    server.use(...api.handlers);
    const client = testClient();
    const { result } = renderHook(
      () => ({
        list: readAll(useQuery<Todo[]>('/todos')),
        add: readAll(
          useMutation<Todo, { title: string }>('POST', '/todos', {
            onMutate: (_, { setQueryData }) => {
              setQueryData<Todo[]>('/todos', (l = []) => [...l, { id: -1, title: 'x' }]);
              throw new Error('onMutate broke');
            },
          }),
        ),
      }),
      { wrapper: wrapperFor(client) },
    );
    await waitFor(() => expect(result.current.list.data).toHaveLength(2));
    await act(async () => {
      await result.current.add.mutateAsync({ title: 'x' }).catch(() => {});
    });
    expect(result.current.add.status).toBe('error');
    expect((result.current.add.error as Error).message).toBe('onMutate broke');
    expect(api.state.posts).toBe(0);
    expect(result.current.list.data).toHaveLength(2);
    expect(storeFor(client).pending).toEqual([]);
  });

  it('a setQueryData updater that throws writes nothing, holds nothing, and refetches nothing', async () => {
    const api = todoApi();
    server.use(...api.handlers);
    const client = testClient();
    const { result } = renderHook(
      () => ({
        list: readAll(useQuery<Todo[]>('/todos')),
        add: readAll(
          useMutation<Todo, { title: string }>('POST', '/todos', {
            onMutate: (_, { setQueryData }) => {
              setQueryData<Todo[]>('/todos', () => {
                throw new Error('updater broke');
              });
            },
          }),
        ),
      }),
      { wrapper: wrapperFor(client) },
    );
    await waitFor(() => expect(result.current.list.data).toHaveLength(2));
    expect(api.state.gets).toBe(1);
    await act(async () => {
      await result.current.add.mutateAsync({ title: 'x' }).catch(() => {});
    });
    await flush();
    expect(result.current.add.status).toBe('error');
    expect(storeFor(client).pending).toEqual([]);
    expect(api.state.gets).toBe(1);
  });

  it('helpers kept past the mutation: a later setQueryData does not hold the key for good', async () => {
    const api = todoApi();
    server.use(...api.handlers);
    const client = testClient();
    let kept: OptimisticHelpers | undefined;
    const { result } = renderHook(
      () => ({
        list: readAll(useQuery<Todo[]>('/todos')),
        add: readAll(
          useMutation<Todo, { title: string }>('POST', '/todos', {
            onMutate: (_, helpers) => {
              kept = helpers;
            },
          }),
        ),
      }),
      { wrapper: wrapperFor(client) },
    );
    await waitFor(() => expect(result.current.list.data).toHaveLength(2));
    await act(async () => {
      await result.current.add.mutateAsync({ title: 'c' });
    });
    await waitFor(() => expect(result.current.list.data).toHaveLength(3));
    act(() => {
      kept!.setQueryData<Todo[]>('/todos', (l = []) => [...l, { id: -1, title: 'local' }]);
    });
    await waitFor(() => expect(result.current.list.data).toHaveLength(4));
    // The server's data must still reach the screen.
    await act(async () => {
      await result.current.list.refetch();
    });
    await waitFor(() => expect(result.current.list.data).toHaveLength(3));
    expect(storeFor(client).pending).toEqual([]);
  });

  it('reset() while pending: idle at once, the late outcome changes nothing, the key is released', async () => {
    const api = todoApi();
    const gate = deferred();
    server.use(
      http.post(`${API}/todos`, async () => {
        await gate.promise;
        return HttpResponse.json({ id: 9, title: 'z' }, { status: 201 });
      }),
      ...api.handlers,
    );
    const client = testClient();
    const { result } = renderHook(
      () => ({
        list: readAll(useQuery<Todo[]>('/todos')),
        add: readAll(
          useMutation<Todo, { title: string }>('POST', '/todos', {
            onMutate: (_, { setQueryData }) => {
              setQueryData<Todo[]>('/todos', (l = []) => [...l, { id: -1, title: 'opt' }]);
            },
          }),
        ),
      }),
      { wrapper: wrapperFor(client) },
    );
    await waitFor(() => expect(result.current.list.data).toHaveLength(2));
    act(() => result.current.add.mutate({ title: 'z' }));
    await waitFor(() => expect(result.current.add.status).toBe('pending'));
    act(() => result.current.add.reset());
    expect(result.current.add.status).toBe('idle');
    gate.resolve();
    await waitFor(() => expect(storeFor(client).pending).toEqual([]));
    await flush();
    expect(result.current.add.status).toBe('idle');
    await waitFor(() => expect(result.current.list.data).toHaveLength(2));
  });
});
