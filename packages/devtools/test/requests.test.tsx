import { act, screen, waitFor, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { clientFor, loopback, noop, renderDevtools, settle, view } from './helpers';

/** The Requests view's rows, newest first. */
function rows(): HTMLElement[] {
  return within(view()).queryAllByRole('listitem');
}

function rowOf(url: string): HTMLElement {
  const found = rows().find((r) => r.textContent?.includes(` ${url}`));
  if (!found)
    throw new Error(
      `no row for ${url}: ${rows()
        .map((r) => r.textContent)
        .join(' / ')}`,
    );
  return found;
}

const state = (row: HTMLElement) => row.getAttribute('data-state');

describe('Requests view', () => {
  it('a flight is active while it runs, counts the requests that joined it, and ends done', async () => {
    // The response waits for the test: the flight is in progress for as long as it looks.
    let answer!: () => void;
    const held = new Promise<void>((resolve) => {
      answer = resolve;
    });
    const server = await loopback(() => ({ body: { ok: true }, held }));
    const client = clientFor(server);
    renderDevtools(client, { initialView: 'requests' });
    expect(within(view()).getByText('No requests since the panel opened')).toBeTruthy();

    let first!: Promise<unknown>;
    act(() => {
      first = client.get('/slow');
    });
    await settle();
    expect(state(rowOf('/slow'))).toBe('active');
    expect(within(rowOf('/slow')).getByText(/running for/)).toBeTruthy();

    let joined!: Promise<unknown>;
    act(() => {
      joined = Promise.all([client.get('/slow'), client.get('/slow')]);
    });
    await settle();
    expect(within(rowOf('/slow')).getByText('+2 joined')).toBeTruthy();
    expect(rows()).toHaveLength(1); // joiners are no flights of their own
    // The Requests tab counts the flight in progress.
    expect(screen.getByRole('tab', { name: /Requests, 1 in flight/ })).toBeTruthy();

    answer();
    await act(() => Promise.all([first, joined]));
    await settle();
    expect(state(rowOf('/slow'))).toBe('done');
    expect(
      within(rowOf('/slow')).getByText(/^HTTP 200 in (\d+ ms|[\d.]+ s) · 1 attempt$/),
    ).toBeTruthy();
    expect(screen.getByRole('tab', { name: 'Requests' })).toBeTruthy();
  });

  it('a retry shows its reason and its delay, by backoff and by Retry-After', async () => {
    const server = await loopback(({ path, nth }) => {
      if (path === '/flaky') return nth === 1 ? { status: 503, body: {} } : { body: { ok: true } };
      return { status: 429, body: {}, headers: { 'retry-after': '3' } };
    });
    const client = clientFor(server, { retry: { attempts: 2, baseDelay: 1500 } });
    renderDevtools(client, { initialView: 'requests' });
    let flaky!: Promise<unknown>;
    act(() => {
      flaky = client.get('/flaky');
      client.get('/limited').catch(noop);
    });
    await waitFor(() => expect(state(rowOf('/flaky'))).toBe('retrying'));
    expect(rowOf('/flaky').textContent).toMatch(
      /attempt 1 got HTTP 503 Service Unavailable; retry in (1\.\d s|\d+ ms) \(waits 1\.5 s, backoff\)/,
    );
    await waitFor(() => expect(state(rowOf('/limited'))).toBe('retrying'));
    expect(rowOf('/limited').textContent).toMatch(
      /attempt 1 got HTTP 429 Too Many Requests; retry in (\d\.\d s|\d+ ms) \(waits 3\.0 s, Retry-After\)/,
    );
    // The failed attempt and the wait are drawn on the time axis.
    const track = within(rowOf('/flaky')).getByRole('img');
    expect(track.getAttribute('aria-label')).toBe('GET /flaky: attempt, retry-wait');
    expect(track.querySelector('[data-kind="attempt"]')!.getAttribute('data-outcome')).toBe(
      'failed',
    );

    // Without a scheduler the second attempt starts when the wait ends; then the flight is done.
    await act(() => flaky);
    await settle();
    expect(state(rowOf('/flaky'))).toBe('done');
    expect(within(rowOf('/flaky')).getByRole('img').getAttribute('aria-label')).toBe(
      'GET /flaky: attempt, retry-wait, attempt',
    );
    expect(rowOf('/flaky').textContent).toContain('2 attempts');
    client.cancelAll();
  });

  it('failed, cancelled and refused by an open circuit', async () => {
    const server = await loopback(({ path }) =>
      path === '/missing'
        ? { status: 404, body: {} }
        : path === '/down'
          ? { status: 500, body: {} }
          : { body: {}, delay: 5000 },
    );
    const client = clientFor(server, { circuitBreaker: { failureThreshold: 1 } });
    renderDevtools(client, { initialView: 'requests' });
    await act(() => client.get('/missing').catch(noop));
    await settle();
    expect(state(rowOf('/missing'))).toBe('failed');
    expect(rowOf('/missing').textContent).toContain('HTTP 404 Not Found');

    act(() => {
      const hang = client.get('/hang');
      hang.catch(noop);
      hang.cancel();
    });
    await settle();
    expect(state(rowOf('/hang'))).toBe('cancelled');

    await act(() => client.get('/down').catch(noop));
    await act(() => client.get('/down').catch(noop));
    await settle();
    const [refused] = rows();
    expect(state(refused!)).toBe('refused');
    expect(refused!.textContent).toContain('circuit open: refused without a request');
  });

  it('with a scheduler: queued behind the concurrency limit, parked for rate budget', async () => {
    // /a answers when the test says, the others not before the end.
    let answerA!: () => void;
    const heldA = new Promise<void>((resolve) => {
      answerA = resolve;
    });
    const server = await loopback(({ path }) =>
      path === '/a' ? { body: {}, held: heldA } : { body: {}, delay: 3000 },
    );
    const client = clientFor(server, {
      scheduler: { concurrency: 2, rateLimit: { requests: 2, interval: 60_000 } },
    });
    renderDevtools(client, { initialView: 'requests' });
    const calls: Promise<unknown>[] = [];
    act(() => {
      calls.push(client.get('/a'), client.get('/b'), client.get('/c'));
    });
    await settle();
    expect([state(rowOf('/a')), state(rowOf('/b')), state(rowOf('/c'))]).toEqual([
      'active',
      'active',
      'queued',
    ]);
    expect(within(rowOf('/c')).getByText(/waiting for a scheduler slot/)).toBeTruthy();
    // /a ends and frees a slot, but /a and /b used the budget of the window: /c is parked.
    answerA();
    await act(() => calls[0]!);
    await waitFor(() => expect(state(rowOf('/c'))).toBe('parked'));
    expect(within(rowOf('/c')).getByText(/no rate budget left/)).toBeTruthy();
    expect(within(rowOf('/c')).getByRole('img').getAttribute('aria-label')).toBe(
      'GET /c: queued, rate-wait',
    );
    await act(async () => {
      client.cancelAll();
      await Promise.allSettled(calls);
    });
    await settle();
    expect(state(rowOf('/c'))).toBe('cancelled');
  });

  it('flights already in progress when the panel opens are there, and Clear keeps them', async () => {
    let answer!: () => void;
    const held = new Promise<void>((resolve) => {
      answer = resolve;
    });
    const server = await loopback(({ path }) => ({
      body: {},
      held: path === '/long' ? held : undefined,
    }));
    const client = clientFor(server);
    await client.get('/before');
    const long = client.get('/long');
    renderDevtools(client, { initialView: 'requests' });
    await settle();
    expect(rows()).toHaveLength(1);
    expect(state(rowOf('/long'))).toBe('active');
    await act(() => client.get('/quick'));
    await settle();
    expect(rows()).toHaveLength(2);
    act(() => within(view()).getByRole('button', { name: 'Clear ended' }).click());
    await settle();
    expect(rows()).toHaveLength(1);
    answer();
    await act(() => long);
  });
});
