/**
 * Concurrent rendering: a render React throws away (a transition that suspends and is still
 * pending) must not move what the committed UI's callbacks act on. `refetch()`,
 * `fetchNextPage()` and the results' callbacks use the inputs of the last committed render, as
 * TanStack Query's observer does (its options are set in an effect).
 */
import { render, screen, waitFor } from '@testing-library/react';
import { HttpResponse, http } from 'msw';
import { Suspense, startTransition, use, useState } from 'react';
import { describe, expect, it } from 'vitest';
import {
  keepPreviousData,
  type QueryResult,
  queryOptions,
  useInfiniteQuery,
  useMutation,
  useQueries,
  useQuery,
} from '../src/index';
import { API, actEnvironment, mswServer, testClient, wrapperFor } from './helpers';

const server = mswServer();

// A transition that suspends for good never ends an `act` scope, and React holds later updates
// behind it there: these tests drive React as a browser does, outside act.
actEnvironment(false);

/** Lets React and the network work for a moment. */
function settle(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 20));
}

/** GET /:name answers `[name, n]`, n counting the reads of that path (its `page` param too). */
function endpoints() {
  const reads = new Map<string, number>();
  server.use(
    http.get(`${API}/:name`, ({ request, params }) => {
      const url = new URL(request.url);
      const page = url.searchParams.get('page');
      const name = `${params.name as string}${page === null ? '' : `@${page}`}`;
      const n = (reads.get(name) ?? 0) + 1;
      reads.set(name, n);
      return HttpResponse.json({
        name,
        n,
        next: page !== null && Number(page) < 5 ? Number(page) + 1 : null,
      });
    }),
  );
  return { count: (name: string) => reads.get(name) ?? 0 };
}

const never = new Promise<never>(() => {});
function Hang({ on }: { on: boolean }) {
  if (on) use(never);
  return null;
}

interface Item {
  name: string;
  n: number;
  next: number | null;
}

let go: (url: string) => void = () => {};
let bump: () => void = () => {};

/**
 * `go(url)` moves the page to `url` in a transition that suspends for good (the `Hang` sibling),
 * so the committed UI stays on the old URL; `bump()` is an urgent update of the same tree.
 */
function Shell({ first, children }: { first: string; children: (url: string) => React.ReactNode }) {
  const [url, setUrl] = useState(first);
  const [, setN] = useState(0);
  go = (next) => startTransition(() => setUrl(next));
  bump = () => setN((n) => n + 1);
  return (
    <Suspense fallback={<p>wait</p>}>
      {children(url)}
      <Hang on={url !== first} />
    </Suspense>
  );
}

let refetched: Promise<QueryResult<Item>> | undefined;
function One({ url }: { url: string }) {
  const { data, refetch } = useQuery<Item>(url);
  return (
    <button
      type="button"
      onClick={() => {
        refetched = refetch();
      }}
    >
      {data ? `${data.name}:${data.n}` : '-'}
    </button>
  );
}

function Feed({ url }: { url: string }) {
  const feed = useInfiniteQuery<Item, number>(url, {
    initialPageParam: 1,
    getNextPageParam: (last) => last.next,
    cache: false,
  });
  return (
    <>
      <p data-testid="pages">{feed.data?.pages.map((p) => `${p.name}:${p.n}`).join(',') ?? '-'}</p>
      <button type="button" onClick={() => void feed.fetchNextPage()}>
        more
      </button>
      <button type="button" onClick={() => void feed.refetch()}>
        again
      </button>
    </>
  );
}

function Many({ url }: { url: string }) {
  const urls = url === '/a' ? ['/a', '/b'] : ['/a'];
  const results = useQueries(urls.map((u) => queryOptions<Item>(u)));
  return (
    <>
      {results.map((r, i) => (
        <button key={urls[i]} type="button" onClick={() => void r.refetch()}>
          {r.data ? `${r.data.name}:${r.data.n}` : '-'}
        </button>
      ))}
    </>
  );
}

function Save({ url }: { url: string }) {
  const [done, setDone] = useState('-');
  const save = useMutation<{ at: string }, { v: number }>('PUT', url, {
    onSuccess: (data) => setDone(`saved ${data.at} from ${url}`),
  });
  return (
    <button type="button" onClick={() => save.mutate({ v: 1 })}>
      {done}
    </button>
  );
}

