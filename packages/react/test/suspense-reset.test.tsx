/**
 * Suspense errors across boundary resets: after a reset, a render throws only the error of a
 * read that failed after that reset (never one from before it), each such error is held (no read
 * again) until the next reset or the grace period, and nothing stays once the boundary is gone.
 * The hooks' timers run on the client's clock (a FakeClock here).
 */
import { act, fireEvent, render, screen } from '@testing-library/react';
import { HttpResponse, http } from 'msw';
import { type ReactNode, StrictMode, Suspense } from 'react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { FakeClock } from '../../core/test/helpers';
import { QueryErrorBoundary, useQuery, useQueryErrorReset, useSuspenseQuery } from '../src/index';
import { storeFor } from '../src/query/store';
import { API, debugOf, deferred, flush, mswServer, testClient, until, wrapperFor } from './helpers';

const server = mswServer();

/**
 * GET `path` fails with 500 and the message `<name><n>` for its n-th request (answers `ok<n>`
 * from request `okFrom` on); a request waits for `gate` while one is set; `answered` counts
 * the answers sent.
 */
function failing(path: string, name: string, okFrom = Number.POSITIVE_INFINITY) {
  const state = { requests: 0, answered: 0, gate: null as Promise<void> | null };
  server.use(
    http.get(`${API}${path}`, async () => {
      const n = ++state.requests;
      if (state.gate) await state.gate;
      state.answered++;
      return n >= okFrom
        ? HttpResponse.json(`ok${n}`)
        : HttpResponse.json({ message: `${name}${n}` }, { status: 500 });
    }),
  );
  return state;
}

function Reader({ path }: { path: string }) {
  const { data } = useSuspenseQuery<string>(path);
  return <p>{data}</p>;
}

function LegacyReader({ path }: { path: string }) {
  const { data } = useQuery<string>(path, { suspense: true });
  return <p>{data}</p>;
}

/** Outside any boundary: observes the key without suspense. */
function Watcher({ path }: { path: string }) {
  const { error, status } = useQuery<string>(path);
  return <p data-testid="watcher">{`${status} ${messageOf(error)}`}</p>;
}

/** Hands out useQueryErrorReset()'s function (a reset from outside any boundary). */
function Resetter({ expose }: { expose: (reset: () => void) => void }) {
  expose(useQueryErrorReset());
  return null;
}

function messageOf(error: unknown): string {
  return String((error as { data?: { message?: string } } | null)?.data?.message);
}

/** A QueryErrorBoundary whose fallback names the error; every error it catches is logged. */
function Page({ children, caught }: { children: ReactNode; caught: string[] }) {
  return (
    <QueryErrorBoundary
      onError={(error) => caught.push(messageOf(error))}
      fallback={({ error, reset }) => (
        <button type="button" onClick={reset}>
          {`failed ${messageOf(error)}`}
        </button>
      )}
    >
      <Suspense fallback={<p>loading</p>}>{children}</Suspense>
    </QueryErrorBoundary>
  );
}

/**
 * Renders `children` in a Page (its boundaries) on a client with a FakeClock, in StrictMode if
 * asked, `outside` before the boundary; `caught` logs the errors the boundary caught.
 */
function renderPage(
  children: ReactNode,
  { strict = false, outside }: { strict?: boolean; outside?: ReactNode } = {},
) {
  const clock = new FakeClock();
  // No request timeout: only the hooks' timers are on the clock.
  const client = testClient({ clock, timeout: 0 });
  const caught: string[] = [];
  const page = (
    <>
      {outside}
      <Page caught={caught}>{children}</Page>
    </>
  );
  const { unmount } = render(strict ? <StrictMode>{page}</StrictMode> : page, {
    wrapper: wrapperFor(client),
  });
  return { clock, client, caught, unmount };
}

async function shows(text: string): Promise<void> {
  await until(() => screen.queryByText(text) !== null);
}

