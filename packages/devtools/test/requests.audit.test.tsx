import { act, screen, within } from '@testing-library/react';
import { describe, expect, it, vi } from 'vitest';
import {
  clientFor,
  loopback,
  panel,
  renderDevtools,
  selectEntry,
  settle,
  showView,
  view,
  watchConsoleErrors,
} from './helpers';

// The Requests view under load and with credentials in the requests.

describe('Requests view: many flights', () => {
  it('thousands of flights in progress: rows drawn stay bounded; joins and cancels land on their rows', async () => {
    const server = await loopback(() => ({ body: { ok: true }, delay: 60_000 }));
    const client = clientFor(server, { scheduler: { concurrency: 2 } });
    renderDevtools(client, { initialView: 'requests' });
    const stop = new AbortController();
    const n = 6_000;
    act(() => {
      for (let i = 0; i < n; i++) client.get(`/f/${i}`, { signal: stop.signal }).catch(() => {});
      // Every flight joined once: dedup events for keys from the oldest to the newest.
      for (let i = 0; i < n; i++) client.get(`/f/${i}`).catch(() => {});
    });
    await settle();
    expect(screen.getByRole('tab', { name: new RegExp(`Requests, ${n} in flight`) })).toBeTruthy();
    const rows = within(view()).getAllByRole('listitem');
    expect(rows.length).toBeLessThanOrEqual(200);
    expect(within(rows.at(-1)!).getByText('+1 joined')).toBeTruthy();
    act(() => client.cancelAll());
    await settle();
    expect(within(view()).getByText(/in flight ·/).textContent).toBe('0 in flight · 100 ended');
    // The work per event is counted, not timed, in recorder.test.ts.
    stop.abort();
  }, 60_000);

  it('segments that start in the same millisecond are drawn without React key clashes', async () => {
    const errors = watchConsoleErrors();
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      const server = await loopback(() => ({ body: { ok: true } }));
      const client = clientFor(server, { scheduler: { concurrency: 1 } });
      renderDevtools(client, { initialView: 'requests' });
      await act(() => Promise.all([client.get('/a'), client.get('/b')]));
      await settle();
      expect(within(view()).getAllByRole('listitem')).toHaveLength(2);
    } finally {
      vi.useRealTimers();
    }
    expect(errors).not.toHaveBeenCalled();
  });
});

describe('credentials', () => {
  it('the values of authorization and cookie headers are hidden in keys and in response headers', async () => {
    const server = await loopback(() => ({
      body: { me: 'ada' },
      headers: { 'set-cookie': 'session=s3cret-cookie', 'x-user': 'ada' },
      delay: 30,
    }));
    const client = clientFor(server);
    renderDevtools(client, { initialView: 'requests' });
    let pending!: Promise<unknown>;
    act(() => {
      pending = client.get('/me', {
        headers: {
          Authorization: 'Bearer s3cret-token',
          cookie: 'sid=s3cret-sid',
          'x-app': 'demo',
        },
      });
    });
    await settle();
    expect(panel().innerHTML).not.toMatch(/s3cret/);
    await act(() => pending);
    await settle();
    expect(panel().innerHTML).not.toMatch(/s3cret/);

    showView('Cache');
    const detail = selectEntry('/me.*');
    expect(panel().innerHTML).not.toMatch(/s3cret/);
    // What is there is still said: the header names, the other values.
    expect(within(detail).getByRole('heading', { level: 3 }).textContent).toContain(
      'authorization:hidden',
    );
    expect(within(detail).getByRole('heading', { level: 3 }).textContent).toContain('x-app:demo');
    expect(within(detail).getByText('set-cookie')).toBeTruthy();
    expect(within(detail).getByText(/^hidden \(\d+ characters\)$/)).toBeTruthy();
    expect(within(detail).getByText('ada', { selector: 'dd' })).toBeTruthy();
  });
});
