import { createClient } from '@keel/core';
import { useServerEvents } from '@keel/react';
import { act, waitFor, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { live, renderDevtools, view } from './helpers';

// The Live events view with big and hostile events.

function Listener({ url }: { url: string }) {
  useServerEvents(url, {});
  return null;
}

describe('Live events view: big and hostile events', () => {
  it('closed events cost their summary only; one opens on a click; markup stays text', async () => {
    const { hub, base } = await live();
    const client = createClient({ baseURL: base });
    renderDevtools(client, { initialView: 'events' }, <Listener url="/api/events" />);
    await waitFor(() => expect(hub.size).toBe(1));
    const stream = () =>
      within(view()).getByRole('region', { name: `Event stream ${base}/api/events` });
    await waitFor(() => expect(within(stream()).getByText('open')).toBeTruthy());

    // 20 events, each a list of 100 objects of 20 keys: 40,000 values in all.
    const big = Array.from({ length: 100 }, (_, i) =>
      Object.fromEntries(Array.from({ length: 20 }, (_, k) => [`k${k}`, `${i}-${k}`])),
    );
    const evil = '<img src=x onerror="window.__pwned=1">';
    await act(async () => {
      for (let i = 0; i < 19; i++) await hub.publish('bulk', big);
      await hub.publish(evil, { [evil]: evil });
    });
    await waitFor(() => expect(within(stream()).getByText('20 events')).toBeTruthy());
    expect(view().querySelectorAll('*').length).toBeLessThan(1_000);
    expect(view().querySelector('img')).toBeNull();

    const items = within(stream()).getAllByRole('listitem');
    expect(items[0]!.querySelector('summary strong')!.textContent).toBe(evil);
    act(() => (items[0]!.querySelector('summary') as HTMLElement).click());
    expect(within(items[0]!).getAllByText(JSON.stringify(evil)).length).toBeGreaterThan(0);
    act(() => (items[1]!.querySelector('summary') as HTMLElement).click());
    expect(within(items[1]!).getByText('Array(100)')).toBeTruthy();
    expect(view().querySelector('img')).toBeNull();
  }, 30_000);
});
