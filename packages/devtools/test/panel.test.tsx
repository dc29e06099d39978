import { createClient } from '@keel/core';
import { ClientProvider, useQuery } from '@keel/react';
import { act, fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import { StrictMode } from 'react';
import { describe, expect, it } from 'vitest';
import { KeelDevtools } from '../src/index';
import { KeelDevtools as ProductionDevtools } from '../src/production';
import {
  clientFor,
  debugOf,
  loopback,
  panel,
  renderDevtools,
  settle,
  showView,
  view,
} from './helpers';

function Todos() {
  const { data } = useQuery<string[]>('/todos');
  return <p data-testid="todos">{data?.join(',') ?? '…'}</p>;
}

describe('the toggle and the panel', () => {
  it('closed, it is one button and holds nothing on the client', async () => {
    const server = await loopback(() => ({ body: ['a'] }));
    const client = clientFor(server);
    const { rerender } = render(
      <ClientProvider client={client}>
        <Todos />
      </ClientProvider>,
    );
    await waitFor(() => expect(screen.getByTestId('todos').textContent).toBe('a'));
    const without = { ...debugOf(client) };
    rerender(
      <ClientProvider client={client}>
        <Todos />
        <KeelDevtools client={client} />
      </ClientProvider>,
    );
    const toggle = screen.getByRole('button', { name: 'keel devtools' });
    expect(toggle.getAttribute('aria-expanded')).toBe('false');
    expect(screen.queryByRole('region', { name: 'keel devtools' })).toBeNull();
    // Not one listener or subscription more than without the panel.
    expect(debugOf(client)).toEqual(without);
  });

  it('opens on a click with focus on its tab, and Escape closes it, giving focus back and every listener', async () => {
    const server = await loopback(() => ({ body: ['a'] }));
    const client = clientFor(server);
    renderDevtools(client, { initialIsOpen: false }, <Todos />);
    await waitFor(() => expect(screen.getByTestId('todos').textContent).toBe('a'));
    const closed = debugOf(client).listeners;
    act(() => screen.getByRole('button', { name: 'keel devtools' }).click());
    const cacheTab = within(panel()).getByRole('tab', { name: 'Cache' });
    expect(document.activeElement).toBe(cacheTab);
    expect(cacheTab.getAttribute('aria-selected')).toBe('true');
    expect(debugOf(client).listeners).toBeGreaterThan(closed);
    showView('Requests');
    showView('Endpoints');
    showView('Scheduler');
    showView('Live events');

    fireEvent.keyDown(document.activeElement!, { key: 'Escape' });
    await settle();
    expect(screen.queryByRole('region', { name: 'keel devtools' })).toBeNull();
    expect(document.activeElement).toBe(screen.getByRole('button', { name: 'keel devtools' }));
    expect(debugOf(client).listeners).toBe(closed);

    // The close button does the same.
    act(() => screen.getByRole('button', { name: 'keel devtools' }).click());
    act(() => within(panel()).getByRole('button', { name: 'Close keel devtools' }).click());
    await settle();
    expect(debugOf(client).listeners).toBe(closed);
  });

  it('tabs follow the arrow keys, Home and End, with one tab in the tab order', () => {
    const client = createClient({ baseURL: 'http://127.0.0.1:9' });
    renderDevtools(client);
    const tabs = within(panel()).getAllByRole('tab');
    expect(tabs.map((t) => t.textContent)).toEqual([
      'Cache',
      'Requests',
      'Endpoints',
      'Scheduler',
      'Live events',
    ]);
    const selected = () => tabs.find((t) => t.getAttribute('aria-selected') === 'true')!;
    fireEvent.keyDown(tabs[0]!, { key: 'ArrowRight' });
    expect(selected().textContent).toBe('Requests');
    expect(document.activeElement).toBe(selected());
    fireEvent.keyDown(selected(), { key: 'ArrowLeft' });
    fireEvent.keyDown(selected(), { key: 'ArrowLeft' });
    expect(selected().textContent).toBe('Live events');
    fireEvent.keyDown(selected(), { key: 'Home' });
    expect(selected().textContent).toBe('Cache');
    fireEvent.keyDown(selected(), { key: 'End' });
    expect(selected().textContent).toBe('Live events');
    expect(tabs.filter((t) => t.tabIndex === 0)).toEqual([selected()]);
    // The tab names its panel, and the panel its tab.
    expect(view().getAttribute('aria-labelledby')).toBe(selected().id);
    expect(selected().getAttribute('aria-controls')).toBe(view().id);
  });

  it('takes the client of the nearest ClientProvider when given none', async () => {
    const server = await loopback(() => ({ body: ['from provider'] }));
    const client = clientFor(server);
    render(
      <ClientProvider client={client}>
        <Todos />
        <KeelDevtools initialIsOpen />
      </ClientProvider>,
    );
    await waitFor(() => expect(within(view()).getByText('/todos')).toBeTruthy());
  });

  it('a theme and a corner are attributes the stylesheet keys on; the system scheme is the default', () => {
    const client = createClient({ baseURL: 'http://127.0.0.1:9' });
    const { container, rerender } = render(<KeelDevtools client={client} />);
    const root = container.querySelector('.kdt')!;
    expect(root.getAttribute('data-theme')).toBe('system');
    expect(root.getAttribute('data-position')).toBe('bottom-right');
    const css = container.querySelector('style')!.textContent!;
    expect(css).toContain("@media (prefers-color-scheme: dark) {\n  .kdt[data-theme='system']");
    rerender(<KeelDevtools client={client} theme="dark" position="top-left" />);
    expect(root.getAttribute('data-theme')).toBe('dark');
    expect(root.getAttribute('data-position')).toBe('top-left');
  });

  it('in StrictMode the open panel subscribes once and lets go of everything', async () => {
    const server = await loopback(() => ({ body: ['a'], delay: 50 }));
    const client = clientFor(server);
    const pending = client.get('/slow');
    const { unmount } = render(
      <StrictMode>
        <KeelDevtools client={client} initialIsOpen initialView="requests" />
      </StrictMode>,
    );
    await settle();
    // The flight in progress was seeded once, although effects ran twice.
    expect(within(view()).getAllByRole('listitem')).toHaveLength(1);
    await act(() => pending);
    unmount();
    await settle();
    expect(debugOf(client).listeners).toBe(0);
  });

  it('the /production entry is the same panel', () => {
    const client = createClient({ baseURL: 'http://127.0.0.1:9' });
    render(<ProductionDevtools client={client} initialIsOpen />);
    expect(panel()).toBeTruthy();
  });
});
