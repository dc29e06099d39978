/**
 * What a query shows follows the cache and the core without a render of its own: a disabled
 * query shows the data an enabled one on its key loads, `isFetching` follows `clearCache()`, and
 * a mount calls an inline `placeholderData` no more often than it has to.
 */
import { dehydrate, hydrate } from '@keel/core';
import { act, render, renderHook, screen } from '@testing-library/react';
import { HttpResponse, http } from 'msw';
import { useState } from 'react';
import { describe, expect, it, vi } from 'vitest';
import { useIsFetching, useQuery } from '../src/index';
import { storeFor } from '../src/query/store';
import {
  API,
  debugOf,
  flush,
  mswServer,
  type Todo,
  testClient,
  todoApi,
  until,
  wrapperFor,
} from './helpers';

const server = mswServer();

function Titles({
  id,
  enabled,
  onRender,
}: {
  id: string;
  enabled: boolean;
  onRender?: () => void;
}) {
  onRender?.();
  const { data, status } = useQuery<Todo[]>('/todos', { enabled });
  return <p data-testid={id}>{data ? data.map((t) => t.title).join(',') : status}</p>;
}

const text = (id: string) => screen.getByTestId(id).textContent;

describe('a disabled query follows its key', () => {
  it('shows the data an enabled query on the same key loads, and later writes, without a request of its own', async () => {
    const api = todoApi(['a']);
    server.use(...api.handlers);
    const client = testClient();
    const { unmount } = render(
      <>
        <Titles id="off" enabled={false} />
        <Titles id="on" enabled />
      </>,
      { wrapper: wrapperFor(client) },
    );
    await until(() => text('on') === 'a');
    await until(() => text('off') === 'a');
    const key = client.resolve('GET', '/todos').key;
    act(() => client.setCached(key, { ...client.getCached(key)!, data: [{ id: 9, title: 'z' }] }));
    await until(() => text('off') === 'z');
    expect(text('on')).toBe('z');
    expect(api.state.gets).toBe(1);
    unmount();
    await flush();
    expect(debugOf(client)).toMatchObject({ flights: 0, subscriptions: 0 });
    expect(storeFor(client).size).toBe(0);
    expect(storeFor(client).followers.size).toBe(0);
  });

  it("shows the error of an enabled query's read on the same key", async () => {
    server.use(http.get(`${API}/todos`, () => HttpResponse.json({}, { status: 500 })));
    render(
      <>
        <Titles id="off" enabled={false} />
        <Titles id="on" enabled />
      </>,
      { wrapper: wrapperFor(testClient()) },
    );
    await until(() => text('on') === 'error');
    await until(() => text('off') === 'error');
  });

  it('is no interest in the key: invalidating it reads nothing', async () => {
    const api = todoApi(['a']);
    server.use(...api.handlers);
    const client = testClient();
    const key = client.resolve('GET', '/todos').key;
    client.setCached(client.resolve('GET', '/todos'), {
      data: [{ id: 1, title: 'seeded' }],
      status: 200,
      statusText: 'OK',
      headers: new Headers(),
    });
    render(<Titles id="off" enabled={false} />, { wrapper: wrapperFor(client) });
    expect(text('off')).toBe('seeded');
    act(() => void client.invalidate('/todos'));
    await flush();
    expect(api.state.gets).toBe(0);
    expect(client.isFetching(key)).toBe(false);
    expect(debugOf(client).subscriptions).toBe(0);
  });
});

const seeded = (title: string) => ({
  data: [{ id: 1, title }],
  status: 200,
  statusText: 'OK',
  headers: new Headers(),
});

describe('a disabled query alone on its key', () => {
  it('shows setCached and hydrate writes as they land, with no request and no interest', async () => {
    const api = todoApi(['a']);
    server.use(...api.handlers);
    const client = testClient();
    const spec = client.resolve('GET', '/todos');
    const { unmount } = render(<Titles id="off" enabled={false} />, {
      wrapper: wrapperFor(client),
    });
    expect(text('off')).toBe('pending');
    act(() => client.setCached(spec, seeded('written')));
    await until(() => text('off') === 'written');
    const other = testClient();
    other.setCached(other.resolve('GET', '/todos'), seeded('hydrated'));
    act(() => hydrate(client, dehydrate(other)));
    await until(() => text('off') === 'hydrated');
    expect(debugOf(client).subscriptions).toBe(0);
    expect(api.state.gets).toBe(0);
    unmount();
    await flush();
    expect(storeFor(client).followers.size).toBe(0);
  });

  it('shows an invalidation (the entry is gone) and a clearCache() at once, and reads nothing', async () => {
    const api = todoApi(['a']);
    server.use(...api.handlers);
    const client = testClient();
    const spec = client.resolve('GET', '/todos');
    client.setCached(spec, seeded('seeded'));
    render(<Titles id="off" enabled={false} />, { wrapper: wrapperFor(client) });
    expect(text('off')).toBe('seeded');
    act(() => void client.invalidate('/todos'));
    await until(() => text('off') === 'pending');
    act(() => client.setCached(spec, seeded('again')));
    await until(() => text('off') === 'again');
    act(() => client.clearCache());
    await until(() => text('off') === 'pending');
    await flush();
    expect(api.state.gets).toBe(0);
    expect(client.isFetching(spec.key)).toBe(false);
  });

  it('re-renders for its own key only', async () => {
    const client = testClient();
    const onRender = vi.fn();
    render(<Titles id="off" enabled={false} onRender={onRender} />, {
      wrapper: wrapperFor(client),
    });
    act(() => client.setCached(client.resolve('GET', '/other'), seeded('x')));
    await flush();
    expect(text('off')).toBe('pending');
    expect(onRender).toHaveBeenCalledTimes(1);
    act(() => client.setCached(client.resolve('GET', '/todos'), seeded('mine')));
    await until(() => text('off') === 'mine');
    expect(onRender).toHaveBeenCalledTimes(2);
  });
});

