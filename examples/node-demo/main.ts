// The keel demo: a loopback server that misbehaves on purpose, driven by @keel/core, with a
// narrated log of what the client did and a summary counted from its events.
//
//   npx -y pnpm@10.34.8 demo        (builds @keel/core, then runs this file with tsx)
//
// Each section lives in scenarios/ and is listed below. The demo ends with the summary counted
// from the main client's events, then each client's own view (`intelligence().snapshot()`).
import { type Client, type ClientOptions, createClient } from '@keel/core';
import { watchClient } from './events';
import { Narrator } from './narrator';
import type { DemoContext, Scenario } from './scenario';
import { adaptiveScenario } from './scenarios/adaptive';
import { cacheScenario } from './scenarios/cache';
import { cancelScenario } from './scenarios/cancel';
import { CIRCUIT, circuitScenario } from './scenarios/circuit';
import { dedupScenario } from './scenarios/dedup';
import { invalidateScenario } from './scenarios/invalidate';
import { retryScenario } from './scenarios/retry';
import { schedulerScenario } from './scenarios/scheduler';
import { timeoutScenario } from './scenarios/timeout';
import { startDemoServer } from './server';

const scenarios: Scenario[] = [
  cacheScenario,
  dedupScenario,
  retryScenario,
  timeoutScenario,
  cancelScenario,
  invalidateScenario,
  circuitScenario,
  schedulerScenario,
  adaptiveScenario,
];

async function main(): Promise<number> {
  const log = new Narrator();
  const server = await startDemoServer();
  const client = createClient({
    baseURL: server.baseURL,
    cache: { ttl: 10_000 },
    // Short computed backoffs keep the demo quick; a server's Retry-After still wins.
    retry: { attempts: 3, baseDelay: 100, maxDelay: 1000 },
    // A quick breaker so the circuit section takes about 1.5 s (the defaults are 5 and 10 s).
    circuitBreaker: CIRCUIT,
  });
  const watch = watchClient(client, log, server.baseURL);
  const clients: [label: string, client: Client][] = [['main', client]];
  const ctx: DemoContext = {
    client,
    server,
    log,
    tally: watch.tally,
    extraClient: (label: string, options: ClientOptions) => {
      // The header lets the server count this client's requests apart from the main client's.
      const extra = createClient({
        baseURL: server.baseURL,
        ...options,
        headers: { 'x-demo-client': label, ...options.headers },
      });
      clients.push([label, extra]);
      return extra;
    },
  };

  console.log(`keel demo: @keel/core against a misbehaving server at ${server.baseURL}`);
  let failed = false;
  try {
    for (const scenario of scenarios) {
      log.section(scenario.title, scenario.story);
      await scenario.run(ctx);
    }
  } catch (error) {
    failed = true;
    console.error(`\n${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  } finally {
    watch.stop();
    for (const [, c] of clients) c.cancelAll();
    await server.close();
  }

  const t = watch.tally;
  log.table(`Summary of the main client (${log.elapsed.trim()}, counted from its events)`, [
    ['requests sent (flights)', t.requests],
    [
      'requests the server received',
      server.totalHits('main'),
      '(retries are extra attempts of a flight)',
    ],
    ['cache hits', t.cacheHits],
    ['dedup joins', t.dedupJoins, '(callers that shared another caller’s request)'],
    ['retries', t.retries],
    ['requests recovered by retrying', t.recovered],
    ['attempts timed out', t.timeouts],
    ['callers cancelled', t.cancels],
    ['requests failed', t.errors],
    ['keys invalidated', t.invalidated],
    ['keys revalidated', t.revalidated],
    ['circuits opened', t.circuitOpened],
    ['calls refused by an open circuit', t.circuitRejected, '(no request was sent)'],
    ['half-open probes', t.circuitProbes],
    ['circuits closed by a probe', t.circuitClosed],
  ]);
  printIntelligence(log, clients);
  return failed ? 1 : 0;
}

/** Each client's own account of every endpoint it called, from `intelligence().snapshot()`. */
function printIntelligence(log: Narrator, clients: readonly [string, Client][]): void {
  const rows = clients.flatMap(([label, c]) =>
    c
      .intelligence()
      .snapshot()
      .endpoints.map((e) => [
        label,
        `${e.method} ${e.path}`,
        e.requests,
        e.successes,
        e.failures,
        e.cacheHits,
        e.dedupPrevented,
        e.retriesPerformed,
        e.circuitRejected,
        Math.round(e.latency.p50),
        Math.round(e.latency.p95),
        e.circuit,
      ]),
  );
  log.grid(
    'Intelligence (client.intelligence().snapshot(), per endpoint; latency in ms)',
    [
      'client',
      'endpoint',
      'requests',
      'ok',
      'failed',
      'cache hits',
      'dedup',
      'retries',
      'refused',
      'p50',
      'p95',
      'circuit',
    ],
    rows,
  );
}

process.exitCode = await main();
