'use client';
// A client component of the app: reads /todos (queries.mjs) with useQuery. On the
// server-rendered page it must show the todos the Server Component prefetched (hydrated through
// HydrationBoundary), without a request.
import { useQuery } from '@keel/react';
import { createElement as h } from 'react';
import { todosQuery } from './queries.mjs';

export function Todos() {
  const { data, status, isFetching } = useQuery(todosQuery);
  return h(
    'ul',
    { 'data-status': status, 'data-fetching': String(isFetching) },
    (data ?? []).map((todo) => h('li', { key: todo.id }, todo.title)),
  );
}
