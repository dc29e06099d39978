import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { act, waitFor, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { clientFor, loopback, noop, renderDevtools, settle, view } from './helpers';

// What issue #16 names for the Endpoints and Scheduler views that the other tests leave open:
// failures counted on their row, the adaptive ceiling once the engine lowered it (configured vs
// effective, the decision and its reason), and the scheduler's delayed count.

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

describe('Endpoints view: failures and a lowered ceiling', () => {
  it('failures count on the row; the ceiling the engine lowered shows as effective of configured, with its reason', async () => {
    const server = await loopback(({ path }) =>
      path === '/feed' ? { status: 503, body: {} } : { body: {} },
    );
    const client = clientFor(server, {
      circuitBreaker: { failureThreshold: 100 },
      scheduler: { concurrency: 6 },
      adaptive: {
        enabled: true,
        concurrency: true,
        outcomeWindow: 2,
        degradeSamples: 1,
        errorRatio: 0.5,
      },
    });
    renderDevtools(client, { initialView: 'endpoints' });
    await act(async () => {
      await client.get('/ok');
      await client.get('/feed').catch(noop);
      await client.get('/feed', { cache: false }).catch(noop);
    });
    await settle();
    const state = client.adaptive().endpoint('GET', '/feed')!;
    // The engine did lower it: what the panel must show.
    expect(state.effective).toBe(5);
    const feed = cells('GET /feed');
    expect(feed).toMatchObject({ Requests: '2', Failures: '2', Retries: '0' });
    expect(feed.Ceiling).toContain(`${state.health} 5 of 6`);
    expect(feed.Ceiling).toContain(state.reason);
    expect(state.reason).toMatch(/6 → 5/);
    expect(cells('GET /ok')).toMatchObject({
      Failures: '0',
      Ceiling: expect.stringContaining('6 of 6'),
    });
  });
});

describe('Scheduler view: delayed jobs', () => {
  it('a job parked for rate budget counts as delayed, and leaves the count when cancelled', async () => {
    const server = await loopback(() => ({ body: {} }));
    const client = clientFor(server, {
      scheduler: { concurrency: 4, rateLimit: { requests: 1, interval: 60_000 } },
    });
    renderDevtools(client, { initialView: 'scheduler' });
    const card = (name: string) => within(view()).getByRole('region', { name });
    const calls: Promise<unknown>[] = [];
    act(() => {
      calls.push(client.get('/a'), client.get('/b'));
    });
    await waitFor(() => expect(card('Delayed jobs').textContent).toMatch(/^Delayed1/));
    expect(card('Rate budget').textContent).toContain('1 / 1');
    await act(async () => {
      client.cancelAll();
      await Promise.allSettled(calls);
    });
    await settle();
    expect(card('Delayed jobs').textContent).toMatch(/^Delayed0/);
  });
});

describe('built on public API only', () => {
  it("the panel's sources import @keel/core and @keel/react by their public entries only", () => {
    const src = join(import.meta.dirname, '..', 'src');
    const imports = readdirSync(src, { recursive: true, encoding: 'utf8' })
      .filter((file) => /\.tsx?$/.test(file))
      .flatMap((file) =>
        [...readFileSync(join(src, file), 'utf8').matchAll(/from '(@keel\/[^']+)'/g)].map(
          (m) => m[1],
        ),
      );
    expect(new Set(imports)).toEqual(new Set(['@keel/core', '@keel/react']));
  });
});
