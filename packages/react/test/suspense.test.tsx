import { HttpError } from '@keel/core';
import { act, render, screen, waitFor } from '@testing-library/react';
import { delay, HttpResponse, http } from 'msw';
import { Component, type ReactNode, StrictMode, Suspense, useState } from 'react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  QueryErrorBoundary,
  queryOptions,
  useQuery,
  useQueryErrorReset,
  useSuspenseQuery,
} from '../src/index';
import { API, debugOf, flush, mswServer, testClient, wrapperFor } from './helpers';

const server = mswServer();

/** /teapot: 418 after `ms` until brewing, then the tea; counts requests. */
function teapot(ms = 0) {
  const state = { requests: 0, brewing: false };
  server.use(
    http.get(`${API}/teapot`, async () => {
      state.requests++;
      if (ms > 0) await delay(ms);
      return state.brewing
        ? HttpResponse.json('tea')
        : HttpResponse.json({ message: "I'm a teapot" }, { status: 418 });
    }),
  );
  return state;
}

function Teapot() {
  const { data } = useSuspenseQuery<string>('/teapot');
  return <p>{data.toUpperCase()}</p>;
}

function LegacyTeapot() {
  const { data } = useQuery<string>('/teapot', { suspense: true });
  return <p>{data!.toUpperCase()}</p>;
}

/** /kettle: 409 until the teapot is brewing, then water; counts requests. */
function kettle(tea: { brewing: boolean }) {
  const requests = { count: 0 };
  server.use(
    http.get(`${API}/kettle`, () => {
      requests.count++;
      return tea.brewing
        ? HttpResponse.json('water')
        : HttpResponse.json({ message: 'cold' }, { status: 409 });
    }),
  );
  return requests;
}

function Kettle() {
  const { data } = useSuspenseQuery<string>('/kettle');
  return <p>{data.toUpperCase()}</p>;
}

/** An error boundary of the application's own (not keel's). */
class Boundary extends Component<
  { children: ReactNode; onReset?: () => void },
  { error: unknown }
> {
  override state = { error: null as unknown };
  static getDerivedStateFromError(error: unknown) {
    return { error };
  }
  override render() {
    if (this.state.error === null) return this.props.children;
    const status = this.state.error instanceof HttpError ? this.state.error.status : 'other';
    return (
      <button
        type="button"
        onClick={() => {
          this.props.onReset?.();
          this.setState({ error: null });
        }}
      >
        failed: {String(status)} {(this.state.error as Error).name}
      </button>
    );
  }
}

/** A `<Suspense>` boundary with a `loading` fallback. */
const suspended = (children: ReactNode) => (
  <Suspense fallback={<p>loading</p>}>{children}</Suspense>
);

function KeyedPage({ expose }: { expose: (set: (n: number) => void) => void }) {
  const [attempt, set] = useState(0);
  expose(set);
  return (
    <QueryErrorBoundary resetKeys={[attempt]} fallback={() => <p>failed</p>}>
      {suspended(<Teapot />)}
    </QueryErrorBoundary>
  );
}

function OwnBoundaryPage() {
  const reset = useQueryErrorReset();
  return <Boundary onReset={reset}>{suspended(<Teapot />)}</Boundary>;
}

/** Two boundaries of the application's own: only the teapot's releases the errors. */
function TwoBoundariesPage() {
  const reset = useQueryErrorReset();
  return (
    <>
      <Boundary onReset={reset}>{suspended(<Teapot />)}</Boundary>
      <Boundary>{suspended(<Kettle />)}</Boundary>
    </>
  );
}

function Shown({ onStatus }: { onStatus: (status: string) => void }) {
  const result = useSuspenseQuery<string>('/teapot');
  onStatus(result.status);
  return <p>{result.data}</p>;
}

/** Throws for id 2; counts its renders. */
function FailsOnTwo({ id, counter }: { id: number; counter: { renders: number } }) {
  counter.renders++;
  if (id === 2) throw new Error('bad id');
  return <p>ok {id}</p>;
}

