// @keel/devtools (issue 16): what a closed panel costs the client, and the package's size. One
// run, every variant in the same process; results written to bench/RESULTS.md under
// "## @keel/devtools".
//
//   npx -y pnpm@10.34.8 build && node --expose-gc bench/devtools.bench.mjs
//
// 1. A cache-hit loop (`await client.get('/hit')`, the entry fresh) on a client whose page has one
//    mounted `useQuery('/hit')`, in three variants: no devtools; `<KeelDevtools>` mounted and
//    closed; and, for scale, the panel open on its Requests view (the view that listens to the
//    most events). React 19 in production mode renders into jsdom. The panel is the one from
//    `@keel/devtools/production`: the plain entry renders nothing in a production build, and the
//    point is what the panel itself costs when it is there (in development). Rounds alternate
//    the order of the variants; each figure is a median over rounds, each ratio the median of the
//    per-round ratios. Beside the times, the client's own counters: listeners on its events and
//    cache subscriptions, which say what work a get triggers besides the lookup.
// 2. Size: the built package bundled the way an app's bundler would (esbuild --bundle --minify,
//    target es2022, gzip -9; react, react-dom and @keel/* external): the panel
//    (`@keel/devtools/production`), the main entry in development, and the main entry in a
//    production build (NODE_ENV=production: the panel is dropped).
import { cpus } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { installDom } from './lib/dom.mjs';
import { readCpuModel, writeSection } from './lib/results.mjs';
import { fmtInt, median } from './lib/stats.mjs';

process.env.NODE_ENV = 'production';
const here = dirname(fileURLToPath(import.meta.url));
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 15);
const CHUNK = 10_000;
const CYCLES = Number(process.env.BENCH_CYCLES ?? 30);

// A DOM for react-dom, before React loads.
installDom(join(here, '../packages/devtools/package.json'));

const React = await import('react');
const { createRoot } = await import('react-dom/client');
const { flushSync } = await import('react-dom');
const { createClient } = await import('@keel/core');
const { ClientProvider, useQuery } = await import('@keel/react');
const { KeelDevtools } = await import('@keel/devtools/production');
const h = React.createElement;

const now = () => performance.now();

// ── 1. the cache-hit loop ──────────────────────────────────────────────────────────────────────

async function fakeFetch() {
  return new Response(JSON.stringify({ id: 1, name: 'hit', ok: true }), {
    status: 200,
    headers: { 'content-type': 'application/json' },
  });
}

function Reader() {
  const { data } = useQuery('/hit');
  return h('span', null, data ? data.name : '-');
}

const VARIANTS = [
  { name: 'absent', label: 'no devtools', panel: null },
  // The same setup as `absent` on a second client: what "no difference" measures as here.
  { name: 'control', label: 'no devtools, a second client (control)', panel: null },
  { name: 'closed', label: '`<KeelDevtools>` mounted, closed', panel: {} },
  {
    name: 'open',
    label: '`<KeelDevtools>` open on Requests (for scale)',
    panel: { initialIsOpen: true, initialView: 'requests' },
  },
];

/** A client, its page mounted (with or without the panel), and the entry cached. */
async function setUp(variant) {
  const client = createClient({ baseURL: 'http://bench.test', fetch: fakeFetch });
  const container = document.createElement('div');
  document.body.append(container);
  const root = createRoot(container);
  const children = [h(Reader, { key: 'reader' })];
  if (variant.panel) children.push(h(KeelDevtools, { key: 'devtools', client, ...variant.panel }));
  flushSync(() => root.render(h(ClientProvider, { client }, ...children)));
  await client.get('/hit');
  // Let the page render the data (and an open panel its first snapshot).
  await new Promise((resolve) => setTimeout(resolve, 20));
  const { listeners, subscriptions } = client.debug;
  return {
    variant,
    client,
    counters: { listeners, subscriptions },
    toggles: container.querySelectorAll('button').length,
    close() {
      root.unmount();
      container.remove();
    },
  };
}

