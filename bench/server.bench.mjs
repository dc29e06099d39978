// @keel/server throughput vs Fastify, Hono (@hono/node-server), Express 5 and raw node:http, plus
// an SSE fan-out run. Build first: (cd packages/server && npx tsup). Run: node bench/server.bench.mjs
// Each server runs in its own child process (NODE_ENV=production) on its own port, measured one
// at a time in rotated rounds; autocannon runs here. Results print as markdown and replace the "## @keel/server" section of
// bench/RESULTS.md. Env: BENCH_DURATION (s, default 3), BENCH_ROUNDS (default 3), BENCH_CONNECTIONS (default 32),
// BENCH_SSE_CLIENTS (default 1000), BENCH_SSE_SECONDS (default 5).
// BENCH_BASELINE=<git rev>: also runs @keel/server as built from that revision ("keel@rev"), in the
// same rounds, to measure what a change costs (e.g. main before a branch).
import { execSync, fork } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { cpus, loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';

const here = dirname(fileURLToPath(import.meta.url));
const DURATION = Number(process.env.BENCH_DURATION ?? 3);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);
const SSE_CLIENTS = Number(process.env.BENCH_SSE_CLIENTS ?? 1000);
const SSE_SECONDS = Number(process.env.BENCH_SSE_SECONDS ?? 5);
// BENCH_PROBE=1: a quick keel / fastify / node run of the given scenario, nothing written.
const PROBE = process.env.BENCH_PROBE;
const BASELINE = process.env.BENCH_BASELINE;
const TARGETS = PROBE
  ? ['keel', 'fastify', 'node']
  : ['keel', 'fastify', 'hono', 'express', 'node'];
if (BASELINE) TARGETS.splice(1, 0, 'keel-baseline');

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
  hello: '/hello',
  params: '/api/v1/resource50/12345/items/abc',
};

