// @keel/react vs TanStack Query's useQuery (issue 7): one run, both libraries in the same process,
// results written to bench/RESULTS.md under "## @keel/react".
//
//   cd packages/core && npx tsup && cd ../react && npx tsup && cd ../.. && node --expose-gc bench/react.bench.mjs
//
// Harness: React 19 in production mode rendering into a jsdom document (jsdom comes from
// packages/react's dev dependencies), createRoot + flushSync for the first render, then the real
// scheduler until every component shows data. Both libraries get the same fake fetch: a Response
// with a small JSON body after a 1 ms timer (one "network" round trip), counted per call.
//
// 1. 1,000 components on one key: fetch calls, renders per component, time to first render of
//    all (flushSync of the initial pending UI), time until all show data, then an invalidation
//    that refetches equal data (renders it causes).
// 2. 1,000 components on 1,000 distinct keys: the same times, and the heap held once everything
//    is loaded (heapUsed delta after gc(), React's fibers and DOM included for both).
// 3. useInfiniteQuery: 1,000 items across 20 pages of 50, read page after page by one list
//    component (each item a memoized child): fetch calls, renders of the list and of the items,
//    time until all 1,000 show, then an invalidation that refetches every page with equal data
//    (renders it causes, calls, time).
//
// Rounds alternate which library goes first; every figure is a median over rounds.
import { cpus } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { installDom } from './lib/dom.mjs';
import { readCpuModel, writeSection } from './lib/results.mjs';
import { median } from './lib/stats.mjs';

process.env.NODE_ENV = 'production';
const here = dirname(fileURLToPath(import.meta.url));
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);
const N = 1000;
const BASE = 'http://bench.test';

// A DOM for react-dom, before React loads.
installDom(join(here, '../packages/react/package.json'));

const React = await import('react');
const { createRoot } = await import('react-dom/client');
const { flushSync } = await import('react-dom');
const { createClient } = await import('@keel/core');
const keel = await import('@keel/react');
const tanstack = await import('@tanstack/react-query');
const h = React.createElement;

// ── the shared fake network ───────────────────────────────────────────────────────────────────

const PAGE_SIZE = 50;
const PAGES = N / PAGE_SIZE;

/** One page of the feed: PAGE_SIZE items and the next page's number (null after the last). */
function feedPage(page) {
  const items = [];
  for (let i = 0; i < PAGE_SIZE; i++) {
    const id = page * PAGE_SIZE + i;
    items.push({ id, name: `item ${id}` });
  }
  return { items, next: page + 1 < PAGES ? page + 1 : null };
}

function fakeFetch() {
  const fetchImpl = async (url) => {
    fetchImpl.calls++;
    fetchImpl.inflight++;
    await new Promise((resolve) => setTimeout(resolve, 1));
    fetchImpl.inflight--;
    const feed = /\/feed\?page=(\d+)/.exec(String(url));
    if (feed) {
      return new Response(JSON.stringify(feedPage(Number(feed[1]))), {
        status: 200,
        headers: { 'content-type': 'application/json' },
      });
    }
    const id = Number(String(url).split('/').pop()) || 0;
    return new Response(JSON.stringify({ id, name: `item ${id}`, tags: ['a', 'b'], ok: true }), {
      status: 200,
      headers: { 'content-type': 'application/json' },
    });
  };
  fetchImpl.calls = 0;
  fetchImpl.inflight = 0;
  return fetchImpl;
}

// ── components: identical bodies, only the hook differs ──────────────────────────────────────

function makeStats() {
  return { renders: new Uint32Array(N), seen: new Uint8Array(N), withData: 0 };
}

function KeelItem({ url, i, stats }) {
  stats.renders[i]++;
  const { data } = keel.useQuery(url);
  if (data !== undefined && stats.seen[i] === 0) {
    stats.seen[i] = 1;
    stats.withData++;
  }
  return h('span', null, data ? data.name : '-');
}

function TanstackItem({ url, i, stats, fetchImpl }) {
  stats.renders[i]++;
  const { data } = tanstack.useQuery({
    queryKey: [url],
    queryFn: () => fetchImpl(BASE + url).then((r) => r.json()),
  });
  if (data !== undefined && stats.seen[i] === 0) {
    stats.seen[i] = 1;
    stats.withData++;
  }
  return h('span', null, data ? data.name : '-');
}

// The list: identical bodies, only the hook differs. It reads the next page as soon as the last
// one arrived, until there is none; each item is a memoized child that counts its renders.
const FeedItem = React.memo(function FeedItem({ item, stats }) {
  stats.itemRenders++;
  return h('li', null, item.name);
});

