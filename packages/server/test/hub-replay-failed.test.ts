// A client whose replay failed is ended for its EventSource to retry with the same Last-Event-ID.
// With no `retry:` every client of one outage came back at the browser's default interval at
// once (a thundering herd): each now gets a `retry:` of `replayRetry` plus up to as much again
// at random. And a custom store's replay that never settled held its replay slot and its client
// for ever (Redis's are bounded by commandTimeout): `replayTimeout`, on the hub's clock, frees
// the slot and ends the client as for a failed replay.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createEventHub, type EventHub, memoryStore } from '../src/index';
import { guardProcess } from './adversarial/harness';
import { ManualClock, type SseClient, sse, trackApps, until } from './helpers';
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

const attached = (hub: EventHub, n: number) => until(() => hub.size === n);

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

describe('a client that leaves mid-replay', () => {
  it('frees its slot at once: the next waiting client starts, the late answer is ignored', async () => {
    const clock = new ManualClock();
    const { hub, calls, ids, connect } = await setup({ clock, maxConcurrentReplays: 1 });
    const a = await connect(ids[0]!);
    await attached(hub, 1);
    const b = await connect(ids[1]!);
    await attached(hub, 2);
    expect(hub.metrics).toMatchObject({ replaying: 1, replaysQueued: 1 });
    a.close();
    await attached(hub, 1);
    await until(() => calls.length === 2);
    expect(hub.metrics).toMatchObject({ replaying: 1, replaysQueued: 0, replayFailures: 0 });
    // a's replayTimeout timer went with it.
    expect(clock.active).toBe(1);
    calls[0]!.settle();
    await new Promise((r) => setImmediate(r));
    expect(hub.metrics).toMatchObject({ replaying: 1, replaysQueued: 0, replayFailures: 0 });
    calls[1]!.settle();
    await b.waitFor(1);
    expect(b.events.map((e) => e.id)).toEqual(ids.slice(2));
    expect(hub.metrics).toMatchObject({ replaying: 0, replayFailures: 0 });
    expect(clock.active).toBe(0);
  });
});

describe('replayTimeout', () => {
  it('a replay that never settles frees its slot and ends its client with a retry', async () => {
    const clock = new ManualClock();
    const { hub, calls, ids, connect } = await setup({
      clock,
      replayTimeout: 1000,
      maxConcurrentReplays: 1,
    });
    const a = await connect(ids[0]!);
    await attached(hub, 1);
    const b = await connect(ids[1]!);
    await attached(hub, 2);
    expect(hub.metrics).toMatchObject({ replaying: 1, replaysQueued: 1 });
    clock.tick(999);
    expect(hub.metrics).toMatchObject({ replaying: 1, replaysQueued: 1, replayFailures: 0 });
    clock.tick(1);
    await a.ended;
    expect(a.events).toEqual([]);
    expect(a.retry).toBeGreaterThanOrEqual(3000);
    // The slot went to b, which is replayed.
    await until(() => calls.length === 2);
    expect(hub.metrics).toMatchObject({ replayFailures: 1, replaying: 1, replaysQueued: 0 });
    calls[1]!.settle();
    await b.waitFor(1);
    expect(b.events.map((e) => e.id)).toEqual(ids.slice(2));
    expect(clock.active).toBe(0);
    await until(() => warnings.length === 1);
    expect(warnings[0]).toContain('did not answer within 1000 ms');
    // a's late answer changes nothing: no slot freed twice, nothing written to a.
    calls[0]!.settle();
    await new Promise((r) => setImmediate(r));
    expect(hub.metrics).toMatchObject({ replaying: 0, replaysQueued: 0, replayFailures: 1 });
  });

  it('a replay that answers in time clears its timer', async () => {
    const clock = new ManualClock();
    const { hub, calls, ids, connect } = await setup({ clock, replayTimeout: 1000 });
    const a = await connect(ids[0]!);
    await attached(hub, 1);
    expect(clock.active).toBe(1);
    calls[0]!.settle();
    await a.waitFor(2);
    expect(clock.active).toBe(0);
    clock.tick(1000);
    expect(hub.metrics).toMatchObject({ clients: 1, replayFailures: 0 });
  });

  it('hub.close() clears the timers of the replays in flight', async () => {
    const clock = new ManualClock();
    const { hub, ids, connect } = await setup({ clock, replayTimeout: 1000 });
    await connect(ids[0]!);
    await attached(hub, 1);
    expect(clock.active).toBe(1);
    await hub.close();
    expect(clock.active).toBe(0);
  });

  it('defaults to 30 s; must be a whole number of ms a timer takes', async () => {
    const clock = new ManualClock();
    const { hub, ids, connect } = await setup({ clock });
    const a = await connect(ids[0]!);
    await attached(hub, 1);
    clock.tick(29_999);
    expect(hub.size).toBe(1);
    clock.tick(1);
    await a.ended;
    for (const bad of [0, 1.5, 2 ** 31, '1000']) {
      expect(() => createEventHub({ replayTimeout: bad as never })).toThrow(/replayTimeout/);
    }
    expect(() => createEventHub({ clock: {} as never })).toThrow(/clock/);
  });
});
