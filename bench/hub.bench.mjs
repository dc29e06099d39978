// Event hub fan-out: server CPU per delivered event and memory per connection at 1,000 and 5,000
// clients receiving 10 events/s, for the in-memory hub, the Redis Streams store, a minimal raw
// node:http fan-out (the floor) and better-sse, in the same run; then the delay from `publish`
// on instance A to receipt by the clients of instance B through Redis, at 1,000 clients.
// Build first: (cd packages/server && npx tsup). Run: node --expose-gc bench/hub.bench.mjs
// Each server runs in its own child process (hub-targets.mjs); the clients run here. Needs
// Debian's redis-server (packages/server/scripts/ensure-redis.sh). Results replace the
// "## Event hub fan-out" section of bench/RESULTS.md.
// Env: BENCH_HUB_CLIENTS (default "1000,5000"), BENCH_HUB_SECONDS (window, default 5),
// BENCH_HUB_ROUNDS (default 2).
import { fork } from 'node:child_process';
import { request } from 'node:http';
import { cpus, loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startRedis } from '../scripts/redis-server.mjs';
import { readCpuModel, writeSection } from './lib/results.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const SIZES = (process.env.BENCH_HUB_CLIENTS ?? '1000,5000').split(',').map(Number);
const SECONDS = Number(process.env.BENCH_HUB_SECONDS ?? 5);
const ROUNDS = Number(process.env.BENCH_HUB_ROUNDS ?? 2);
const TARGETS = ['floor', 'memory', 'redis', 'better-sse'];
const LABELS = {
  floor: 'raw node:http fan-out (floor)',
  memory: '@keel/server hub, in memory',
  redis: '@keel/server hub, Redis Streams',
  'better-sse': 'better-sse channel',
};

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

// ── servers and clients ───────────────────────────────────────────────────────────────────────
let streams = 0;
function startTarget(target, publish, redisUrl) {
  return new Promise((resolve, reject) => {
    const child = fork(join(here, 'hub-targets.mjs'), [target, publish ? '1' : '0'], {
      env: {
        ...process.env,
        NODE_ENV: 'production',
        REDIS_URL: redisUrl,
        STREAM: `bench:${process.pid}:${streams++}`,
      },
      execArgv: ['--expose-gc'],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    child.once('message', (msg) => resolve({ child, port: msg.port }));
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`${target} exited with ${code}`)));
  });
}

/** Sends `message` (unless null: another ask sends it) and resolves with the answer's `field`. */
function ask(child, message, field) {
  return new Promise((resolve) => {
    const onMessage = (msg) => {
      if (msg?.[field] === undefined) return;
      child.off('message', onMessage);
      resolve(msg[field]);
    };
    child.on('message', onMessage);
    if (message !== null) child.send(message);
  });
}

function stop(child) {
  return new Promise((resolve) => {
    child.removeAllListeners('exit');
    child.once('exit', resolve);
    child.kill();
  });
}

/**
 * N EventSource-like clients; count the events published (by their `t`) in [from, to), whenever
 * they arrive, and their delay.
 */
async function connectClients(port, n) {
  const state = { from: Number.POSITIVE_INFINITY, to: Number.POSITIVE_INFINITY };
  Object.assign(state, { delivered: 0, latencies: [], reqs: [] });
  const one = () =>
    new Promise((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port, path: '/events', agent: false }, (res) => {
        res.setEncoding('utf8');
        res.on('data', (chunk) => {
          const now = Date.now();
          let at = chunk.indexOf('"t":');
          while (at !== -1) {
            const t = Number.parseInt(chunk.slice(at + 4, at + 20), 10);
            if (t >= state.from && t < state.to) {
              state.delivered++;
              state.latencies.push(now - t);
            }
            at = chunk.indexOf('"t":', at + 4);
          }
        });
        resolve();
      });
      req.on('error', reject);
      req.end();
      state.reqs.push(req);
    });
  for (let i = 0; i < n; i += 250) {
    await Promise.all(Array.from({ length: Math.min(250, n - i) }, one));
  }
  return state;
}