function useFeedView(result, stats) {
  stats.listRenders++;
  const { data, hasNextPage, isFetchingNextPage, fetchNextPage } = result;
  React.useEffect(() => {
    if (hasNextPage && !isFetchingNextPage) fetchNextPage();
  }, [hasNextPage, isFetchingNextPage, fetchNextPage]);
  const items = data ? data.pages.flatMap((p) => p.items) : [];
  stats.shown = items.length;
  return h(
    'ul',
    null,
    items.map((item) => h(FeedItem, { key: item.id, item, stats })),
  );
}

const keelFeedOptions = {
  initialPageParam: 0,
  getNextPageParam: (last) => last.next,
};

function KeelFeed({ stats }) {
  return useFeedView(keel.useInfiniteQuery('/feed', keelFeedOptions), stats);
}

function TanstackFeed({ stats, fetchImpl }) {
  return useFeedView(
    tanstack.useInfiniteQuery({
      queryKey: ['/feed'],
      queryFn: ({ pageParam }) => fetchImpl(`${BASE}/feed?page=${pageParam}`).then((r) => r.json()),
      initialPageParam: 0,
      getNextPageParam: (last) => last.next,
    }),
    stats,
  );
}

const contenders = {
  keel: {
    setup(fetchImpl) {
      // Defaults (cache-first, 30 s ttl, intelligence and circuit breaker on); no retries.
      const client = createClient({ baseURL: BASE, fetch: fetchImpl, retry: { attempts: 1 } });
      return {
        wrap: (children) => h(keel.ClientProvider, { client }, children),
        Item: KeelItem,
        Feed: KeelFeed,
        invalidate: (url) => client.invalidate(url),
        teardown() {},
      };
    },
  },
  tanstack: {
    setup() {
      // Same freshness as keel's default cache (30 s), no retries, no focus refetch.
      const queryClient = new tanstack.QueryClient({
        defaultOptions: {
          queries: { retry: false, staleTime: 30_000, refetchOnWindowFocus: false },
        },
      });
      return {
        wrap: (children) => h(tanstack.QueryClientProvider, { client: queryClient }, children),
        Item: TanstackItem,
        Feed: TanstackFeed,
        invalidate: (url) => queryClient.invalidateQueries({ queryKey: [url] }),
        teardown() {
          queryClient.clear();
        },
      };
    },
  },
};

// ── one measured run ─────────────────────────────────────────────────────────────────────────

const now = () => performance.now();
const tick = () => new Promise((resolve) => setImmediate(resolve));
async function until(condition) {
  for (let i = 0; i < 100_000 && !condition(); i++) await tick();
  if (!condition()) throw new Error('bench: condition never met');
}
async function settle(rounds = 20) {
  for (let i = 0; i < rounds; i++) await tick();
}
function heap() {
  globalThis.gc?.();
  globalThis.gc?.();
  return process.memoryUsage().heapUsed;
}

async function run(name, sameKey) {
  const fetchImpl = fakeFetch();
  const lib = contenders[name].setup(fetchImpl);
  const stats = makeStats();
  const urls = Array.from({ length: N }, (_, i) => (sameKey ? '/same/1' : `/item/${i}`));
  const container = document.createElement('div');
  document.body.appendChild(container);
  const root = createRoot(container);
  const tree = lib.wrap(
    urls.map((url, i) => h(lib.Item, { key: i, url, i, stats, fetchImpl: fetchImpl })),
  );
  const heapBefore = heap();
  const t0 = now();
  flushSync(() => root.render(tree));
  const firstRender = now() - t0;
  await until(() => stats.withData === N);
  const allData = now() - t0;
  await settle();
  const heapLoaded = heap() - heapBefore;
  const rendersToData = summarize(stats.renders);
  const callsToData = fetchImpl.calls;

  let refetch;
  if (sameKey) {
    // An invalidation that refetches identical data: the components read only `data`.
    const before = Uint32Array.from(stats.renders);
    lib.invalidate(urls[0]);
    await until(() => fetchImpl.calls === callsToData + 1);
    await settle(50);
    let extra = 0;
    for (let i = 0; i < N; i++) extra += stats.renders[i] - before[i];
    refetch = { extra, calls: fetchImpl.calls - callsToData };
  }

  flushSync(() => root.unmount());
  container.remove();
  lib.teardown();
  return { firstRender, allData, heapLoaded, renders: rendersToData, calls: callsToData, refetch };
}

