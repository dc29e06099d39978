import { act, render, screen, waitFor } from '@testing-library/react';
import { describe, expect, it, onTestFinished, vi } from 'vitest';
import { useQuery } from '../src/index';
import {
  API,
  deferred,
  flush,
  mswServer,
  type Todo,
  testClient,
  todoApi,
  wrapperFor,
} from './helpers';

const server = mswServer();

interface Counted {
  onRender?: () => void;
}

function Titles({ onRender }: Counted) {
  onRender?.();
  const { data } = useQuery<Todo[]>('/todos');
  return <p data-testid="list">{data?.map((t) => t.title).join(',') ?? '-'}</p>;
}

function FetchingCount({ onRender }: Counted) {
  onRender?.();
  const { data, isFetching } = useQuery<Todo[]>('/todos');
  return (
    <p data-testid="list">
      {isFetching ? 'fetching' : 'idle'}:{data?.length ?? '-'}
    </p>
  );
}

function SelectedCount({ onRender }: Counted) {
  onRender?.();
  const { data } = useQuery<Todo[], number>('/todos', { select: (list) => list.length });
  return <p data-testid="count">{data ?? '-'}</p>;
}

function Item({ onRender }: Counted) {
  onRender?.();
  const { data } = useQuery<Todo[]>('/todos');
  return <span>{data ? 'y' : 'n'}</span>;
}

function Other({ onRender }: Counted) {
  onRender?.();
  const { data } = useQuery<{ x: number }>('/other');
  return <p>{data?.x}</p>;
}

/** A disabled query: nothing observes its key. */
function DisabledOther({ onRender }: Counted) {
  onRender?.();
  const { data, isFetching } = useQuery<{ x: number }>('/other', { enabled: false });
  return <p data-testid="x">{`${data?.x}:${isFetching}`}</p>;
}

function WithPlaceholder({ onRender }: Counted) {
  onRender?.();
  const { data } = useQuery<Todo[]>('/todos', {
    // A new (equal) array per call, as an inline literal gives.
    placeholderData: () => [{ id: 0, title: 'loading' }],
  });
  return <p data-testid="list">{data?.map((t) => t.title).join(',')}</p>;
}

