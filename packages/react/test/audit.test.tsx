/**
 * Black-box checks of @keel/react as a user sees it, against real loopback servers: a plain
 * node:http API (so a test sees each request arrive and each socket close) and a @keel/server
 * event hub for server-sent events. Written from the client spec, packages/react/README.md and
 * issues #12 / #13, to pin rules the other test files leave open.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type Client, createClient, isCircuitOpenError, isHttpError } from '@keel/core';
import { type App, createApp, createEventHub, type EventHub } from '@keel/server';
import { act, render, renderHook, screen, waitFor } from '@testing-library/react';
import { StrictMode, Suspense, startTransition, use, useState } from 'react';
import { hydrateRoot } from 'react-dom/client';
import { renderToString } from 'react-dom/server';
import { afterEach, describe, expect, it, onTestFinished, vi } from 'vitest';
import { FakeClock } from '../../core/test/helpers';
import {
  ClientProvider,
  dehydrate,
  HydrationBoundary,
  inspectServerEvents,
  keepPreviousData,
  QueryErrorBoundary,
  type QueryResult,
  queryOptions,
  type ServerEventsOptions,
  useInfiniteQuery,
  useMutation,
  useQueries,
  useQuery,
  useServerEvents,
  useSuspenseQuery,
  watchServerEvents,
} from '../src/index';
import { storeFor } from '../src/query/store';
import { channelCount } from '../src/server-events/channel';
import { debugOf, flush, readAll, until, wrapperFor } from './helpers';

// ── a plain node:http API ──────────────────────────────────────────────────────────────────

interface Hit {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  /** Set when the client closed the socket before the answer was sent. */
  aborted: boolean;
}

type Handler = (req: IncomingMessage, res: ServerResponse, hit: Hit) => void | Promise<void>;

interface Api {
  base: string;
  hits: Hit[];
  /** Route by `METHOD /path` (query ignored); a missing route answers 404. */
  routes: Map<string, Handler>;
  count(method: string, path: string): number;
}

const servers: Server[] = [];
const apps: { app: App; http: Server }[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
  const closing = apps.map(({ app }) => app.close());
  for (const { http } of apps.splice(0)) http.closeAllConnections();
  await Promise.all(closing);
});

