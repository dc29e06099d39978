import { createBaseClient, createClient } from '@keel/core';
import { useQuery } from '@keel/react';
import { act, render, screen, waitFor, within } from '@testing-library/react';
import { Activity } from 'react';
import { hydrateRoot, type Root } from 'react-dom/client';
import { renderToString } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import { KeelDevtools } from '../src/index';
import {
  clientFor,
  debugOf,
  handWritten,
  loopback,
  noop,
  offlineClient,
  panel,
  renderDevtools,
  settle,
  showView,
  view,
  watchConsoleErrors,
} from './helpers';

// The panel against a swapped client, repeated opening, a view that throws, clients without
// features, and the server render.

function Todos() {
  const { data } = useQuery<string[]>('/todos');
  return <p data-testid="todos">{data?.join(',') ?? '…'}</p>;
}

describe('the panel and its client', () => {
  it('handed another client while open, it records that one and lets go of the first', async () => {
    const server = await loopback(() => ({ body: { ok: true }, delay: 30 }));
    const first = clientFor(server);
    const second = clientFor(server);
    const idle = debugOf(first).listeners;
    const { rerender } = render(
      <KeelDevtools client={first} initialIsOpen initialView="requests" />,
    );
    expect(debugOf(first).listeners).toBeGreaterThan(idle);
    rerender(<KeelDevtools client={second} initialIsOpen initialView="requests" />);
    await settle();
    expect(debugOf(first).listeners).toBe(idle);

    await act(() => Promise.all([second.get('/on-second'), first.get('/on-first')]));
    await settle();
    expect(within(view()).getByText('/on-second')).toBeTruthy();
    expect(within(view()).queryByText('/on-first')).toBeNull();
  });

  it('opened and closed again and again on every view, it holds nothing afterwards', async () => {
    const server = await loopback(() => ({ body: ['a'] }));
    const client = clientFor(server, { scheduler: { concurrency: 2 } });
    renderDevtools(client, { initialIsOpen: false }, <Todos />);
    await waitFor(() => expect(screen.getByTestId('todos').textContent).toBe('a'));
    const closed = { ...debugOf(client) };
    for (let round = 0; round < 3; round++) {
      for (const name of ['Cache', 'Requests', 'Endpoints', 'Scheduler', 'Live events']) {
        act(() => screen.getByRole('button', { name: 'keel devtools' }).click());
        showView(name);
        await act(() => client.get(`/r${round}`));
        act(() => within(panel()).getByRole('button', { name: 'Close keel devtools' }).click());
      }
    }
    await settle();
    const after = debugOf(client);
    expect(after.listeners).toBe(closed.listeners);
    expect(after.subscriptions).toBe(closed.subscriptions);
  }, 30_000);

  it('hidden in an <Activity> and shown again, a flight that ended meanwhile is not left in flight', async () => {
    let release = noop;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const server = await loopback(() => ({ body: { ok: true }, held }));
    const client = clientFor(server);
    const page = (mode: 'visible' | 'hidden') => (
      <Activity mode={mode}>
        <KeelDevtools client={client} initialIsOpen initialView="requests" />
      </Activity>
    );
    const idle = { ...debugOf(client) };
    const { rerender } = render(page('visible'));
    const call = client.get('/slow');
    await settle();
    const counts = () => view().querySelector('.kdt-toolbar span')!.textContent;
    expect(counts()).toBe('1 in flight · 0 ended');
    rerender(page('hidden'));
    // Hidden, it holds nothing on the client.
    expect(debugOf(client).listeners).toBe(idle.listeners);
    expect(debugOf(client).subscriptions).toBe(idle.subscriptions);
    release();
    await act(() => call);
    rerender(page('visible'));
    await settle();
    expect(counts()).toBe('0 in flight · 1 ended');
  });

  it('hidden in an <Activity> and shown again, a flight that moved on meanwhile shows where it is, one that succeeded says its status was not seen', async () => {
    const releases = new Map<string, () => void>();
    const server = await loopback(({ path }) => ({
      body: { ok: true },
      held: new Promise<void>((resolve) => {
        releases.set(path, resolve);
      }),
    }));
    const client = clientFor(server, { scheduler: { concurrency: 1 } });
    const page = (mode: 'visible' | 'hidden') => (
      <Activity mode={mode}>
        <KeelDevtools client={client} initialIsOpen initialView="requests" />
      </Activity>
    );
    const { rerender } = render(page('visible'));
    const first = client.get('/first');
    const second = client.get('/second');
    await settle();
    const row = (path: string) =>
      within(view())
        .getAllByRole('listitem')
        .find((li) => li.textContent!.includes(` ${path}`))!;
    expect(row('/first').getAttribute('data-state')).toBe('active');
    expect(row('/second').getAttribute('data-state')).toBe('queued');
    rerender(page('hidden'));
    // While hidden, /first answers and /second gets the slot.
    await waitFor(() => expect(releases.has('/first')).toBe(true));
    releases.get('/first')!();
    await act(() => first);
    await waitFor(() => expect(releases.has('/second')).toBe(true));
    rerender(page('visible'));
    await settle();
    // No event came since it was shown: the rows say where the flights are now.
    expect(row('/second').getAttribute('data-state')).toBe('active');
    expect(row('/first').getAttribute('data-state')).toBe('done');
    expect(row('/first').textContent).toContain(
      'succeeded while the panel was hidden (HTTP status not seen)',
    );
    releases.get('/second')!();
    await act(() => second);
    await settle();
    expect(row('/second').textContent).toContain('HTTP 200');
  });

  it('a view that throws on data it did not foresee says so; the app and the panel go on', () => {
    const errors = watchConsoleErrors();
    const client = offlineClient();
    client.setCached('GET /fine', handWritten(1));
    // What the views read is read defensively; a controller that throws (a fault no view
    // foresaw, injected here) stands for whatever is left.
    Object.defineProperty(client, 'intelligence', {
      value: () => {
        throw new Error('snapshot exploded');
      },
    });
    render(
      <>
        <p>the app</p>
        <KeelDevtools client={client} initialIsOpen initialView="endpoints" />
      </>,
    );
    expect(within(view()).getByRole('alert').textContent).toContain('snapshot exploded');
    expect(screen.getByText('the app')).toBeTruthy();
    showView('Cache'); // the other views still work
    expect(within(view()).getByRole('button', { name: /\/fine$/ })).toBeTruthy();
    expect(errors).toHaveBeenCalled();
  });
});