const pct = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))];

async function fanOut(target, n, redisUrl) {
  const { child, port } = await startTarget(target, true, redisUrl);
  try {
    const memBefore = await ask(child, 'mem', 'mem');
    const clients = await connectClients(port, n);
    while ((await ask(child, 'clients', 'clients')) < n) await sleep(20);
    await sleep(1000);
    const memWith = await ask(child, 'mem', 'mem');
    const [cpuBefore, publishedBefore] = await Promise.all([
      ask(child, 'cpu', 'cpu'),
      ask(child, null, 'published'),
    ]);
    clients.from = Date.now();
    await sleep(SECONDS * 1000);
    const [cpuAfter, publishedAfter] = await Promise.all([
      ask(child, 'cpu', 'cpu'),
      ask(child, null, 'published'),
    ]);
    clients.to = Date.now();
    // Counted at the server: a client that reads late (they share the cores) does not move
    // deliveries out of the window whose CPU time is measured.
    const writes = (publishedAfter - publishedBefore) * n;
    await sleep(2000); // late readers catch up with the window's events
    for (const req of clients.reqs) req.destroy();
    const cpuUs = cpuAfter.user + cpuAfter.system - cpuBefore.user - cpuBefore.system;
    const sorted = clients.latencies.sort((a, b) => a - b);
    return {
      delivered: clients.delivered,
      expected: writes,
      cpuPerDelivery: cpuUs / writes,
      heapPerConn: (memWith.heapUsed - memBefore.heapUsed) / n,
      rssPerConn: (memWith.rss - memBefore.rss) / n,
      p50: pct(sorted, 0.5),
      p99: pct(sorted, 0.99),
    };
  } finally {
    await stop(child);
  }
}

/** Instance A publishes 10 events/s; 1,000 clients on instance B; delay from publish to receipt. */
async function acrossInstances(n, redisUrl) {
  const stream = `bench:ab:${process.pid}`;
  const start = (publish) =>
    new Promise((resolve, reject) => {
      const child = fork(join(here, 'hub-targets.mjs'), ['redis', publish ? '1' : '0'], {
        env: { ...process.env, NODE_ENV: 'production', REDIS_URL: redisUrl, STREAM: stream },
        stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      });
      child.once('message', (msg) => resolve({ child, port: msg.port }));
      child.once('exit', (code) => reject(new Error(`instance exited with ${code}`)));
    });
  const b = await start(false);
  const clients = await connectClients(b.port, n);
  while ((await ask(b.child, 'clients', 'clients')) < n) await sleep(20);
  const a = await start(true);
  try {
    await sleep(1000);
    clients.from = Date.now();
    await sleep(SECONDS * 2 * 1000);
    clients.to = Date.now();
    await sleep(1000);
    for (const req of clients.reqs) req.destroy();
    const sorted = clients.latencies.sort((x, y) => x - y);
    return { delivered: clients.delivered, p50: pct(sorted, 0.5), p99: pct(sorted, 0.99) };
  } finally {
    await stop(a.child);
    await stop(b.child);
  }
}

// ── run ───────────────────────────────────────────────────────────────────────────────────────
const began = Date.now();
const loadAtStart = loadavg()
  .map((l) => l.toFixed(1))
  .join(' / ');
