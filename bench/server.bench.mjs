// @keel/server on a realistic app vs Fastify (with response schemas, as its docs recommend),
// Hono (@hono/node-server) and raw node:http, plus an SSE fan-out run. Every server serves the
// same 100-route app (static, one-param and two-param routes; see server-targets.mjs) and three
// of its routes are measured: the JSON hello route and a two-param route, both in the middle of
// the registration order, and a POST whose JSON body each server parses and validates. keel runs twice: through `app.listen()` and mounted as
// `http.createServer(app.handler)`, the way users put it in their own servers.
// Build first: (cd packages/server && npx tsup). Run: node bench/server.bench.mjs
// Each server runs in its own child process (NODE_ENV as given) on its own port, started afresh
// every round (see serverRun); each round measures every server once per scenario, in a rotated
// order; autocannon runs here. Results print as markdown and replace the block between the keel-server markers in
// bench/RESULTS.md. Env: BENCH_DURATION (s per server, route and round, default 3), BENCH_SLICES
// (passes per round that share it, default 3), BENCH_ROUNDS (default 12), BENCH_WARMUP (s per
// server and route before a round, default 1),
// BENCH_CONNECTIONS (default 50), BENCH_TARGETS (comma list; default keel, keel-handler,
// fastify, hono, node; `express` is available), BENCH_SSE_CLIENTS (default 1000),
// BENCH_SSE_SECONDS (default 5; 0 skips the SSE run).
// BENCH_BASELINE=<git rev>: also runs @keel/server as built from that revision ("keel@rev"), in the
// same rounds, to measure what a change costs (e.g. main before a branch).
import { execSync, fork } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { cpus, loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { median, spread } from './lib/stats.mjs';
import { USER_BODY, USERS_PATH } from './server-targets.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const DURATION = Number(process.env.BENCH_DURATION ?? 3);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 12);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
const PIPELINING = Number(process.env.BENCH_PIPELINING ?? 1);
// Passes over every server per round (each DURATION / SLICES seconds long).
const SLICES = Number(process.env.BENCH_SLICES ?? 3);
// Seconds of load per server and route before a round's fresh processes are measured.
const WARMUP = Number(process.env.BENCH_WARMUP ?? 1);
const SSE_CLIENTS = Number(process.env.BENCH_SSE_CLIENTS ?? 1000);
const SSE_SECONDS = Number(process.env.BENCH_SSE_SECONDS ?? 5);
// BENCH_PROBE=1: the rounds only, printed; nothing written.
const PROBE = process.env.BENCH_PROBE === '1';
const BASELINE = process.env.BENCH_BASELINE;
const TARGETS = (process.env.BENCH_TARGETS ?? 'keel,keel-handler,fastify,hono,node').split(',');
if (BASELINE) TARGETS.splice(1, 0, 'keel-baseline');
for (const needed of ['fastify', 'node']) {
  if (!TARGETS.includes(needed)) TARGETS.push(needed); // the ratios are against these two
}
const LABELS = {
  keel: 'keel, app.listen()',
  'keel-handler': 'keel, http.createServer(app.handler)',
  fastify: 'Fastify 5, response schemas',
  hono: 'Hono 4, @hono/node-server',
  express: 'Express 5',
  node: 'raw node:http (floor)',
};

/**
 * Builds packages/server at `rev` (ESM only) under packages/server/node_modules, so the build
 * resolves the package's own dependencies; returns the entry's path.
 */
function buildBaseline(rev) {
  const pkg = join(here, '..', 'packages', 'server');
  const out = join(pkg, 'node_modules', '.keel-baseline');
  rmSync(out, { recursive: true, force: true });
  mkdirSync(out, { recursive: true });
  // With its package.json, tsup keeps the dependencies external and names the output .js.
  execSync(`git archive ${rev} src package.json | tar -x -C ${out}`, {
    cwd: pkg,
    stdio: 'inherit',
  });
  execSync('npx tsup src/index.ts --format esm --out-dir dist --target es2022 --silent', {
    cwd: out,
    stdio: 'inherit',
  });
  return join(out, 'dist', 'index.js');
}
const baselineEntry = BASELINE ? buildBaseline(BASELINE) : undefined;
const baselineLabel = BASELINE
  ? `keel@${execSync(`git rev-parse --short ${BASELINE}`).toString().trim()}`
  : undefined;
const SCENARIOS = {
  hello: { path: '/hello', label: 'JSON hello' },
  params: { path: '/api/v1/resource50/12345/items/abc', label: '2 params' },
  // Not one of issue #15's routes: a write, its body parsed and validated (see server-targets).
  post: {
    path: USERS_PATH,
    label: 'POST JSON + validation',
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: USER_BODY,
  },
};
/** The routes issue #15's targets are about (the POST is reported, not judged against them). */
const TARGET_SCENARIOS = ['hello', 'params'];

function startTarget(target, mode) {
  return new Promise((resolve, reject) => {
    const child = fork(join(here, 'server-targets.mjs'), mode ? [target, mode] : [target], {
      // NODE_ENV as the caller has it (unset: each framework's defaults, as a user starts it).
      env: { ...process.env, KEEL_BASELINE_ENTRY: baselineEntry ?? '' },
      execArgv: ['--expose-gc'],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    child.once('message', (msg) => resolve({ child, port: msg.port }));
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`${target} exited with ${code}`)));
  });
}

