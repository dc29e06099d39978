import { expect, type Scenario } from '../scenario';

export const retryScenario: Scenario = {
  title: 'Retries',
  story:
    'GET /flaky answers 503 with Retry-After: 1 once; GET /limited answers 429 twice with a ' +
    'Retry-After date. The server decides the wait; keel retries and recovers.',
  async run({ client, server, log, tally }) {
    const recoveredBefore = tally.recovered;

    let started = performance.now();
    const flaky = await client.get<{ attempt: number }>('/flaky');
    log.say(
      `GET /flaky -> ${flaky.status} after ${server.hits('/flaky')} attempts, ${ms(started)} (the server asked for 1 s)`,
    );

    started = performance.now();
    const limited = await client.get<{ attempt: number }>('/limited');
    log.say(
      `GET /limited -> ${limited.status} after ${server.hits('/limited')} attempts, ${ms(started)}`,
    );

    expect(server.hits('/flaky') === 2, '/flaky took two attempts');
    expect(server.hits('/limited') === 3, '/limited took three attempts');
    expect(tally.recovered - recoveredBefore === 2, 'both requests recovered after retrying');
  },
};

function ms(since: number): string {
  return `${Math.round(performance.now() - since)} ms`;
}
