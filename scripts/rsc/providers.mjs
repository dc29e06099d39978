'use client';
// The app's client providers, as a Next.js App Router layout renders them: the browser's client
// is made here (a client is no prop a Server Component can pass). Its fetch counts calls: the
// hydrated page must make none.
import { createBaseClient } from '@keel/core';
import { ClientProvider } from '@keel/react';
import { createElement as h, useState } from 'react';

export const fetched = [];

export function Providers({ children }) {
  const [client] = useState(() =>
    createBaseClient({
      baseURL: 'http://api.test',
      fetch: async (input) => {
        fetched.push(String(input));
        throw new Error(`no request expected, got ${input}`);
      },
    }),
  );
  return h(ClientProvider, { client }, children);
}