function startTarget(target, scenario) {
  return new Promise((resolve, reject) => {
    const child = fork(join(here, 'server-targets.mjs'), [target, scenario], {
      env: { ...process.env, NODE_ENV: 'production', KEEL_BASELINE_ENTRY: baselineEntry ?? '' },
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

function cannon(url, duration) {
  return new Promise((resolve, reject) => {
    autocannon({ url, connections: CONNECTIONS, pipelining: 1, duration }, (err, result) =>
      err ? reject(err) : resolve(result),
    );
  });
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

/**
 * All servers of a scenario stay up (idle ones cost nothing); each round runs every target once,
 * in a rotated order, so background load on the shared machine hits them alike. Ratios are the
 * median of per-round ratios.
 */
async function scenarioRun(scenario) {
  const servers = {};
  for (const target of TARGETS) servers[target] = await startTarget(target, scenario);
  const url = (target) => `http://127.0.0.1:${servers[target].port}${SCENARIOS[scenario]}`;
  const rounds = [];
  try {
    for (const target of TARGETS) await cannon(url(target), 1); // warm-up: JIT, connections
    for (let round = 0; round < ROUNDS; round++) {
      const order = TARGETS.map((_, i) => TARGETS[(i + round) % TARGETS.length]);
      const results = {};
      for (const target of order) {
        const cpuBefore = await cpuOf(servers[target].child);
        const r = await cannon(url(target), DURATION);
        const cpu = (await cpuOf(servers[target].child)) - cpuBefore;
        if (r.non2xx > 0 || r.errors > 0) {
          throw new Error(`${target}/${scenario}: ${r.non2xx} non-2xx, ${r.errors} errors`);
        }
        results[target] = {
          reqs: r.requests.average,
          p99: r.latency.p99,
          cpuPerReq: cpu / r.requests.total,
        };
      }
      rounds.push(results);
      console.log(
        `${scenario} round ${round + 1}: ${TARGETS.map((t) => `${t} ${fmt(results[t].reqs)} (${results[t].cpuPerReq.toFixed(1)} us)`).join(', ')}`,
      );
    }
  } finally {
    for (const target of TARGETS) await stop(servers[target].child);
  }
  const out = {};
  for (const target of TARGETS) {
    out[target] = {
      reqs: median(rounds.map((r) => r[target].reqs)),
      p99: median(rounds.map((r) => r[target].p99)),
      vsFastify: median(rounds.map((r) => r[target].reqs / r.fastify.reqs)),
      vsNode: median(rounds.map((r) => r[target].reqs / r.node.reqs)),
      cpuPerReq: median(rounds.map((r) => r[target].cpuPerReq)),
      // Efficiency: the share of node:http's per-request server CPU this server needs, inverted.
      cpuVsNode: median(rounds.map((r) => r.node.cpuPerReq / r[target].cpuPerReq)),
      cpuVsFastify: median(rounds.map((r) => r.fastify.cpuPerReq / r[target].cpuPerReq)),
      // keel against its baseline build: req/s ratio and extra server CPU per request.
      vsBaseline: BASELINE
        ? median(rounds.map((r) => r[target].reqs / r['keel-baseline'].reqs))
        : undefined,
      cpuOverBaseline: BASELINE
        ? median(rounds.map((r) => r[target].cpuPerReq - r['keel-baseline'].cpuPerReq))
        : undefined,
    };
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
const results = {};
if (PROBE) {
  console.log(await scenarioRun(PROBE));
  // A probe run measures one scenario and stops; the target servers end with this process.
  process.exit(0);
}
for (const scenario of Object.keys(SCENARIOS)) results[scenario] = await scenarioRun(scenario);
console.log(`sse / keel (${SSE_CLIENTS} clients, 10 events/s, ${SSE_SECONDS} s) ...`);
const sse = await sseRun();

const cpu =
  (readFileSync('/proc/cpuinfo', 'utf8').match(/model name\s*:\s*(.*)/) ?? [])[1] ??
  cpus()[0]?.model;
const lines = [
  '## @keel/server',
  '',
  `Run: ${execSync('date').toString().trim()} · ${cpus().length} cores (${cpu}) · Node ${process.version}`,
  `· load average at start ${loadAtStart}, at end ${loadavg()
    .map((l) => l.toFixed(1))
    .join(' / ')} (other work shares the machine)`,
  `· autocannon ${CONNECTIONS} connections, pipelining 1, ${ROUNDS} rounds of ${DURATION} s per server`,
  '(rotated order, after a 1 s warm-up); each server in its own child process with',
  'NODE_ENV=production, autocannon in the parent, all on the same 2 cores. req/s and p99 are',
  'medians over rounds; ratios are medians of per-round ratios.',
  '',
  '| scenario | server | req/s | p99 ms | req/s vs Fastify | req/s vs node:http | server CPU µs/req | CPU efficiency vs Fastify | CPU efficiency vs node:http |',
  '| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
];
for (const scenario of Object.keys(SCENARIOS)) {
  const row = results[scenario];
  for (const target of TARGETS) {
    const r = row[target];
    lines.push(
      `| ${scenario === 'hello' ? 'JSON hello' : '2 params, 100 routes'} | ${target === 'keel-baseline' ? baselineLabel : target} | ${fmt(r.reqs)} | ${r.p99} | ${r.vsFastify.toFixed(2)}x | ${(100 * r.vsNode).toFixed(0)}% | ${r.cpuPerReq.toFixed(1)} | ${r.cpuVsFastify.toFixed(2)}x | ${(100 * r.cpuVsNode).toFixed(0)}% |`,
    );
  }
}
if (BASELINE) {
  lines.push('');
  for (const scenario of Object.keys(SCENARIOS)) {
    const k = results[scenario].keel;
    lines.push(
      `keel vs ${baselineLabel}, ${scenario === 'hello' ? 'JSON hello' : '2 params, 100 routes'}: ${k.vsBaseline.toFixed(3)}x req/s, ${k.cpuOverBaseline >= 0 ? '+' : ''}${k.cpuOverBaseline.toFixed(2)} µs server CPU per request (medians of per-round figures).`,
    );
  }
}
lines.push(
  '',
  `SSE (keel hub, ${SSE_CLIENTS} clients, 10 events/s, ${SSE_SECONDS} s): ${sse.clients} connected,`,
  `${sse.published} events published (${(sse.published / SSE_SECONDS).toFixed(1)}/s), ${fmt(sse.delivered)} deliveries of ${fmt(sse.expected)} expected (±1 per client at the window edges); delivery latency p50 ${sse.p50} ms,`,
  `p99 ${sse.p99} ms, max ${sse.max} ms (client and server share the machine); memory per connection`,
  `${kb(sse.heapPerConn)} JS heap, ${kb(sse.rssPerConn)} RSS (after GC, before vs. with all clients);`,
  `${sse.clientsAfterDisconnect} clients left after all disconnected.`,
);
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
