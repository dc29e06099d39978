import { type Client, createClient } from '@keel/core';
import { act, cleanup, render } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { collected } from '../../core/test/gc-helpers';
import { KeelDevtools } from '../src/index';
import { handWritten, selectEntry, settle } from './helpers';

// A panel that showed a client keeps nothing of it once unmounted: no module-level map, timer or
// listener of the panel's holds the client, so an app that drops a client (a test's, a user's
// after logout) gets its memory back.

/** A client with an entry in its cache and nothing in flight: nothing of its own holds it. */
function cachedClient(): Client {
  const client = createClient({ baseURL: 'http://127.0.0.1:9' });
  client.setCached('GET /kept', handWritten({ a: [1, 2, 3] }));
  return client;
}

describe('a client the panel showed', () => {
  it('without a panel it is collected (the control)', async () => {
    let client: Client | undefined = cachedClient();
    const ref = new WeakRef(client);
    client = undefined;
    expect(await collected(ref, createClient)).toBe(true);
  });

  // One render per view: a root re-rendered with other props keeps the old ones in this setup
  // (a plain component holding a client does too), so a swap is checked by counting listeners
  // and timers instead (chaos.audit.test.tsx).
  it.each(['cache', 'requests', 'endpoints', 'scheduler', 'events'] as const)(
    'shown on the %s view, then unmounted: it is collected',
    async (view) => {
      let client: Client | undefined = cachedClient();
      const ref = new WeakRef(client);
      render(<KeelDevtools client={client} initialIsOpen initialView={view} />);
      if (view === 'cache') selectEntry('/kept');
      await settle();
      // Unmounts, and lets go of the test's container.
      act(() => cleanup());
      client = undefined;
      expect(await collected(ref, createClient)).toBe(true);
    },
  );
});

describe('a client with a failed request the panel showed', () => {
  /** A client with an entry in its cache and a request that failed (nothing listens on port 9). */
  async function failedClient(): Promise<Client> {
    const client = createClient({ baseURL: 'http://127.0.0.1:9', retry: false });
    client.setCached('GET /kept', handWritten({ a: [1, 2, 3] }));
    await client.get('/down').catch(() => {});
    return client;
  }

  it('without a panel it is collected (the control)', async () => {
    let client: Client | undefined = await failedClient();
    const ref = new WeakRef(client);
    client = undefined;
    expect(await collected(ref, createClient)).toBe(true);
  });

  it.each(['cache', 'requests', 'endpoints', 'scheduler', 'events'] as const)(
    'shown on the %s view, then unmounted: it is collected',
    async (view) => {
      let client: Client | undefined = await failedClient();
      const ref = new WeakRef(client);
      render(<KeelDevtools client={client} initialIsOpen initialView={view} />);
      await settle();
      act(() => cleanup());
      client = undefined;
      expect(await collected(ref, createClient)).toBe(true);
    },
  );
});