function stop(child) {
  return new Promise((resolve) => {
    child.removeAllListeners('exit');
    child.once('exit', resolve);
    child.kill();
  });
}

function cpuOf(child) {
  return new Promise((resolve) => {
    const onMessage = (msg) => {
      if (msg?.cpu === undefined) return;
      child.off('message', onMessage);
      resolve(msg.cpu.user + msg.cpu.system);
    };
    child.on('message', onMessage);
    child.send('cpu');
  });
}

function cannon(url, duration, { method = 'GET', headers = {}, body } = {}) {
  return new Promise((resolve, reject) => {
    autocannon(
      { url, method, headers, body, connections: CONNECTIONS, pipelining: PIPELINING, duration },
      (err, result) => (err ? reject(err) : resolve(result)),
    );
  });
}

/**
 * Each round starts every server in a fresh process, warms it up, and measures every scenario on
 * every server once, in an order rotated per round, so background load on the shared machine hits
 * them alike. Ratios are taken per round (same load), then summarised.
 *
 * Fresh processes per round because a Node process settles by chance into one of two JIT states
 * for `process.nextTick` (its tick-object literal compiled with monomorphic stores, or generic
 * ones that cost ~250 ns per tick, 5-13% of a hello request's CPU; seen in --cpu-prof as
 * `nextTick` self time on task_queues.js lines 127-129). Which one depends on compile timing, not
 * on the server's code: raw node:http landed fast in every probe, Fastify slow in every probe,
 * keel slow in about one of five. With servers kept up for a whole run, one draw decided every
 * round of it; per-round processes sample the draw, so the median is what a process usually gets.
 */
