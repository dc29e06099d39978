import type { AdaptiveOptions } from '@keel/core';
import { expect, type Scenario } from '../scenario';

const PATH = '/saturating';
const CONCURRENCY = 8;
/** Callers, each sending its next request as soon as the last one is answered. */
const WORKERS = 12;
/** The workload runs until the ceiling has held this long, or for at most MAX_MS. */
const SETTLED_MS = 1000;
const MAX_MS = 8000;
// The operator's latency objective for this backend (40 ms of service plus client overhead):
// healthy below 60 ms, pressured from 80 ms. Windows of 4 samples so it decides several times a
// second; p95 over the last 8 samples. A cooldown of 3 windows (12 samples): the attempts still
// running when the ceiling drops (up to the old ceiling, at most 4 below 5) end within it, so each
// step below 5 is judged on the latencies of attempts started under the new ceiling. A slow
// recovery keeps it from probing the slow side again within the demo.
const ADAPTIVE: AdaptiveOptions = {
  enabled: true,
  concurrency: true,
  highLatencyMs: 80,
  lowLatencyMs: 60,
  outcomeWindow: 4,
  latencyWindow: 8,
  degradeSamples: 2,
  changeCooldown: 3,
  recoverySamples: 40,
};

interface Answer {
  /** The server's service time for the request. */
  ms: number;
  /** Requests in progress on the server when it arrived (itself included). */
  inProgress: number;
  /** When the caller got it (performance.now()). */
  at: number;
}

export const adaptiveScenario: Scenario = {
  title: 'Adaptive concurrency: a saturating backend',
  story:
    `GET ${PATH} takes 40 ms while at most 3 requests are in progress and far longer beyond ` +
    `(95 ms at 4, 320 ms at 6, 760 ms at 8). ${WORKERS} callers loop on it through a client ` +
    `with scheduler {concurrency: ${CONCURRENCY}} and adaptive {concurrency: true, ` +
    `highLatencyMs: ${ADAPTIVE.highLatencyMs}, lowLatencyMs: ${ADAPTIVE.lowLatencyMs}}: ` +
    'the engine sees the latency and lowers the endpoint’s ceiling one step at a time.',
  async run({ log, extraClient }) {
    const client = extraClient('adaptive', {
      cache: { enabled: false },
      retry: { attempts: 1 }, // no retries: one attempt per request
      scheduler: { concurrency: CONCURRENCY },
      adaptive: ADAPTIVE,
    });
    const state = () => client.adaptive().endpoint('GET', PATH);
    const ceiling = () => state()?.effective ?? CONCURRENCY;

    let current = ceiling();
    let changedAt = performance.now();
    const trace = [`${current}`];
    // The engine subscribed before this listener, so a decision is already visible here.
    const off = client.on('success', ({ endpoint }) => {
      if (endpoint !== `GET ${PATH}`) return;
      const now = ceiling();
      if (now === current) return;
      log.event('adaptive', `ceiling ${current} -> ${now}: ${state()?.reason}`);
      current = now;
      changedAt = performance.now();
      trace.push(`${now}`);
    });

    const answers: Answer[] = [];
    const within = (from: number, to: number) => answers.filter((a) => a.at >= from && a.at < to);
    const started = performance.now();
    const progress = setInterval(() => {
      const now = performance.now();
      log.say(`ceiling ${current}; the last second: ${describe(within(now - 1000, now))}`);
    }, 1000);

    const settled = () => current < CONCURRENCY && performance.now() - changedAt >= SETTLED_MS;
    let n = 0;
    const worker = async () => {
      while (!settled() && performance.now() - started < MAX_MS) {
        const { data } = await client.get<Answer>(PATH, { params: { n: n++ } });
        answers.push({ ...data, at: performance.now() });
      }
    };
    try {
      await Promise.all(Array.from({ length: WORKERS }, worker));
    } finally {
      clearInterval(progress);
      off();
    }
    const ended = performance.now();
    const first = within(started, started + 1000);
    const last = within(ended - 1000, ended);
    log.say(
      `stopped after ${((ended - started) / 1000).toFixed(1)} s at ceiling ${current}; the last second: ${describe(last)}`,
    );
    log.say(`ceiling trace: ${trace.join(' -> ')}`);

    const snapshot = client.adaptive().snapshot().endpoints[`GET ${PATH}`];
    expect(snapshot !== undefined, `an adaptive state for GET ${PATH}`);
    if (snapshot === undefined) return;
    log.say(`adaptive snapshot for ${snapshot.endpoint}:`);
    log.say(
      `  configured ${snapshot.configured}, effective ${snapshot.effective}, mode ${snapshot.mode}, health ${snapshot.health}`,
    );
    log.say(`  reason:         ${snapshot.reason}`);
    log.say(`  retryReason:    ${snapshot.retryReason}`);
    log.say(`  strategyReason: ${snapshot.strategyReason}`);
    const c = snapshot.counters;
    log.say(
      `  counters: ${c.decisions} decisions, ${c.concurrencyReductions} reductions, ${c.concurrencyRecoveries} recoveries`,
    );

    expect(snapshot.effective < CONCURRENCY, 'the ceiling decreased');
    expect(c.concurrencyReductions >= 1, 'at least one reduction');
    expect(
      p95(last) < p95(first),
      `service p95 fell (${p95(first)} ms in the first second, ${p95(last)} ms at the end)`,
    );
  },
};

function describe(answers: readonly Answer[]): string {
  const most = Math.max(0, ...answers.map((a) => a.inProgress));
  return `${String(answers.length).padStart(3)} answers, service p95 ${String(p95(answers)).padStart(3)} ms, up to ${most} in progress on the server`;
}

function p95(answers: readonly Answer[]): number {
  const sorted = answers.map((a) => a.ms).sort((a, b) => a - b);
  return sorted[Math.max(0, Math.ceil(sorted.length * 0.95) - 1)] ?? 0;
}
