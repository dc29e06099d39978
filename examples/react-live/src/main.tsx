import { createClient } from '@keel/core';
import { ClientProvider } from '@keel/react';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App } from './App';

// Relative URLs resolve against the page's origin: the page and the API share the server.
const client = createClient({ retry: { attempts: 2 } });

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <ClientProvider client={client}>
      <App />
    </ClientProvider>
  </StrictMode>,
);