async function serverRun() {
  let servers = {};
  const url = (target, scenario) =>
    `http://127.0.0.1:${servers[target].port}${SCENARIOS[scenario].path}`;
  const startAll = async () => {
    servers = {};
    for (const target of TARGETS) servers[target] = await startTarget(target);
    for (const scenario of Object.keys(SCENARIOS)) {
      for (const target of TARGETS) {
        await cannon(url(target, scenario), WARMUP, SCENARIOS[scenario]); // warm-up
      }
    }
  };
  const stopAll = async () => {
    for (const target of Object.keys(servers)) await stop(servers[target].child);
  };
  const rounds = Object.fromEntries(Object.keys(SCENARIOS).map((scenario) => [scenario, []]));
  try {
    for (let round = 0; round < ROUNDS; round++) {
      await stopAll();
      await startAll();
      for (const scenario of Object.keys(SCENARIOS)) {
        // A round is SLICES passes over every server, each pass in a rotated order: every
        // server's figure for the round spreads over the same window, so a change of background
        // load during the round hits them alike and the per-round ratios stay close.
        const sums = Object.fromEntries(
          TARGETS.map((t) => [t, { requests: 0, seconds: 0, cpu: 0, p99: [] }]),
        );
        for (let slice = 0; slice < SLICES; slice++) {
          const shift = round * SLICES + slice;
          const order = TARGETS.map((_, i) => TARGETS[(i + shift) % TARGETS.length]);
          for (const target of order) {
            const cpuBefore = await cpuOf(servers[target].child);
            const r = await cannon(url(target, scenario), DURATION / SLICES, SCENARIOS[scenario]);
            const cpu = (await cpuOf(servers[target].child)) - cpuBefore;
            if (r.non2xx > 0 || r.errors > 0) {
              throw new Error(`${target}/${scenario}: ${r.non2xx} non-2xx, ${r.errors} errors`);
            }
            const sum = sums[target];
            sum.requests += r.requests.total;
            sum.seconds += r.duration;
            sum.cpu += cpu;
            sum.p99.push(r.latency.p99);
          }
        }
        const results = {};
        for (const target of TARGETS) {
          const sum = sums[target];
          results[target] = {
            reqs: sum.requests / sum.seconds,
            p99: median(sum.p99),
            cpuPerReq: sum.cpu / sum.requests,
          };
        }
        rounds[scenario].push(results);
        console.log(
          `${scenario} round ${round + 1}: ${TARGETS.map((t) => `${t} ${fmt(results[t].reqs)} (${results[t].cpuPerReq.toFixed(1)} us)`).join(', ')}`,
        );
      }
    }
  } finally {
    await stopAll();
  }
  const out = {};
  for (const scenario of Object.keys(SCENARIOS)) {
    const rs = rounds[scenario];
    out[scenario] = {};
    for (const target of TARGETS) {
      out[scenario][target] = {
        reqs: median(rs.map((r) => r[target].reqs)),
        p99: median(rs.map((r) => r[target].p99)),
        cpuPerReq: median(rs.map((r) => r[target].cpuPerReq)),
        // Per-round ratios: req/s over the peer's, and CPU efficiency (the peer's server CPU per
        // request over this one's: above 1 means less CPU per request).
        vsFastify: spread(rs.map((r) => r[target].reqs / r.fastify.reqs)),
        vsNode: spread(rs.map((r) => r[target].reqs / r.node.reqs)),
        cpuVsFastify: spread(rs.map((r) => r.fastify.cpuPerReq / r[target].cpuPerReq)),
        cpuVsNode: spread(rs.map((r) => r.node.cpuPerReq / r[target].cpuPerReq)),
        vsBaseline: BASELINE
          ? spread(rs.map((r) => r[target].reqs / r['keel-baseline'].reqs))
          : undefined,
        cpuOverBaseline: BASELINE
          ? spread(rs.map((r) => r[target].cpuPerReq - r['keel-baseline'].cpuPerReq))
          : undefined,
      };
    }
  }
  return out;
}

function getJson(port, path) {
  return new Promise((resolve, reject) => {
    request({ host: '127.0.0.1', port, path, agent: false }, (res) => {
      let body = '';
      res.on('data', (c) => (body += c));
      res.on('end', () => resolve(JSON.parse(body)));
    })
      .on('error', reject)
      .end();
  });
}

async function sseRun() {
  const { child, port } = await startTarget('keel', 'sse');
  const before = await getJson(port, '/mem');
  const latencies = [];
  let recording = false;
  const reqs = [];
  let connected = 0;
  await new Promise((resolve, reject) => {
    for (let i = 0; i < SSE_CLIENTS; i++) {
      const req = request({ host: '127.0.0.1', port, path: '/events', agent: false }, (res) => {
        res.setEncoding('utf8');
        if (++connected === SSE_CLIENTS) resolve();
        res.on('data', (chunk) => {
          if (!recording) return;
          const now = Date.now();
          // Frames are small; find every `"t":<ms>` in the chunk.
          let at = chunk.indexOf('"t":');
          while (at !== -1) {
            latencies.push(now - Number.parseInt(chunk.slice(at + 4, at + 20), 10));
            at = chunk.indexOf('"t":', at + 4);
          }
        });
      });
      req.on('error', reject);
      req.end();
      reqs.push(req);
    }
  });
  await new Promise((r) => setTimeout(r, 500));
  const startMem = await getJson(port, '/mem');
  recording = true;
  await new Promise((r) => setTimeout(r, SSE_SECONDS * 1000));
  recording = false;
  const after = await getJson(port, '/mem');
  for (const req of reqs) req.destroy();
  await new Promise((r) => setTimeout(r, 300));
  const drained = await getJson(port, '/mem');
  await stop(child);
  latencies.sort((a, b) => a - b);
  const pct = (p) =>
    latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * p))] ?? NaN;
  // Events published while recording, times clients (±1 event per client at the window edges).
  const published = after.published - startMem.published;
  const expected = SSE_CLIENTS * published;
  return {
    clients: after.clients,
    published,
    delivered: latencies.length,
    expected,
    p50: pct(0.5),
    p99: pct(0.99),
    max: latencies.at(-1),
    heapPerConn: (after.heapUsed - before.heapUsed) / SSE_CLIENTS,
    rssPerConn: (after.rss - before.rss) / SSE_CLIENTS,
    clientsAfterDisconnect: drained.clients,
  };
}

