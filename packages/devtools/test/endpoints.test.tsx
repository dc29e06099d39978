import { act, screen, within } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { clientFor, loopback, manualClock, noop, renderDevtools, settle, view } from './helpers';

/** The row of an endpoint in the Endpoints table, as a map of column name to text. */
function cells(endpoint: string): Record<string, string> {
  const table = within(view()).getByRole('table', { name: 'Endpoints' });
  const names = within(table)
    .getAllByRole('columnheader')
    .map((th) => th.textContent ?? '');
  const row = table.querySelector(`tr[data-endpoint="${endpoint}"]`);
  if (row === null) throw new Error(`no row for ${endpoint}`);
  const values = [...row.children].map((cell) => cell.textContent ?? '');
  return Object.fromEntries(names.map((name, i) => [name, values[i] ?? '']));
}

afterEach(() => {
  vi.useRealTimers();
});

describe('Endpoints view', () => {
  it('a circuit opening shows in the render that follows it, with its countdown to half-open', async () => {
    // Only the client's clock moves: no real or faked global timer is involved.
    const clock = manualClock(5_000_000);
    const server = await loopback(() => ({ status: 503, body: {} }));
    const client = clientFor(server, {
      circuitBreaker: { failureThreshold: 2, resetTimeout: 10_000 },
      clock,
    });
    renderDevtools(client, { initialView: 'endpoints' });
    await act(() => client.get('/search').catch(noop));
    expect(cells('GET /search').Circuit).toBe('closed · 1 failed in a row');

    // The second failure opens it: no waiting, the next render says so.
    await act(() => client.get('/search').catch(noop));
    expect(cells('GET /search').Circuit).toBe('open · half-open in 10 s');
    expect(screen.getByRole('tab', { name: /Endpoints, 1 circuit open/ })).toBeTruthy();
    expect(within(view()).getByText('1 open · 0 half-open')).toBeTruthy();

    // The countdown moves with the client's clock, once a second of it.
    act(() => clock.advance(4000));
    expect(cells('GET /search').Circuit).toBe('open · half-open in 6.0 s');
    act(() => clock.advance(6000));
    expect(cells('GET /search').Circuit).toBe('open · next request probes');
  });

  it('counts requests, cache hits, failures and retries, with p50, p95 and a sparkline', async () => {
    const server = await loopback(({ path, nth }) =>
      path === '/users' && nth === 1 ? { status: 502, body: {} } : { body: [1], delay: 5 },
    );
    const client = clientFor(server, { retry: { attempts: 2, baseDelay: 10 } });
    renderDevtools(client, { initialView: 'endpoints' });
    expect(within(view()).getByText('No endpoint seen yet')).toBeTruthy();
    await act(async () => {
      await client.get('/users'); // a 502, then a success
      await client.get('/users'); // a cache hit
      await client.get('/users?page=2');
      await client.get('/missing', { retry: false }).catch(noop);
    });
    await settle();
    const users = cells('GET /users');
    expect(users).toMatchObject({
      Requests: '3',
      'Hit rate': '33%',
      Failures: '0',
      Retries: '1',
      Circuit: 'closed',
    });
    expect(users.p50).toMatch(/^\d+ ms$/);
    expect(users.p95).toMatch(/^\d+ ms$/);
    const spark = within(view()).getByRole('img', { name: /^Recent latencies of GET \/users/ });
    // Three attempts got an answer: the 502 and the two successes.
    expect(spark.getAttribute('aria-label')).toMatch(/: 3 samples, last \d+ ms, highest \d+ ms$/);
    expect(spark.querySelector('polyline')!.getAttribute('points')!.split(' ')).toHaveLength(3);
  });

  it('with the adaptive engine: the ceiling configured and in effect, with the reason', async () => {
    const server = await loopback(() => ({ body: {} }));
    const client = clientFor(server, {
      scheduler: { concurrency: 6 },
      adaptive: { enabled: true, concurrency: true },
    });
    renderDevtools(client, { initialView: 'endpoints' });
    await act(() => client.get('/feed'));
    await settle();
    const feed = cells('GET /feed');
    expect(feed.Ceiling).toContain('good 6 of 6');
    expect(feed.Ceiling).toContain(client.adaptive().endpoint('GET', '/feed')!.reason);
  });
});
