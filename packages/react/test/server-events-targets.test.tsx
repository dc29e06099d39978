import type { AddressInfo } from 'node:net';
import { createClient, type InvalidateTarget } from '@keel/core';
import { type App, createApp, createEventHub, type EventHub } from '@keel/server';
import { render, screen, waitFor } from '@testing-library/react';
import { afterEach, expect, it } from 'vitest';
import { useQuery, useServerEvents } from '../src/index';
import { wrapperFor } from './helpers';

let running: App | undefined;
afterEach(async () => {
  await running?.close();
  running = undefined;
});

/** A real @keel/server app: GET /api/todos (counted), GET /api/other (counted), the event hub. */
async function liveApi() {
  const app = createApp();
  const hub: EventHub = createEventHub({ bufferSize: 10 });
  const gets = { todos: 0, other: 0 };
  app.get('/api/todos', (ctx) => ctx.json({ n: ++gets.todos }));
  app.get('/api/other', (ctx) => ctx.json({ n: ++gets.other }));
  app.get('/api/events', (ctx) => hub.connect(ctx));
  const server = await app.listen(0, '127.0.0.1');
  running = app;
  return { hub, gets, base: `http://127.0.0.1:${(server.address() as AddressInfo).port}/api` };
}

function Page({ target }: { target: InvalidateTarget }) {
  const todos = useQuery<{ n: number }>('/todos', { tags: ['todos'] });
  const other = useQuery<{ n: number }>('/other');
  const { status } = useServerEvents('/events', { invalidate: { changed: target } });
  return (
    <p data-testid="page">
      {status} {todos.data?.n ?? '-'} {other.data?.n ?? '-'}
    </p>
  );
}

it.each([
  ['a string is a path', '/todos'],
  ['an array of strings is tags', ['todos']],
  [
    'a function is a predicate over CacheMeta',
    (meta: { tags: string[] }) => meta.tags.includes('todos'),
  ],
] as [string, InvalidateTarget][])(
  'useServerEvents handlers.invalidate: %s, the meaning client.invalidate gives it',
  async (_, target) => {
    const api = await liveApi();
    const client = createClient({ baseURL: api.base, retry: false });
    render(<Page target={target} />, { wrapper: wrapperFor(client) });
    const page = () => screen.getByTestId('page').textContent;
    await waitFor(() => expect(page()).toBe('open 1 1'));
    api.hub.publish('changed', {});
    await waitFor(() => expect(page()).toBe('open 2 1'));
    expect(api.gets).toEqual({ todos: 2, other: 1 });
  },
);
