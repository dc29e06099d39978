// A client whose replay failed is ended for its EventSource to retry with the same Last-Event-ID.
// With no `retry:` every client of one outage came back at the browser's default interval at
// once (a thundering herd): each now gets a `retry:` of `replayRetry` plus up to as much again
// at random.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createEventHub, memoryStore } from '../src/index';
import { guardProcess } from './adversarial/harness';
import { type SseClient, sse, trackApps, until } from './helpers';
import { heldReplays, hubApp } from './hub-fixture';

guardProcess();
const make = trackApps();
const opened: SseClient[] = [];
const warnings: string[] = [];
const onWarning = (w: Error): void => void warnings.push(String(w));
process.on('warning', onWarning);
afterEach(() => {
  for (const client of opened.splice(0)) client.close();
  warnings.length = 0;
  vi.restoreAllMocks();
});

/** A hub on a memory store whose replays answer when the test says (`calls[i].settle`). */
async function setup(options: Parameters<typeof createEventHub>[0] = {}) {
  const app = make();
  const { store, calls } = heldReplays(memoryStore({ bufferSize: 100 }));
  const { hub, port } = await hubApp(app, store, options);
  const ids: string[] = [];
  for (let i = 0; i < 3; i++) ids.push(await hub.publish('n', `e${i}`));
  const connect = async (after: string): Promise<SseClient> => {
    const client = await sse(port, '/events', { 'last-event-id': after });
    opened.push(client);
    return client;
  };
  return { hub, calls, ids, connect };
}

describe('a failed replay', () => {
  it('ends the client after a retry: from replayRetry to twice it, at random', async () => {
    const { hub, calls, ids, connect } = await setup({ replayRetry: 1000 });
    const random = vi.spyOn(Math, 'random');
    const retries: (number | undefined)[] = [];
    for (const [i, draw] of [0, 0.5, 0.9999].entries()) {
      random.mockReturnValueOnce(draw);
      const client = await connect(ids[0]!);
      await until(() => calls.length === i + 1);
      calls[i]!.settle(new Error('store down'));
      await client.ended;
      expect(client.events).toEqual([]);
      retries.push(client.retry);
    }
    expect(retries).toEqual([1000, 1500, 1999]);
    expect(hub.metrics).toMatchObject({ replayFailures: 3, replaying: 0, clients: 0 });
  });

  it('sends a retry of 3 to 6 s by default', async () => {
    const { calls, ids, connect } = await setup();
    vi.spyOn(Math, 'random').mockReturnValueOnce(0.25);
    const client = await connect(ids[0]!);
    await until(() => calls.length === 1);
    calls[0]!.settle(new Error('store down'));
    await client.ended;
    expect(client.retry).toBe(3750);
  });

  it('replayRetry must be a whole number of ms that twice still fits a timer', () => {
    for (const bad of [0, 1.5, -1, 2 ** 30, '1000', null]) {
      expect(() => createEventHub({ replayRetry: bad as never })).toThrow(/replayRetry/);
    }
    expect(() => createEventHub({ replayRetry: 2 ** 30 - 1 })).not.toThrow();
  });
});