async function runFeed(name) {
  const fetchImpl = fakeFetch();
  const lib = contenders[name].setup(fetchImpl);
  const stats = { listRenders: 0, itemRenders: 0, shown: 0 };
  const container = document.createElement('div');
  document.body.appendChild(container);
  const root = createRoot(container);
  const t0 = now();
  flushSync(() => root.render(lib.wrap(h(lib.Feed, { stats, fetchImpl }))));
  await until(() => stats.shown === N && fetchImpl.calls === PAGES);
  const allShown = now() - t0;
  await settle();
  const loaded = {
    calls: fetchImpl.calls,
    listRenders: stats.listRenders,
    itemRenders: stats.itemRenders,
  };

  // Every loaded page refetched, equal data: nothing should re-render.
  const before = { ...stats };
  const t1 = now();
  lib.invalidate('/feed');
  // Settled: every page read again and answered (keel reads them in parallel, TanStack in turn).
  await until(() => fetchImpl.calls === PAGES * 2 && fetchImpl.inflight === 0);
  const refetchTime = now() - t1;
  await settle(50);
  const refetch = {
    time: refetchTime,
    calls: fetchImpl.calls - loaded.calls,
    listRenders: stats.listRenders - before.listRenders,
    itemRenders: stats.itemRenders - before.itemRenders,
  };
  flushSync(() => root.unmount());
  container.remove();
  lib.teardown();
  return { allShown, ...loaded, refetch };
}

function summarize(renders) {
  let sum = 0;
  let max = 0;
  let min = Number.POSITIVE_INFINITY;
  for (const r of renders) {
    sum += r;
    if (r > max) max = r;
    if (r < min) min = r;
  }
  return { avg: sum / renders.length, max, min };
}

// ── main ─────────────────────────────────────────────────────────────────────────────────────

async function main() {
  const started = now();
  const names = ['keel', 'tanstack'];
  const results = { same: { keel: [], tanstack: [] }, distinct: { keel: [], tanstack: [] } };
  const feeds = { keel: [], tanstack: [] };
  // Warm-up: JIT both paths once, unmeasured.
  for (const name of names) {
    await run(name, true);
    await run(name, false);
    await runFeed(name);
  }
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 === 0 ? names : [...names].reverse();
    for (const name of order) results.same[name].push(await run(name, true));
    for (const name of order) results.distinct[name].push(await run(name, false));
    for (const name of order) feeds[name].push(await runFeed(name));
  }

  const rows = [];
  const pick = (list, f) => median(list.map(f));
  for (const scenario of ['same', 'distinct']) {
    for (const name of names) {
      const list = results[scenario][name];
      rows.push({
        scenario,
        name,
        calls: pick(list, (r) => r.calls),
        rendersAvg: pick(list, (r) => r.renders.avg),
        rendersMax: pick(list, (r) => r.renders.max),
        firstRender: pick(list, (r) => r.firstRender),
        allData: pick(list, (r) => r.allData),
        heap: pick(list, (r) => r.heapLoaded),
        refetchExtra: scenario === 'same' ? pick(list, (r) => r.refetch.extra) : undefined,
        refetchCalls: scenario === 'same' ? pick(list, (r) => r.refetch.calls) : undefined,
      });
    }
  }
  const feedRows = names.map((name) => {
    const list = feeds[name];
    return {
      name,
      calls: pick(list, (r) => r.calls),
      listRenders: pick(list, (r) => r.listRenders),
      itemRenders: pick(list, (r) => r.itemRenders),
      allShown: pick(list, (r) => r.allShown),
      refetchTime: pick(list, (r) => r.refetch.time),
      refetchCalls: pick(list, (r) => r.refetch.calls),
      refetchList: pick(list, (r) => r.refetch.listRenders),
      refetchItems: pick(list, (r) => r.refetch.itemRenders),
    };
  });
  const elapsed = (now() - started) / 1000;
  const section = report(rows, feedRows, elapsed);
  console.log(section);
  writeSection(join(here, 'RESULTS.md'), '## @keel/react', section);
}