describe('suspense: a failed read', () => {
  // React reports every error a boundary catches on the console: expected here.
  beforeEach(() => {
    vi.spyOn(console, 'error').mockImplementation(() => {});
  });
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it.each([
    ['useSuspenseQuery', Teapot],
    ['useQuery({ suspense: true })', LegacyTeapot],
  ])(
    '%s: thrown to the boundary once, not read again in a loop, circuit closed',
    async (_, Query) => {
      const api = teapot(40);
      // The circuit breaker is on (5 failures open it): a loop would end in CircuitOpenError.
      const client = testClient();
      render(<Boundary>{suspended(<Query />)}</Boundary>, { wrapper: wrapperFor(client) });
      await screen.findByText('failed: 418 HttpError', undefined, { timeout: 3000 });
      // Several request durations later: still the one request, still the HTTP error.
      await new Promise((resolve) => setTimeout(resolve, 400));
      expect(api.requests).toBe(1);
      expect(screen.getByRole('button').textContent).toBe('failed: 418 HttpError');
      expect(client.circuitBreaker().status('GET', '/teapot').state).toBe('closed');
    },
  );

  it('<QueryErrorBoundary>: reset reads again and shows the data', async () => {
    const api = teapot();
    const client = testClient();
    render(
      <QueryErrorBoundary
        fallback={({ error, reset }) => (
          <button type="button" onClick={reset}>
            retry after {(error as HttpError).status}
          </button>
        )}
      >
        {suspended(<Teapot />)}
      </QueryErrorBoundary>,
      { wrapper: wrapperFor(client) },
    );
    const retry = await screen.findByText('retry after 418');
    expect(api.requests).toBe(1);
    api.brewing = true;
    act(() => retry.click());
    await screen.findByText('TEA');
    expect(api.requests).toBe(2);
  });

  it('<QueryErrorBoundary>: a change of resetKeys (or a remount) reads again', async () => {
    const api = teapot();
    const client = testClient();
    let setAttempt!: (n: number) => void;
    render(<KeyedPage expose={(set) => (setAttempt = set)} />, { wrapper: wrapperFor(client) });
    await screen.findByText('failed');
    api.brewing = true;
    act(() => setAttempt(1));
    await screen.findByText('TEA');
    expect(api.requests).toBe(2);
  });

  // A child that threw in the very update that changed resetKeys was reset at once (the boundary
  // saw `failed` and new keys): onReset ran unasked, the child threw again (a second onError),
  // and every held suspense error of the client was released.
  it('<QueryErrorBoundary>: an error thrown in the update that changes resetKeys shows the fallback, no reset', async () => {
    const onError = vi.fn();
    const onReset = vi.fn();
    const counter = { renders: 0 };
    const page = (id: number) => (
      <QueryErrorBoundary
        resetKeys={[id]}
        onError={onError}
        onReset={onReset}
        fallback={({ error }) => <p>fallback: {(error as Error).message}</p>}
      >
        <FailsOnTwo id={id} counter={counter} />
      </QueryErrorBoundary>
    );
    const quiet = vi.spyOn(console, 'error').mockImplementation(() => {});
    try {
      const view = render(page(1), { wrapper: wrapperFor(testClient()) });
      await screen.findByText('ok 1');
      counter.renders = 0;
      view.rerender(page(2));
      await screen.findByText('fallback: bad id');
      await flush();
      expect(onError).toHaveBeenCalledTimes(1);
      expect(onReset).not.toHaveBeenCalled();
      // Rendered (and retried once by React) for this update only, not again after a reset.
      const afterError = counter.renders;
      view.rerender(page(2));
      await flush();
      expect(counter.renders).toBe(afterError);
      // The next change of the keys resets it.
      view.rerender(page(3));
      await screen.findByText('ok 3');
      expect(onReset).toHaveBeenCalledTimes(1);
    } finally {
      quiet.mockRestore();
    }
  });

  it("an application's own boundary calls useQueryErrorReset()'s function in its reset", async () => {
    const api = teapot();
    const client = testClient();
    render(<OwnBoundaryPage />, { wrapper: wrapperFor(client) });
    const button = await screen.findByText('failed: 418 HttpError');
    api.brewing = true;
    act(() => button.click());
    await screen.findByText('TEA');
    expect(api.requests).toBe(2);
  });

  it('one reset releases every key whose error was thrown, in any boundary: each reads again once', async () => {
    const api = teapot();
    const kettleRequests = kettle(api);
    render(<TwoBoundariesPage />, { wrapper: wrapperFor(testClient()) });
    const teapotButton = await screen.findByText('failed: 418 HttpError');
    const kettleButton = await screen.findByText('failed: 409 HttpError');
    api.brewing = true;
    // The teapot's boundary releases the kettle's error too: the kettle's own boundary, which
    // releases nothing, then reads it again.
    act(() => teapotButton.click());
    await screen.findByText('TEA');
    act(() => kettleButton.click());
    await screen.findByText('WATER');
    expect([api.requests, kettleRequests.count]).toEqual([2, 2]);
  });

  it('a reset without releasing the error shows the kept error, without a request', async () => {
    const api = teapot();
    const client = testClient();
    render(<Boundary>{suspended(<Teapot />)}</Boundary>, { wrapper: wrapperFor(client) });
    const button = await screen.findByText('failed: 418 HttpError');
    api.brewing = true;
    act(() => button.click());
    await flush();
    expect(screen.getByRole('button').textContent).toBe('failed: 418 HttpError');
    expect(api.requests).toBe(1);
  });

  it('suspends until data arrives, in StrictMode with one request; nothing left after unmount', async () => {
    const api = teapot(10);
    api.brewing = true;
    const client = testClient();
    const { unmount } = render(
      <StrictMode>
        <Suspense fallback={<p>loading</p>}>
          <Teapot />
          <Teapot />
        </Suspense>
      </StrictMode>,
      { wrapper: wrapperFor(client) },
    );
    expect(screen.getByText('loading')).toBeTruthy();
    await waitFor(() => expect(screen.getAllByText('TEA')).toHaveLength(2));
    expect(api.requests).toBe(1);
    unmount();
    await flush();
    expect(debugOf(client)).toMatchObject({ subscriptions: 0, flights: 0 });
  });

  it('a refetch that fails over shown data keeps the data (status error), no throw', async () => {
    const api = teapot();
    api.brewing = true;
    const client = testClient();
    let status = '';
    render(
      <Suspense fallback={<p>loading</p>}>
        <Shown onStatus={(s) => (status = s)} />
      </Suspense>,
      { wrapper: wrapperFor(client) },
    );
    await screen.findByText('tea');
    api.brewing = false;
    act(() => {
      client.invalidate('/teapot');
    });
    await waitFor(() => expect(status).toBe('error'));
    expect(screen.getByText('tea')).toBeTruthy();
  });
});

