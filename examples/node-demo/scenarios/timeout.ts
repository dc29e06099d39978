import { TimeoutError } from '@keel/core';
import { describe } from '../events';
import { expect, type Scenario, waitFor } from '../scenario';

export const timeoutScenario: Scenario = {
  title: 'Timeouts',
  story:
    'GET /slow takes 1.5 s; with timeout: 250 each attempt is cut off at 250 ms (and retried ' +
    'once), then the caller gets a TimeoutError. A fast enough answer under the same timeout passes.',
  async run({ client, server, log, tally }) {
    const timeoutsBefore = tally.timeouts;
    const abandonedBefore = server.abandoned;
    const started = performance.now();
    const error = await client
      .get('/slow', { params: { ms: 1500 }, timeout: 250, retry: { attempts: 2 } })
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(error instanceof TimeoutError, `a TimeoutError, got ${String(error)}`);
    log.say(
      `GET /slow?ms=1500 -> ${(error as Error).name}: ${describe(error)} after ${Math.round(performance.now() - started)} ms in total`,
    );
    const quick = await client.get<{ slept: number }>('/slow', {
      params: { ms: 50 },
      timeout: 250,
    });
    log.say(`GET /slow?ms=50 -> ${quick.status} within the same 250 ms timeout`);
    expect(tally.timeouts - timeoutsBefore === 2, 'both attempts timed out');
    await waitFor(
      () => server.abandoned - abandonedBefore === 2,
      'the server should see both timed-out attempts close',
    );
    log.say('the server saw both timed-out attempts close early: they were really aborted');
  },
};
