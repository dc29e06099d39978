import { type ApiResponse, CircuitOpenError } from '@keel/core';
import { describe } from '../events';
import { expect, type Scenario, settle, sleep } from '../scenario';

const PATH = '/inventory';
/** The main client's `circuitBreaker` options (main.ts); small so the story takes about 1.5 s. */
export const CIRCUIT = { failureThreshold: 3, resetTimeout: 1000 } as const;
const REFUSED = 20;
// One network call per request: no retries (the breaker counts a request once, after its retries,
// so retries would only slow the story down) and no cache (a cached copy would be served even
// while the circuit is open, which is a feature, but not this story).
const once = { retry: false, cache: false } as const;

export const circuitScenario: Scenario = {
  title: 'Circuit breaker',
  story:
    `GET ${PATH} goes down (503) and comes back. With circuitBreaker {failureThreshold: ` +
    `${CIRCUIT.failureThreshold}, resetTimeout: ${CIRCUIT.resetTimeout}}, three failures in a row ` +
    'open the circuit; calls are then refused at once, without a request; after the reset timeout ' +
    'exactly one call is let through as the probe, and its success closes the circuit.',
  async run({ client, server, log, tally }) {
    const status = () => client.circuitBreaker().status('GET', PATH);
    const outcome = (result: unknown) => {
      if (result instanceof CircuitOpenError) return result.name;
      return result instanceof Error ? describe(result) : `${(result as ApiResponse).status}`;
    };

    const up = await client.get(PATH, once);
    log.say(`GET ${PATH} -> ${up.status}, circuit ${status().state}`);

    server.setOutage(PATH, true);
    log.say(`the inventory service goes down: GET ${PATH} now answers 503`);
    for (let i = 0; i < CIRCUIT.failureThreshold; i++) {
      const result = await settle(client.get(PATH, once));
      const { state, consecutiveFailures } = status();
      log.say(
        `GET ${PATH} -> ${outcome(result)}; circuit ${state}, ${consecutiveFailures} in a row`,
      );
    }
    expect(status().state === 'open', `the circuit is open, got ${status().state}`);
    expect(tally.circuitOpened === 1, 'one circuit-open event');

    const hitsBefore = server.hits(PATH);
    const rejectedBefore = tally.circuitRejected;
    const started = performance.now();
    const refused = await Promise.all(
      Array.from({ length: REFUSED }, () => settle(client.get(PATH, once))),
    );
    const took = performance.now() - started;
    log.say(
      `${REFUSED} x GET ${PATH} while open -> ${refused.filter((e) => e instanceof CircuitOpenError).length} x ` +
        `CircuitOpenError, all in ${took.toFixed(1)} ms; the server's count stays at ${server.hits(PATH)}`,
    );
    expect(
      refused.every((e) => e instanceof CircuitOpenError),
      'every call is refused while open',
    );
    expect(server.hits(PATH) === hitsBefore, 'no request reaches the server while open');
    expect(tally.circuitRejected - rejectedBefore === REFUSED, 'one circuit-rejected per refusal');

    server.setOutage(PATH, false);
    const { openedAt = 0 } = status();
    const wait = openedAt + CIRCUIT.resetTimeout - Date.now();
    log.say(
      `the service is back; the circuit does not know it yet and stays open for another ${wait} ms`,
    );
    // A few ms past the window: the breaker's clock and this process's timers tick separately.
    await sleep(wait + 5);

    // Three callers race for the endpoint (different queries: no dedup; the circuit ignores the
    // query): the first becomes the probe, the others are refused while it is in flight.
    const race = await Promise.all(
      [1, 2, 3].map((caller) => settle(client.get(PATH, { ...once, params: { caller } }))),
    );
    log.say(
      `3 callers race after the reset timeout -> ${race.map(outcome).join(', ')}; ` +
        `the server saw ${server.hits(PATH) - hitsBefore} request, circuit ${status().state}`,
    );
    expect(
      race.filter((r) => !(r instanceof Error)).length === 1,
      'exactly one caller is the probe',
    );
    expect(server.hits(PATH) - hitsBefore === 1, 'only the probe reached the server');
    expect(status().state === 'closed', `the probe closed the circuit, got ${status().state}`);

    const after = await client.get(PATH, once);
    log.say(`GET ${PATH} -> ${after.status}, circuit ${status().state}: business as usual`);
    expect(tally.circuitProbes === 1 && tally.circuitClosed === 1, 'one probe, one close');
  },
};
