// Bundle size (issue #15): keel's four README apps (scripts/size-budget.mjs, the same check the
// test command runs) next to the tools a user would pick instead, each an app of the same shape,
// all bundled in this run with the same esbuild settings (--bundle --minify --format=esm
// --target=es2022, browser, production React, react and react-dom external) and gzip -9.
// Written to bench/RESULTS.md under "## Bundle size".
//
//   npx -y pnpm@10.34.8 build && node bench/size.bench.mjs
import { execSync } from 'node:child_process';
import { cpus, loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { appCode, bundleSize, kb, keelDist, measureApps } from '../scripts/size-budget.mjs';
import { readCpuModel, writeSection } from './lib/results.mjs';

const here = dirname(fileURLToPath(import.meta.url));

/** The peers' apps: what their docs tell a user to write for the same job. */
const PEERS = [
  {
    name: '@tanstack/query-core, whole',
    like: 'A',
    code: `import * as queryCore from '@tanstack/query-core';\nconsole.log(queryCore);`,
  },
  {
    name: '@tanstack/query-core app: QueryClient + fetchQuery',
    like: 'A',
    code: `import { QueryClient } from '@tanstack/query-core';
const queryClient = new QueryClient();
queryClient.mount();
const data = await queryClient.fetchQuery({
  queryKey: ['users'],
  queryFn: () => fetch('https://api.example.com/users').then((r) => r.json()),
});
console.log(data);`,
  },
  {
    name: 'ky: one get',
    like: 'B',
    code: `import ky from 'ky';
const api = ky.create({ prefixUrl: 'https://api.example.com' });
console.log(await api.get('users').json());`,
  },
  {
    name: '@tanstack/react-query app: QueryClient, Provider, useQuery, useMutation',
    like: 'D',
    code: `import { QueryClient, QueryClientProvider, useMutation, useQuery } from '@tanstack/react-query';
const queryClient = new QueryClient();
function Todos() {
  const { data, error, isPending } = useQuery({
    queryKey: ['todos'],
    queryFn: () => fetch('/api/todos').then((r) => r.json()),
  });
  const add = useMutation({
    mutationFn: (todo) =>
      fetch('/api/todos', { method: 'POST', body: JSON.stringify(todo) }).then((r) => r.json()),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: ['todos'] }),
  });
  if (isPending) return <p>Loading…</p>;
  if (error) return <p>Failed: {error.message}</p>;
  return (
    <>
      <ul>{data.map((t) => <li key={t.id}>{t.title}</li>)}</ul>
      <button type="button" onClick={() => add.mutate({ title: 'New' })}>Add</button>
    </>
  );
}
root.render(<QueryClientProvider client={queryClient}><Todos /></QueryClientProvider>);`,
  },
  {
    name: 'SWR app: useSWR + useSWRMutation',
    like: 'D',
    code: `import useSWR from 'swr';
import useSWRMutation from 'swr/mutation';
const fetcher = (url) => fetch(url).then((r) => r.json());
function Todos() {
  const { data, error, isLoading } = useSWR('/api/todos', fetcher);
  const add = useSWRMutation('/api/todos', (url, { arg }) =>
    fetch(url, { method: 'POST', body: JSON.stringify(arg) }).then((r) => r.json()),
  );
  if (isLoading) return <p>Loading…</p>;
  if (error) return <p>Failed: {error.message}</p>;
  return (
    <>
      <ul>{data.map((t) => <li key={t.id}>{t.title}</li>)}</ul>
      <button type="button" onClick={() => add.trigger({ title: 'New' })}>Add</button>
    </>
  );
}
root.render(<Todos />);`,
  },
];

/**
 * Apps A and D written with createClient, as every app was before the features split: what an
 * app that does not use createBaseClient still carries.
 */
const WITH_CREATE_CLIENT = [
  {
    name: 'keel A written with createClient',
    code: `import { createClient } from '@keel/core';
const client = createClient({ baseURL: 'https://api.example.com' });
console.log((await client.get('/users')).data);`,
  },
  {
    name: 'keel D written with createClient',
    code: appCode('packages/react/README.md', 'D')
      .replace(/import \{ createBaseClient[^\n]*\n/, "import { createClient } from '@keel/core';\n")
      .replace(/createBaseClient\(\{[\s\S]*?\]\s*,?\s*\}\)/, "createClient({ baseURL: '/api' })"),
  },
];

const started = performance.now();
const apps = await measureApps();
const before = [];
for (const app of WITH_CREATE_CLIENT) {
  if (!app.code.includes('createClient(') || app.code.includes('createBaseClient')) {
    throw new Error(`${app.name}: the README block no longer has the expected shape`);
  }
  before.push({ ...app, ...(await bundleSize(app.code, { plugins: [keelDist] })) });
}
const peers = [];
for (const peer of PEERS)
  peers.push({ ...peer, ...(await bundleSize(peer.code, { resolveDir: here })) });

const rows = [
  '| app | minified | gzip -9 | target | |',
  '|---|---|---|---|---|',
  ...apps.map(
    (a) =>
      `| keel ${a.id}: ${a.what} | ${kb(a.min)} | ${kb(a.gzip)} | ${kb(a.target)} | ${a.gzip <= a.target ? 'met' : `missed (${(a.gzip / a.target).toFixed(2)}x)`} |`,
  ),
  ...before.map((b) => `| ${b.name} | ${kb(b.min)} | ${kb(b.gzip)} | | |`),
  ...peers.map((p) => {
    const keel = apps.find((a) => a.id === p.like);
    return `| ${p.name} | ${kb(p.min)} | ${kb(p.gzip)} | | keel ${p.like} is ${(keel.gzip / p.gzip).toFixed(2)}x |`;
  }),
];

const date = execSync('date').toString().trim();
const load = loadavg()
  .map((x) => x.toFixed(2))
  .join(' ');
const machine = `${cpus().length} cores, ${readCpuModel()}, Node ${process.version}`;
const elapsed = ((performance.now() - started) / 1000).toFixed(1);
console.log(rows.join('\n'));
console.log(`\n${date} · ${machine} · ${elapsed} s`);

const section = [
  '## Bundle size',
  '',
  `Run: ${date} · ${machine} · load average at the end ${load}. Sizes do not depend on load.`,
  '',
  "Each app bundled in the same run with esbuild (`--bundle --minify --format=esm --target=es2022`, browser, production React, `react` and `react-dom` external), then gzip -9; KB = 1024 bytes. keel's apps are the README blocks the test command's size budget measures (`scripts/size-budget.mjs`): A, B and C in `packages/core/README.md` (\"Bundle size\"), D the first block of `packages/react/README.md`. The peers' apps are what their docs show for the same job; the last column compares the keel app of the same shape (A: core client, one request; B: the smallest client; D: React with a query and a mutation, keel's also with `useServerEvents`).",
  '',
  ...rows,
  '',
  `Targets met: ${apps.filter((a) => a.gzip <= a.target).length} of ${apps.length}. ` +
    `What is left after the split into features is the base client itself (app B, ${kb(apps[1].gzip)}), ` +
    'which every app carries.',
  '',
].join('\n');
writeSection(join(here, 'RESULTS.md'), '## Bundle size', section);
