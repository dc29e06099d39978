// Event hub fan-out: server CPU per delivered event and memory per connection at 1,000 and 5,000
// clients receiving 10 events/s, for the in-memory hub, the Redis Streams store, a minimal raw
// node:http fan-out (the floor) and better-sse, in the same run; then the delay from `publish`
// on instance A to receipt by the clients of instance B through Redis, at 1,000 clients.
// Build first: (cd packages/server && npx tsup). Run: node --expose-gc bench/hub.bench.mjs
// Each server runs in its own child process (hub-targets.mjs); the clients run here. Needs
// Debian's redis-server (packages/server/scripts/ensure-redis.sh). Results replace the
// "## Event hub fan-out" section of bench/RESULTS.md.
// Env: BENCH_HUB_CLIENTS (default "1000,5000"), BENCH_HUB_SECONDS (window, default 2),
// BENCH_HUB_ROUNDS (windows per server and pairing, default 6).
import { fork } from 'node:child_process';
import { request } from 'node:http';
import { cpus, loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startRedis } from '../scripts/redis-server.mjs';
import { readCpuModel, writeSection } from './lib/results.mjs';
import { median } from './lib/stats.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const SIZES = (process.env.BENCH_HUB_CLIENTS ?? '1000,5000').split(',').map(Number);
const SECONDS = Number(process.env.BENCH_HUB_SECONDS ?? 2);
const ROUNDS = Number(process.env.BENCH_HUB_ROUNDS ?? 6);
const TARGETS = ['floor', 'memory', 'redis', 'better-sse'];
const CONTENDERS = TARGETS.slice(1);
/** The across-instances run. */
const AB_SECONDS = 10;
const LABELS = {
  floor: 'raw node:http fan-out (floor)',
  memory: '@keel/server hub, in memory',
  redis: '@keel/server hub, Redis Streams',
  'better-sse': 'better-sse channel',
};

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

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

/** Starts `target` (not publishing yet) with `n` clients; its memory before and with them. */
async function serve(target, n, redisUrl) {
  const server = await startTarget(target, false, redisUrl);
  server.memBefore = await ask(server.child, 'mem', 'mem');
  server.clients = await connectClients(server.port, n);
  while ((await ask(server.child, 'clients', 'clients')) < n) await sleep(20);
  await sleep(1000);
  server.memWith = await ask(server.child, 'mem', 'mem');
  server.windows = [];
  return server;
}

/** One measuring window: the server publishes 10 events/s for SECONDS, then stops. */
async function measure(server, n) {
  const { child, clients } = server;
  child.send('start');
  await sleep(300);
  const [cpuBefore, publishedBefore] = await Promise.all([
    ask(child, 'cpu', 'cpu'),
    ask(child, null, 'published'),
  ]);
  clients.to = Number.POSITIVE_INFINITY;
  clients.from = Date.now();
  await sleep(SECONDS * 1000);
  const [cpuAfter, publishedAfter] = await Promise.all([
    ask(child, 'cpu', 'cpu'),
    ask(child, null, 'published'),
  ]);
  clients.to = Date.now();
  child.send('stop');
  await sleep(300);
  // Counted at the server: a client that reads late (they share the cores) does not move
  // deliveries out of the window whose CPU time is measured.
  const writes = (publishedAfter - publishedBefore) * n;
  const cpuUs = cpuAfter.user + cpuAfter.system - cpuBefore.user - cpuBefore.system;
  const window = { writes, cpuPerDelivery: cpuUs / writes };
  server.windows.push(window);
  return window;
}

/**
 * The floor and one contender, both up with `n` clients each, measured in alternating windows:
 * background load on the shared machine hits both alike. Returns the per-window ratios.
 */
async function pair(contender, n, redisUrl) {
  const floor = await serve('floor', n, redisUrl);
  const other = await serve(contender, n, redisUrl);
  try {
    const ratios = [];
    for (let round = 0; round < ROUNDS; round++) {
      const order = round % 2 ? [other, floor] : [floor, other];
      const [first, second] = [await measure(order[0], n), await measure(order[1], n)];
      const [f, o] = round % 2 ? [second, first] : [first, second];
      ratios.push(o.cpuPerDelivery / f.cpuPerDelivery);
    }
    await sleep(2000); // late readers catch up with the last window's events
    console.log(
      `${n} clients, ${contender} vs floor: ${ratios.map((r) => r.toFixed(2)).join(' ')}`,
    );
    return { floor: summary(floor, n), other: summary(other, n), ratios };
  } finally {
    for (const server of [floor, other]) {
      for (const req of server.clients.reqs) req.destroy();
      await stop(server.child);
    }
  }
}

function summary(server, n) {
  const sorted = server.clients.latencies.sort((a, b) => a - b);
  return {
    cpuPerDelivery: median(server.windows.map((w) => w.cpuPerDelivery)),
    delivered: server.clients.delivered,
    expected: server.windows.reduce((sum, w) => sum + w.writes, 0),
    heapPerConn: (server.memWith.heapUsed - server.memBefore.heapUsed) / n,
    rssPerConn: (server.memWith.rss - server.memBefore.rss) / n,
    p50: pct(sorted, 0.5),
    p99: pct(sorted, 0.99),
  };
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
    await sleep(AB_SECONDS * 1000);
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
    results[n] = {};
    const floors = [];
    for (const contender of CONTENDERS) {
      const { floor, other, ratios } = await pair(contender, n, redis.url);
      floors.push(floor);
      results[n][contender] = { ...other, vsFloor: median(ratios) };
    }
    // The floor ran beside each contender: the median of its runs, the sums of its deliveries.
    const by = (field) => median(floors.map((f) => f[field]));
    results[n].floor = {
      cpuPerDelivery: by('cpuPerDelivery'),
      vsFloor: 1,
      heapPerConn: by('heapPerConn'),
      rssPerConn: by('rssPerConn'),
      delivered: floors.reduce((sum, f) => sum + f.delivered, 0),
      expected: floors.reduce((sum, f) => sum + f.expected, 0),
      p50: by('p50'),
      p99: by('p99'),
    };
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
  `Each server in its own child process (NODE_ENV=production) publishes one small event (\`{"t":<ms>}\`) every 100 ms to every connected client (plain node:http requests, in the parent). The floor and one contender run side by side, each with its own clients, and publish in alternating ${SECONDS} s windows (${ROUNDS} each, the order flipped every round), so that background load on the shared machine hits both alike: a contender's ratio is the median of its per-round ratios to the floor beside it. CPU per delivery: the server's CPU time over a window divided by the deliveries in it (events published in the window x clients, counted at the server); a row's value is the median over its windows (the floor's: the median of its three pairings). The clients count every window's events whenever they arrive, to show that nothing is lost (±1 event per client at a window's edges), and their delay from publish to receipt (at 5,000 clients mostly the clients' own reading lag: they share the 2 cores with the servers). Memory per connection: the server's heap and RSS after GC with all clients connected, minus before any, divided by the clients. The Redis store publishes through XADD and delivers what its XREAD reads (a redis-server on loopback, no persistence).`,
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
  `Across instances: \`publish\` on instance A to receipt by the 1,000 clients of instance B (two processes on one Redis stream, A has no clients, ${AB_SECONDS} s at 10 events/s): ${results.ab.delivered.toLocaleString('en-US')} events received, delay p50 ${results.ab.p50} ms, p99 ${results.ab.p99} ms.`,
);
const section = lines.join('\n');
console.log(`\n${section}\n`);
writeSection(join(here, 'RESULTS.md'), '## Event hub fan-out', section);