/** `CHUNK` cache hits; returns the ms they took. */
async function hitChunk(client) {
  const t = now();
  for (let i = 0; i < CHUNK; i++) await client.get('/hit');
  return now() - t;
}

/**
 * One round: `CYCLES` chunks per variant, the variants interleaved chunk by chunk (in the order
 * given), so that what else the machine does falls on all of them alike. Returns each chunk's ms,
 * per variant.
 */
async function round(setups) {
  const ms = setups.map(() => []);
  for (let cycle = 0; cycle < CYCLES; cycle++) {
    for (let i = 0; i < setups.length; i++) ms[i].push(await hitChunk(setups[i].client));
  }
  // Let an open panel render what the loop changed, outside the timed part.
  await new Promise((resolve) => setTimeout(resolve, 0));
  return ms;
}

// ── 2. size ────────────────────────────────────────────────────────────────────────────────────

async function sizes() {
  const { build } = await import('esbuild');
  const dist = join(here, '..', 'packages', 'devtools', 'dist');
  const bundle = async (file, nodeEnv) => {
    const result = await build({
      entryPoints: [join(dist, file)],
      bundle: true,
      minify: true,
      write: false,
      format: 'esm',
      platform: 'browser',
      target: 'es2022',
      define: { 'process.env.NODE_ENV': JSON.stringify(nodeEnv) },
      external: ['react', 'react/*', 'react-dom', 'react-dom/*', '@keel/*'],
      logLevel: 'silent',
    });
    const code = result.outputFiles[0].contents;
    return { min: code.length, gzip: gzipSync(code, { level: 9 }).length };
  };
  return {
    panel: await bundle('production.js', 'production'),
    development: await bundle('index.js', 'development'),
    production: await bundle('index.js', 'production'),
  };
}

// ── run ────────────────────────────────────────────────────────────────────────────────────────

async function main() {
  const started = now();
  const setups = [];
  for (const variant of VARIANTS) setups.push(await setUp(variant));
  // Warm-up: JIT every variant's path, unmeasured.
  await round(setups);
  // Per variant, every chunk's ms, in the same cycle order for all: chunk k of one variant ran
  // next to chunk k of the others, so their ratio leaves out the noise both saw.
  const chunks = new Map(VARIANTS.map((v) => [v.name, []]));
  for (let r = 0; r < ROUNDS; r++) {
    const order = r % 2 === 0 ? setups : [...setups].reverse();
    globalThis.gc?.();
    const ms = await round(order);
    for (const [i, s] of order.entries()) chunks.get(s.variant.name).push(...ms[i]);
  }
  for (const s of setups) s.close();
  const base = chunks.get('absent');
  const rows = setups.map((s) => {
    const ms = chunks.get(s.variant.name);
    const ratios = ms.map((x, k) => x / base[k]).sort((a, b) => a - b);
    const quantile = (q) => ratios[Math.min(ratios.length - 1, Math.floor(q * ratios.length))];
    return {
      ...s.variant,
      counters: s.counters,
      perSecond: (CHUNK / median(ms)) * 1000,
      ratio: median(ratios),
      quartiles: [quantile(0.25), quantile(0.75)],
    };
  });
  const size = await sizes();
  const elapsed = (now() - started) / 1000;
  const section = report(rows, size, elapsed);
  console.log(section);
  writeSection(join(here, 'RESULTS.md'), '## @keel/devtools', section);
}

