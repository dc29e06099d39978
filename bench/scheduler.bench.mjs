// @keel/core request scheduler benchmark (issue 4): keel's scheduler through the client vs p-queue
// and bottleneck configured the same, in one run; results printed as a markdown table.
//
//   cd packages/core && npx tsup && cd ../.. && node --expose-gc bench/scheduler.bench.mjs
//
// Workload: N jobs submitted at once, concurrency 8, priorities on, mixed priorities (1/3 each of
// high, normal, low), every job's work is an immediately-resolving fetch whose body is read and
// JSON-parsed. keel runs `createClient({ cache: { enabled: false }, scheduler: { concurrency: 8,
// priority: true } })` (circuit breaker and intelligence at their defaults; "observers off" turns
// them off) with distinct URLs `/items?i=<n>` (one endpoint, no dedup). p-queue: `new PQueue({
// concurrency: 8 })`, `add(job, { priority })`. bottleneck: `new Bottleneck({ maxConcurrent: 8 })`,
// `schedule({ priority }, job)`. Contenders alternate inside each round (the start rotates); each
// figure is the median over rounds; a ratio is the median of per-round ratios to p-queue.
// bottleneck needs ~3.5 ms per job whatever the queue size (its dispatch goes through timers), so
// 100,000 jobs take ~6 minutes: it runs once (BOTTLENECK_N jobs, default 100,000; 0 skips it) and
// its ratio is against the median p-queue time.
//
// "keel Scheduler alone" measures the queue itself, like for like with p-queue: the Scheduler class
// bundled from packages/core/src (esbuild, into bench/.out/) driven through its gate API (enter,
// acquire, the resume hook, finish) with the same job; no spec resolution, dedup, tracker or flight around it.
//
// Flatness: per-job cost (µs) with 1,000 / 10,000 / 100,000 jobs queued at once (back-to-back
// bursts of that size, 100,000 jobs per figure, median over rounds).
//
// Requests that each carry their own URL and options (issue #15): the common case in an app, as a
// user writes it: `createClient({ baseURL, fetch, scheduler: { concurrency: 8, priority: true } })`
// with every other option at its default (cache, dedup, retry, intelligence, circuit breaker), and
// 100,000 `client.get(`/job?i=${i}`, { priority })` issued at once, priorities cycling high / normal
// / low; the fetch answers at once with a fresh `new Response('{"ok":true}')` (JSON content-type).
// p-queue runs the same fetch + `res.json()` per job with the same priorities and concurrency.
// URLS_ROUNDS rounds (default 15), the two in a shuffled order within each, a GC before each run;
// the throughput ratio is the median of per-round ratios, with their p25-p75. The result replaces
// the "## Scheduler: requests with their own URL and options" section of bench/RESULTS.md.
// BENCH_BASELINE=<git rev> adds @keel/core built from that revision to the same rounds.
//
// SCHEDULER_BENCH=urls runs that scenario alone (the rest takes ~10 minutes).
import { execSync } from 'node:child_process';
import { cpus, loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { createClient } from '@keel/core';
import Bottleneck from 'bottleneck';
import PQueue from 'p-queue';
import { bundleSource, loadCoreAt } from './lib/core-baseline.mjs';
import { readCpuModel, writeSection } from './lib/results.mjs';
import { benchCommand, fmtInt, fmtSpread, median, shuffler, spread } from './lib/stats.mjs';

const N = 100_000;
const ROUNDS = Number(process.env.ROUNDS ?? 5);
const CONCURRENCY = 8;
const PRIORITIES = ['high', 'normal', 'low'];

function getGc() {
  if (typeof globalThis.gc === 'function') return globalThis.gc;
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc');
}
const gc = getGc();
const now = () => performance.now();

// ── the shared fetch: resolves at once with a small JSON body ───────────────────────────────────

const BODY = '{"ok":true}';
const HEADERS = new Headers({ 'content-type': 'application/json' });
/** A minimal Response (status, headers, text) so fetch itself costs next to nothing for everyone. */
const response = {
  status: 200,
  statusText: 'OK',
  ok: true,
  headers: HEADERS,
  text: () => Promise.resolve(BODY),
};
let fetchCalls = 0;
const fakeFetch = () => {
  fetchCalls++;
  return Promise.resolve(response);
};
/** The job the generic queues run: the same fetch, body read and parsed, as keel does. */
const job = (url) => () =>
  fakeFetch(url)
    .then((r) => r.text())
    .then(JSON.parse);

// ── contenders: each returns elapsed ms for n jobs ──────────────────────────────────────────────

async function runKeel(n, observers = true) {
  const client = createClient({
    fetch: fakeFetch,
    cache: { enabled: false },
    scheduler: { concurrency: CONCURRENCY, priority: true },
    ...(observers ? {} : { intelligence: { enabled: false }, circuitBreaker: { enabled: false } }),
  });
  const t = now();
  const all = new Array(n);
  for (let i = 0; i < n; i++) {
    all[i] = client.get(`/items?i=${i}`, {
      baseURL: 'https://api.test',
      priority: PRIORITIES[i % 3],
    });
  }
  await Promise.all(all);
  const elapsed = now() - t;
  const s = client.scheduler().stats();
  if (s.completed !== n || s.active + s.queued + s.delayed !== 0) {
    throw new Error(`keel: unexpected stats ${JSON.stringify(s)}`);
  }
  return elapsed;
}

async function runPQueue(n) {
  const queue = new PQueue({ concurrency: CONCURRENCY });
  const t = now();
  const all = new Array(n);
  for (let i = 0; i < n; i++) {
    // p-queue: a higher number runs first.
    all[i] = queue.add(job(`https://api.test/items?i=${i}`), { priority: 2 - (i % 3) });
  }
  await Promise.all(all);
  return now() - t;
}

async function runBottleneck(n) {
  const limiter = new Bottleneck({ maxConcurrent: CONCURRENCY });
  const t = now();
  const all = new Array(n);
  for (let i = 0; i < n; i++) {
    // bottleneck: 0 is the highest priority, 9 the lowest (default 5).
    all[i] = limiter.schedule({ priority: [3, 5, 7][i % 3] }, job(`https://api.test/items?i=${i}`));
  }
  await Promise.all(all);
  const elapsed = now() - t;
  await limiter.stop({ dropWaitingJobs: false });
  return elapsed;
}

/** The Scheduler class and what it needs, bundled from source (it is not a public export). */
function loadScheduler() {
  return bundleSource(
    'scheduler-alone',
    [
      "export { Scheduler } from './scheduler/scheduler.ts';",
      "export { resolveSchedulerOptions } from './scheduler/options.ts';",
      "export { EventEmitter } from './events/emitter.ts';",
      "export { systemClock } from './internal/clock.ts';",
    ].join('\n'),
  );
}
const core = await loadScheduler();

async function runSchedulerAlone(n) {
  const s = new core.Scheduler(
    core.resolveSchedulerOptions({ concurrency: CONCURRENCY, priority: true }),
    new core.EventEmitter(),
    {
      clock: core.systemClock,
      permits: () => true,
      cancelJob: () => {},
      // A queued job is told when it gets its slot (its work makes no synchronous call back).
      resume: (job, error) => (error === undefined ? job.run() : job.fail(error)),
    },
  );
  const t = now();
  const all = new Array(n);
  for (let i = 0; i < n; i++) {
    const url = `https://api.test/items?i=${i}`;
    const job = {
      id: i,
      probe: false,
      aborted: false,
      reason: undefined,
      onAbort: undefined,
      spec: {
        key: url,
        url,
        method: 'GET',
        endpoint: 'GET /items',
        host: 'api.test',
        priority: PRIORITIES[i % 3],
        group: undefined,
      },
    };
    all[i] = new Promise((resolve, reject) => {
      job.run = () =>
        fakeFetch(url)
          .then((r) => r.text())
          .then(JSON.parse)
          .then((data) => {
            s.finish(job, 'completed');
            resolve(data);
          }, reject);
      job.fail = reject;
    });
    s.enter(job);
    if (s.acquire(job)) job.run();
  }
  await Promise.all(all);
  const elapsed = now() - t;
  const st = s.stats();
  if (st.completed !== n || st.active + st.queued + st.delayed !== 0) {
    throw new Error(`scheduler alone: unexpected stats ${JSON.stringify(st)}`);
  }
  return elapsed;
}

const contenders = [
  { name: 'p-queue', run: runPQueue },
  { name: 'keel (client)', run: (n) => runKeel(n, true) },
  { name: 'keel (client, observers off)', run: (n) => runKeel(n, false) },
  { name: 'keel Scheduler alone', run: runSchedulerAlone },
];
const BOTTLENECK_N = Number(process.env.BOTTLENECK_N ?? N);

async function measure(run, n) {
  gc();
  return run(n);
}

// ── requests that each carry their own URL and options (issue #15) ──────────────────────────────

const URLS_N = Number(process.env.URLS_N ?? 100_000);
const URLS_ROUNDS = Number(process.env.URLS_ROUNDS ?? 15);
const BASE_URL = 'https://api.test';
const JSON_INIT = { headers: { 'content-type': 'application/json' } };
let urlFetches = 0;
/** A fresh Response per call, as a real fetch gives: its body stream is created and read. */
const responseFetch = () => {
  urlFetches++;
  return Promise.resolve(new Response(BODY, JSON_INIT));
};

/** keel as an app writes it: only baseURL, fetch and the scheduler set; every default on. */
function urlsKeel(core) {
  return async (n) => {
    const client = core.createClient({
      baseURL: BASE_URL,
      fetch: responseFetch,
      scheduler: { concurrency: CONCURRENCY, priority: true },
    });
    const all = new Array(n);
    for (let i = 0; i < n; i++) {
      all[i] = client.get(`/job?i=${i}`, { priority: PRIORITIES[i % 3] });
    }
    const settled = await Promise.all(all);
    if (settled[n - 1].data.ok !== true) throw new Error('keel: wrong data');
    const s = client.scheduler().stats();
    if (s.completed !== n || s.active + s.queued + s.delayed !== 0) {
      throw new Error(`keel: unexpected stats ${JSON.stringify(s)}`);
    }
  };
}

async function urlsPQueue(n) {
  const queue = new PQueue({ concurrency: CONCURRENCY });
  const all = new Array(n);
  for (let i = 0; i < n; i++) {
    const url = `${BASE_URL}/job?i=${i}`;
    // p-queue: a higher number runs first.
    all[i] = queue.add(() => responseFetch(url).then((r) => r.json()), { priority: 2 - (i % 3) });
  }
  const settled = await Promise.all(all);
  if (settled[n - 1].ok !== true) throw new Error('p-queue: wrong data');
}

/** Wall and CPU (user + system, every thread of the process) ms of one run after a full GC. */
async function timed(run, n) {
  gc();
  urlFetches = 0;
  const cpu0 = process.cpuUsage();
  const t = now();
  await run(n);
  const wall = now() - t;
  const cpu = process.cpuUsage(cpu0);
  if (urlFetches !== n) throw new Error(`${urlFetches} fetch calls, expected ${n}`);
  return { wall, cpu: (cpu.user + cpu.system) / 1000 };
}

async function urlsScenario() {
  const started = now();
  const baseline = process.env.BENCH_BASELINE
    ? await loadCoreAt(process.env.BENCH_BASELINE)
    : undefined;
  const runners = [
    { name: 'p-queue', run: urlsPQueue },
    { name: 'keel', run: urlsKeel({ createClient }) },
  ];
  if (baseline) runners.push({ name: baseline.label, run: urlsKeel(baseline.core) });
  console.log(
    `\nper-request URL and options: ${fmtInt(URLS_N)} GETs, concurrency ${CONCURRENCY}, ${URLS_ROUNDS} rounds`,
  );
  for (const r of runners) await timed(r.run, 20_000); // warm-up
  const shuffle = shuffler();
  const wall = Object.fromEntries(runners.map((r) => [r.name, []]));
  const cpu = Object.fromEntries(runners.map((r) => [r.name, []]));
  for (let round = 0; round < URLS_ROUNDS; round++) {
    for (const r of shuffle(runners)) {
      const t = await timed(r.run, URLS_N);
      wall[r.name].push(t.wall);
      cpu[r.name].push(t.cpu);
    }
    console.log(
      `round ${round + 1}: ${runners.map((r) => `${r.name} ${fmtInt(wall[r.name][round])} ms (cpu ${fmtInt(cpu[r.name][round])})`).join(', ')}`,
    );
  }
  // Throughput ratio to p-queue per round: p-queue's time / the contender's.
  const perRound = (series, name) => series[name].map((x, i) => series['p-queue'][i] / x);
  const rows = runners.map((r) => ({
    name: r.name,
    jobsPerSec: (URLS_N / spread(wall[r.name]).p50) * 1000,
    usPerJob: (spread(wall[r.name]).p50 * 1000) / URLS_N,
    cpuUsPerJob: (spread(cpu[r.name]).p50 * 1000) / URLS_N,
    wallRatio: spread(perRound(wall, r.name)),
    cpuRatio: spread(perRound(cpu, r.name)),
  }));
  const keel = rows.find((r) => r.name === 'keel');
  const met = keel.wallRatio.p50 >= 1;
  const table = [
    '| contender | jobs/s | µs/job | CPU µs/job | throughput vs p-queue [p25-p75] | CPU efficiency vs p-queue [p25-p75] |',
    '|---|---:|---:|---:|---:|---:|',
    ...rows.map(
      (r) =>
        `| ${r.name} | ${fmtInt(r.jobsPerSec)} | ${r.usPerJob.toFixed(2)} | ${r.cpuUsPerJob.toFixed(2)} | ${r.name === 'keel' ? `**${fmtSpread(r.wallRatio)}**` : fmtSpread(r.wallRatio)} | ${fmtSpread(r.cpuRatio)} |`,
    ),
  ].join('\n');
  const verdict = `- keel >= 1.0× p-queue throughput with per-request URLs and options: ${met ? 'met' : 'missed'} (${fmtSpread(keel.wallRatio)}; p25 ${keel.wallRatio.p25 >= 1 ? '>=' : '<'} 1.0)`;
  const elapsed = (now() - started) / 1000;
  const date = execSync('date').toString().trim();
  const machine = `${cpus().length} cores, ${readCpuModel()}, Node ${process.version}`;
  const load = loadavg()
    .map((x) => x.toFixed(2))
    .join(' ');
  console.log(`\n${table}\n\n${verdict}\n${date} · ${machine} · load average ${load}`);
  const heading = '## Scheduler: requests with their own URL and options';
  writeSection(
    join(dirname(fileURLToPath(import.meta.url)), 'RESULTS.md'),
    heading,
    [
      heading,
      '',
      `Run: ${date} · ${machine} · load average at the end ${load} (the machine is shared) ·`,
      `\`${benchCommand('scheduler')}\` (${URLS_ROUNDS} rounds, ${elapsed.toFixed(0)} s).`,
      '',
      `${fmtInt(URLS_N)} GETs issued at once, each with its own URL and options, as an app writes them:`,
      "`client.get('/job?i=' + i, { priority })` (priorities cycling high / normal / low) on",
      '`createClient({ baseURL, fetch, scheduler: { concurrency: 8, priority: true } })`, every other option at',
      'its default (cache, dedup, retry, intelligence, circuit breaker on). The fetch answers at once with a fresh',
      `\`new Response('{"ok":true}')\` (JSON content-type) that keel reads and parses. p-queue 9 runs the same fetch +`,
      '`res.json()` per job, `add(job, { priority })`, concurrency 8. Each round runs every contender once in a',
      'shuffled order after a full GC; a ratio is the median of the per-round ratios (p-queue time / contender time),',
      'p25-p75 in brackets. CPU is user + system time of the process (every thread, GC included): less moved by',
      "the other processes on the machine than wall time; 'CPU efficiency' is p-queue's CPU time / the contender's.",
      ...(baseline
        ? [`${baseline.label} is @keel/core built from that revision, run in the same rounds.`]
        : []),
      '',
      table,
      '',
      verdict,
      ...URLS_ANALYSIS,
      '',
    ].join('\n'),
  );
}

/** What the scenario found; kept with the figures it explains. */
const URLS_ANALYSIS = [
  '',
  '**What per-request resolution cost, and what changed (Nov 26 2026).** Instructions per request counted',
  'with `valgrind --tool=cachegrind` (`node --single-threaded`, 20,000 requests a round, (Ir of 3 rounds -',
  'Ir of 1) / 2 / 20,000; a fetch answering a plain object, so the figure is keel and not undici;',
  'reproducible to ~1%): 89.5k before, 71.1k after. p-queue with the same job: 61.0k at 20,000 queued (its',
  'priority queue inserts with a binary search and `splice`, so its cost per job grows with the queue:',
  'at 100,000 keel is ahead). Each step, measured on its own:',
  '- `attempt/attempt.ts`: the attempt makes its `AbortController` when the fetch reads `init.signal` (an',
  "  own getter, so a wrapper that spreads `init` passes it on); Node 20's `createAbortSignal` was the",
  "  largest allocation of an attempt. With `cache/store.ts` sharing the spec's frozen tags instead of",
  '  copying them per write (and a one-entry origin memo, dropped since to stay within the size budget): 89.5k -> 74.5k.',
  '- `internal/url.ts` `resolveCanonical`: a path on the base with a plain query (`/job?i=42`) is resolved',
  '  from a per-base memo of the base + path part, its query checked on its own, instead of matching the',
  '  whole URL with the canonical-URL pattern each time: spec resolution with a distinct URL and options per',
  '  call 1.1 -> 0.43 µs; 74.5k -> 71.9k. A property test checks it against a full `new URL` parse.',
  'Tried and not kept: an intrusive list instead of the `Set` of live flights (-0.7%, noise); the attempt',
  "as a class instead of closures (+40% instructions, slower); letting a settled caller's consumer drop its",
  'flight (a held settled promise kept ~1.5 KB, then ~0.8 KB, Headers included) cost 6% here: less live',
  "memory, more frequent major GCs. GC is still ~40% of the client's time in this workload: every queued",
  "request's flight, spec, tracker, scheduler entry and caller promise (~1.2 KB) is alive until it runs.",
  '',
  "**Nov 29 2026: a reader held past its body.** The same count with the bench's real `Response` (undici's",
  'body stream read per request): 209.8k instructions per request, p-queue 150.9k. 3301ccf had made a body',
  'from a fetch that never reads `init.signal` go through a cancellable pipe (2.5x slower); 3531fc6 read it',
  "with keel's own reader instead, whose canceller the attempt kept. Kept past the read, that canceller held",
  "the reader, and so the stream and its buffers, from the ended attempt's closures, which objects awaiting a",
  'major GC still reach: every minor GC copied them (scavenge time 900 -> 580 ms over 3 x 20,000',
  'requests). `attempt/read-body.ts` now lets go of it once the body is read (209.8k -> 177.1k) and decodes',
  'the bytes once with a shared `TextDecoder`, not one per body (-> 170.0k). At 100,000 queued, where',
  "p-queue's `splice` insert costs more per job, that is the 1.19x above (this scenario alone, in a fresh",
  "process). Run after the file's other scenarios (the whole `bench/scheduler.bench.mjs`, 10:58 the same day),",
  'it measured 1.46x [1.40-1.54]: p-queue is slower in that older heap (44.9 µs/job against 33.2), keel is not.',
];

if (process.env.SCHEDULER_BENCH === 'urls') {
  await urlsScenario();
  // That scenario alone: the rest of this file is the ~10-minute full benchmark.
  process.exit(0);
}

// ── 1. throughput, 100,000 jobs ─────────────────────────────────────────────────────────────────

console.log(
  `scheduler bench: ${N.toLocaleString('en-US')} jobs, concurrency ${CONCURRENCY}, ${ROUNDS} rounds`,
);
for (const c of contenders) await measure(c.run, 10_000); // warm-up
if (BOTTLENECK_N > 0) await measure(runBottleneck, 200);

const times = Object.fromEntries(contenders.map((c) => [c.name, []]));
const ratios = Object.fromEntries(contenders.map((c) => [c.name, []]));
for (let round = 0; round < ROUNDS; round++) {
  const order = contenders.map((_, i) => contenders[(i + round) % contenders.length]);
  const roundTimes = {};
  for (const c of order) {
    fetchCalls = 0;
    roundTimes[c.name] = await measure(c.run, N);
    if (fetchCalls !== N) throw new Error(`${c.name}: ${fetchCalls} fetch calls, expected ${N}`);
  }
  for (const c of contenders) {
    times[c.name].push(roundTimes[c.name]);
    // ratio of throughputs = baseline time / contender time
    ratios[c.name].push(roundTimes['p-queue'] / roundTimes[c.name]);
  }
  console.log(
    `round ${round + 1}: ${contenders.map((c) => `${c.name} ${fmtInt((N / roundTimes[c.name]) * 1000)} jobs/s`).join(', ')}`,
  );
}

const rows = [];
for (const c of contenders) {
  const t = median(times[c.name]);
  const r = median(ratios[c.name]);
  rows.push({
    contender: c.name,
    jobs: N,
    jobsPerSec: (N / t) * 1000,
    usPerJob: (t * 1000) / N,
    ratio: r,
  });
}
if (BOTTLENECK_N > 0) {
  fetchCalls = 0;
  const t = await measure(runBottleneck, BOTTLENECK_N);
  if (fetchCalls !== BOTTLENECK_N) throw new Error(`bottleneck: ${fetchCalls} fetch calls`);
  const pqPerJob = median(times['p-queue']) / N;
  rows.push({
    contender: 'bottleneck (1 run)',
    jobs: BOTTLENECK_N,
    jobsPerSec: (BOTTLENECK_N / t) * 1000,
    usPerJob: (t * 1000) / BOTTLENECK_N,
    ratio: pqPerJob / (t / BOTTLENECK_N),
  });
  console.log(`bottleneck: ${fmtInt((BOTTLENECK_N / t) * 1000)} jobs/s`);
}

// ── 2. flatness: per-job cost at 1k / 10k / 100k queued ─────────────────────────────────────────

const SIZES = [1_000, 10_000, 100_000];
/**
 * µs per job over back-to-back bursts of `size` jobs (100,000 jobs in all, at least ROUNDS
 * bursts), one forced GC before them: a GC before every small burst would charge it the heap's
 * regrowth, a fixed cost that has nothing to do with the queue's depth.
 */
async function perJob(run, size) {
  const bursts = Math.max(ROUNDS, 100_000 / size);
  gc();
  let total = 0;
  for (let i = 0; i < bursts; i++) total += await run(size);
  return (total * 1000) / (bursts * size);
}
const flat = [];
for (const size of SIZES) {
  const client = [];
  const alone = [];
  const pq = [];
  for (let i = 0; i < ROUNDS; i++) {
    client.push(await perJob((n) => runKeel(n, true), size));
    alone.push(await perJob(runSchedulerAlone, size));
    pq.push(await perJob(runPQueue, size));
  }
  flat.push({ size, keel: median(client), alone: median(alone), pqueue: median(pq) });
}

// ── report ──────────────────────────────────────────────────────────────────────────────────────

const cpu = cpus();
console.log(
  `\nRun: ${new Date().toUTCString()} · ${cpu.length} cores, ${cpu[0]?.model.trim()}, Node ${process.version}\n`,
);
console.log('| contender | jobs | jobs/s | µs/job | throughput ratio to p-queue |');
console.log('|---|---:|---:|---:|---:|');
for (const r of rows) {
  console.log(
    `| ${r.contender} | ${fmtInt(r.jobs)} | ${fmtInt(r.jobsPerSec)} | ${r.usPerJob.toFixed(2)} | ${r.ratio.toFixed(r.ratio < 0.1 ? 4 : 2)}× |`,
  );
}
console.log(
  '\n| jobs queued at once | keel (client) µs/job | keel Scheduler alone µs/job | p-queue µs/job |',
);
console.log('|---:|---:|---:|---:|');
for (const f of flat) {
  console.log(
    `| ${fmtInt(f.size)} | ${f.keel.toFixed(2)} | ${f.alone.toFixed(2)} | ${f.pqueue.toFixed(2)} |`,
  );
}
for (const name of ['keel (client)', 'keel Scheduler alone']) {
  const row = rows.find((r) => r.contender === name);
  console.log(
    `target (>= p-queue throughput), ${name}: ${row.ratio >= 1 ? 'met' : 'not met'} (${row.ratio.toFixed(2)}×)`,
  );
}

await urlsScenario();