const kb = (bytes) => `${(bytes / 1024).toFixed(1)} KiB`;
const fmt = (n) => Math.round(n).toLocaleString('en-US');

const loadAtStart = loadavg()
  .map((l) => l.toFixed(1))
  .join(' / ');
const results = await serverRun();
if (PROBE) process.exit(0);
let sse;
if (SSE_SECONDS > 0) {
  console.log(`sse / keel (${SSE_CLIENTS} clients, 10 events/s, ${SSE_SECONDS} s) ...`);
  sse = await sseRun();
}

const cpu =
  (readFileSync('/proc/cpuinfo', 'utf8').match(/model name\s*:\s*(.*)/) ?? [])[1] ??
  cpus()[0]?.model;
const x = (v) => `${v.toFixed(2)}x`;
/** A per-round ratio: its median and, in brackets, its p25-p75. */
const ratio = (r) => `${x(r.p50)} [${r.p25.toFixed(2)}-${r.p75.toFixed(2)}]`;
const label = (target) => (target === 'keel-baseline' ? baselineLabel : (LABELS[target] ?? target));
const lines = [
  '## @keel/server',
  '',
  `Run: ${execSync('date').toString().trim()} · ${cpus().length} cores (${cpu}) · Node ${process.version}`,
  `· load average at start ${loadAtStart}, at end ${loadavg()
    .map((l) => l.toFixed(1))
    .join(' / ')} (other work shares the machine)`,
  `· one 100-route app (static, one-param and two-param routes; the measured GETs are routes 49`,
  'and 50 of 100 in registration order; the POST, registered last, sends an 84-byte JSON body that',
  "each server parses and validates its usual way: keel's ctx.validate, Fastify's JSON schema,",
  'the others by hand) served by each server in its own child process',
  `(NODE_ENV ${process.env.NODE_ENV ?? 'unset'}); autocannon in the parent, ${CONNECTIONS} connections, pipelining 1,`,
  `${ROUNDS} rounds; in a round each server serves each route for ${DURATION} s in ${SLICES} slices of`,
  `${(DURATION / SLICES).toFixed(1)} s, interleaved with the others in a rotated order (each round in fresh server processes, after a ${WARMUP} s warm-up per route); all`,
  'on the same 2 cores. req/s, p99 and CPU are medians over rounds; each ratio is the median of',
  "the per-round ratios, with their p25-p75 in brackets. CPU efficiency is the other server's",
  "CPU per request over this one's (above 1: less server CPU per request).",
  'Fresh processes each round because a Node process settles by chance into a fast or a slow',
  "JIT state for `process.nextTick`'s tick object (generic stores: ~250 ns a tick, 5-13% of a",
  "hello request's CPU in --cpu-prof): node:http landed fast in every probe, Fastify slow in every",
  'probe, keel slow in about one in five; kept up for a whole run, one draw decided every round.',
  '',
  '| route | server | req/s | p99 ms | server CPU µs/req | req/s vs Fastify | CPU efficiency vs Fastify | req/s vs node:http | CPU efficiency vs node:http |',
  '| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
];
for (const scenario of Object.keys(SCENARIOS)) {
  for (const target of TARGETS) {
    const r = results[scenario][target];
    lines.push(
      `| ${SCENARIOS[scenario].label} | ${label(target)} | ${fmt(r.reqs)} | ${r.p99} | ${r.cpuPerReq.toFixed(1)} | ${ratio(r.vsFastify)} | ${ratio(r.cpuVsFastify)} | ${ratio(r.vsNode)} | ${ratio(r.cpuVsNode)} |`,
    );
  }
}
// The targets of issue #15: keel >= 1.0x Fastify in req/s and in CPU per request, and >= 0.85x
// raw node:http, on both routes, through listen() and through app.handler alike.
lines.push('', 'Targets (median of per-round ratios):', '');
for (const target of TARGETS.filter((t) => t === 'keel' || t === 'keel-handler')) {
  for (const scenario of TARGET_SCENARIOS) {
    const r = results[scenario][target];
    const checks = [
      ['req/s ≥ 1.00x Fastify', r.vsFastify.p50, 1],
      ['CPU/req ≥ 1.00x Fastify', r.cpuVsFastify.p50, 1],
      ['req/s ≥ 0.85x node:http', r.vsNode.p50, 0.85],
      ['CPU/req ≥ 0.85x node:http', r.cpuVsNode.p50, 0.85],
    ];
    lines.push(
      `- ${label(target)}, ${SCENARIOS[scenario].label}: ${checks
        .map(([what, v, min]) => `${what}: ${x(v)} ${v >= min ? 'met' : '**missed**'}`)
        .join('; ')}.`,
    );
  }
}
if (BASELINE) {
  lines.push('');
  for (const scenario of Object.keys(SCENARIOS)) {
    const k = results[scenario].keel;
    const d = k.cpuOverBaseline;
    lines.push(
      `keel vs ${baselineLabel}, ${SCENARIOS[scenario].label}: ${ratio(k.vsBaseline)} req/s, ${d.p50 >= 0 ? '+' : ''}${d.p50.toFixed(2)} µs server CPU per request [${d.p25.toFixed(2)} to ${d.p75.toFixed(2)}] (per-round figures).`,
    );
  }
}
if (sse !== undefined) {
  lines.push(
    '',
    `SSE (keel hub, ${SSE_CLIENTS} clients, 10 events/s, ${SSE_SECONDS} s): ${sse.clients} connected,`,
    `${sse.published} events published (${(sse.published / SSE_SECONDS).toFixed(1)}/s), ${fmt(sse.delivered)} deliveries of ${fmt(sse.expected)} expected (±1 per client at the window edges); delivery latency p50 ${sse.p50} ms,`,
    `p99 ${sse.p99} ms, max ${sse.max} ms (client and server share the machine); memory per connection`,
    `${kb(sse.heapPerConn)} JS heap, ${kb(sse.rssPerConn)} RSS (after GC, before vs. with all clients);`,
    `${sse.clientsAfterDisconnect} clients left after all disconnected.`,
  );
}
// The generated block sits between markers inside the section, so notes written under it by
// hand survive a re-run; other sections of the file are left alone.
const BEGIN = '<!-- keel-server:begin -->';
const END = '<!-- keel-server:end -->';
// Formatted the way `biome check` wants markdown (padded tables), so the lint stays clean.
let section = lines.slice(2).join('\n');
try {
  section = execSync('npx biome format --stdin-file-path=section.md', {
    cwd: here,
    input: `${section}\n`,
    stdio: ['pipe', 'pipe', 'ignore'],
  })
    .toString()
    .trimEnd();
} catch {
  // biome not installed: keep the plain table
}
console.log(`\n${lines.join('\n')}\n`);

const file = join(here, 'RESULTS.md');
let doc;
try {
  doc = readFileSync(file, 'utf8');
} catch {
  doc = '# Benchmark results\n';
}
const begin = doc.indexOf(BEGIN);
const end = doc.indexOf(END);
if (begin !== -1 && end > begin) {
  doc = `${doc.slice(0, begin + BEGIN.length)}\n${section}\n${doc.slice(end)}`;
} else {
  doc = `${doc.trimEnd()}\n\n## @keel/server\n\n${BEGIN}\n${section}\n${END}\n`;
}
writeFileSync(file, doc);