function report(rows, feedRows, elapsed) {
  const by = (scenario, name) => rows.find((r) => r.scenario === scenario && r.name === name);
  const label = { keel: '@keel/react useQuery', tanstack: 'TanStack useQuery' };
  const ms = (x) => `${x.toFixed(1)} ms`;
  const lines = [];
  lines.push('## @keel/react');
  lines.push('');
  lines.push(
    `Run: ${new Date().toUTCString()} · ${cpus().length} cores, ${readCpuModel()}, Node ${process.version} · ` +
      `\`node --expose-gc bench/react.bench.mjs\` (${elapsed.toFixed(1)} s, ${ROUNDS} rounds + warm-up).`,
  );
  lines.push('');
  lines.push(
    'React 19 (production build) rendering into jsdom; `createRoot`, `flushSync` for the first render, then the',
  );
  lines.push(
    'real scheduler until every component shows data. Both libraries get the same fake fetch (a JSON Response after a 1 ms timer). keel: `createClient` defaults (cache-first, 30 s ttl, observers on), no retries; TanStack: `staleTime: 30_000`, `retry: false`. Each component renders `data.name`, reading only `data`. Medians over rounds; the libraries alternate who goes first.',
  );
  lines.push('');
  lines.push(
    '| scenario | contender | fetch calls | renders / component (avg, max) | first render of all | all show data | refetch of equal data: extra renders (fetch calls) | heap when loaded |',
  );
  lines.push('|---|---|---:|---:|---:|---:|---:|---:|');
  for (const scenario of ['same', 'distinct']) {
    for (const name of ['keel', 'tanstack']) {
      const r = by(scenario, name);
      lines.push(
        `| ${scenario === 'same' ? '1,000 components, 1 key' : '1,000 components, 1,000 keys'} | ${label[name]} | ${r.calls} | ${r.rendersAvg.toFixed(2)}, ${r.rendersMax} | ${ms(r.firstRender)} | ${ms(r.allData)} | ${r.refetchExtra === undefined ? '' : `${r.refetchExtra} (${r.refetchCalls})`} | ${(r.heap / 1024 / 1024).toFixed(2)} MB |`,
      );
    }
  }
  lines.push('');
  const ratio = (scenario, field) =>
    (by(scenario, 'keel')[field] / by(scenario, 'tanstack')[field]).toFixed(2);
  const rendersOk =
    by('same', 'keel').rendersMax <= by('same', 'tanstack').rendersMax &&
    by('distinct', 'keel').rendersMax <= by('distinct', 'tanstack').rendersMax;
  const speedOk =
    by('same', 'keel').allData <= by('same', 'tanstack').allData &&
    by('distinct', 'keel').allData <= by('distinct', 'tanstack').allData;
  lines.push(
    `keel / TanStack time ratios (lower is faster): 1 key: first render ${ratio('same', 'firstRender')}, all data ${ratio('same', 'allData')}; ` +
      `1,000 keys: first render ${ratio('distinct', 'firstRender')}, all data ${ratio('distinct', 'allData')}; heap ${ratio('distinct', 'heap')}.`,
  );
  lines.push('');
  lines.push(
    `Target "no more renders than TanStack": ${rendersOk ? 'met' : 'not met'}. Target "at least equal speed" (time until all show data): ${speedOk ? 'met' : 'not met'}.`,
  );
  lines.push('');
  lines.push(
    `### useInfiniteQuery: ${N.toLocaleString('en')} items across ${PAGES} pages of ${PAGE_SIZE}`,
  );
  lines.push('');
  lines.push(
    "One list component reads the next page as soon as the last one arrived (an effect on `hasNextPage` / `isFetchingNextPage`), until there is none; each item is a `React.memo` child counting its renders. Same fake fetch (1 ms per page). Then an invalidation of the feed refetches every loaded page with equal data. keel: `useInfiniteQuery('/feed', { initialPageParam: 0, getNextPageParam })` (pages read with `?page=n`, each its own cache entry); TanStack: `useInfiniteQuery` with the same `getNextPageParam`.",
  );
  lines.push('');
  lines.push(
    '| contender | fetch calls | list renders | item renders | all 1,000 shown | invalidation: calls, list renders, item renders | invalidation: time until settled |',
  );
  lines.push('|---|---:|---:|---:|---:|---:|---:|');
  const feedLabel = { keel: '@keel/react useInfiniteQuery', tanstack: 'TanStack useInfiniteQuery' };
  for (const r of feedRows) {
    lines.push(
      `| ${feedLabel[r.name]} | ${r.calls} | ${r.listRenders} | ${r.itemRenders} | ${ms(r.allShown)} | ${r.refetchCalls}, ${r.refetchList}, ${r.refetchItems} | ${ms(r.refetchTime)} |`,
    );
  }
  lines.push('');
  const fk = feedRows.find((r) => r.name === 'keel');
  const ft = feedRows.find((r) => r.name === 'tanstack');
  lines.push(
    `keel / TanStack (lower is better): time until all shown ${(fk.allShown / ft.allShown).toFixed(2)}, list renders ${(fk.listRenders / ft.listRenders).toFixed(2)}, item renders ${(fk.itemRenders / ft.itemRenders).toFixed(2)}, invalidation time ${(fk.refetchTime / ft.refetchTime).toFixed(2)}.`,
  );
  lines.push('');
  return lines.join('\n');
}

await main();
// TanStack's gcTime and staleTime timers (5 min, 30 s) outlive its cleared clients under jsdom and
// would keep the process (and `pnpm bench`) waiting; keel leaves none (devtools' gc.audit test).
process.exit(0);
