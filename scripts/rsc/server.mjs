// The Server Component side, run with `--conditions=react-server --import ./register.mjs`:
// a page that prefetches /todos (a queryOptions definition, queries.mjs) with @keel/core and
// hands the data to the client components through <HydrationBoundary state={dehydrate(client)}>,
// all imported from '@keel/react' as a Server Component imports them, and renders <KeelDevtools>
// (@keel/devtools) beside it. Writes the RSC payload to stdout.
import { createBaseClient } from '@keel/core';
import { KeelDevtools } from '@keel/devtools';
import { dehydrate, HydrationBoundary } from '@keel/react';
import { createElement as h } from 'react';
import { renderToPipeableStream } from 'react-server-dom-webpack/server';
import { Providers } from './providers.mjs';
import { todosQuery } from './queries.mjs';
import { Todos } from './todos.mjs';

const TODOS = [
  { id: 1, title: 'Write the docs' },
  { id: 2, title: 'Ship <keel>' },
];

async function Page() {
  const client = createBaseClient({
    baseURL: 'http://api.test',
    fetch: async () =>
      new Response(JSON.stringify(TODOS), { headers: { 'content-type': 'application/json' } }),
  });
  // The definition's `request`: its options without the hook's own, which the client refuses.
  await client.get(todosQuery.url, todosQuery.request);
  // The root layout's shape: the providers around the page, the devtools panel beside it.
  return h(
    Providers,
    null,
    h(HydrationBoundary, { state: dehydrate(client) }, h(Todos)),
    h(KeelDevtools),
  );
}

// Every client reference is `<module url>#<export>`: the module is its own id, no chunks.
const clientManifest = new Proxy(
  {},
  { get: (_, key) => (String(key).includes('#') ? undefined : { id: key, chunks: [] }) },
);
renderToPipeableStream(h(Page), clientManifest, {
  onError(error) {
    console.error(error);
    process.exitCode = 1;
  },
}).pipe(process.stdout);