describe('a pending transition does not move what the committed UI acts on', () => {
  it('useMutation: mutate() sends to the committed URL and runs its callbacks', async () => {
    const puts: string[] = [];
    server.use(
      http.put(`${API}/:name`, ({ params }) => {
        puts.push(params.name as string);
        return HttpResponse.json({ at: params.name });
      }),
    );
    const client = testClient();
    render(<Shell first="/x">{(url) => <Save url={url} />}</Shell>, {
      wrapper: wrapperFor(client),
    });
    go('/y');
    await settle();
    screen.getByRole('button').click();
    await waitFor(() => expect(screen.getByRole('button').textContent).toBe('saved x from /x'));
    expect(puts).toEqual(['x']);
  });

  it("useQuery: refetch() refetches the committed key, not the pending render's", async () => {
    const api = endpoints();
    const client = testClient();
    render(<Shell first="/a">{(url) => <One url={url} />}</Shell>, {
      wrapper: wrapperFor(client),
    });
    await waitFor(() => expect(screen.getByRole('button').textContent).toBe('a:1'));
    go('/b');
    await settle();
    // The transition suspended: the UI on screen is still the one of /a.
    expect(screen.getByRole('button').textContent).toBe('a:1');
    screen.getByRole('button').click();
    await waitFor(() => expect(screen.getByRole('button').textContent).toBe('a:2'));
    // It resolves with the result of what is on screen, not of the pending key.
    expect((await refetched!).data).toEqual({ name: 'a', n: 2, next: null });
    expect(api.count('a')).toBe(2);
    expect(api.count('b')).toBe(0);
  });

  it('useInfiniteQuery: fetchNextPage() and refetch() act on the committed list', async () => {
    const api = endpoints();
    const client = testClient();
    render(<Shell first="/feed">{(url) => <Feed url={url} />}</Shell>, {
      wrapper: wrapperFor(client),
    });
    await waitFor(() => expect(screen.getByTestId('pages').textContent).toBe('feed@1:1'));
    go('/other');
    await settle();
    screen.getByText('more').click();
    await waitFor(() => expect(screen.getByTestId('pages').textContent).toBe('feed@1:1,feed@2:1'));
    screen.getByText('again').click();
    await waitFor(() => expect(screen.getByTestId('pages').textContent).toBe('feed@1:2,feed@2:2'));
    expect(api.count('other@1')).toBe(0);
  });

  it('useInfiniteQuery: an urgent render after the discarded one keeps the loaded pages', async () => {
    endpoints();
    const client = testClient();
    render(<Shell first="/feed">{(url) => <Feed url={url} />}</Shell>, {
      wrapper: wrapperFor(client),
    });
    await waitFor(() => expect(screen.getByTestId('pages').textContent).toBe('feed@1:1'));
    screen.getByText('more').click();
    await waitFor(() => expect(screen.getByTestId('pages').textContent).toBe('feed@1:1,feed@2:1'));
    go('/other');
    await settle();
    bump();
    await settle();
    expect(screen.getByTestId('pages').textContent).toBe('feed@1:1,feed@2:1');
  });

  it('useQueries: a position the pending render drops still refetches after an urgent render', async () => {
    const api = endpoints();
    const client = testClient();
    render(<Shell first="/a">{(url) => <Many url={url} />}</Shell>, {
      wrapper: wrapperFor(client),
    });
    await waitFor(() =>
      expect(screen.getAllByRole('button').map((b) => b.textContent)).toEqual(['a:1', 'b:1']),
    );
    go('/z');
    await settle();
    bump();
    await settle();
    screen.getAllByRole('button')[1]!.click();
    await waitFor(() => expect(screen.getAllByRole('button')[1]!.textContent).toBe('b:2'));
    expect(api.count('b')).toBe(2);
  });
});

let move: (url: string) => void = () => {};

/** A sibling still loading for good on /b: a transition to /b is never committed. */
function Detail({ url }: { url: string }) {
  if (url === '/b') use(never);
  return null;
}

function Page({ url }: { url: string }) {
  const r = useQuery<Item>(url, { placeholderData: keepPreviousData });
  return (
    <p data-testid="page">
      {r.data ? `${r.data.name}${r.isPlaceholderData ? ' (placeholder)' : ''}` : '-'}
    </p>
  );
}

function Nav() {
  const [url, setUrl] = useState('/a');
  move = (next) => startTransition(() => setUrl(next));
  return (
    <Suspense fallback={<p>wait</p>}>
      <Page url={url} />
      <Detail url={url} />
    </Suspense>
  );
}

describe('placeholderData: keepPreviousData and a render React threw away', () => {
  // The data "shown" was recorded while rendering: /b's cached page, rendered in the transition
  // React threw away, became the placeholder of /c, though it never was on screen.
  it('the placeholder is the page that was on screen, not one a thrown-away render read', async () => {
    endpoints();
    server.use(http.get(`${API}/c`, () => new Promise<Response>(() => {})));
    const client = testClient();
    await client.get('/b');
    render(<Nav />, { wrapper: wrapperFor(client) });
    await waitFor(() => expect(screen.getByTestId('page').textContent).toBe('a'));
    move('/b');
    await settle();
    expect(screen.getByTestId('page').textContent).toBe('a');
    move('/c');
    await waitFor(() => expect(screen.getByTestId('page').textContent).toBe('a (placeholder)'));
  });
});
