import { createClient, type DehydratedState } from '@keel/core';
import { hydrateRoot } from 'react-dom/client';
import { Root, STATE_GLOBAL } from './Root';

// A relative baseURL resolves against the page: the page and the API share the server. The
// scheduler and the adaptive engine change nothing at this traffic; they are on so that the
// devtools' Scheduler and Endpoints views have something to show.
const client = createClient({
  baseURL: '/api',
  retry: { attempts: 2, baseDelay: 250 },
  scheduler: { concurrency: 6 },
  adaptive: { enabled: true, concurrency: true },
});
const state = (window as unknown as Record<string, DehydratedState | undefined>)[STATE_GLOBAL];

// The server rendered the page (server/render.tsx): hydrate it with the data it fetched.
hydrateRoot(document.getElementById('root')!, <Root client={client} state={state ?? null} />);
