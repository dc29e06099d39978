import { act, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { clientFor, loopback, renderDevtools, settle, view } from './helpers';

// The Endpoints view with as many endpoints as intelligence keeps.

describe('Endpoints view: many endpoints', () => {
  it('draws a bounded number of rows: open circuits first, then the busiest', async () => {
    const server = await loopback(({ path }) =>
      path === '/down' ? { status: 503, body: {} } : { body: 1 },
    );
    const client = clientFor(server, { circuitBreaker: { failureThreshold: 1 } });
    for (let i = 0; i < 600; i += 100) {
      await Promise.all(Array.from({ length: 100 }, (_, j) => client.get(`/e${i + j}`)));
    }
    await Promise.all([client.get('/busy'), client.get('/busy', { cache: false })]);
    await client.get('/down').catch(() => {});
    renderDevtools(client, { initialView: 'endpoints' });
    await settle();
    const rows = view().querySelectorAll('tbody tr');
    expect(rows.length).toBe(200);
    expect(rows[0]!.getAttribute('data-endpoint')).toBe('GET /down');
    expect(within(rows[0] as HTMLElement).getByText('open')).toBeTruthy();
    expect(rows[1]!.getAttribute('data-endpoint')).toBe('GET /busy');
    expect(within(view()).getByText(/402 quieter endpoints not drawn/)).toBeTruthy();
    // A new request re-reads the table, still bounded.
    await act(() => client.get('/another'));
    await settle();
    expect(view().querySelectorAll('tbody tr').length).toBe(200);
  }, 30_000);
});

describe('Endpoints view: hostile paths', () => {
  it('a megabyte-long pathname is cut in its row', async () => {
    const server = await loopback(() => ({ body: 1 }));
    const client = clientFor(server);
    // The server refuses a URL that long (431); intelligence records the endpoint all the same.
    await client.get(`/${'p'.repeat(1_000_000)}`).catch(() => {});
    renderDevtools(client, { initialView: 'endpoints' });
    await settle();
    expect(view().querySelectorAll('tbody tr')).toHaveLength(1);
    expect(view().innerHTML.length).toBeLessThan(20_000);
  });
});
