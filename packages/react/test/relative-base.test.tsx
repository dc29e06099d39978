import { createClient } from '@keel/core';
import { render, screen, waitFor } from '@testing-library/react';
import { HttpResponse, http } from 'msw';
import { expect, it } from 'vitest';
import { ClientProvider, useQuery } from '../src/index';
import { mswServer } from './helpers';

const server = mswServer();

function Todos() {
  const { data, error } = useQuery<{ id: number; title: string }[]>('/todos');
  if (error) return <p>Failed: {error.message}</p>;
  return <p data-testid="todos">{data?.map((t) => t.title).join(',') ?? 'loading'}</p>;
}

it("the README's quick start: createClient({ baseURL: '/api' }) resolves against the page", async () => {
  const seen: string[] = [];
  server.use(
    http.get('*/api/todos', ({ request }) => {
      seen.push(request.url);
      return HttpResponse.json([{ id: 1, title: 'from the page origin' }]);
    }),
  );
  // jsdom's document lives at http://localhost:3000/ (vitest's default).
  const client = createClient({ baseURL: '/api' });
  render(
    <ClientProvider client={client}>
      <Todos />
    </ClientProvider>,
  );
  await waitFor(() => expect(screen.getByTestId('todos').textContent).toBe('from the page origin'));
  expect(seen).toEqual([`${location.origin}/api/todos`]);
  // Keys are relative to that base, as a server client's would be.
  expect(client.resolve('GET', '/todos').key).toBe('GET /todos');
});

it('a relative baseURL follows the document base (a <base href>)', () => {
  const base = document.createElement('base');
  base.href = 'http://localhost:3000/app/';
  document.head.appendChild(base);
  try {
    const client = createClient({ baseURL: 'api/v2' });
    expect(client.resolve('GET', '/x').url).toBe('http://localhost:3000/app/api/v2/x');
  } finally {
    base.remove();
  }
});
