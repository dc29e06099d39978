import { act, waitFor, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { clientFor, loopback, renderDevtools, settle, view } from './helpers';

/** A card of the Scheduler view by its name. */
const card = (name: string) => within(view()).getByRole('region', { name });

describe('Scheduler view', () => {
  it('explains a client without a scheduler', async () => {
    const server = await loopback(() => ({ body: {} }));
    renderDevtools(clientFor(server), { initialView: 'scheduler' });
    expect(within(view()).getByText('No scheduler on this client')).toBeTruthy();
  });

  it('shows the slots in use, the lanes, the rate budget and paused groups as jobs move', async () => {
    // /first answers when the test says, the others not before the end.
    let answerFirst!: () => void;
    const heldFirst = new Promise<void>((resolve) => {
      answerFirst = resolve;
    });
    const server = await loopback(({ path }) =>
      path === '/first' ? { body: {}, held: heldFirst } : { body: {}, delay: 2000 },
    );
    const client = clientFor(server, {
      scheduler: {
        concurrency: 1,
        priority: true,
        hosts: { '127.0.0.1': 1 },
        rateLimit: { requests: 5, interval: 60_000 },
      },
    });
    renderDevtools(client, { initialView: 'scheduler' });
    const calls: Promise<unknown>[] = [];
    act(() => {
      calls.push(
        client.get('/first'),
        client.get('/urgent', { priority: 'high' }),
        client.get('/later', { priority: 'low' }),
        client.get('/thumbs', { scheduler: { group: 'thumbs' } }),
      );
      client.scheduler().pauseGroup('thumbs');
    });
    await settle();
    expect(card('Active attempts').textContent).toContain('1 / 1');
    expect(card('Queued jobs').textContent).toBe('Queued3high1normal1low1');
    expect(card('Rate budget').textContent).toContain('1 / 5');
    expect(card('Host caps').textContent).toContain('127.0.0.1: 1 / 1');
    expect(card('Paused groups').textContent).toContain('thumbs');

    // /first ends and the next job takes its slot (the lane the weighted cursor is on).
    answerFirst();
    await act(() => calls[0]!);
    await waitFor(() => expect(card('Queued jobs').textContent).toMatch(/^Queued2high/));
    expect(card('Active attempts').textContent).toContain('1 / 1');
    expect(card('Rate budget').textContent).toContain('2 / 5');
    expect(card('Totals').textContent).toContain('1 completed');

    act(() => within(card('Paused groups')).getByRole('button', { name: 'Resume thumbs' }).click());
    await settle();
    expect(within(view()).queryByRole('region', { name: 'Paused groups' })).toBeNull();
    await act(async () => {
      client.cancelAll();
      await Promise.allSettled(calls);
    });
    await settle();
    expect(card('Totals').textContent).toContain('3 cancelled');
    expect(card('Active attempts').textContent).toContain('0 / 1');
  });
});

describe('Scheduler view: many paused groups', () => {
  it('draws at most 200 paused groups, with a line counting the rest', async () => {
    const server = await loopback(() => ({ body: {} }));
    const client = clientFor(server, { scheduler: { concurrency: 1 } });
    renderDevtools(client, { initialView: 'scheduler' });
    act(() => {
      for (let i = 0; i < 250; i++) client.scheduler().pauseGroup(`g${i}`);
      // Any scheduler event re-reads the view.
      void client.get('/x').catch(() => {});
    });
    await settle();
    const groups = card('Paused groups');
    expect(within(groups).getAllByRole('button', { name: /^Resume / })).toHaveLength(200);
    expect(groups.textContent).toContain('… 50 more not drawn');
    act(() => within(groups).getByRole('button', { name: 'Resume g0' }).click());
    await settle();
    expect(within(card('Paused groups')).getAllByRole('button')).toHaveLength(200);
    expect(card('Paused groups').textContent).toContain('… 49 more not drawn');
    // ~2 s alone (250 rows drawn twice under jsdom): room for a loaded CI machine.
  }, 30_000);
});

describe('Scheduler view: many host caps', () => {
  it('draws at most 200 host caps, with a line counting the rest', async () => {
    const server = await loopback(() => ({ body: {} }));
    const hosts = Object.fromEntries(Array.from({ length: 250 }, (_, i) => [`h${i}.test`, 1]));
    const client = clientFor(server, { scheduler: { concurrency: 1, hosts } });
    renderDevtools(client, { initialView: 'scheduler' });
    const caps = card('Host caps');
    const drawn = [...caps.querySelectorAll('.kdt-mono')].map((host) => host.textContent);
    expect(drawn).toHaveLength(200);
    expect(drawn[0]).toBe('h0.test');
    expect(drawn.at(-1)).toBe('h199.test');
    expect(caps.textContent).toContain('… 50 more not drawn');
  }, 30_000);
});
