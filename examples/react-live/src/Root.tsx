import type { Client, DehydratedState } from '@keel/core';
import { KeelDevtools } from '@keel/devtools/production';
import { ClientProvider, HydrationBoundary } from '@keel/react';
import { StrictMode } from 'react';
import { App } from './App';

/**
 * The page with its client, the same on the server and in the browser: the server renders it
 * with the data it fetched and sends that data along (`state`); the browser hydrates it with the
 * same state, so the markup matches and no request is made for what the server already read.
 *
 * The devtools come from `@keel/devtools/production` because this page is a showcase: the plain
 * `@keel/devtools` entry renders nothing in a production build (`pnpm start` builds one). Closed,
 * the panel is a button, rendered on the server like the rest.
 */
export function Root({ client, state }: { client: Client; state: DehydratedState | null }) {
  return (
    <StrictMode>
      <ClientProvider client={client}>
        <HydrationBoundary state={state}>
          <App />
        </HydrationBoundary>
        <KeelDevtools />
      </ClientProvider>
    </StrictMode>
  );
}

/** Where the server puts the dehydrated cache for the browser (see server/render.tsx). */
export const STATE_GLOBAL = '__KEEL_STATE__';
