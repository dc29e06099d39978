// Adaptive engine benchmark (issue 5): a saturating backend, the adaptive client against the same
// client with a fixed ceiling of 8, on the same closed-loop workload. Results are written to
// bench/RESULTS.md under "## Adaptive engine".
//
//   cd packages/core && npx tsup && cd ../.. && node bench/adaptive.bench.mjs [seconds]
//
// The backend (a child process, so the client's event loop cannot slow it down) serves GET /work.
// Its service time depends on how many requests it is already serving when one arrives:
//
//   c <= N: BASE ms;   c > N: BASE * (c / N)^3 ms       (N = 4, BASE = 100; ±10% seeded jitter)
//
// so up to N it scales, and past N every extra request slows all of them down more than it adds
// (contention: locks, cache thrash). 8 in flight take 800 ms each: 10 req/s; 4 take 100 ms: 40/s.
// BASE is large enough that CPU contention on a shared machine (tens of ms) stays noise.
// WORKERS callers each loop `get('/work?i=n')` (unique URLs: no dedup, no cache) for the duration.
// Reported per client: goodput (2xx per second), p50/p95 of the caller-visible latency (queueing in
// the client scheduler included) and of the server's service time, and the ceiling over time.
import { execSync, fork } from 'node:child_process';
import { createServer } from 'node:http';
import { cpus } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readCpuModel, writeSection } from './lib/results.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const N = 4;
const BASE = 100;
const WORKERS = 16;
const FIXED_CEILING = 8;
const TRACE_EVERY_MS = 1000;
/** Requests started after this are the steady state (the adaptive client has settled). */
const WARMUP_MS = 15_000;

// ── the saturating backend (child process entry) ──────────────────────────────────────────────

function serviceTime(c, random) {
  const ms = c <= N ? BASE : BASE * (c / N) ** 3;
  return ms * (0.9 + 0.2 * random());
}

