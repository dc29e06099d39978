import { type Client, createClient } from '@keel/core';
import { ClientProvider, useServerEvents } from '@keel/react';
import { act, fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import { Profiler, type ReactNode } from 'react';
import { describe, expect, it, vi } from 'vitest';
import { KeelDevtools } from '../src/index';
import {
  clientFor,
  devtoolsTree,
  handWritten,
  live,
  loopback,
  offlineClient,
  settle,
  showView,
  view,
  watchConsoleErrors,
} from './helpers';

// The panel under load (10,000 cache entries, flights starting and ending in bursts), torn down
// while events stream, two clients on one page, and a panel that is open before any traffic.

/** Counts the commits of what it wraps (React's Profiler: public, no reach into the panel). */
function counted(children: ReactNode) {
  const commits = { n: 0 };
  const tree = (
    <Profiler id="devtools" onRender={() => commits.n++}>
      {children}
    </Profiler>
  );
  return { tree, commits };
}

/**
 * The client's live listeners, counted through its public `on`: every listener added and not
 * yet removed (the panel must give back each one it takes).
 */
function countListeners(client: Client): () => number {
  let live = 0;
  const on = client.on.bind(client);
  vi.spyOn(client, 'on').mockImplementation(((name: never, listener: never) => {
    const off = on(name, listener);
    live++;
    let removed = false;
    return () => {
      if (!removed) {
        removed = true;
        live--;
      }
      off();
    };
  }) as typeof client.on);
  return () => live;
}

describe('a cache of 10,000 entries', () => {
  it('the Cache view draws a bounded page, a burst of writes is one render, the filter finds any entry', async () => {
    const client = offlineClient();
    for (let i = 0; i < 10_000; i++) client.setCached(`GET /items/${i}`, handWritten({ i }));
    const { tree, commits } = counted(devtoolsTree(client));
    render(tree);
    expect(within(view()).getByText(/10000 of 10000 entries/)).toBeTruthy();
    expect(view().querySelectorAll('tbody tr').length).toBeLessThanOrEqual(200);

    // 1,000 writes in one task: the view reads the cache again once, not 1,000 times.
    const before = commits.n;
    await act(async () => {
      for (let i = 0; i < 1_000; i++) client.setCached(`GET /more/${i}`, handWritten(i));
    });
    expect(commits.n - before).toBeLessThanOrEqual(2);
    expect(within(view()).getByText(/11000 of 11000 entries/)).toBeTruthy();

    fireEvent.change(within(view()).getByRole('searchbox'), { target: { value: '/items/9999' } });
    expect(within(view()).getByText(/1 of 11000 entries/)).toBeTruthy();
    act(() =>
      within(view())
        .getByRole('button', { name: /\/items\/9999$/ })
        .click(),
    );
    expect(
      within(view()).getByRole('region', { name: 'Cache entry GET /items/9999' }),
    ).toBeTruthy();
  }, 60_000);
});

describe('flights that change fast', () => {
  it('hundreds of flights starting and ending in bursts: renders are coalesced, the rows end right, nothing is kept past maxFlights', async () => {
    const server = await loopback(() => ({ body: { ok: true } }));
    const client = clientFor(server);
    const listeners = countListeners(client);
    const { tree, commits } = counted(devtoolsTree(client, { initialView: 'requests' }));
    const { unmount } = render(tree);
    const before = commits.n;
    // 300 flights started in one task, each with a request and a success event, and more.
    await act(() => Promise.all(Array.from({ length: 300 }, (_, i) => client.get(`/r/${i}`))));
    await settle();
    // Far fewer renders than the 600+ events (one per microtask burst at most, plus ticks).
    expect(commits.n - before).toBeLessThan(300);
    expect(within(view()).getByText(/in flight ·/).textContent).toBe('0 in flight · 100 ended');
    const rows = within(view()).getAllByRole('listitem');
    expect(rows).toHaveLength(100);
    expect(rows.every((row) => row.getAttribute('data-state') === 'done')).toBe(true);
    expect(listeners()).toBeGreaterThan(0);
    unmount();
    expect(listeners()).toBe(0);
  }, 30_000);
});

function Stream({ url }: { url: string }) {
  useServerEvents(url, {});
  return null;
}

describe('torn down while events stream', () => {
  it('unmounting the open panel while requests run and server events arrive: no error, every listener given back', async () => {
    const errors = watchConsoleErrors();
    const { hub, base } = await live();
    const client = createClient({ baseURL: base, retry: { attempts: 1 } });
    const listeners = countListeners(client);
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      const app = (withPanel: boolean, view: 'events' | 'requests') => (
        <ClientProvider client={client}>
          <Stream url="/api/events" />
          {withPanel ? <KeelDevtools client={client} initialIsOpen initialView={view} /> : null}
        </ClientProvider>
      );
      const { rerender, unmount } = render(app(true, 'events'));
      await waitFor(() => expect(hub.size).toBe(1));
      rerender(app(true, 'requests'));
      expect(listeners()).toBeGreaterThan(0);
      // Events keep coming and requests keep running while the panel goes away mid-stream.
      const publishing = (async () => {
        for (let i = 0; i < 30; i++) await hub.publish('tick', { i });
      })();
      const requests = Array.from({ length: 20 }, (_, i) =>
        client.get(`/api/gone?${i}`).catch(() => {}),
      );
      rerender(app(true, 'requests'));
      rerender(app(false, 'requests'));
      await act(() => Promise.all([publishing, ...requests]));
      await settle();
      // The panel held listeners while open; gone, it holds none (the stream keeps its own).
      expect(listeners()).toBe(0);
      // Open again on a live stream, then everything unmounts while it streams.
      rerender(app(true, 'events'));
      await waitFor(() =>
        expect(
          within(view()).getByRole('region', { name: `Event stream ${base}/api/events` }),
        ).toBeTruthy(),
      );
      const more = (async () => {
        for (let i = 0; i < 10; i++) await hub.publish('tock', { i });
      })();
      unmount();
      await act(() => more);
      await settle();
      expect(listeners()).toBe(0);
      expect(unhandled).toEqual([]);
      expect(errors).not.toHaveBeenCalled();
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  }, 30_000);
});

describe('two clients on one page', () => {
  it('two panels each show their own client, open and close on their own, and share no element id', async () => {
    const errors = watchConsoleErrors();
    const server = await loopback(() => ({ body: { ok: true } }));
    const a = clientFor(server);
    const b = clientFor(server);
    render(
      <>
        <KeelDevtools client={a} position="bottom-left" />
        <KeelDevtools client={b} position="bottom-right" />
      </>,
    );
    await act(async () => {
      await a.get('/only-a');
      await b.get('/only-b');
    });
    const toggles = screen.getAllByRole('button', { name: 'keel devtools' });
    expect(toggles).toHaveLength(2);
    act(() => toggles[0]!.click());
    act(() => screen.getByRole('button', { name: 'keel devtools' }).click());
    const panels = screen.getAllByRole('region', { name: 'keel devtools' });
    expect(panels).toHaveLength(2);
    const [first, second] = panels as [HTMLElement, HTMLElement];
    expect(within(first).getByRole('button', { name: /\/only-a$/ })).toBeTruthy();
    expect(within(first).queryByRole('button', { name: /\/only-b$/ })).toBeNull();
    expect(within(second).getByRole('button', { name: /\/only-b$/ })).toBeTruthy();
    expect(within(second).queryByRole('button', { name: /\/only-a$/ })).toBeNull();

    // No id is used twice (tabs and panels name each other by id).
    const ids = [...document.querySelectorAll('[id]')].map((element) => element.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const tab of within(second).getAllByRole('tab')) {
      expect(second.contains(document.getElementById(tab.getAttribute('aria-controls')!))).toBe(
        true,
      );
    }

    // Escape in the first closes the first only.
    fireEvent.keyDown(within(first).getAllByRole('tab')[0]!, { key: 'Escape' });
    await settle();
    expect(screen.getAllByRole('region', { name: 'keel devtools' })).toEqual([second]);
    expect(errors).not.toHaveBeenCalled();
  });
});

describe('a panel open before any traffic', () => {
  it('each view starts empty and fills in as the first requests and events arrive, without reopening', async () => {
    const { hub, base } = await live();
    const client = createClient({
      baseURL: base,
      retry: { attempts: 1 },
      scheduler: { concurrency: 4 },
    });
    const { rerender } = render(devtoolsTree(client));
    expect(within(view()).getByText('Nothing cached yet')).toBeTruthy();
    showView('Requests');
    expect(within(view()).getByText('No requests since the panel opened')).toBeTruthy();
    showView('Endpoints');
    expect(within(view()).getByText('No endpoint seen yet')).toBeTruthy();
    showView('Scheduler');
    expect(within(view()).getByRole('region', { name: 'Active attempts' }).textContent).toContain(
      '0 / 4',
    );
    showView('Live events');
    expect(within(view()).getByText('No server-event connection')).toBeTruthy();

    // The first connection shows up in the open view.
    rerender(devtoolsTree(client, {}, <Stream url="/api/events" />));
    await waitFor(() => expect(hub.size).toBe(1));
    await waitFor(() =>
      expect(
        within(view()).getByRole('region', { name: `Event stream ${base}/api/events` }),
      ).toBeTruthy(),
    );

    // The first request shows up in each view it concerns.
    showView('Endpoints');
    await act(() => client.get('/api/gone').catch(() => {}));
    await settle();
    expect(view().querySelector('tr[data-endpoint="GET /api/gone"]')).not.toBeNull();
    showView('Requests');
    // Recorded while another view was shown: the panel records from the moment it opens.
    expect(within(view()).getAllByRole('listitem')).toHaveLength(1);
    await act(() => client.get('/api/gone', { cache: false }).catch(() => {}));
    await settle();
    expect(within(view()).getAllByRole('listitem')).toHaveLength(2);
    showView('Scheduler');
    expect(within(view()).getByRole('region', { name: 'Totals' }).textContent).toContain(
      '2 completed',
    );
  }, 30_000);
});