async function api(): Promise<Api> {
  const state: Api = {
    base: '',
    hits: [],
    routes: new Map(),
    count: (method, path) =>
      state.hits.filter((h) => h.method === method && h.url.split('?')[0] === path).length,
  };
  const server = createServer((req, res) => {
    const hit: Hit = { method: req.method!, url: req.url!, headers: req.headers, aborted: false };
    state.hits.push(hit);
    res.on('close', () => {
      if (!res.writableEnded) hit.aborted = true;
    });
    const handler = state.routes.get(`${req.method} ${req.url!.split('?')[0]}`);
    if (handler === undefined) {
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"not found"}');
      return;
    }
    void handler(req, res, hit);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  servers.push(server);
  state.base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return state;
}

function json(res: ServerResponse, status: number, body: unknown): void {
  if (res.destroyed) return;
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

/** A promise with its resolve function. */
function gate() {
  let open!: () => void;
  const promise = new Promise<void>((r) => {
    open = r;
  });
  return { promise, open };
}

/** A GET route that never answers; the promise settles when a request reaches it. */
function hang(a: Api, path: string): Promise<void> {
  const arrived = gate();
  a.routes.set(`GET ${path}`, () => arrived.open());
  return arrived.promise;
}

function clientOf(base: string, extra: Parameters<typeof createClient>[0] = {}): Client {
  return createClient({ baseURL: base, retry: { attempts: 1 }, ...extra });
}

function Reader({ i }: { i: number }) {
  const { data } = useQuery<string[]>('/shared');
  return <span data-testid={`r${i}`}>{data?.[0] ?? '-'}</span>;
}

function TodoList() {
  const { data } = useQuery<string[]>('/todos');
  return <p data-testid="list">{data?.join(',') ?? '-'}</p>;
}
function Add() {
  const add = useMutation<unknown, { t: string }>('POST', '/todos');
  return (
    <button type="button" onClick={() => add.mutate({ t: 'b' })}>
      add
    </button>
  );
}
function Page() {
  const [show, setShow] = useState(true);
  return (
    <>
      <TodoList />
      {show && <Add />}
      <button type="button" onClick={() => setShow(false)}>
        hide
      </button>
    </>
  );
}
function SuspenseReader() {
  const { data } = useSuspenseQuery<string[]>('/s');
  return <p data-testid="s">{data.join(',')}</p>;
}

function SuspenseTree() {
  return (
    <Suspense fallback={<p>loading</p>}>
      <SuspenseReader />
    </Suspense>
  );
}

function PlainReader() {
  const { status } = useQuery<string[]>('/s');
  return <p data-testid="plain">{status}</p>;
}

function Hydrated() {
  const { data, isFetching } = useQuery<string[]>('/todos');
  return (
    <p>
      {data?.join(',') ?? 'none'}
      {isFetching ? '…' : ''}
    </p>
  );
}

function KeyReaderA() {
  const { data } = useQuery<string[]>('/handoff');
  return <p data-testid="a">{data?.join(',') ?? '-'}</p>;
}

function KeyReaderB() {
  const { data } = useQuery<string[]>('/handoff');
  return <p data-testid="b">{data?.join(',') ?? '-'}</p>;
}

function ManualReader({ expose }: { expose: (r: QueryResult<{ n: number }>) => void }) {
  const result = useQuery<{ n: number }>('/manual', { enabled: false });
  expose(result);
  return <p data-testid="manual">{result.data?.n ?? '-'}</p>;
}

function AutoReader() {
  const { data } = useQuery<{ n: number }>('/manual');
  return <p data-testid="auto">{data?.n ?? '-'}</p>;
}

function Who() {
  const { data } = useQuery<string>('/who');
  return <p data-testid="who">{data ?? '-'}</p>;
}

function InlineFeed({ round, seen }: { round: number; seen: string[] }) {
  // New handler, options and headers objects every render, as inline JSX makes them.
  const { status } = useServerEvents(
    '/events',
    { tick: (data: { n: number }) => seen.push(`${round}:${data.n}`) },
    { headers: { 'x-tab': 't1' } },
  );
  return <p data-testid="status">{status}</p>;
}

// ── useQuery ───────────────────────────────────────────────────────────────────────────────

describe('useQuery against a real server', () => {
  it('a key change shows the new key pending (no data of the old key), then its data; back to a cached key at once', async () => {
    const a = await api();
    const release = gate();
    a.routes.set('GET /item', async (req, res) => {
      const id = new URL(req.url!, a.base).searchParams.get('id');
      if (id === '2') await release.promise;
      json(res, 200, { id });
    });
    const client = clientOf(a.base);
    const { result, rerender } = renderHook(
      ({ id }: { id: number }) => readAll(useQuery<{ id: string }>('/item', { params: { id } })),
      { wrapper: wrapperFor(client), initialProps: { id: 1 } },
    );
    await waitFor(() => expect(result.current.data).toEqual({ id: '1' }));
    rerender({ id: 2 });
    expect(result.current.data).toBeUndefined();
    expect(result.current.status).toBe('pending');
    expect(result.current.isLoading).toBe(true);
    release.open();
    await waitFor(() => expect(result.current.data).toEqual({ id: '2' }));
    expect(result.current.status).toBe('success');
    rerender({ id: 1 });
    // Fresh in the cache: shown in the same render, no request.
    expect(result.current.data).toEqual({ id: '1' });
    expect(result.current.status).toBe('success');
    await flush();
    expect(a.count('GET', '/item')).toBe(2);
  });

  it('an error then a successful refetch: error cleared, status success', async () => {
    const a = await api();
    let fail = true;
    a.routes.set('GET /x', (_req, res) => json(res, fail ? 500 : 200, fail ? { e: 1 } : [1]));
    const client = clientOf(a.base);
    const { result } = renderHook(() => readAll(useQuery<number[]>('/x')), {
      wrapper: wrapperFor(client),
    });
    await waitFor(() => expect(result.current.status).toBe('error'));
    expect(isHttpError(result.current.error) && result.current.error.status).toBe(500);
    expect(result.current.data).toBeUndefined();
    expect(result.current.isFetching).toBe(false);
    fail = false;
    let settled: QueryResult<number[]> | undefined;
    await act(async () => {
      settled = await result.current.refetch();
    });
    expect(settled!.data).toEqual([1]);
    expect(settled!.status).toBe('success');
    await waitFor(() => expect(result.current.status).toBe('success'));
    expect(result.current.error).toBeNull();
    expect(result.current.data).toEqual([1]);
  });

  it('a failed refetch keeps the data with status error; the next success clears the error', async () => {
    const a = await api();
    let status = 200;
    let n = 0;
    a.routes.set('GET /x', (_req, res) => json(res, status, { n: ++n }));
    const client = clientOf(a.base);
    const { result } = renderHook(() => readAll(useQuery<{ n: number }>('/x')), {
      wrapper: wrapperFor(client),
    });
    await waitFor(() => expect(result.current.data).toEqual({ n: 1 }));
    status = 500;
    await act(async () => {
      await result.current.refetch();
    });
    await waitFor(() => expect(result.current.status).toBe('error'));
    expect(result.current.data).toEqual({ n: 1 });
    expect(result.current.isError).toBe(true);
    status = 200;
    act(() => {
      client.invalidate('/x');
    });
    await waitFor(() => expect(result.current.data).toEqual({ n: 3 }));
    expect(result.current.status).toBe('success');
    expect(result.current.error).toBeNull();
  });

  it('unmounting mid-request closes the socket; the server sees the client leave', async () => {
    const a = await api();
    const arrived = hang(a, '/slow');
    const client = clientOf(a.base);
    const { unmount } = renderHook(() => useQuery('/slow'), { wrapper: wrapperFor(client) });
    await arrived;
    unmount();
    await waitFor(() => expect(a.hits[0]!.aborted).toBe(true));
    await flush();
    expect(debugOf(client).inflight).toBe(0);
    expect(debugOf(client).subscriptions).toBe(0);
  });

  it('StrictMode and 50 components on one key: one request, one socket, every component gets the data', async () => {
    const a = await api();
    a.routes.set('GET /shared', (_req, res) => json(res, 200, ['ok']));
    const client = clientOf(a.base);
    render(
      <StrictMode>
        {Array.from({ length: 50 }, (_, n) => `r${n}`).map((id, i) => (
          <Reader key={id} i={i} />
        ))}
      </StrictMode>,
      { wrapper: wrapperFor(client) },
    );
    await waitFor(() => expect(screen.getByTestId('r49').textContent).toBe('ok'));
    for (let i = 0; i < 50; i++) expect(screen.getByTestId(`r${i}`).textContent).toBe('ok');
    expect(a.count('GET', '/shared')).toBe(1);
  });

  it('enabled: false sends nothing; true reads; false again keeps showing the cached data without a request', async () => {
    const a = await api();
    a.routes.set('GET /e', (_req, res) => json(res, 200, { v: 1 }));
    const client = clientOf(a.base);
    const { result, rerender } = renderHook(
      ({ enabled }: { enabled: boolean }) => readAll(useQuery('/e', { enabled })),
      { wrapper: wrapperFor(client), initialProps: { enabled: false } },
    );
    await flush();
    expect(result.current.status).toBe('pending');
    expect(result.current.isFetching).toBe(false);
    expect(result.current.isLoading).toBe(false);
    expect(a.hits.length).toBe(0);
    rerender({ enabled: true });
    await waitFor(() => expect(result.current.data).toEqual({ v: 1 }));
    rerender({ enabled: false });
    await flush();
    expect(result.current.data).toEqual({ v: 1 });
    expect(result.current.status).toBe('success');
    act(() => {
      client.invalidate('/e');
    });
    await flush();
    expect(a.hits.length).toBe(1);
  });

  it('a key handed from one component to another in one commit keeps its request (one request, not aborted)', async () => {
    const a = await api();
    const release = gate();
    a.routes.set('GET /handoff', async (_req, res) => {
      await release.promise;
      json(res, 200, ['x']);
    });
    const client = clientOf(a.base);
    const { rerender } = render(<KeyReaderA />, { wrapper: wrapperFor(client) });
    await waitFor(() => expect(a.hits.length).toBe(1));
    rerender(<KeyReaderB />);
    await flush();
    release.open();
    await waitFor(() => expect(screen.getByTestId('b').textContent).toBe('x'));
    expect(a.count('GET', '/handoff')).toBe(1);
    expect(a.hits[0]!.aborted).toBe(false);
  });

  it('disabling mid-flight aborts the read and shows pending without fetching; enabling reads again', async () => {
    const a = await api();
    const arrived = gate();
    a.routes.set('GET /d', (_req, res) => {
      arrived.open();
      if (a.hits.length > 1) json(res, 200, ['second']);
    });
    const client = clientOf(a.base);
    const { result, rerender } = renderHook(
      ({ enabled }: { enabled: boolean }) => readAll(useQuery<string[]>('/d', { enabled })),
      { wrapper: wrapperFor(client), initialProps: { enabled: true } },
    );
    await arrived.promise;
    rerender({ enabled: false });
    await waitFor(() => expect(a.hits[0]!.aborted).toBe(true));
    expect(result.current.status).toBe('pending');
    expect(result.current.isFetching).toBe(false);
    expect(result.current.error).toBeNull();
    rerender({ enabled: true });
    await waitFor(() => expect(result.current.data).toEqual(['second']));
  });

  it('refetch() of a disabled query renders the result also when another component observes the key', async () => {
    const a = await api();
    let n = 0;
    a.routes.set('GET /manual', (_req, res) => json(res, 200, { n: ++n }));
    const client = clientOf(a.base);
    let manual!: QueryResult<{ n: number }>;
    render(
      <>
        <AutoReader />
        <ManualReader expose={(r) => (manual = r)} />
      </>,
      { wrapper: wrapperFor(client) },
    );
    await waitFor(() => expect(screen.getByTestId('auto').textContent).toBe('1'));
    await act(async () => {
      await manual.refetch();
    });
    await waitFor(() => expect(screen.getByTestId('auto').textContent).toBe('2'));
    await waitFor(() => expect(screen.getByTestId('manual').textContent).toBe('2'));
  });

  it('a new client from the provider: the query reads from it, the old client is let go', async () => {
    const a = await api();
    const b = await api();
    a.routes.set('GET /who', (_req, res) => json(res, 200, 'a'));
    b.routes.set('GET /who', (_req, res) => json(res, 200, 'b'));
    const first = clientOf(a.base);
    const second = clientOf(b.base);
    const { rerender } = render(
      <ClientProvider client={first}>
        <Who />
      </ClientProvider>,
    );
    await waitFor(() => expect(screen.getByTestId('who').textContent).toBe('a'));
    rerender(
      <ClientProvider client={second}>
        <Who />
      </ClientProvider>,
    );
    await waitFor(() => expect(screen.getByTestId('who').textContent).toBe('b'));
    await flush();
    expect(debugOf(first).subscriptions).toBe(0);
    expect(debugOf(first).listeners).toBe(0);
    expect(debugOf(second).subscriptions).toBe(1);
  });

  it('interest is counted per key: one reader left still refetches on invalidation, none left does not', async () => {
    const a = await api();
    let n = 0;
    a.routes.set('GET /i', (_req, res) => json(res, 200, { n: ++n }));
    const client = clientOf(a.base);
    const first = renderHook(() => readAll(useQuery<{ n: number }>('/i')), {
      wrapper: wrapperFor(client),
    });
    const second = renderHook(() => readAll(useQuery<{ n: number }>('/i')), {
      wrapper: wrapperFor(client),
    });
    await waitFor(() => expect(second.result.current.data).toEqual({ n: 1 }));
    first.unmount();
    await flush();
    act(() => {
      client.invalidate('/i');
    });
    await waitFor(() => expect(second.result.current.data).toEqual({ n: 2 }));
    second.unmount();
    await flush();
    act(() => {
      client.invalidate('/i');
    });
    await flush();
    await flush();
    expect(a.count('GET', '/i')).toBe(2);
    expect(debugOf(client).subscriptions).toBe(0);
  });

  it('a write to the cache (setCached) re-renders the readers without a request', async () => {
    const a = await api();
    a.routes.set('GET /w2', (_req, res) => json(res, 200, ['server']));
    const client = clientOf(a.base);
    const { result } = renderHook(() => readAll(useQuery<string[]>('/w2')), {
      wrapper: wrapperFor(client),
    });
    await waitFor(() => expect(result.current.data).toEqual(['server']));
    act(() => {
      client.setCached(client.resolve('GET', '/w2'), {
        data: ['local'],
        status: 200,
        statusText: 'OK',
        headers: new Headers(),
      });
    });
    await waitFor(() => expect(result.current.data).toEqual(['local']));
    expect(result.current.status).toBe('success');
    expect(a.count('GET', '/w2')).toBe(1);
  });

  it('useInfiniteQuery disabled mid-read shows no fetch (the read is cancelled)', async () => {
    const a = await api();
    const arrived = hang(a, '/pages');
    const client = clientOf(a.base);
    const { result, rerender } = renderHook(
      ({ enabled }: { enabled: boolean }) =>
        readAll(
          useInfiniteQuery<number[], number>('/pages', {
            enabled,
            initialPageParam: 1,
            getNextPageParam: () => undefined,
          }),
        ),
      { wrapper: wrapperFor(client), initialProps: { enabled: true } },
    );
    await arrived;
    expect(result.current.isFetching).toBe(true);
    rerender({ enabled: false });
    await waitFor(() => expect(a.hits[0]!.aborted).toBe(true));
    await flush();
    expect(result.current.isFetching).toBe(false);
    expect(result.current.isLoading).toBe(false);
  });

  it('useInfiniteQuery applies a new select (an inline one closing over a prop) without a new request', async () => {
    const a = await api();
    a.routes.set('GET /pages', (_req, res) => json(res, 200, [1, 2, 3, 4]));
    const client = clientOf(a.base);
    const { result, rerender } = renderHook(
      ({ min }: { min: number }) =>
        useInfiniteQuery<number[], number, number[]>('/pages', {
          initialPageParam: 1,
          getNextPageParam: () => undefined,
          select: (d) => d.pages.flat().filter((n) => n >= min),
        }).data,
      { wrapper: wrapperFor(client), initialProps: { min: 2 } },
    );
    await waitFor(() => expect(result.current).toEqual([2, 3, 4]));
    rerender({ min: 4 });
    expect(result.current).toEqual([4]);
    expect(a.count('GET', '/pages')).toBe(1);
  });

  it('keepPreviousData with select: the previous page (selected) stays, flagged, until the next one loads', async () => {
    const a = await api();
    const release = gate();
    a.routes.set('GET /page', async (req, res) => {
      const p = Number(new URL(req.url!, a.base).searchParams.get('p'));
      if (p === 2) await release.promise;
      if (p === 3) return json(res, 500, {});
      json(res, 200, { items: [p * 10, p * 10 + 1] });
    });
    const client = clientOf(a.base);
    const { result, rerender } = renderHook(
      ({ p }: { p: number }) =>
        readAll(
          useQuery<{ items: number[] }, number>('/page', {
            params: { p },
            placeholderData: keepPreviousData,
            select: (d) => d.items[0]!,
          }),
        ),
      { wrapper: wrapperFor(client), initialProps: { p: 1 } },
    );
    await waitFor(() => expect(result.current.data).toBe(10));
    rerender({ p: 2 });
    expect(result.current.data).toBe(10);
    expect(result.current.isPlaceholderData).toBe(true);
    expect(result.current.status).toBe('success');
    expect(result.current.response).toBeUndefined();
    expect(result.current.isFetching).toBe(true);
    release.open();
    await waitFor(() => expect(result.current.data).toBe(20));
    expect(result.current.isPlaceholderData).toBe(false);
    rerender({ p: 3 });
    expect(result.current.data).toBe(20);
    await waitFor(() => expect(result.current.status).toBe('error'));
    expect(result.current.data).toBeUndefined();
    expect(result.current.isPlaceholderData).toBe(false);
  });

  it('stale-while-revalidate: the stale data stays on screen, isFetching while revalidating, then the new data', async () => {
    const a = await api();
    let n = 0;
    const release = gate();
    a.routes.set('GET /swr', async (_req, res) => {
      n++;
      if (n === 2) await release.promise;
      json(res, 200, { n });
    });
    let now = 1_000;
    const client = clientOf(a.base, {
      cache: { ttl: 100, strategy: 'stale-while-revalidate' },
      clock: {
        now: () => now,
        setTimeout: (fn, ms) => setTimeout(fn, ms),
        clearTimeout: (h) => clearTimeout(h as ReturnType<typeof setTimeout>),
      },
    });
    await client.get('/swr');
    now += 1_000; // expired
    const { result } = renderHook(() => readAll(useQuery<{ n: number }>('/swr')), {
      wrapper: wrapperFor(client),
    });
    expect(result.current.data).toEqual({ n: 1 });
    await waitFor(() => expect(result.current.isFetching).toBe(true));
    expect(result.current.data).toEqual({ n: 1 });
    expect(result.current.status).toBe('success');
    release.open();
    await waitFor(() => expect(result.current.data).toEqual({ n: 2 }));
    expect(result.current.isFetching).toBe(false);
  });

  it('an invalidation during a flight ends on the newer data, and isFetching ends', async () => {
    const a = await api();
    let n = 0;
    const first = gate();
    a.routes.set('GET /r', async (_req, res) => {
      const mine = ++n;
      if (mine === 1) await first.promise;
      json(res, 200, { n: mine });
    });
    const client = clientOf(a.base);
    const { result } = renderHook(() => readAll(useQuery<{ n: number }>('/r')), {
      wrapper: wrapperFor(client),
    });
    await waitFor(() => expect(n).toBe(1));
    act(() => {
      client.invalidate('/r');
    });
    await waitFor(() => expect(n).toBe(2));
    await waitFor(() => expect(result.current.data).toEqual({ n: 2 }));
    first.open();
    await flush();
    await flush();
    expect(result.current.data?.n).toBe(2);
    await waitFor(() => expect(result.current.isFetching).toBe(false));
  });
});

// ── useMutation ────────────────────────────────────────────────────────────────────────────

describe('useMutation against a real server', () => {
  it('unmounting mid-mutation: the request completes, the list mounted elsewhere refetches, nothing is left', async () => {
    const a = await api();
    let items = ['a'];
    const release = gate();
    a.routes.set('GET /todos', (_req, res) => json(res, 200, items));
    a.routes.set('POST /todos', async (_req, res) => {
      await release.promise;
      items = [...items, 'b'];
      json(res, 201, { ok: true });
    });
    const client = clientOf(a.base);
    render(<Page />, { wrapper: wrapperFor(client) });
    await waitFor(() => expect(screen.getByTestId('list').textContent).toBe('a'));
    act(() => screen.getByText('add').click());
    await waitFor(() => expect(a.count('POST', '/todos')).toBe(1));
    act(() => screen.getByText('hide').click());
    release.open();
    await waitFor(() => expect(screen.getByTestId('list').textContent).toBe('a,b'));
    expect(a.count('POST', '/todos')).toBe(1);
    expect(a.hits.find((h) => h.method === 'POST')!.aborted).toBe(false);
  });

  it('reset() while pending: the call settles without writing the state; mutateAsync still settles', async () => {
    const a = await api();
    const release = gate();
    a.routes.set('POST /m', async (_req, res) => {
      await release.promise;
      json(res, 200, { done: true });
    });
    const client = clientOf(a.base);
    const { result } = renderHook(() => useMutation<{ done: boolean }, void>('POST', '/m'), {
      wrapper: wrapperFor(client),
    });
    let promise!: Promise<{ done: boolean }>;
    act(() => {
      promise = result.current.mutateAsync();
    });
    await waitFor(() => expect(result.current.status).toBe('pending'));
    act(() => result.current.reset());
    expect(result.current.status).toBe('idle');
    release.open();
    await act(async () => {
      await expect(promise).resolves.toEqual({ done: true });
    });
    await flush();
    expect(result.current.status).toBe('idle');
    expect(result.current.data).toBeUndefined();
  });

  it('a failed POST: mutateAsync rejects with the HttpError (status, data); sent once; state error', async () => {
    const a = await api();
    a.routes.set('POST /m', (_req, res) => json(res, 503, { why: 'down' }));
    const client = createClient({ baseURL: a.base });
    const { result } = renderHook(() => useMutation<unknown, { x: number }>('POST', '/m'), {
      wrapper: wrapperFor(client),
    });
    let caught: unknown;
    await act(async () => {
      await result.current.mutateAsync({ x: 1 }).catch((e: unknown) => {
        caught = e;
      });
    });
    expect(isHttpError(caught) && caught.status).toBe(503);
    expect(isHttpError(caught) && caught.data).toEqual({ why: 'down' });
    expect(a.count('POST', '/m')).toBe(1);
    expect(result.current.status).toBe('error');
    expect(result.current.error).toBe(caught);
    expect(result.current.variables).toEqual({ x: 1 });
  });
});

// ── useServerEvents ────────────────────────────────────────────────────────────────────────

interface Live {
  app: App;
  hub: EventHub;
  base: string;
  connects: { lastEventId: string | undefined; topics: string[] }[];
}

async function live(bufferSize = 100): Promise<Live> {
  const app = createApp();
  const hub = createEventHub({ bufferSize });
  const state: Live = { app, hub, base: '', connects: [] };
  app.get('/events', (ctx) => {
    const topic = ctx.query('topic');
    const topics = typeof topic === 'string' ? [topic] : [];
    state.connects.push({ lastEventId: ctx.header('last-event-id'), topics });
    return hub.connect(ctx, { topics });
  });
  const server = await app.listen(0, '127.0.0.1');
  apps.push({ app, http: server });
  state.base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return state;
}

function Feed({
  url,
  seen,
  options,
}: {
  url: string | null;
  seen: string[];
  options?: ServerEventsOptions;
}) {
  const { status } = useServerEvents(
    url,
    {
      tick: (data: { n: number }, event) => {
        seen.push(`${data.n}@${event.id ?? ''}`);
      },
    },
    options,
  );
  return <p data-testid="status">{status}</p>;
}

/** Two readers share one connection: both get an event; unmounting both closes it on the server. */
async function sharedThenClosed(server: Live, client: Client, seen: string[], unmount: () => void) {
  expect(server.connects.length).toBe(1);
  expect(channelCount(client)).toBe(1);
  await server.hub.publish('tick', { n: 1 });
  await waitFor(() => expect(seen.length).toBe(2));
  unmount();
  await flush();
  expect(channelCount(client)).toBe(0);
  await waitFor(() => expect(server.hub.size).toBe(0));
}

describe('useServerEvents against @keel/server', () => {
  it('topics: a component on topic a gets topic a and broadcasts, not topic b', async () => {
    const server = await live();
    const client = createClient({ baseURL: server.base });
    const seen: string[] = [];
    render(<Feed url="/events?topic=a" seen={seen} />, { wrapper: wrapperFor(client) });
    await waitFor(() => expect(screen.getByTestId('status').textContent).toBe('open'));
    await server.hub.publish('tick', { n: 1 }, { topic: 'a' });
    await server.hub.publish('tick', { n: 2 }, { topic: 'b' });
    await server.hub.publish('tick', { n: 3 });
    await waitFor(() => expect(seen.length).toBe(2));
    expect(seen.map((s) => s.split('@')[0])).toEqual(['1', '3']);
  });

  it('spellings of one URL share one connection; unmounting the last closes it on the server', async () => {
    const server = await live();
    const client = createClient({ baseURL: server.base });
    const seen: string[] = [];
    const { unmount } = render(
      <StrictMode>
        <Feed url="/events" seen={seen} />
        <Feed url={`${server.base}/events`} seen={seen} />
      </StrictMode>,
      { wrapper: wrapperFor(client) },
    );
    await waitFor(() => expect(screen.getAllByTestId('status')[1]!.textContent).toBe('open'));
    await sharedThenClosed(server, client, seen, unmount);
  });

  it('reconnects with Last-Event-ID after the stream ends and receives exactly the missed events', async () => {
    const server = await live();
    const client = createClient({ baseURL: server.base });
    const seen: string[] = [];
    render(
      <Feed
        url="/events"
        seen={seen}
        options={{ reconnect: { initialDelay: 10, maxDelay: 20 } }}
      />,
      { wrapper: wrapperFor(client) },
    );
    await waitFor(() => expect(screen.getByTestId('status').textContent).toBe('open'));
    await server.hub.publish('tick', { n: 1 });
    await waitFor(() => expect(seen.length).toBe(1));
    const firstId = seen[0]!.split('@')[1]!;
    expect(firstId).not.toBe('');
    // The server drops every connection, then publishes while the client is away.
    for (const { http } of apps) http.closeAllConnections();
    await server.hub.publish('tick', { n: 2 });
    await server.hub.publish('tick', { n: 3 });
    await waitFor(() => expect(seen.length).toBe(3));
    expect(server.connects.length).toBe(2);
    expect(server.connects[1]!.lastEventId).toBe(firstId);
    expect(seen.map((s) => s.split('@')[0])).toEqual(['1', '2', '3']);
  });

  it('inline handlers, options and headers: re-renders keep one connection, and the latest handler runs', async () => {
    const server = await live();
    const client = createClient({ baseURL: server.base });
    const seen: string[] = [];
    const { rerender } = render(<InlineFeed round={0} seen={seen} />, {
      wrapper: wrapperFor(client),
    });
    await waitFor(() => expect(screen.getByTestId('status').textContent).toBe('open'));
    for (let round = 1; round <= 5; round++) rerender(<InlineFeed round={round} seen={seen} />);
    await server.hub.publish('tick', { n: 1 });
    await waitFor(() => expect(seen).toEqual(['5:1']));
    expect(server.connects.length).toBe(1);
  });

  it('a URL change closes the old stream and opens the new one', async () => {
    const server = await live();
    const client = createClient({ baseURL: server.base });
    const seen: string[] = [];
    const { rerender } = render(<Feed url="/events?topic=a" seen={seen} />, {
      wrapper: wrapperFor(client),
    });
    await waitFor(() => expect(screen.getByTestId('status').textContent).toBe('open'));
    rerender(<Feed url="/events?topic=b" seen={seen} />);
    await waitFor(() => expect(server.connects.length).toBe(2));
    await waitFor(() => expect(screen.getByTestId('status').textContent).toBe('open'));
    await flush();
    expect(channelCount(client)).toBe(1);
    await server.hub.publish('tick', { n: 1 }, { topic: 'a' });
    await server.hub.publish('tick', { n: 2 }, { topic: 'b' });
    await waitFor(() => expect(seen.length).toBe(1));
    await flush();
    expect(seen.map((s) => s.split('@')[0])).toEqual(['2']);
  });
});

// ── useServerEvents against a hand-written event stream ───────────────────────────────────

interface RawSse {
  base: string;
  /** The Last-Event-ID of each connect (undefined when absent). */
  connects: (string | undefined)[];
}

/**
 * An SSE endpoint answering connect number `i` (0-based) with `script[i]`: a status, headers and
 * chunks written one by one, then the stream ends (the client is expected to reconnect).
 */
async function rawSse(
  script: { status?: number; type?: string; chunks?: string[]; hold?: boolean }[],
): Promise<RawSse> {
  const state: RawSse = { base: '', connects: [] };
  const server = createServer(async (req, res) => {
    const i = state.connects.length;
    state.connects.push(req.headers['last-event-id'] as string | undefined);
    const step = script[Math.min(i, script.length - 1)]!;
    res.writeHead(step.status ?? 200, { 'content-type': step.type ?? 'text/event-stream' });
    res.flushHeaders();
    for (const chunk of step.chunks ?? []) {
      res.write(chunk);
      await new Promise((r) => setTimeout(r, 5));
    }
    if (!step.hold) res.end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  servers.push(server);
  state.base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return state;
}

function RawFeed({
  seen,
  options,
}: {
  seen: { event: string; data: unknown; id: string | undefined }[];
  options?: ServerEventsOptions;
}) {
  const state = useServerEvents(
    '/sse',
    {
      message: (data, event) => seen.push({ event: 'message', data, id: event.id }),
      note: (data, event) => seen.push({ event: 'note', data, id: event.id }),
    },
    options,
  );
  return (
    <p data-testid="sse">
      {state.status}|{state.error ? String((state.error as Error).message) : ''}
    </p>
  );
}

describe('useServerEvents: the event stream format and reconnects', () => {
  it('parses unnamed, named, multi-line and non-JSON events cut anywhere, CRLF included', async () => {
    const sse = await rawSse([
      {
        chunks: [
          'data: {"a"',
          ':1}\r\n\r',
          '\nevent: note\r\ndata: line1\r\ndata: line2\r\nid: 9\r\n\r\n',
        ],
        hold: true,
      },
    ]);
    const client = createClient({ baseURL: sse.base });
    const seen: { event: string; data: unknown; id: string | undefined }[] = [];
    render(<RawFeed seen={seen} />, { wrapper: wrapperFor(client) });
    await waitFor(() => expect(seen.length).toBe(2));
    expect(seen).toEqual([
      { event: 'message', data: { a: 1 }, id: undefined },
      { event: 'note', data: 'line1\nline2', id: '9' },
    ]);
  });

  it("uses the server's retry: field as the reconnect delay", async () => {
    const sse = await rawSse([{ chunks: ['retry: 400\ndata: 1\nid: a\n\n'] }, { hold: true }]);
    const client = createClient({ baseURL: sse.base });
    const { ManualClock } = await import('./helpers');
    const clock = new ManualClock();
    const seen: { event: string; data: unknown; id: string | undefined }[] = [];
    render(
      <RawFeed seen={seen} options={{ clock, reconnect: { jitter: false, initialDelay: 1000 } }} />,
      { wrapper: wrapperFor(client) },
    );
    await waitFor(() => expect(clock.timers.size).toBe(1));
    expect(clock.delays).toEqual([400]);
    act(() => {
      clock.runNext();
    });
    await waitFor(() => expect(sse.connects.length).toBe(2));
    expect(sse.connects).toEqual([undefined, 'a']);
  });

  it("a caller's Last-Event-ID (any case) goes on the first connect; a resume replaces it", async () => {
    const sse = await rawSse([{ chunks: ['data: 1\nid: a\n\n'] }, { hold: true }]);
    const client = createClient({ baseURL: sse.base });
    const { ManualClock } = await import('./helpers');
    const clock = new ManualClock();
    render(<RawFeed seen={[]} options={{ clock, headers: { 'Last-Event-ID': 'z' } }} />, {
      wrapper: wrapperFor(client),
    });
    await waitFor(() => expect(clock.timers.size).toBe(1));
    act(() => {
      clock.runNext();
    });
    await waitFor(() => expect(sse.connects.length).toBe(2));
    // Not `z, a`: fetch joins two names equal but for case.
    expect(sse.connects).toEqual(['z', 'a']);
  });

  // The caller's header went out again on every reconnect that had no id of the stream's to
  // send: after the server reset the id (an empty `id:`), the stale `z` was sent anyway.
  it("a caller's Last-Event-ID is where the stream starts: an empty id resets it, as a stream id does", async () => {
    const sse = await rawSse([
      { chunks: ['id: 5\ndata: 1\n\n', 'id:\ndata: 2\n\n'] },
      { hold: true },
    ]);
    const client = createClient({ baseURL: sse.base });
    const { ManualClock } = await import('./helpers');
    const clock = new ManualClock();
    render(<RawFeed seen={[]} options={{ clock, headers: { 'last-event-id': 'z' } }} />, {
      wrapper: wrapperFor(client),
    });
    await waitFor(() => expect(clock.timers.size).toBe(1));
    act(() => {
      clock.runNext();
    });
    await waitFor(() => expect(sse.connects.length).toBe(2));
    expect(sse.connects).toEqual(['z', undefined]);
  });

  it("a caller's Last-Event-ID stays the resume point until the stream gives an id (EventSource keeps its last id)", async () => {
    // Connect 1 fails (500), connect 2 gets an event without an id, connect 3 holds.
    const sse = await rawSse([{ status: 500 }, { chunks: ['data: 1\n\n'] }, { hold: true }]);
    const client = createClient({ baseURL: sse.base });
    const { ManualClock } = await import('./helpers');
    const clock = new ManualClock();
    const cached = client.resolve('GET', '/todos');
    client.setCached(cached, { data: [], status: 200, statusText: 'OK', headers: new Headers() });
    const updates: string[] = [];
    client.subscribe(cached.key, (u) => updates.push(u.type));
    render(
      <RawFeed
        seen={[]}
        options={{ clock, headers: { 'Last-Event-ID': 'z' }, reconnect: { jitter: false } }}
      />,
      { wrapper: wrapperFor(client) },
    );
    for (const n of [2, 3]) {
      await waitFor(() => expect(clock.timers.size).toBe(1));
      act(() => {
        clock.runNext();
      });
      await waitFor(() => expect(sse.connects.length).toBe(n));
    }
    expect(sse.connects).toEqual(['z', 'z', 'z']);
    // Resumed from the caller's id each time: nothing was lost, so nothing is invalidated.
    expect(updates).toEqual([]);
  });

  it('a 204 or a response that is not an event stream stops for good with a ServerEventsError', async () => {
    for (const step of [{ status: 204 }, { status: 200, type: 'text/html' }, { status: 401 }]) {
      const sse = await rawSse([step]);
      const client = createClient({ baseURL: sse.base });
      const { ManualClock } = await import('./helpers');
      const clock = new ManualClock();
      const { unmount } = render(<RawFeed seen={[]} options={{ clock }} />, {
        wrapper: wrapperFor(client),
      });
      await waitFor(() => expect(screen.getByTestId('sse').textContent).toMatch(/^closed\|.+/));
      expect(clock.timers.size).toBe(0);
      expect(sse.connects.length).toBe(1);
      unmount();
    }
  });

  it('an empty id: resets the last event id: the reconnect sends none', async () => {
    const sse = await rawSse([
      { chunks: ['id: 1\ndata: x\n\n', 'id:\ndata: y\n\n'] },
      { hold: true },
    ]);
    const client = createClient({ baseURL: sse.base });
    const { ManualClock } = await import('./helpers');
    const clock = new ManualClock();
    const seen: { event: string; data: unknown; id: string | undefined }[] = [];
    render(<RawFeed seen={seen} options={{ clock }} />, { wrapper: wrapperFor(client) });
    await waitFor(() => expect(clock.timers.size).toBe(1));
    act(() => {
      clock.runNext();
    });
    await waitFor(() => expect(sse.connects.length).toBe(2));
    expect(sse.connects[1]).toBeUndefined();
  });

  it('an onError that throws does not drop the connection', async () => {
    const sse = await rawSse([
      {
        chunks: ['event: keel:invalidate\ndata: {"target":5}\nid: 1\n\n', 'data: 2\nid: 2\n\n'],
        hold: true,
      },
    ]);
    const client = createClient({ baseURL: sse.base });
    const seen: { event: string; data: unknown; id: string | undefined }[] = [];
    const caught: unknown[] = [];
    const onUncaught = (error: unknown) => caught.push(error);
    process.prependListener('uncaughtException', onUncaught);
    try {
      render(
        <RawFeed
          seen={seen}
          options={{
            onError: () => {
              throw new Error('onError threw');
            },
          }}
        />,
        { wrapper: wrapperFor(client) },
      );
      await waitFor(() => expect(seen.length).toBe(1));
      await flush();
      expect(sse.connects.length).toBe(1);
      expect(screen.getByTestId('sse').textContent).toBe('open|');
    } finally {
      process.off('uncaughtException', onUncaught);
    }
  });

  it('an id-only block still sets the last event id (WHATWG: the id buffer is kept without data)', async () => {
    const sse = await rawSse([{ chunks: ['id: 1\ndata: x\n\n', 'id: 2\n\n'] }, { hold: true }]);
    const client = createClient({ baseURL: sse.base });
    const { ManualClock } = await import('./helpers');
    const clock = new ManualClock();
    render(<RawFeed seen={[]} options={{ clock }} />, { wrapper: wrapperFor(client) });
    await waitFor(() => expect(clock.timers.size).toBe(1));
    act(() => {
      clock.runNext();
    });
    await waitFor(() => expect(sse.connects.length).toBe(2));
    expect(sse.connects[1]).toBe('2');
  });
});

describe('useQuery over the core lifecycle', () => {
  it('retries stay one load: pending and fetching through every attempt, never error in between', async () => {
    const a = await api();
    let n = 0;
    a.routes.set('GET /flaky', (_req, res) => {
      n++;
      json(res, n < 3 ? 503 : 200, { n });
    });
    const client = createClient({
      baseURL: a.base,
      retry: { attempts: 3, baseDelay: 20, maxDelay: 20, jitter: false },
    });
    const statuses = new Set<string>();
    const { result } = renderHook(
      () => {
        const r = readAll(useQuery<{ n: number }>('/flaky'));
        statuses.add(`${r.status}/${r.isFetching}`);
        return r;
      },
      { wrapper: wrapperFor(client) },
    );
    await waitFor(() => expect(result.current.data).toEqual({ n: 3 }));
    expect(n).toBe(3);
    expect([...statuses].sort()).toEqual(['pending/true', 'success/false']);
  });

  it('a timeout is the query error (TimeoutError) and the fetch ends', async () => {
    const a = await api();
    a.routes.set('GET /never', () => {});
    const client = clientOf(a.base);
    const { result } = renderHook(() => readAll(useQuery('/never', { timeout: 30 })), {
      wrapper: wrapperFor(client),
    });
    await waitFor(() => expect(result.current.status).toBe('error'));
    expect((result.current.error as Error).name).toBe('TimeoutError');
    expect(result.current.isFetching).toBe(false);
    expect(result.current.isLoading).toBe(false);
  });

  it('invalidation by tags and by predicate refetches mounted queries; refetch: false only marks them', async () => {
    const a = await api();
    let n = 0;
    a.routes.set('GET /t', (_req, res) => json(res, 200, { n: ++n }));
    const client = clientOf(a.base);
    const { result } = renderHook(() => readAll(useQuery<{ n: number }>('/t', { tags: ['tt'] })), {
      wrapper: wrapperFor(client),
    });
    await waitFor(() => expect(result.current.data).toEqual({ n: 1 }));
    act(() => {
      client.invalidate(['tt']);
    });
    await waitFor(() => expect(result.current.data).toEqual({ n: 2 }));
    act(() => {
      client.invalidate((meta) => meta.tags.includes('tt'));
    });
    await waitFor(() => expect(result.current.data).toEqual({ n: 3 }));
    act(() => {
      client.invalidate('/t', { refetch: false });
    });
    await flush();
    await flush();
    expect(n).toBe(3);
    expect(result.current.data).toEqual({ n: 3 });
    expect(result.current.isFetching).toBe(false);
  });

  it('refetch() during a load joins it: one request', async () => {
    const a = await api();
    const release = gate();
    a.routes.set('GET /j', async (_req, res) => {
      await release.promise;
      json(res, 200, [1]);
    });
    const client = clientOf(a.base);
    const { result } = renderHook(() => readAll(useQuery<number[]>('/j')), {
      wrapper: wrapperFor(client),
    });
    await waitFor(() => expect(a.hits.length).toBe(1));
    let done!: Promise<QueryResult<number[]>>;
    act(() => {
      done = result.current.refetch();
    });
    release.open();
    let settled: QueryResult<number[]> | undefined;
    await act(async () => {
      settled = await done;
    });
    expect(settled!.data).toEqual([1]);
    expect(a.count('GET', '/j')).toBe(1);
  });

  it('cache: false: the data shows, refetch() replaces it, a remount reads again', async () => {
    const a = await api();
    let n = 0;
    a.routes.set('GET /nc', (_req, res) => json(res, 200, { n: ++n }));
    const client = clientOf(a.base);
    const { result, unmount } = renderHook(
      () => readAll(useQuery<{ n: number }>('/nc', { cache: false })),
      { wrapper: wrapperFor(client) },
    );
    await waitFor(() => expect(result.current.data).toEqual({ n: 1 }));
    await act(async () => {
      await result.current.refetch();
    });
    await waitFor(() => expect(result.current.data).toEqual({ n: 2 }));
    expect(result.current.isFetching).toBe(false);
    unmount();
    await flush();
    const again = renderHook(() => readAll(useQuery<{ n: number }>('/nc', { cache: false })), {
      wrapper: wrapperFor(client),
    });
    await waitFor(() => expect(again.result.current.data).toEqual({ n: 3 }));
  });

  it('a mutation with tags refetches the queries carrying them', async () => {
    const a = await api();
    let n = 0;
    a.routes.set('GET /list', (_req, res) => json(res, 200, { n: ++n }));
    a.routes.set('POST /other', (_req, res) => json(res, 201, {}));
    const client = clientOf(a.base);
    const { result } = renderHook(
      () => ({
        q: readAll(useQuery<{ n: number }>('/list', { tags: ['lists'] })),
        m: useMutation('POST', '/other', { tags: ['lists'] }),
      }),
      { wrapper: wrapperFor(client) },
    );
    await waitFor(() => expect(result.current.q.data).toEqual({ n: 1 }));
    await act(async () => {
      await result.current.m.mutateAsync(undefined);
    });
    await waitFor(() => expect(result.current.q.data).toEqual({ n: 2 }));
  });

  it('onMutate that throws: nothing is sent, the writes it made are rolled back, state error', async () => {
    const a = await api();
    a.routes.set('GET /todos', (_req, res) => json(res, 200, ['a']));
    a.routes.set('POST /todos', (_req, res) => json(res, 201, {}));
    const client = clientOf(a.base);
    const { result } = renderHook(
      () => ({
        q: readAll(useQuery<string[]>('/todos')),
        m: useMutation<unknown, string>('POST', '/todos', {
          onMutate: (v, { setQueryData }) => {
            setQueryData<string[]>('/todos', (l = []) => [...l, v]);
            throw new Error('no');
          },
        }),
      }),
      { wrapper: wrapperFor(client) },
    );
    await waitFor(() => expect(result.current.q.data).toEqual(['a']));
    await act(async () => {
      await result.current.m.mutateAsync('b').catch(() => {});
    });
    expect(a.count('POST', '/todos')).toBe(0);
    expect(result.current.m.status).toBe('error');
    expect((result.current.m.error as Error).message).toBe('no');
    await waitFor(() => expect(result.current.q.data).toEqual(['a']));
  });
});

describe('useServerEvents when the server is unreachable', () => {
  it('keeps reconnecting with the network error shown; unmounting stops the timer', async () => {
    const a = await api();
    const base = a.base;
    for (const s of servers.splice(0)) await new Promise((r) => s.close(r));
    const client = createClient({ baseURL: base });
    const { ManualClock } = await import('./helpers');
    const clock = new ManualClock();
    const { unmount } = render(<RawFeed seen={[]} options={{ clock }} />, {
      wrapper: wrapperFor(client),
    });
    await waitFor(() => expect(clock.timers.size).toBe(1));
    expect(screen.getByTestId('sse').textContent).toMatch(/^connecting\|.+/);
    unmount();
    await flush();
    expect(clock.timers.size).toBe(0);
    expect(channelCount(client)).toBe(0);
  });
});

describe('suspense against a real server', () => {
  it('the boundary reset reads again even when a plain useQuery of the key is mounted elsewhere', async () => {
    const a = await api();
    let fail = true;
    a.routes.set('GET /s', (_req, res) => json(res, fail ? 500 : 200, fail ? {} : ['ok']));
    const client = clientOf(a.base);
    // React logs each error a boundary catches.
    const logged = vi.spyOn(console, 'error').mockImplementation(() => {});
    onTestFinished(() => logged.mockRestore());
    render(
      <>
        <PlainReader />
        <QueryErrorBoundary
          fallback={({ reset }) => (
            <button type="button" onClick={reset}>
              retry
            </button>
          )}
        >
          <Suspense fallback={<p>loading</p>}>
            <SuspenseReader />
          </Suspense>
        </QueryErrorBoundary>
      </>,
      { wrapper: wrapperFor(client) },
    );
    const retry = await screen.findByText('retry');
    await waitFor(() => expect(screen.getByTestId('plain').textContent).toBe('error'));
    const before = a.count('GET', '/s');
    fail = false;
    act(() => retry.click());
    await waitFor(() => expect(screen.getByTestId('s').textContent).toBe('ok'));
    expect(a.count('GET', '/s')).toBe(before + 1);
    expect(screen.getByTestId('plain').textContent).toBe('success');
  });
});

describe('useMutation requests', () => {
  it('mutations are never coalesced: two identical calls at once send two POSTs', async () => {
    const a = await api();
    let n = 0;
    a.routes.set('POST /m', (_req, res) => json(res, 201, { n: ++n }));
    const client = clientOf(a.base);
    const { result } = renderHook(() => useMutation<{ n: number }, { x: number }>('POST', '/m'), {
      wrapper: wrapperFor(client),
    });
    let both: { n: number }[] = [];
    await act(async () => {
      both = await Promise.all([
        result.current.mutateAsync({ x: 1 }),
        result.current.mutateAsync({ x: 1 }),
      ]);
    });
    expect(a.count('POST', '/m')).toBe(2);
    expect(both.map((b) => b.n).sort()).toEqual([1, 2]);
  });

  it('a POST refused with 503 + Retry-After (not processed) is sent again by default; a 500 is not', async () => {
    const a = await api();
    let posts = 0;
    a.routes.set('POST /r', (_req, res) => {
      posts++;
      if (posts === 1) {
        res.writeHead(503, { 'retry-after': '0', 'content-type': 'application/json' }).end('{}');
        return;
      }
      json(res, 201, { ok: posts });
    });
    a.routes.set('POST /boom', (_req, res) => json(res, 500, {}));
    const client = createClient({ baseURL: a.base, retry: { baseDelay: 1, maxDelay: 1 } });
    const { result } = renderHook(
      () => ({ ok: useMutation<{ ok: number }>('POST', '/r'), boom: useMutation('POST', '/boom') }),
      { wrapper: wrapperFor(client) },
    );
    await act(async () => {
      await result.current.ok.mutateAsync();
      await result.current.boom.mutateAsync().catch(() => {});
    });
    expect(result.current.ok.data).toEqual({ ok: 2 });
    expect(a.count('POST', '/r')).toBe(2);
    expect(a.count('POST', '/boom')).toBe(1);
  });

  it('a lower-case method (which the core accepts) still sends the variables as the body', async () => {
    const a = await api();
    let body = '';
    a.routes.set('POST /m', async (req, res) => {
      for await (const chunk of req) body += chunk;
      json(res, 201, {});
    });
    const client = clientOf(a.base);
    const { result } = renderHook(
      () => useMutation<unknown, { title: string }>('post' as 'POST', '/m'),
      { wrapper: wrapperFor(client) },
    );
    await act(async () => {
      await result.current.mutateAsync({ title: 'x' });
    });
    expect(JSON.parse(body)).toEqual({ title: 'x' });
  });
});

describe('server rendering hand-off', () => {
  it('data handed over older than its ttl: the markup still matches, then one request refreshes it', async () => {
    const a = await api();
    let items = ['old'];
    a.routes.set('GET /todos', (_req, res) => json(res, 200, items));
    let serverNow = 1_000_000;
    const clockAt = (now: () => number) => ({
      now,
      setTimeout: (fn: () => void, ms: number) => setTimeout(fn, ms),
      clearTimeout: (h: unknown) => clearTimeout(h as ReturnType<typeof setTimeout>),
    });
    const server = clientOf(a.base, { clock: clockAt(() => serverNow) });
    await server.get('/todos');
    // The page is rendered a minute after the fetch (a cached page, a slow render): past the ttl.
    serverNow += 60_000;
    const state = JSON.parse(JSON.stringify(dehydrate(server)));
    const html = renderToString(
      <ClientProvider client={server}>
        <HydrationBoundary state={state}>
          <Hydrated />
        </HydrationBoundary>
      </ClientProvider>,
    );
    expect(html).toBe('<p>old</p>');
    items = ['new'];
    const browserNow = 5_000; // the browser's clock need not agree: the age is carried
    const browser = clientOf(a.base, { clock: clockAt(() => browserNow) });
    const container = document.createElement('div');
    container.innerHTML = html;
    const recoverable: unknown[] = [];
    await act(async () => {
      hydrateRoot(
        container,
        <ClientProvider client={browser}>
          <HydrationBoundary state={state}>
            <Hydrated />
          </HydrationBoundary>
        </ClientProvider>,
        { onRecoverableError: (err) => recoverable.push(err) },
      );
    });
    expect(recoverable).toEqual([]);
    await waitFor(() => expect(container.innerHTML).toBe('<p>new</p>'));
    expect(a.count('GET', '/todos')).toBe(2);
  });
});

describe('a throwing listener of the application', () => {
  it('a client.on / client.subscribe listener that throws does not stop the hooks from updating', async () => {
    const a = await api();
    let n = 0;
    a.routes.set('GET /w', (_req, res) => json(res, 200, { n: ++n }));
    const reported: unknown[] = [];
    const client = clientOf(a.base, { onError: (error) => reported.push(error) });
    const offs = [
      client.on('success', () => {
        throw new Error('on success');
      }),
      client.on('request', () => {
        throw new Error('on request');
      }),
      client.subscribe(
        () => true,
        () => {
          throw new Error('subscriber');
        },
      ),
    ];
    try {
      const { result } = renderHook(() => readAll(useQuery<{ n: number }>('/w')), {
        wrapper: wrapperFor(client),
      });
      await waitFor(() => expect(result.current.data).toEqual({ n: 1 }));
      expect(result.current.isFetching).toBe(false);
      act(() => {
        client.invalidate('/w');
      });
      await waitFor(() => expect(result.current.data).toEqual({ n: 2 }));
      expect(result.current.isFetching).toBe(false);
      await flush();
    } finally {
      for (const off of offs) off();
    }
    expect(reported.length).toBeGreaterThan(0);
  });
});

describe('ClientProvider', () => {
  it('a provider given no client: the hooks say which provider prop is missing', () => {
    const logged = vi.spyOn(console, 'error').mockImplementation(() => {});
    onTestFinished(() => logged.mockRestore());
    expect(() =>
      renderHook(() => useQuery('/x'), {
        wrapper: ({ children }) => (
          <ClientProvider client={undefined as unknown as Client}>{children}</ClientProvider>
        ),
      }),
    ).toThrow(/ClientProvider client=/);
  });
});

describe('useQuery refetchInterval bounds', () => {
  it('an interval past the 32-bit timer limit is refused (it would fire every millisecond)', () => {
    const client = createClient({ baseURL: 'http://127.0.0.1:9' });
    expect(() =>
      renderHook(() => useQuery('/x', { refetchInterval: 2 ** 31 }), {
        wrapper: wrapperFor(client),
      }),
    ).toThrow(RangeError);
  });

  it('a refetchInterval of the wrong type is a TypeError, a number out of range a RangeError, both naming it', () => {
    const client = createClient({ baseURL: 'http://127.0.0.1:9' });
    const logged = vi.spyOn(console, 'error').mockImplementation(() => {});
    onTestFinished(() => logged.mockRestore());
    const expected = 'a positive number of ms, at most 2147483647, or false';
    const refused = (refetchInterval: unknown) => () =>
      renderHook(() => useQuery('/x', { refetchInterval } as { refetchInterval: number }), {
        wrapper: wrapperFor(client),
      });
    for (const [value, shown] of [
      ['1000', '"1000"'],
      [null, 'null'],
      [true, 'true'],
    ] as const) {
      expect(refused(value)).toThrow(
        new TypeError(`keel: \`refetchInterval\` must be ${expected}, got ${shown}`),
      );
    }
    for (const value of [0, -1, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 31]) {
      expect(refused(value)).toThrow(
        new RangeError(`keel: \`refetchInterval\` must be ${expected}, got ${value}`),
      );
    }
    expect(() =>
      renderHook(() => useQuery('/x', { select: 5 as never }), { wrapper: wrapperFor(client) }),
    ).toThrow(new TypeError('keel: `select` must be a function, got 5'));
    expect(debugOf(client).subscriptions).toBe(0);
  });
});

describe('boolean options are booleans', () => {
  it("TanStack's function form of enabled (or of the refetchOn* switches, or suspense) is a TypeError naming it, and sends nothing", async () => {
    const a = await api();
    a.routes.set('GET /e', (_req, res) => json(res, 200, ['x']));
    const client = clientOf(a.base);
    const logged = vi.spyOn(console, 'error').mockImplementation(() => {});
    onTestFinished(() => logged.mockRestore());
    const bad = { enabled: () => false } as unknown as { enabled: boolean };
    expect(() => renderHook(() => useQuery('/e', bad), { wrapper: wrapperFor(client) })).toThrow(
      new TypeError('keel: `enabled` must be true or false, got a function'),
    );
    expect(() =>
      renderHook(() => useQuery('/e', { refetchOnWindowFocus: 'always' as unknown as boolean }), {
        wrapper: wrapperFor(client),
      }),
    ).toThrow(/`refetchOnWindowFocus` must be true or false, got "always"/);
    expect(() =>
      renderHook(
        () => useQuery('/e', { refetchOnReconnect: (() => false) as unknown as boolean }),
        { wrapper: wrapperFor(client) },
      ),
    ).toThrow(/`refetchOnReconnect` must be true or false, got a function/);
    // `suspense: 'yes'` suspended as if true: refused like the other switches.
    expect(() =>
      renderHook(() => useQuery('/e', { suspense: 'yes' as unknown as boolean }), {
        wrapper: wrapperFor(client),
      }),
    ).toThrow(new TypeError('keel: `suspense` must be true or false, got "yes"'));
    expect(() =>
      renderHook(
        () =>
          useInfiniteQuery<string[], number>('/e', {
            initialPageParam: 0,
            getNextPageParam: () => undefined,
            ...bad,
          }),
        { wrapper: wrapperFor(client) },
      ),
    ).toThrow(new TypeError('keel: `enabled` must be true or false, got a function'));
    await flush();
    expect(a.count('GET', '/e')).toBe(0);
  });
});

describe('useQueries options changes', () => {
  it('turning on refetchInterval or refetchOnWindowFocus for the same keys arms them; turning them off disarms them', async () => {
    const a = await api();
    a.routes.set('GET /q', (_req, res) => json(res, 200, ['q']));
    // The interval runs on the client's clock.
    const clock = new FakeClock();
    const client = clientOf(a.base, { cache: { ttl: 0 }, clock, timeout: 0 });
    const { result, rerender, unmount } = renderHook(
      ({ on }: { on: boolean }) =>
        useQueries([
          queryOptions<string[]>('/q', {
            refetchInterval: on ? 1000 : false,
            refetchOnWindowFocus: on,
          }),
        ]),
      { wrapper: wrapperFor(client), initialProps: { on: false } },
    );
    await until(() => result.current[0].data !== undefined);
    expect(a.count('GET', '/q')).toBe(1);
    act(() => {
      window.dispatchEvent(new Event('focus'));
    });
    await act(() => clock.advance(5000));
    expect(a.count('GET', '/q')).toBe(1);

    rerender({ on: true });
    await flush();
    await act(() => clock.advance(1000));
    await until(() => a.count('GET', '/q') === 2);
    await until(() => !result.current[0].isFetching);
    act(() => {
      window.dispatchEvent(new Event('focus'));
    });
    await until(() => a.count('GET', '/q') === 3);
    await until(() => !result.current[0].isFetching);

    rerender({ on: false });
    await flush();
    expect(clock.live).toBe(0);
    unmount();
  });
});

describe('watchServerEvents', () => {
  it('tells the watcher when an id-only block changes the last event id', async () => {
    // The stream stays open: no status change tells the watcher in its stead.
    const sse = await rawSse([{ chunks: ['id: 1\ndata: x\n\n', 'id: 2\n\n'], hold: true }]);
    const client = createClient({ baseURL: sse.base });
    const told: (string | undefined)[] = [];
    const stop = watchServerEvents(client, () => {
      told.push(inspectServerEvents(client)[0]?.lastEventId);
    });
    onTestFinished(stop);
    const { unmount } = render(<RawFeed seen={[]} />, { wrapper: wrapperFor(client) });
    await waitFor(() => expect(inspectServerEvents(client)[0]?.lastEventId).toBe('2'));
    expect(told).toContain('1');
    expect(told.at(-1)).toBe('2');
    unmount();
  });
});

describe('useServerEvents reconnect floor', () => {
  it('a server retry: 0 against a stream that ends after each event waits at least 100 ms per reconnect', async () => {
    const sse = await rawSse([{ chunks: ['retry: 0\ndata: 1\n\n'] }]);
    const client = createClient({ baseURL: sse.base });
    const { ManualClock } = await import('./helpers');
    const clock = new ManualClock();
    const { unmount } = render(
      <RawFeed seen={[]} options={{ clock, reconnect: { jitter: false } }} />,
      { wrapper: wrapperFor(client) },
    );
    for (let round = 1; round <= 3; round++) {
      await waitFor(() => expect(clock.timers.size).toBe(1));
      act(() => {
        clock.runNext();
      });
      await waitFor(() => expect(sse.connects.length).toBe(round + 1));
    }
    expect(clock.delays.slice(0, 3)).toEqual([100, 100, 100]);
    unmount();
  });

  it('initialDelay: 0 against a failing server backs off from 100 ms, doubling (50 ms at least with jitter)', async () => {
    const sse = await rawSse([{ status: 503 }]);
    const client = createClient({ baseURL: sse.base });
    const { ManualClock } = await import('./helpers');
    const clock = new ManualClock();
    const { unmount } = render(
      <RawFeed
        seen={[]}
        options={{ clock, reconnect: { jitter: false, initialDelay: 0, maxDelay: 0 } }}
      />,
      { wrapper: wrapperFor(client) },
    );
    await waitFor(() => expect(clock.timers.size).toBe(1));
    expect(clock.delays).toEqual([100]);
    unmount();

    const doubling = createClient({ baseURL: sse.base });
    const jittered = new ManualClock();
    const second = render(
      <RawFeed
        seen={[]}
        options={{ clock: jittered, random: () => 0, reconnect: { initialDelay: 0 } }}
      />,
      { wrapper: wrapperFor(doubling) },
    );
    for (let round = 1; round <= 3; round++) {
      await waitFor(() => expect(jittered.timers.size).toBe(1));
      act(() => {
        jittered.runNext();
      });
    }
    await waitFor(() => expect(jittered.timers.size).toBe(1));
    expect(jittered.delays).toEqual([50, 100, 200, 400]);
    second.unmount();
  });
});

describe('refetch() against an open circuit', () => {
  it('resolves with the CircuitOpenError as the error, keeping the data, and sends nothing', async () => {
    const a = await api();
    a.routes.set('GET /c', (req, res) =>
      req.url!.includes('fail') ? json(res, 500, { down: true }) : json(res, 200, ['c']),
    );
    const client = clientOf(a.base, {
      circuitBreaker: { failureThreshold: 1, resetTimeout: 60_000 },
    });
    const { result } = renderHook(() => readAll(useQuery<string[]>('/c', { params: { ok: 1 } })), {
      wrapper: wrapperFor(client),
    });
    await waitFor(() => expect(result.current.data).toEqual(['c']));
    // Another read of the endpoint (`GET /c`, the query string aside) fails: the circuit opens.
    await expect(client.request('GET', '/c', { params: { fail: 1 } })).rejects.toThrow();
    expect(client.circuitBreaker().status('GET', '/c').state).toBe('open');
    const sent = a.hits.length;
    let settled: QueryResult<string[]> | undefined;
    await act(async () => {
      settled = await result.current.refetch();
    });
    expect(isCircuitOpenError(settled!.error)).toBe(true);
    expect(settled!.status).toBe('error');
    expect(settled!.data).toEqual(['c']);
    await waitFor(() => expect(isCircuitOpenError(result.current.error)).toBe(true));
    expect(result.current.isFetching).toBe(false);
    expect(a.hits.length).toBe(sent);
  });
});

describe('useMutation callbacks and renders', () => {
  function gatedPost(a: Api, path: string) {
    const open = gate();
    a.routes.set(`POST ${path}`, async (_req, res) => {
      await open.promise;
      json(res, 201, { ok: true });
    });
    return open;
  }

  it("mutate's own callbacks do not run once the component unmounted; the hook's do, and the request completes", async () => {
    const a = await api();
    const open = gatedPost(a, '/m');
    const client = clientOf(a.base);
    const log: string[] = [];
    const { result, unmount } = renderHook(
      () =>
        useMutation<{ ok: boolean }, number>('POST', '/m', {
          onSuccess: () => log.push('hook success'),
          onSettled: () => log.push('hook settled'),
        }),
      { wrapper: wrapperFor(client) },
    );
    let settled: Promise<unknown> | undefined;
    act(() => {
      result.current.mutate(1, {
        onSuccess: () => log.push('call success'),
        onSettled: () => log.push('call settled'),
      });
      settled = result.current.mutateAsync(2, { onSuccess: () => log.push('async call success') });
    });
    await waitFor(() => expect(a.count('POST', '/m')).toBe(2));
    unmount();
    await flush();
    open.open();
    await expect(settled).resolves.toEqual({ ok: true });
    await waitFor(() => expect(log.filter((l) => l === 'hook settled')).toHaveLength(2));
    await flush();
    expect(log.filter((l) => l.startsWith('call') || l.startsWith('async'))).toEqual([]);
    expect(a.hits.filter((h) => h.aborted)).toEqual([]);
  });

  it("mutate's own callbacks run for the latest call only: not for one a newer call or reset() superseded", async () => {
    const a = await api();
    const open = gatedPost(a, '/m');
    const client = clientOf(a.base);
    const log: string[] = [];
    const { result } = renderHook(
      () =>
        useMutation<{ ok: boolean }, number>('POST', '/m', {
          onSettled: (_d, _e, n) => log.push(`hook ${n}`),
        }),
      { wrapper: wrapperFor(client) },
    );
    const own = (n: number) => ({
      onSuccess: () => log.push(`call ${n}`),
      onSettled: () => log.push(`call settled ${n}`),
    });
    act(() => {
      result.current.mutate(1, own(1));
      result.current.mutate(2, own(2));
    });
    await waitFor(() => expect(a.count('POST', '/m')).toBe(2));
    open.open();
    await waitFor(() => expect(log.filter((l) => l.startsWith('hook'))).toHaveLength(2));
    await waitFor(() => expect(log).toContain('call settled 2'));
    expect(log.filter((l) => l.startsWith('call'))).toEqual(['call 2', 'call settled 2']);

    log.length = 0;
    let done: Promise<unknown> | undefined;
    act(() => {
      done = result.current.mutateAsync(3, own(3));
      result.current.reset();
    });
    await expect(done).resolves.toEqual({ ok: true });
    await flush();
    expect(log).toEqual(['hook 3']);
    expect(result.current.status).toBe('idle');
  });

  it('a mutation settles with the callbacks and options of the latest render, not of the render that called mutate', async () => {
    const a = await api();
    const open = gatedPost(a, '/m');
    const client = clientOf(a.base);
    const log: string[] = [];
    const { result, rerender } = renderHook(
      ({ round }: { round: number }) =>
        useMutation<{ ok: boolean }, number>('POST', '/m', {
          onSuccess: () => log.push(`success ${round}`),
          onSettled: () => log.push(`settled ${round}`),
        }),
      { wrapper: wrapperFor(client), initialProps: { round: 1 } },
    );
    act(() => {
      result.current.mutate(1);
    });
    await waitFor(() => expect(a.count('POST', '/m')).toBe(1));
    rerender({ round: 2 });
    open.open();
    await waitFor(() => expect(log).toEqual(['success 2', 'settled 2']));
  });
});

describe('suspense reads nobody waits for any more', () => {
  it('a boundary unmounted while its read hangs: the read is cancelled (the server sees the client leave) and nothing is left', async () => {
    const a = await api();
    const arrived = hang(a, '/s');
    const client = clientOf(a.base);
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    onTestFinished(() => {
      vi.useRealTimers();
    });
    const { unmount } = render(<SuspenseTree />, { wrapper: wrapperFor(client) });
    await arrived;
    expect(screen.getByText('loading')).toBeTruthy();
    unmount();
    for (let i = 0; i < 30 && storeFor(client).size > 0; i++) {
      await act(async () => {
        await vi.advanceTimersByTimeAsync(1000);
      });
      await flush();
    }
    expect(storeFor(client).size).toBe(0);
    await until(() => a.hits[0]!.aborted);
    expect(debugOf(client)).toMatchObject({ subscriptions: 0, flights: 0 });
  });

  it('a read slower than the check-ins still completes, with one request, for a boundary that stays mounted', async () => {
    const a = await api();
    const answer = gate();
    a.routes.set('GET /s', async (_req, res) => {
      await answer.promise;
      json(res, 200, ['late']);
    });
    const client = clientOf(a.base);
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    onTestFinished(() => {
      vi.useRealTimers();
    });
    render(<SuspenseTree />, { wrapper: wrapperFor(client) });
    await until(() => a.count('GET', '/s') === 1);
    for (let i = 0; i < 30; i++) {
      await act(async () => {
        await vi.advanceTimersByTimeAsync(1000);
      });
      await flush();
    }
    expect(screen.getByText('loading')).toBeTruthy();
    answer.open();
    await until(() => screen.queryByTestId('s') !== null);
    expect(screen.getByTestId('s').textContent).toBe('late');
    expect(a.count('GET', '/s')).toBe(1);
    expect(a.hits[0]!.aborted).toBe(false);
  });
});

describe('a select that throws', () => {
  it('in useInfiniteQuery is the query error too, and the next page selects again', async () => {
    const a = await api();
    a.routes.set('GET /feed', (req, res) => {
      const page = Number(new URL(req.url!, 'http://x').searchParams.get('page'));
      json(res, 200, page === 0 ? { n: 1, next: 1 } : { n: null, next: null });
    });
    const client = clientOf(a.base);
    const { result } = renderHook(
      () =>
        readAll(
          useInfiniteQuery<{ n: number | null; next: number | null }, number, number>('/feed', {
            initialPageParam: 0,
            getNextPageParam: (last) => last.next,
            select: (d) => d.pages.reduce((sum, p) => sum + p.n!.toFixed(0).length, 0),
          }),
        ),
      { wrapper: wrapperFor(client) },
    );
    await waitFor(() => expect(result.current.data).toBe(1));
    await act(async () => {
      await result.current.fetchNextPage();
    });
    await waitFor(() => expect(result.current.status).toBe('error'));
    expect(result.current.error).toBeInstanceOf(TypeError);
    expect(result.current.data).toBe(1);
  });

  it('is the query error (status error, the last good selection kept), not a crash; good data selects again', async () => {
    const a = await api();
    let body: unknown = { items: ['a', 'b'] };
    a.routes.set('GET /sel', (_req, res) => json(res, 200, body));
    const client = clientOf(a.base);
    const count = (d: { items: string[] }) => d.items.length;
    const { result } = renderHook(
      () => readAll(useQuery<{ items: string[] }, number>('/sel', { select: count })),
      { wrapper: wrapperFor(client) },
    );
    await waitFor(() => expect(result.current.data).toBe(2));
    body = { items: null };
    await act(async () => {
      await result.current.refetch();
    });
    await waitFor(() => expect(result.current.status).toBe('error'));
    expect(result.current.error).toBeInstanceOf(TypeError);
    expect(result.current.isError).toBe(true);
    expect(result.current.data).toBe(2);
    expect(result.current.isFetching).toBe(false);
    body = { items: ['a', 'b', 'c'] };
    await act(async () => {
      await result.current.refetch();
    });
    await waitFor(() => expect(result.current.data).toBe(3));
    expect(result.current.status).toBe('success');
    expect(result.current.error).toBeNull();
  });
});

describe('refetch() after unmount', () => {
  it('sends nothing and resolves with the last result (useQuery and useInfiniteQuery)', async () => {
    const a = await api();
    a.routes.set('GET /gone', (_req, res) => json(res, 200, ['g']));
    a.routes.set('GET /gone-list', (_req, res) => json(res, 200, { next: null }));
    const client = clientOf(a.base);
    const query = renderHook(() => readAll(useQuery<string[]>('/gone')), {
      wrapper: wrapperFor(client),
    });
    const list = renderHook(
      () =>
        useInfiniteQuery<{ next: null }, number>('/gone-list', {
          initialPageParam: 0,
          getNextPageParam: (last) => last.next,
        }),
      { wrapper: wrapperFor(client) },
    );
    await waitFor(() => expect(query.result.current.data).toEqual(['g']));
    await waitFor(() => expect(list.result.current.data?.pages).toHaveLength(1));
    const { refetch } = query.result.current;
    const listRefetch = list.result.current.refetch;
    query.unmount();
    list.unmount();
    await flush();
    const sent = a.hits.length;
    const settled = await refetch();
    await listRefetch();
    await flush();
    expect(a.hits.length).toBe(sent);
    expect(settled.data).toEqual(['g']);
    expect(settled.status).toBe('success');
    expect(debugOf(client).flights).toBe(0);
  });
});

describe('a getNextPageParam that throws', () => {
  it('is the query error (the loaded pages stay, no next page), not a crash of the render', async () => {
    const a = await api();
    a.routes.set('GET /cursor', (_req, res) => json(res, 200, { items: ['x'] }));
    const client = clientOf(a.base);
    const { result } = renderHook(
      () =>
        readAll(
          useInfiniteQuery<{ items: string[]; cursor?: { next: number } }, number>('/cursor', {
            initialPageParam: 0,
            // The API left `cursor` out: reading `.next` of undefined throws.
            getNextPageParam: (last) => last.cursor!.next,
          }),
        ),
      { wrapper: wrapperFor(client) },
    );
    await waitFor(() => expect(result.current.status).toBe('error'));
    expect(result.current.error).toBeInstanceOf(TypeError);
    expect(result.current.data?.pages).toEqual([{ items: ['x'] }]);
    expect(result.current.hasNextPage).toBe(false);
    const sent = a.hits.length;
    await act(async () => {
      await result.current.fetchNextPage();
    });
    expect(a.hits.length).toBe(sent);
  });

  it('also when the pages come back from the cache at mount; fixed data clears it', async () => {
    const a = await api();
    let fixed = false;
    a.routes.set('GET /cursor2', (req, res) => {
      const page = Number(new URL(req.url!, 'http://x').searchParams.get('page'));
      json(res, 200, page === 0 ? { next: 1 } : { next: fixed ? null : 'bad' });
    });
    const client = clientOf(a.base);
    const getNextPageParam = (last: { next: number | string | null }) => {
      if (typeof last.next === 'string') throw new RangeError(`bad cursor ${last.next}`);
      return last.next;
    };
    const hook = () =>
      readAll(
        useInfiniteQuery<{ next: number | string | null }, number>('/cursor2', {
          initialPageParam: 0,
          getNextPageParam,
        }),
      );
    const first = renderHook(hook, { wrapper: wrapperFor(client) });
    await waitFor(() => expect(first.result.current.hasNextPage).toBe(true));
    await act(async () => {
      await first.result.current.fetchNextPage();
    });
    await waitFor(() => expect(first.result.current.error).toBeInstanceOf(RangeError));
    first.unmount();
    const sent = a.hits.length;
    const again = renderHook(hook, { wrapper: wrapperFor(client) });
    expect(again.result.current.error).toBeInstanceOf(RangeError);
    expect(again.result.current.data?.pages).toEqual([{ next: 1 }, { next: 'bad' }]);
    expect(again.result.current.hasNextPage).toBe(false);
    expect(a.hits.length).toBe(sent);
    fixed = true;
    await act(async () => {
      client.invalidate('/cursor2');
    });
    await waitFor(() => expect(again.result.current.status).toBe('success'));
    expect(again.result.current.data?.pages).toEqual([{ next: 1 }, { next: null }]);
    expect(again.result.current.error).toBeNull();
  });
});

describe('automatic refetches against an open circuit', () => {
  /** A query with data on `GET /auto`, then the endpoint's circuit opened by another read. */
  async function openCircuit(
    options: { refetchInterval?: number; cache?: { ttl: number } },
    resetTimeout: number,
  ) {
    const a = await api();
    a.routes.set('GET /auto', (req, res) =>
      req.url!.includes('fail') ? json(res, 500, {}) : json(res, 200, ['ok']),
    );
    const client = clientOf(a.base, { circuitBreaker: { failureThreshold: 1, resetTimeout } });
    const rejected: unknown[] = [];
    client.on('circuit-rejected', (e) => rejected.push(e));
    const { result } = renderHook(() => readAll(useQuery<string[]>('/auto', options)), {
      wrapper: wrapperFor(client),
    });
    await waitFor(() => expect(result.current.data).toEqual(['ok']));
    await expect(client.request('GET', '/auto', { params: { fail: 1 } })).rejects.toThrow();
    rejected.length = 0;
    return { a, client, rejected, result };
  }

  it('an interval tick is dropped silently (no circuit-rejected, no error shown), as the core drops its own refetches; the reset probe reads', async () => {
    const { a, rejected, result } = await openCircuit({ refetchInterval: 20 }, 300);
    const sent = a.count('GET', '/auto');
    // Ticks while open are dropped; the first after resetTimeout is the half-open probe.
    await waitFor(() => expect(a.count('GET', '/auto')).toBeGreaterThan(sent), { timeout: 3000 });
    expect(rejected).toEqual([]);
    expect(result.current.status).toBe('success');
    expect(result.current.error).toBeNull();
  });

  it('an invalidation is dropped silently; so is a focus over stale data, as an interval tick is', async () => {
    const { a, client, rejected, result } = await openCircuit({ cache: { ttl: 1 } }, 60_000);
    await new Promise((r) => setTimeout(r, 5));
    const sent = a.hits.length;
    // The invalidation refetch is the core's own: dropped silently, the data stays.
    await act(async () => {
      client.invalidate('/auto');
    });
    await flush();
    expect(rejected).toEqual([]);
    expect(result.current.status).toBe('success');
    expect(result.current.data).toEqual(['ok']);
    await act(async () => {
      window.dispatchEvent(new Event('focus'));
    });
    await flush();
    expect(rejected).toEqual([]);
    expect(result.current.error).toBeNull();
    expect(a.hits.length).toBe(sent);
    expect(result.current.data).toEqual(['ok']);
    expect(result.current.isFetching).toBe(false);
  });
});

const never = new Promise<never>(() => {});
let goToNoUrl: () => void = () => {};
function Ticker({ url }: { url: string | null }) {
  const { data } = useQuery<string[]>(url, { refetchInterval: 20 });
  return <p data-testid="tick">{data?.[0] ?? '-'}</p>;
}
function Hang({ on }: { on: boolean }) {
  if (on) use(never);
  return null;
}
/** `goToNoUrl()` switches the Ticker to no URL in a transition that suspends for good. */
function TransitionApp() {
  const [url, setUrl] = useState<string | null>('/tick');
  goToNoUrl = () => startTransition(() => setUrl(null));
  return (
    <Suspense fallback={<p>wait</p>}>
      <Ticker url={url} />
      <Hang on={url === null} />
    </Suspense>
  );
}

describe('a render that is never committed', () => {
  it('an interval armed for the committed key keeps ticking without a throw while a transition to no URL is suspended', async () => {
    const a = await api();
    a.routes.set('GET /tick', (_req, res) => json(res, 200, ['t']));
    const client = clientOf(a.base);
    render(<TransitionApp />, { wrapper: wrapperFor(client) });
    await waitFor(() => expect(screen.getByTestId('tick').textContent).toBe('t'));
    act(() => goToNoUrl());
    // The transition suspends: the committed UI (and its interval) stays.
    const sent = a.count('GET', '/tick');
    await waitFor(() => expect(a.count('GET', '/tick')).toBeGreaterThan(sent + 1));
    expect(screen.getByTestId('tick').textContent).toBe('t');
  });
});

/** Phase 0: one reader of the channel; phase 1: it leaves and two others (two spellings) join. */
function Switch({ phase, base, seen }: { phase: 0 | 1; base: string; seen: string[] }) {
  return phase === 0 ? (
    <Feed key="a" url="/events" seen={seen} />
  ) : (
    <>
      <Feed key="b" url="/events" seen={seen} />
      <Feed key="c" url={`${base}/events`} seen={seen} />
    </>
  );
}

describe('one channel, many components', () => {
  it('a reader leaving and two joining in one commit keep the one connection; all get the next event', async () => {
    const server = await live();
    const client = createClient({ baseURL: server.base });
    const seen: string[] = [];
    const { rerender, unmount } = render(<Switch phase={0} base={server.base} seen={seen} />, {
      wrapper: wrapperFor(client),
    });
    await waitFor(() => expect(screen.getByTestId('status').textContent).toBe('open'));
    rerender(<Switch phase={1} base={server.base} seen={seen} />);
    await flush();
    expect(screen.getAllByTestId('status').map((s) => s.textContent)).toEqual(['open', 'open']);
    await sharedThenClosed(server, client, seen, unmount);
  });
});

describe('ClientProvider swap while a mutation is pending', () => {
  it('the request completes on the old client (not aborted), mutateAsync settles, the hook then writes through the new one', async () => {
    const a = await api();
    const b = await api();
    const release = gate();
    a.routes.set('POST /m', async (_req, res) => {
      await release.promise;
      json(res, 200, { from: 'a' });
    });
    b.routes.set('POST /m', (_req, res) => json(res, 200, { from: 'b' }));
    const first = clientOf(a.base);
    const second = clientOf(b.base);
    const onSuccess = vi.fn();
    let client = first;
    const { result, rerender } = renderHook(
      () => useMutation<{ from: string }, void>('POST', '/m', { onSuccess }),
      { wrapper: ({ children }) => <ClientProvider client={client}>{children}</ClientProvider> },
    );
    let pending!: Promise<{ from: string }>;
    act(() => {
      pending = result.current.mutateAsync();
    });
    await waitFor(() => expect(a.count('POST', '/m')).toBe(1));
    client = second;
    rerender();
    release.open();
    await expect(pending).resolves.toEqual({ from: 'a' });
    expect(a.hits.find((h) => h.method === 'POST')!.aborted).toBe(false);
    expect(onSuccess).toHaveBeenCalledTimes(1);
    await act(async () => {
      await expect(result.current.mutateAsync()).resolves.toEqual({ from: 'b' });
    });
    await waitFor(() => expect(result.current.data).toEqual({ from: 'b' }));
    expect(b.count('POST', '/m')).toBe(1);
    expect(a.count('POST', '/m')).toBe(1);
    expect(debugOf(first).flights).toBe(0);
  });
});

interface NumPage {
  n: number;
  next: number | null;
}

function pagedRoute(a: Api, path: string, last: number, version = () => 0): void {
  a.routes.set(`GET ${path}`, (req, res) => {
    const page = Number(new URL(req.url!, 'http://x').searchParams.get('page'));
    json(res, 200, { n: page * 10 + version(), next: page < last ? page + 1 : null });
  });
}

function usePaged(url: string | null) {
  return readAll(
    useInfiniteQuery<NumPage, number>(url, {
      initialPageParam: 0,
      getNextPageParam: (p) => p.next,
    }),
  );
}

describe('useInfiniteQuery edges', () => {
  it('unmounting while the next page loads aborts its read; nothing is left', async () => {
    const a = await api();
    pagedRoute(a, '/pg', 5);
    const client = clientOf(a.base);
    const { result, unmount } = renderHook(() => usePaged('/pg'), {
      wrapper: wrapperFor(client),
    });
    await waitFor(() => expect(result.current.hasNextPage).toBe(true));
    const arrived = gate();
    a.routes.set('GET /pg', () => arrived.open());
    act(() => {
      void result.current.fetchNextPage();
    });
    await arrived.promise;
    expect(result.current.isFetchingNextPage).toBe(true);
    unmount();
    await flush();
    await waitFor(() => expect(a.hits.at(-1)!.aborted).toBe(true));
    expect(debugOf(client).flights).toBe(0);
    expect(storeFor(client).size).toBe(0);
  });

  it('a URL change mid-page starts the new list at its first page and cancels the old read', async () => {
    const a = await api();
    pagedRoute(a, '/old', 5);
    pagedRoute(a, '/new', 0);
    const client = clientOf(a.base);
    const { result, rerender } = renderHook(({ url }) => usePaged(url), {
      wrapper: wrapperFor(client),
      initialProps: { url: '/old' },
    });
    await waitFor(() => expect(result.current.hasNextPage).toBe(true));
    const arrived = hang(a, '/old');
    act(() => {
      void result.current.fetchNextPage();
    });
    await arrived;
    rerender({ url: '/new' });
    await waitFor(() => expect(result.current.data?.pages).toEqual([{ n: 0, next: null }]));
    expect(result.current.hasNextPage).toBe(false);
    expect(result.current.isFetchingNextPage).toBe(false);
    await waitFor(() =>
      expect(a.hits.find((h) => h.url.includes('/old?page=1'))!.aborted).toBe(true),
    );
    await flush();
    expect(result.current.isFetching).toBe(false);
  });

  it('an invalidation of one page refetches that page only; the others keep their data', async () => {
    const a = await api();
    let version = 0;
    pagedRoute(a, '/one', 5, () => version);
    const client = clientOf(a.base);
    const { result } = renderHook(() => usePaged('/one'), { wrapper: wrapperFor(client) });
    await waitFor(() => expect(result.current.hasNextPage).toBe(true));
    for (let i = 0; i < 2; i++) {
      await act(async () => {
        await result.current.fetchNextPage();
      });
    }
    expect(result.current.data?.pages.map((p) => p.n)).toEqual([0, 10, 20]);
    const before = a.count('GET', '/one');
    version = 1;
    await act(async () => {
      client.invalidate((meta) => meta.key.includes('page=1'));
    });
    await waitFor(() => expect(result.current.data?.pages.map((p) => p.n)).toEqual([0, 11, 20]));
    expect(a.count('GET', '/one')).toBe(before + 1);
    expect(result.current.hasNextPage).toBe(true);
    expect(result.current.isFetching).toBe(false);
  });

  it('thirty pages come back from the cache on remount without a request, and the list goes on from there', async () => {
    const a = await api();
    pagedRoute(a, '/many', 40);
    const client = clientOf(a.base);
    const first = renderHook(() => usePaged('/many'), { wrapper: wrapperFor(client) });
    await waitFor(() => expect(first.result.current.hasNextPage).toBe(true));
    for (let i = 1; i < 30; i++) {
      await act(async () => {
        await first.result.current.fetchNextPage();
      });
    }
    expect(first.result.current.data?.pages).toHaveLength(30);
    first.unmount();
    await flush();
    const sent = a.hits.length;
    const again = renderHook(() => usePaged('/many'), { wrapper: wrapperFor(client) });
    expect(again.result.current.data?.pages).toHaveLength(30);
    expect(again.result.current.data?.pageParams.at(-1)).toBe(29);
    await flush();
    expect(a.hits.length).toBe(sent);
    await act(async () => {
      await again.result.current.fetchNextPage();
    });
    expect(again.result.current.data?.pages.at(-1)).toEqual({ n: 300, next: 31 });
    expect(a.hits.length).toBe(sent + 1);
  });
});

describe('useQueries edges', () => {
  it('a query dropped from the list mid-read is cancelled; a duplicate key is one request; the rest keep their data', async () => {
    const a = await api();
    a.routes.set('GET /q1', (_req, res) => json(res, 200, 'one'));
    const arrived = hang(a, '/q2');
    const client = clientOf(a.base);
    const { result, rerender } = renderHook(
      ({ urls }) => useQueries(urls.map((u) => queryOptions<string>(u))),
      { wrapper: wrapperFor(client), initialProps: { urls: ['/q1', '/q2', '/q1'] } },
    );
    await waitFor(() => expect(result.current[0]!.data).toBe('one'));
    await arrived;
    expect(result.current[2]!.data).toBe('one');
    expect(a.count('GET', '/q1')).toBe(1);
    rerender({ urls: ['/q1'] });
    await waitFor(() => expect(a.hits.find((h) => h.url === '/q2')!.aborted).toBe(true));
    expect(result.current).toHaveLength(1);
    expect(result.current[0]!.data).toBe('one');
    expect(debugOf(client).flights).toBe(0);
    expect(storeFor(client).size).toBe(1);
  });

  it("a removed position's refetch() sends nothing; a key swapped between positions keeps its data without a request", async () => {
    const a = await api();
    a.routes.set('GET /x', (_req, res) => json(res, 200, 'x'));
    a.routes.set('GET /y', (_req, res) => json(res, 200, 'y'));
    const client = clientOf(a.base);
    const { result, rerender } = renderHook(
      ({ urls }) => useQueries(urls.map((u) => queryOptions<string>(u))),
      { wrapper: wrapperFor(client), initialProps: { urls: ['/x', '/y'] } },
    );
    await waitFor(() => expect(result.current.map((r) => r.data)).toEqual(['x', 'y']));
    // The query of /x: its observer follows its key (to position 1 on the swap).
    const dropped = result.current[0]!.refetch;
    rerender({ urls: ['/y', '/x'] });
    expect(result.current.map((r) => r.data)).toEqual(['y', 'x']);
    rerender({ urls: ['/y'] });
    await flush();
    const sent = a.hits.length;
    // The query of /x is gone: its refetch is that of an unmounted query.
    await dropped();
    await flush();
    expect(a.hits.length).toBe(sent);
    expect(result.current.map((r) => r.data)).toEqual(['y']);
  });
});
