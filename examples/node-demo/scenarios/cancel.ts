import { CancelledError } from '@keel/core';
import { expect, type Scenario, waitFor } from '../scenario';

export const cancelScenario: Scenario = {
  title: 'Cancellation',
  story:
    'A caller cancels a slow GET after 100 ms: its promise rejects with CancelledError and the ' +
    'fetch is aborted. When two callers share a flight, one cancelling leaves the other served.',
  async run({ client, server, log, tally }) {
    const abandonedBefore = server.abandoned;
    const cancelsBefore = tally.cancels;
    const pending = client.get('/slow', { params: { ms: 2000 } });
    setTimeout(() => pending.cancel(), 100);
    const started = performance.now();
    const error = await pending.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error instanceof CancelledError, `a CancelledError, got ${String(error)}`);
    log.say(
      `GET /slow?ms=2000 cancelled -> ${(error as Error).name} after ${Math.round(performance.now() - started)} ms`,
    );

    const controller = new AbortController();
    const leaving = client.get('/slow', { params: { ms: 300 }, signal: controller.signal });
    const staying = client.get<{ slept: number }>('/slow', { params: { ms: 300 } });
    setTimeout(() => controller.abort(), 50);
    const [left, stayed] = await Promise.allSettled([leaving, staying]);
    log.say(
      `two callers of GET /slow?ms=300, one aborts its signal -> ${left.status === 'rejected' ? 'it rejects' : 'it resolves?'}, ` +
        `the other gets ${stayed.status === 'fulfilled' ? stayed.value.status : 'an error'}`,
    );
    expect(
      left.status === 'rejected' && left.reason instanceof CancelledError,
      'the aborted caller rejects',
    );
    expect(stayed.status === 'fulfilled', 'the other caller is still served');
    expect(tally.cancels - cancelsBefore === 2, 'two callers cancelled');
    // The server sees the abort once the socket closes, a moment after the client gave up.
    await waitFor(
      () => server.abandoned > abandonedBefore,
      'the server should see the aborted request',
    );
    log.say('the server saw the cancelled slow request close before it answered');
  },
};