describe('render counts', () => {
  it('a data-only reader renders twice and not again for an equal refetch', async () => {
    const api = todoApi(['a', 'b']);
    server.use(...api.handlers);
    const client = testClient();
    let renders = 0;
    render(<Titles onRender={() => renders++} />, { wrapper: wrapperFor(client) });
    await waitFor(() => expect(screen.getByTestId('list').textContent).toBe('a,b'));
    expect(renders).toBe(2);

    // Refetch with identical server data: isFetching flips twice, data is equal.
    act(() => {
      client.invalidate('/todos');
    });
    await waitFor(() => expect(api.state.gets).toBe(2));
    await waitFor(() => expect(client.isFetching(client.resolve('GET', '/todos').key)).toBe(false));
    await flush();
    expect(renders).toBe(2);

    // An equal value written by hand (a new object): still no render.
    const key = client.resolve('GET', '/todos').key;
    act(() => {
      client.setCached(key, {
        data: structuredClone(api.state.todos),
        status: 200,
        statusText: 'OK',
        headers: new Headers(),
      });
    });
    await flush();
    expect(renders).toBe(2);

    // A different value renders once.
    act(() => {
      client.setCached(key, {
        data: [{ id: 1, title: 'z' }],
        status: 200,
        statusText: 'OK',
        headers: new Headers(),
      });
    });
    await waitFor(() => expect(screen.getByTestId('list').textContent).toBe('z'));
    await flush();
    expect(renders).toBe(3);
  });

  it('a reader of isFetching re-renders for the fetch, and only for it', async () => {
    const api = todoApi(['a']);
    server.use(...api.handlers);
    const client = testClient();
    let renders = 0;
    render(<FetchingCount onRender={() => renders++} />, { wrapper: wrapperFor(client) });
    await waitFor(() => expect(screen.getByTestId('list').textContent).toBe('idle:1'));
    expect(renders).toBe(2);
    const gate = deferred();
    api.state.gate = gate.promise;
    act(() => {
      client.invalidate('/todos');
    });
    await waitFor(() => expect(screen.getByTestId('list').textContent).toBe('fetching:1'));
    expect(renders).toBe(3);
    gate.resolve();
    await waitFor(() => expect(screen.getByTestId('list').textContent).toBe('idle:1'));
    expect(renders).toBe(4);
  });

  it('a select reader ignores changes outside its selection', async () => {
    const api = todoApi(['a', 'b']);
    server.use(...api.handlers);
    const client = testClient();
    let renders = 0;
    render(<SelectedCount onRender={() => renders++} />, { wrapper: wrapperFor(client) });
    await waitFor(() => expect(screen.getByTestId('count').textContent).toBe('2'));
    expect(renders).toBe(2);
    api.state.todos = api.state.todos.map((t) => ({ ...t, title: t.title.toUpperCase() }));
    act(() => {
      client.invalidate('/todos');
    });
    await waitFor(() => expect(api.state.gets).toBe(2));
    await flush();
    expect(renders).toBe(2);
  });

  it('1,000 components on one key: one request, two renders each', async () => {
    const api = todoApi(['a']);
    server.use(...api.handlers);
    const client = testClient();
    const renders = new Array<number>(1000).fill(0);
    const { container } = render(
      <div>
        {renders.map((_, i) => (
          // biome-ignore lint/suspicious/noArrayIndexKey: a fixed list
          <Item key={i} onRender={() => renders[i]!++} />
        ))}
      </div>,
      { wrapper: wrapperFor(client) },
    );
    await waitFor(() => expect(container.textContent).toBe('y'.repeat(1000)));
    expect(api.state.gets).toBe(1);
    expect(new Set(renders)).toEqual(new Set([2]));
  });

  it('unrelated keys do not re-render each other', async () => {
    const api = todoApi(['a']);
    server.use(...api.handlers);
    const client = testClient();
    client.setCached(client.resolve('GET', `${API}/other`), {
      data: { x: 1 },
      status: 200,
      statusText: 'OK',
      headers: new Headers(),
    });
    let renders = 0;
    render(
      <>
        <Other onRender={() => renders++} />
        <Titles />
      </>,
      { wrapper: wrapperFor(client) },
    );
    await waitFor(() => expect(screen.getByTestId('list').textContent).toBe('a'));
    act(() => {
      client.invalidate('/todos');
    });
    await waitFor(() => expect(api.state.gets).toBe(2));
    await flush();
    expect(renders).toBe(1);
  });

  describe('a key nothing observes', () => {
    /** React's warnings (console.error) during the test; restored after it. */
    function consoleErrors() {
      const spy = vi.spyOn(console, 'error').mockImplementation(() => {});
      onTestFinished(() => spy.mockRestore());
      return spy;
    }

    it('a disabled query over cached data renders once, with a cached snapshot', async () => {
      const errors = consoleErrors();
      const client = testClient();
      client.setCached(client.resolve('GET', `${API}/other`), {
        data: { x: 1 },
        status: 200,
        statusText: 'OK',
        headers: new Headers(),
      });
      let renders = 0;
      render(<DisabledOther onRender={() => renders++} />, { wrapper: wrapperFor(client) });
      expect(screen.getByTestId('x').textContent).toBe('1:false');
      await flush();
      expect(renders).toBe(1);
      expect(errors).not.toHaveBeenCalled();
    });

    it('placeholderData returning a new object per call: no getSnapshot loop or extra render', async () => {
      const errors = consoleErrors();
      const api = todoApi(['a']);
      server.use(...api.handlers);
      const client = testClient();
      let renders = 0;
      render(<WithPlaceholder onRender={() => renders++} />, { wrapper: wrapperFor(client) });
      expect(screen.getByTestId('list').textContent).toBe('loading');
      await waitFor(() => expect(screen.getByTestId('list').textContent).toBe('a'));
      await flush();
      // The first render (placeholder) and the one with the data.
      expect(renders).toBe(2);
      expect(errors).not.toHaveBeenCalled();
    });
  });
});