// A shared definition made for a lazily enabled useQuery (`enabled: false`) or with a
// placeholder: useSuspenseQuery took both from it, so it rendered `data: undefined` (no request,
// no fallback) or the placeholder, where it promises to render only its key's data.
const lazyTea = queryOptions<string>('/teapot', { enabled: false });
const placeholderTea = queryOptions<string>('/teapot', { placeholderData: 'placeholder' });

function DefinedTeapot({ def, seen }: { def: typeof lazyTea; seen: unknown[] }) {
  const { data } = useSuspenseQuery(def);
  seen.push(data);
  return <p>{data.toUpperCase()}</p>;
}

describe("suspense: a definition's enabled and placeholderData", () => {
  it.each([
    ['enabled: false', lazyTea],
    ['placeholderData', placeholderTea],
  ])('%s: useSuspenseQuery still suspends, reads, and renders only data', async (_, def) => {
    const api = teapot(5);
    api.brewing = true;
    const seen: unknown[] = [];
    render(
      <Suspense fallback={<p>loading</p>}>
        <DefinedTeapot def={def} seen={seen} />
      </Suspense>,
      { wrapper: wrapperFor(testClient()) },
    );
    expect(screen.getByText('loading')).toBeTruthy();
    await screen.findByText('TEA');
    expect(api.requests).toBe(1);
    expect(seen.every((d) => d === 'tea')).toBe(true);
  });
});