describe('clients without features, and no DOM', () => {
  it('a base client with no feature: every view shows its state after real traffic', async () => {
    const server = await loopback(({ path }) =>
      path === '/fail' ? { status: 500, body: { no: 1 } } : { body: { ok: true } },
    );
    const client = createBaseClient({ baseURL: server.url, retry: { attempts: 1 } });
    renderDevtools(client, { initialView: 'requests' });
    await act(async () => {
      await client.get('/ok');
      await client.get('/fail').catch(() => {});
    });
    await settle();
    expect(within(view()).getAllByRole('listitem')).toHaveLength(2);
    showView('Endpoints');
    expect(within(view()).getByText('No endpoint seen yet')).toBeTruthy();
    showView('Scheduler');
    expect(within(view()).getByText('No scheduler on this client')).toBeTruthy();
    showView('Live events');
    expect(within(view()).getByText('No server-event connection')).toBeTruthy();
    showView('Cache');
    expect(within(view()).getByRole('button', { name: /\/ok$/ })).toBeTruthy();
  });

  it('renders on the server, asked open on any view, as its toggle, subscribing to nothing', () => {
    const client = offlineClient();
    client.setCached('GET /ssr', handWritten([1]));
    const idle = { ...debugOf(client) };
    const closed = renderToString(<KeelDevtools client={client} />);
    for (const initialView of ['cache', 'requests', 'endpoints', 'scheduler', 'events'] as const) {
      const html = renderToString(
        <KeelDevtools client={client} initialIsOpen initialView={initialView} />,
      );
      expect(html).toBe(closed);
    }
    expect(debugOf(client)).toEqual(idle);
  });

  it('asked open, server markup hydrates without a mismatch, then the panel opens', async () => {
    let now = 1_000_000;
    const clock = {
      now: () => now,
      setTimeout: (fn: () => void, ms: number) => setTimeout(fn, ms),
      clearTimeout: (handle: unknown) => clearTimeout(handle as ReturnType<typeof setTimeout>),
    };
    const client = createClient({ baseURL: 'http://127.0.0.1:9', clock });
    client.setCached('GET /ssr', handWritten([1]));
    const host = document.createElement('div');
    document.body.append(host);
    host.innerHTML = renderToString(<KeelDevtools client={client} initialIsOpen />);
    now += 1_500; // the browser hydrates later: every age differs from the server's
    const recoverable: unknown[] = [];
    const errors = watchConsoleErrors();
    let root!: Root;
    await act(async () => {
      root = hydrateRoot(host, <KeelDevtools client={client} initialIsOpen />, {
        onRecoverableError: (error) => recoverable.push(error),
      });
    });
    try {
      expect(recoverable).toEqual([]);
      expect(errors).not.toHaveBeenCalled();
      expect(within(host).getByRole('region', { name: 'keel devtools' })).toBeTruthy();
      expect(within(host).getByRole('button', { name: /\/ssr$/ })).toBeTruthy();
    } finally {
      act(() => root.unmount());
      host.remove();
    }
  });
});

