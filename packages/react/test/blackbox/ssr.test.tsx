// @vitest-environment node
// Issue #7 "Server rendering": renderToString with initialData or a pre-filled client renders
// the data without fetching; no `window` access during render (this file runs without a DOM:
// a read of `window` would throw a ReferenceError).
import { createClient } from '@keel/core';
import { renderToString } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import { ClientProvider, useQuery, useServerEvents } from '../../src/index';
import { liveServer, type Todo } from './live-server';

function Page() {
  const q = useQuery<Todo[]>('/todos', { initialData: [{ id: 0, title: 'seed' }] });
  return <p>{q.data?.map((t) => t.title).join(',')}</p>;
}

function Prefilled() {
  const q = useQuery<Todo[]>('/todos');
  const live = useServerEvents('/events');
  return (
    <p>
      {q.status}:{q.data?.map((t) => t.title).join(',')}:{live.status}
    </p>
  );
}

describe('issue #7: server rendering', () => {
  it('renderToString with initialData renders the data without a request', async () => {
    expect(typeof (globalThis as { window?: unknown }).window).toBe('undefined');
    const { base, state } = await liveServer();
    const client = createClient({ baseURL: base });
    const html = renderToString(
      <ClientProvider client={client}>
        <Page />
      </ClientProvider>,
    );
    expect(html).toBe('<p>seed</p>');
    await new Promise((r) => setTimeout(r, 20));
    expect(state.gets).toBe(0);
    expect(state.connects).toEqual([]);
  });

  it('renderToString with a pre-filled client renders its data; nothing more is fetched or connected', async () => {
    const { base, state } = await liveServer();
    const client = createClient({ baseURL: base });
    await client.get('/todos');
    expect(state.gets).toBe(1);
    const html = renderToString(
      <ClientProvider client={client}>
        <Prefilled />
      </ClientProvider>,
    );
    expect(html).toBe('<p>success<!-- -->:<!-- -->a,b<!-- -->:<!-- -->connecting</p>');
    await new Promise((r) => setTimeout(r, 20));
    expect(state.gets).toBe(1);
    expect(state.connects).toEqual([]);
  });
});