async function leavesNothing(client: ReturnType<typeof testClient>, clock: FakeClock) {
  // Past any check-in (5 s) and grace period (1 s).
  await act(() => clock.advance(6000));
  await flush();
  expect(storeFor(client).size).toBe(0);
  expect(clock.live).toBe(0);
  expect(debugOf(client)).toMatchObject({ subscriptions: 0, flights: 0 });
}

describe('suspense errors across boundary resets', () => {
  // React reports every error a boundary catches on the console: expected here.
  beforeEach(() => {
    vi.spyOn(console, 'error').mockImplementation(() => {});
  });
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it.each([
    ['useSuspenseQuery', Reader],
    ['useQuery({ suspense: true })', LegacyReader],
  ])(
    '%s: the same key failing again after a reset throws the new error, held until the next reset',
    async (_, Query) => {
      const api = failing('/a', 'a', 3);
      const { clock, client, caught, unmount } = renderPage(<Query path="/a" />);
      await shows('failed a1');
      fireEvent.click(screen.getByRole('button'));
      await shows('failed a2');
      expect(api.requests).toBe(2);
      // Held: later renders within the grace period throw a2 again without a read.
      await act(() => clock.advance(500));
      await flush();
      expect(api.requests).toBe(2);
      fireEvent.click(screen.getByRole('button'));
      await shows('ok3');
      expect(api.requests).toBe(3);
      expect(caught.every((m, i) => i === 0 || m >= caught[i - 1]!)).toBe(true);
      expect(new Set(caught)).toEqual(new Set(['a1', 'a2']));
      unmount();
      await leavesNothing(client, clock);
    },
  );

  it.each([
    ['', false],
    [' (StrictMode)', true],
  ])(
    'two keys failing in one boundary%s: each reset reads both again; no error from before it is thrown',
    async (_, strict) => {
      // Each key fails twice, then answers.
      const a = failing('/a', 'a', 3);
      const b = failing('/b', 'b', 3);
      let gate = deferred();
      b.gate = gate.promise;
      const { clock, client, caught, unmount } = renderPage(
        <>
          <Reader path="/a" />
          <Reader path="/b" />
        </>,
        { strict },
      );
      await shows('failed a1');
      await until(() => b.requests === 1);
      // /b fails while the boundary shows a1: nothing renders it, so nothing throws b1.
      gate.resolve();
      await until(() => b.answered === 1);
      await flush();
      expect(caught).toEqual(['a1']);
      // Both reads after the reset wait until both started, so both are seen to start.
      gate = deferred();
      a.gate = b.gate = gate.promise;
      fireEvent.click(screen.getByRole('button'));
      await until(() => a.requests === 2 && b.requests === 2);
      gate.resolve();
      await until(() => screen.queryByText(/failed (a2|b2)/) !== null);
      await until(() => a.answered === 2 && b.answered === 2);
      await flush();
      // The key that was not thrown failed after this reset too: the next reset reads it again,
      // as it does the shown one (neither error is thrown after it).
      fireEvent.click(screen.getByRole('button'));
      await until(() => screen.queryAllByText('ok3').length === 2);
      expect([a.requests, b.requests]).toEqual([3, 3]);
      expect(caught[0]).toBe('a1');
      expect(caught.slice(1).every((m) => m === 'a2' || m === 'b2')).toBe(true);
      unmount();
      await leavesNothing(client, clock);
    },
  );

  it('a key whose first read is in flight at the reset: its failure after the reset is thrown, unread again', async () => {
    const a = failing('/a', 'a', 2);
    const b = failing('/b', 'b', 2);
    const gate = deferred();
    b.gate = gate.promise;
    const { clock, client, caught, unmount } = renderPage(
      <>
        <Reader path="/a" />
        <Reader path="/b" />
      </>,
    );
    await shows('failed a1');
    await until(() => b.requests === 1);
    fireEvent.click(screen.getByRole('button'));
    await until(() => a.answered === 2);
    // /b's first read fails after the reset: that is the current error of /b.
    gate.resolve();
    await shows('failed b1');
    await flush();
    expect(b.requests).toBe(1);
    expect(caught).toEqual(['a1', 'b1']);
    fireEvent.click(screen.getByRole('button'));
    await until(() => screen.queryAllByText('ok2').length === 2);
    expect([a.requests, b.requests]).toEqual([2, 2]);
    unmount();
    await leavesNothing(client, clock);
  });

  it('a reset while the read after a reset is still in flight starts no other read; its failure is thrown', async () => {
    const api = failing('/a', 'a');
    let resetAll!: () => void;
    const { clock, client, caught, unmount } = renderPage(<Reader path="/a" />, {
      outside: (
        <>
          <Resetter expose={(reset) => (resetAll = reset)} />
          <Watcher path="/a" />
        </>
      ),
    });
    await shows('failed a1');
    const gate = deferred();
    api.gate = gate.promise;
    fireEvent.click(screen.getByRole('button'));
    await until(() => api.requests === 2);
    await shows('loading');
    // A second reset (another boundary's) while that read is in flight.
    act(() => resetAll());
    await flush();
    expect(api.requests).toBe(2);
    gate.resolve();
    api.gate = null;
    await shows('failed a2');
    expect(screen.getByTestId('watcher').textContent).toBe('error a2');
    expect(caught).toEqual(['a1', 'a2']);
    expect(api.requests).toBe(2);
    unmount();
    await leavesNothing(client, clock);
  });

  it('a reset, then the boundary unmounted while the read after it is in flight: nothing stays', async () => {
    const api = failing('/a', 'a');
    const { clock, client, caught, unmount } = renderPage(<Reader path="/a" />);
    await shows('failed a1');
    const gate = deferred();
    api.gate = gate.promise;
    fireEvent.click(screen.getByRole('button'));
    await until(() => api.requests === 2);
    unmount();
    await flush();
    gate.resolve();
    await leavesNothing(client, clock);
    expect(caught).toEqual(['a1']);
  });

  it('a reset, then unmounted at once: the released key leaves no entry, timer or interest', async () => {
    failing('/a', 'a');
    const { clock, client, unmount } = renderPage(<Reader path="/a" />);
    await shows('failed a1');
    act(() => {
      fireEvent.click(screen.getByRole('button'));
      unmount();
    });
    await flush();
    await leavesNothing(client, clock);
  });

  it('the error thrown after a reset is held for the grace period of the client clock, then goes', async () => {
    const api = failing('/a', 'a');
    const { clock, client } = renderPage(<Reader path="/a" />);
    await shows('failed a1');
    fireEvent.click(screen.getByRole('button'));
    await shows('failed a2');
    const store = storeFor(client);
    expect(store.size).toBe(1);
    await act(() => clock.advance(999));
    await flush();
    expect(store.size).toBe(1);
    await act(() => clock.advance(1));
    await flush();
    expect(store.size).toBe(0);
    expect(clock.live).toBe(0);
    expect(api.requests).toBe(2);
  });

  it.each([
    ['useSuspenseQuery', SuspenseSelecting],
    ['useQuery({ suspense: true })', LegacySelecting],
  ])('%s: a select that threw is run again after a reset, over a new read', async (_, Query) => {
    let reads = 0;
    server.use(http.get(`${API}/s`, () => HttpResponse.json(`s${++reads}`)));
    const { clock, client, caught, unmount } = renderPage(<Query />);
    await shows('failed select s1');
    // Held like any error: renders before the reset read nothing again.
    await act(() => clock.advance(500));
    await flush();
    expect(reads).toBe(1);
    fireEvent.click(screen.getByRole('button'));
    await shows('selected s2');
    expect(reads).toBe(2);
    expect(caught).toEqual(['select s1']);
    unmount();
    await leavesNothing(client, clock);
  });
});

/** Throws for the first answer only (data it cannot handle, fixed on the server since). */
function selectAllButS1(data: string): string {
  if (data === 's1') throw { data: { message: `select ${data}` } };
  return `selected ${data}`;
}

function SuspenseSelecting() {
  return <p>{useSuspenseQuery<string, string>('/s', { select: selectAllButS1 }).data}</p>;
}

function LegacySelecting() {
  return <p>{useQuery<string, string>('/s', { suspense: true, select: selectAllButS1 }).data}</p>;
}