describe('props', () => {
  it('a wrong value is a RangeError naming the prop; a wrong type a TypeError', () => {
    const client = offlineClient();
    watchConsoleErrors(); // React reports the render error too
    const cases: [object, ErrorConstructor, string][] = [
      [
        { maxFlights: -1 },
        RangeError,
        'keel: KeelDevtools `maxFlights` must be a non-negative integer, got -1',
      ],
      [
        { maxFlights: 1.5 },
        RangeError,
        'keel: KeelDevtools `maxFlights` must be a non-negative integer, got 1.5',
      ],
      [
        { maxFlights: Number.NaN },
        RangeError,
        'keel: KeelDevtools `maxFlights` must be a non-negative integer, got NaN',
      ],
      [
        { maxFlights: '10' },
        TypeError,
        'keel: KeelDevtools `maxFlights` must be a number, got "10"',
      ],
      // A value of the wrong type is a TypeError for every prop (issue #14: everywhere).
      [
        { initialView: 5 },
        TypeError,
        "keel: KeelDevtools `initialView` must be one of 'cache', 'requests', 'endpoints', 'scheduler', 'events', got 5",
      ],
      [
        { position: null },
        TypeError,
        "keel: KeelDevtools `position` must be one of 'bottom-right', 'bottom-left', 'top-right', 'top-left', got null",
      ],
      [
        { theme: { dark: true } },
        TypeError,
        "keel: KeelDevtools `theme` must be one of 'system', 'light', 'dark', got an object",
      ],
      [
        { initialView: 'network' },
        RangeError,
        "keel: KeelDevtools `initialView` must be one of 'cache', 'requests', 'endpoints', 'scheduler', 'events', got \"network\"",
      ],
      [
        { position: 'center' },
        RangeError,
        "keel: KeelDevtools `position` must be one of 'bottom-right', 'bottom-left', 'top-right', 'top-left', got \"center\"",
      ],
      [
        { theme: 'blue' },
        RangeError,
        "keel: KeelDevtools `theme` must be one of 'system', 'light', 'dark', got \"blue\"",
      ],
    ];
    for (const [props, type, message] of cases) {
      const attempt = () => render(<KeelDevtools client={client} {...props} />);
      expect(attempt).toThrow(type);
      expect(attempt).toThrow(message);
    }
    // Infinity keeps every flight.
    render(<KeelDevtools client={client} maxFlights={Number.POSITIVE_INFINITY} initialIsOpen />);
    expect(panel()).toBeTruthy();
  });

  it('a client that is not one is a TypeError naming the prop, closed as well as open', () => {
    watchConsoleErrors(); // React reports the render error too
    const message =
      'keel: KeelDevtools `client` must be a client made by createClient or createBaseClient, got an object';
    // Closed, the panel drew its button and failed only when opened, taking the app down then.
    for (const initialIsOpen of [false, true]) {
      const attempt = () =>
        render(<KeelDevtools client={{ get: noop } as never} initialIsOpen={initialIsOpen} />);
      expect(attempt).toThrow(TypeError);
      expect(attempt).toThrow(message);
    }
  });

  it('a tag given twice is drawn twice, without React key clashes', () => {
    const errors = watchConsoleErrors();
    const client = offlineClient();
    client.setCached(client.resolve('GET', '/twice', { tags: ['x', 'x'] }), handWritten(1));
    renderDevtools(client);
    expect(within(view()).getAllByText('x')).toHaveLength(2);
    expect(errors).not.toHaveBeenCalled();
  });
});