function report(rows, size, elapsed) {
  const by = (name) => rows.find((r) => r.name === name);
  const closed = by('closed');
  const absent = by('absent');
  const lines = [];
  lines.push('## @keel/devtools');
  lines.push('');
  lines.push(
    `Run: ${new Date().toUTCString()} · ${cpus().length} cores, ${readCpuModel()}, Node ${process.version} · ` +
      `\`node --expose-gc bench/devtools.bench.mjs\` (${elapsed.toFixed(1)} s, ${ROUNDS} rounds + warm-up).`,
  );
  lines.push('');
  lines.push(
    `Closed-panel cost: loops of \`await client.get('/hit')\` cache hits (${fmtInt(CHUNK * CYCLES)} per variant and round, in chunks of ${fmtInt(CHUNK)} interleaved across the variants) on a client whose page (React 19 production build, jsdom) has one mounted \`useQuery('/hit')\`, with no devtools, with \`<KeelDevtools client={client} />\` mounted and closed, and with the panel open on its Requests view (for scale). The panel is \`@keel/devtools/production\`'s, since the main entry renders nothing in production. Listeners and subscriptions are the client's own counters (\`client.debug\`) once the page is mounted. Each ratio is the median over every chunk of its time against the no-devtools chunk run beside it (${fmtInt(ROUNDS * CYCLES)} pairs; the variants' order alternates by round); hits / s from the median chunk.`,
  );
  lines.push('');
  lines.push(
    '| variant | cache hits / s | time per get vs no devtools (quartiles) | event listeners | cache subscriptions |',
  );
  lines.push('|---|---:|---:|---:|---:|');
  for (const r of rows) {
    const spread =
      r.name === 'absent' ? '' : ` (${r.quartiles[0].toFixed(2)} to ${r.quartiles[1].toFixed(2)})`;
    lines.push(
      `| ${r.label} | ${fmtInt(r.perSecond)} | ${r.ratio.toFixed(2)}x${spread} | ${r.counters.listeners} | ${r.counters.subscriptions} |`,
    );
  }
  lines.push('');
  const noWork =
    closed.counters.listeners === absent.counters.listeners &&
    closed.counters.subscriptions === absent.counters.subscriptions;
  // "No measurable work": nothing of the panel is called on a get (no listener, no subscription
  // added), and its time per get is inside what two identical setups measure apart (the
  // control's quartiles).
  const control = by('control');
  const within = closed.ratio >= control.quartiles[0] && closed.ratio <= control.quartiles[1];
  lines.push(
    `Target "a closed panel costs the client no measurable work": ${noWork && within ? 'met' : 'not met'} ` +
      `(closed adds ${closed.counters.listeners - absent.counters.listeners} listeners and ` +
      `${closed.counters.subscriptions - absent.counters.subscriptions} cache subscriptions, so no panel code runs on a get; ` +
      `time per get ${closed.ratio.toFixed(2)}x, inside the control's ${control.quartiles[0].toFixed(2)} to ${control.quartiles[1].toFixed(2)}: ` +
      `${within ? 'yes' : 'no'}).`,
  );
  lines.push('');
  lines.push(
    'Size of the built package as an app bundles it (esbuild --bundle --minify, target es2022, gzip -9; react, react-dom and @keel/* external):',
  );
  lines.push('');
  lines.push('| import | minified | gzip |');
  lines.push('|---|---:|---:|');
  lines.push(
    `| \`@keel/devtools/production\` (the panel) | ${fmtInt(size.panel.min)} B | ${fmtInt(size.panel.gzip)} B |`,
  );
  lines.push(
    `| \`@keel/devtools\`, development build | ${fmtInt(size.development.min)} B | ${fmtInt(size.development.gzip)} B |`,
  );
  lines.push(
    `| \`@keel/devtools\`, production build (NODE_ENV=production) | ${fmtInt(size.production.min)} B | ${fmtInt(size.production.gzip)} B |`,
  );
  lines.push('');
  lines.push(
    "An app that does not import `@keel/devtools` has none of it; one that imports the main entry ships the production row's bytes in a production build, not the panel (`check:pkg` of the package fails when the panel's code is in such a bundle).",
  );
  return lines.join('\n');
}

await main();
// jsdom's window and the panel's intervals would keep the process alive.
process.exit(0);