/** A seeded LCG: the backend's jitter is the same sequence on every run. */
function lcg(seed) {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

function startBackend() {
  let inProgress = 0;
  let random = lcg(42);
  const server = createServer((req, res) => {
    if (req.url === '/reset') {
      random = lcg(42);
      res.end('ok');
      return;
    }
    inProgress++;
    const ms = serviceTime(inProgress, random);
    setTimeout(() => {
      inProgress--;
      const body = `{"ok":true,"ms":${ms.toFixed(1)}}`;
      res.writeHead(200, {
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(body),
        'x-service-ms': ms.toFixed(1),
      });
      res.end(body);
    }, ms);
  });
  server.keepAliveTimeout = 60_000;
  server.listen(0, '127.0.0.1', () => process.send?.({ port: server.address().port }));
}

if (process.argv.includes('--backend')) {
  startBackend();
} else {
  await main();
}

// ── the workload ──────────────────────────────────────────────────────────────────────────────

async function run(name, client, baseURL, seconds) {
  await fetch(`${baseURL}/reset`);
  const e2e = [];
  const steady = [];
  const service = [];
  const trace = [];
  let ok = 0;
  let failed = 0;
  let n = 0;
  const t0 = performance.now();
  const end = t0 + seconds * 1000;
  const ceilingNow = () => client.adaptive().endpoint('GET', '/work')?.effective ?? FIXED_CEILING;
  trace.push({ t: 0, ceiling: ceilingNow() });
  const tracer = setInterval(() => {
    trace.push({ t: (performance.now() - t0) / 1000, ceiling: ceilingNow() });
  }, TRACE_EVERY_MS);
  const worker = async () => {
    while (performance.now() < end) {
      const t = performance.now();
      try {
        const r = await client.get(`/work?i=${n++}`);
        ok++;
        e2e.push(performance.now() - t);
        if (t - t0 >= WARMUP_MS) steady.push(performance.now() - t);
        service.push(Number(r.headers.get('x-service-ms')));
      } catch {
        failed++;
      }
    }
  };
  await Promise.all(Array.from({ length: WORKERS }, worker));
  clearInterval(tracer);
  const elapsed = (performance.now() - t0) / 1000;
  const state = client.adaptive().endpoint('GET', '/work');
  return {
    name,
    goodput: ok / elapsed,
    failed,
    e2e: { p50: pct(e2e, 0.5), p95: pct(e2e, 0.95) },
    steady: { p95: pct(steady, 0.95) },
    service: { p50: pct(service, 0.5), p95: pct(service, 0.95) },
    trace,
    reason: state?.reason,
    metrics: client.adaptive().metrics(),
  };
}

function pct(xs, q) {
  const s = Float64Array.from(xs).sort();
  return s.length === 0 ? 0 : s[Math.max(0, Math.ceil(q * s.length) - 1)];
}

async function main() {
  const { createClient } = await import('@keel/core');
  const seconds = Number(process.argv[2] ?? 90);
  const child = fork(fileURLToPath(import.meta.url), ['--backend'], { stdio: 'inherit' });
  const port = await new Promise((resolve, reject) => {
    child.once('message', (m) => resolve(m.port));
    child.once('error', reject);
  });
  const baseURL = `http://127.0.0.1:${port}`;
  const common = {
    baseURL,
    cache: { enabled: false },
    retry: false,
    circuitBreaker: { enabled: false },
    scheduler: { concurrency: FIXED_CEILING },
  };
  // Thresholds are the operator's latency objective for this backend (100 ms of service plus
  // client overhead): healthy below 150 ms, pressured from 250 ms. Windows of 8 samples so it
  // adapts within seconds at 10-40 req/s; p95 over 32 samples tolerates one outlier, and a
  // cooldown of 4 windows (32 samples) judges each step on latencies all taken after the last.
  const adaptive = {
    enabled: true,
    concurrency: true,
    highLatencyMs: 250,
    lowLatencyMs: 150,
    latencyWindow: 32,
    outcomeWindow: 8,
    degradeSamples: 2,
    recoverySamples: 3,
    changeCooldown: 4,
  };
  const t = performance.now();
  const fixed = await run('fixed ceiling 8', createClient(common), baseURL, seconds);
  const adapted = await run('adaptive', createClient({ ...common, adaptive }), baseURL, seconds);
  child.disconnect();
  child.kill();
  report(fixed, adapted, seconds, adaptive, (performance.now() - t) / 1000);
}

// ── report ────────────────────────────────────────────────────────────────────────────────────

function report(fixed, adapted, seconds, adaptive, elapsed) {
  const fmt = (x, d = 1) => x.toFixed(d);
  const p95Ratio = fixed.e2e.p95 / adapted.e2e.p95;
  const goodputRatio = adapted.goodput / fixed.goodput;
  const met = p95Ratio >= 2 && goodputRatio >= 0.9;
  const steadyRatio = fixed.steady.p95 / adapted.steady.p95;
  const row = (r) =>
    `| ${r.name} | ${fmt(r.goodput)} req/s | ${fmt(r.e2e.p50)} ms | ${fmt(r.e2e.p95)} ms | ${fmt(r.steady.p95)} ms | ${fmt(r.service.p50)} ms | ${fmt(r.service.p95)} ms | ${r.failed} |`;
  const table = [
    `| client | goodput | caller p50 | caller p95 | caller p95 after ${WARMUP_MS / 1000} s | server p50 | server p95 | failed |`,
    '|---|---:|---:|---:|---:|---:|---:|---:|',
    row(fixed),
    row(adapted),
  ].join('\n');
  // Only the samples where the ceiling moved (and the last one), as `time:ceiling`.
  const trace = adapted.trace
    .filter((p, i, all) => i === 0 || i === all.length - 1 || p.ceiling !== all[i - 1].ceiling)
    .map((p) => `${fmt(p.t, 0)}s:${p.ceiling}`)
    .join(' ');
  const verdict = `adaptive caller p95 ${fmt(p95Ratio, 2)}x lower over the whole run (${fmt(steadyRatio, 2)}x after ${WARMUP_MS / 1000} s; target >= 2x), goodput ${fmt(goodputRatio * 100, 0)}% of fixed (target >= 90%): ${met ? 'met' : 'missed'}`;
  const m = adapted.metrics;
  const date = execSync('date').toString().trim();
  const machine = `${cpus().length} cores, ${readCpuModel()}, Node ${process.version}`;
  console.log(`\n${table}\n\nceiling trace (adaptive): ${trace}\n${verdict}`);
  console.log(`last reason: ${adapted.reason}`);
  console.log(`${date} · ${machine} · ${fmt(elapsed)} s`);

  const section = [
    '## Adaptive engine',
    '',
    `Run: ${date} · ${machine} · \`node bench/adaptive.bench.mjs ${seconds}\` (${fmt(elapsed)} s).`,
    '',
    `Saturating loopback backend (child process): service time ${BASE} ms up to ${N} requests in progress,`,
    `${BASE} × (c/${N})³ ms above (±10% seeded jitter), so 8 in flight take ~${BASE * 8} ms each. ${WORKERS} closed-loop`,
    `callers, unique URLs, no cache, no retry, circuit breaker off, ${seconds} s per client, run one after the other.`,
    `Both clients: \`scheduler: { concurrency: ${FIXED_CEILING} }\`; the adaptive one adds`,
    `\`adaptive: ${JSON.stringify(adaptive).replaceAll(',', ', ')}\`.`,
    'Caller latency includes waiting in the client scheduler; server latency is the service time the backend',
    `reports. "After ${WARMUP_MS / 1000} s" counts only requests started once the adaptive client has had time to settle;`,
    'the target is judged on the whole run, warm-up included.',
    '',
    table,
    '',
    `Ceiling trace (adaptive, sampled every ${TRACE_EVERY_MS / 1000} s, changes only): ${trace}`,
    '',
    `Adaptive counters: ${m.concurrencyReductions} reductions, ${m.concurrencyRecoveries} recoveries. Last reason: "${adapted.reason}".`,
    '',
    `Result: ${verdict}.`,
    '',
  ].join('\n');
  writeSection(join(here, 'RESULTS.md'), '## Adaptive engine', section);
}