describe('clearCache() is heard', () => {
  it('a mounted query stops counting a read clearCache() cut off, without a render of its own', async () => {
    const api = todoApi(['a']);
    server.use(...api.handlers);
    const client = testClient();
    const { result } = renderHook(() => useQuery<Todo[]>('/todos'), {
      wrapper: wrapperFor(client),
    });
    await until(() => result.current.data !== undefined);
    let release!: () => void;
    api.state.gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const settled = result.current.refetch();
    await until(() => result.current.isFetching);
    act(() => client.clearCache());
    await until(() => !result.current.isFetching);
    expect(result.current.data).toEqual([{ id: 1, title: 'a' }]);
    api.state.gate = null;
    release();
    await act(() => settled);
    await flush();
  });

  it('useIsFetching drops the reads clearCache() cut off, without a render of its own', async () => {
    const api = todoApi(['a']);
    server.use(...api.handlers);
    let release!: () => void;
    api.state.gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const client = testClient();
    const wrapper = wrapperFor(client);
    render(<Titles id="on" enabled />, { wrapper });
    const { result } = renderHook(() => useIsFetching(), { wrapper });
    await until(() => result.current === 1);
    act(() => client.clearCache());
    await until(() => result.current === 0);
    api.state.gate = null;
    release();
    await until(() => text('on') === 'a');
  });
});

describe('isFetching after clearCache()', () => {
  it('a refetch cut off by clearCache() is no longer shown as fetching at the next render', async () => {
    const api = todoApi(['a']);
    server.use(...api.handlers);
    const client = testClient();
    const { result, rerender } = renderHook(
      ({ n }: { n: number }) => ({ n, query: useQuery<Todo[]>('/todos') }),
      { wrapper: wrapperFor(client), initialProps: { n: 0 } },
    );
    await until(() => result.current.query.data !== undefined);
    let release!: () => void;
    api.state.gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const settled = result.current.query.refetch();
    await until(() => result.current.query.isFetching);
    const key = client.resolve('GET', '/todos').key;
    act(() => client.clearCache());
    expect(client.isFetching(key)).toBe(false);
    rerender({ n: 1 });
    expect(result.current.query.isFetching).toBe(false);
    expect(result.current.query.data).toEqual([{ id: 1, title: 'a' }]);
    api.state.gate = null;
    release();
    await act(() => settled);
    await flush();
    expect(result.current.query.isFetching).toBe(false);
  });
});

function Placeheld({ onPlaceholder }: { onPlaceholder: () => void }) {
  const [, setN] = useState(0);
  const { data, isPlaceholderData } = useQuery<Todo[]>('/todos', {
    placeholderData: () => {
      onPlaceholder();
      return [];
    },
  });
  return (
    <button type="button" data-testid="p" onClick={() => setN((n) => n + 1)}>
      {isPlaceholderData ? 'placeholder' : (data?.length ?? '-')}
    </button>
  );
}

describe('a query nothing observes yet', () => {
  it('calls an inline placeholderData once per mount, not per snapshot read', async () => {
    const api = todoApi(['a']);
    server.use(...api.handlers);
    let gate!: () => void;
    api.state.gate = new Promise<void>((resolve) => {
      gate = resolve;
    });
    const onPlaceholder = vi.fn();
    render(<Placeheld onPlaceholder={onPlaceholder} />, { wrapper: wrapperFor(testClient()) });
    expect(text('p')).toBe('placeholder');
    await until(() => api.state.gets === 1);
    // One render: the snapshot reads around it (and the entry made at subscribe, whose state has
    // the same fields) derive nothing again. It was 4 calls.
    expect(onPlaceholder).toHaveBeenCalledTimes(1);
    gate();
    await until(() => text('p') === '1');
  });
});