const redis = await startRedis();
const results = {};
try {
  for (const n of SIZES) {
    const rounds = [];
    for (let round = 0; round < ROUNDS; round++) {
      const order = TARGETS.map((_, i) => TARGETS[(i + round) % TARGETS.length]);
      const row = {};
      for (const target of order) {
        row[target] = await fanOut(target, n, redis.url);
        console.log(
          `${n} clients, round ${round + 1}, ${target}: ${row[target].cpuPerDelivery.toFixed(2)} us CPU/delivery, ${(row[target].heapPerConn / 1024).toFixed(1)} KiB heap/conn, ${row[target].delivered}/${row[target].expected} delivered`,
        );
      }
      rounds.push(row);
    }
    results[n] = Object.fromEntries(
      TARGETS.map((t) => [
        t,
        {
          cpuPerDelivery: median(rounds.map((r) => r[t].cpuPerDelivery)),
          vsFloor: median(rounds.map((r) => r[t].cpuPerDelivery / r.floor.cpuPerDelivery)),
          heapPerConn: median(rounds.map((r) => r[t].heapPerConn)),
          rssPerConn: median(rounds.map((r) => r[t].rssPerConn)),
          delivered: rounds.reduce((s, r) => s + r[t].delivered, 0),
          expected: rounds.reduce((s, r) => s + r[t].expected, 0),
          p50: median(rounds.map((r) => r[t].p50)),
          p99: median(rounds.map((r) => r[t].p99)),
        },
      ]),
    );
  }
  results.ab = await acrossInstances(1000, redis.url);
  console.log(`A -> B at 1000 clients: p50 ${results.ab.p50} ms, p99 ${results.ab.p99} ms`);
} finally {
  await redis.dispose();
}

const kib = (b) => `${(b / 1024).toFixed(1)} KiB`;
const lines = [
  '## Event hub fan-out',
  '',
  `Run: ${new Date().toUTCString()} · ${cpus().length} cores, ${readCpuModel()}, Node ${process.version} · \`node --expose-gc bench/hub.bench.mjs\` (${Math.round((Date.now() - began) / 1000)} s) · load average at start ${loadAtStart}, at end ${loadavg()
    .map((l) => l.toFixed(1))
    .join(' / ')} (other work shares the machine).`,
  '',
  `Each server in its own child process (NODE_ENV=production) publishes one small event (\`{"t":<ms>}\`) every 100 ms to every connected client; the server's CPU time over a ${SECONDS} s window is divided by the deliveries in it (events published in the window x clients); the clients (plain node:http requests, in the parent) count the events of the window whenever they arrive (2 s of grace after it), to show that nothing is lost (±1 event per client at the window's edges), and their delay from publish to receipt (at 5,000 clients mostly the clients' own reading lag: they share the 2 cores with the server). Memory per connection: the server's heap and RSS after GC with all clients connected, minus before any, divided by the clients. The Redis store publishes through XADD and delivers what its XREAD reads (a redis-server on loopback, no persistence). Medians over ${ROUNDS} rounds in rotated order; the ratio is the median of per-round ratios to the floor. Clients and servers share the 2 cores.`,
  '',
  '| clients | server | CPU µs / delivery | vs floor | heap / conn | RSS / conn | delivered / expected | delay p50 / p99 ms |',
  '| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |',
];
for (const n of SIZES) {
  for (const t of TARGETS) {
    const r = results[n][t];
    lines.push(
      `| ${n.toLocaleString('en-US')} | ${LABELS[t]} | ${r.cpuPerDelivery.toFixed(2)} | ${r.vsFloor.toFixed(2)}x | ${kib(r.heapPerConn)} | ${kib(r.rssPerConn)} | ${r.delivered.toLocaleString('en-US')} / ${r.expected.toLocaleString('en-US')} | ${r.p50} / ${r.p99} |`,
    );
  }
}
const verdict = (n, t, target) =>
  `${t === 'memory' ? 'in-memory' : 'Redis'} at ${n.toLocaleString('en-US')}: ${results[n][t].vsFloor.toFixed(2)}x (target <= ${target}x: ${results[n][t].vsFloor <= target ? 'met' : 'not met'})`;
lines.push(
  '',
  `Targets, CPU per delivery vs the floor: ${SIZES.flatMap((n) => [verdict(n, 'memory', 1.1), verdict(n, 'redis', 1.3)]).join('; ')}.`,
  '',
  `Across instances: \`publish\` on instance A to receipt by the 1,000 clients of instance B (two processes on one Redis stream, A has no clients, ${SECONDS * 2} s at 10 events/s): ${results.ab.delivered.toLocaleString('en-US')} events received, delay p50 ${results.ab.p50} ms, p99 ${results.ab.p99} ms.`,
);
const section = lines.join('\n');
console.log(`\n${section}\n`);
writeSection(join(here, 'RESULTS.md'), '## Event hub fan-out', section);
