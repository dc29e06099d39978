// The clients the hub ends on a store reset (mid-replay) or when its store fails to open were
// ended with no `retry:`: every client of one outage came back at the browser's default interval
// at once. They now get the same jittered `retry:` as a failed replay (`replayRetry`).
import { afterEach, describe, expect, it, vi } from 'vitest';
import { type HubStore, memoryStore, type StoreSink } from '../src/index';
import { guardProcess } from './adversarial/harness';
import { type SseClient, sse, trackApps, until } from './helpers';
import { heldReplays, hubApp } from './hub-fixture';

guardProcess();
const make = trackApps();
const opened: SseClient[] = [];
const onWarning = (): void => {};
process.on('warning', onWarning);
afterEach(() => {
  for (const client of opened.splice(0)) client.close();
  vi.restoreAllMocks();
});

const connect = async (port: number, headers: Record<string, string> = {}) => {
  const client = await sse(port, '/events', headers);
  opened.push(client);
  return client;
};

describe('clients the hub ends get a jittered retry:', () => {
  it('a client mid-replay when the store resets', async () => {
    const { store: held, calls } = heldReplays(memoryStore({ bufferSize: 100 }));
    let sink: StoreSink | undefined;
    const store: HubStore = { ...held, open: (target) => held.open((sink = target)) };
    const { hub, port } = await hubApp(make(), store, { replayRetry: 1000 });
    const id = await hub.publish('n', 1);
    const newest = await hub.publish('n', 2);
    vi.spyOn(Math, 'random').mockReturnValue(0.5);
    const client = await connect(port, { 'last-event-id': id });
    await until(() => calls.length === 1);
    sink!.reset(newest);
    await client.ended;
    expect(client.events).toEqual([]);
    expect(client.retry).toBe(1500);
  });

  it('a client waiting for a store that fails to open, and one connecting after', async () => {
    let fail: (error: Error) => void = () => {};
    const inner = memoryStore();
    const store: HubStore = {
      ...inner,
      open: () => new Promise<string>((_, reject) => void (fail = reject)),
      append: inner.append,
      replay: inner.replay,
      close: inner.close,
    };
    const { hub, port } = await hubApp(make(), store, { replayRetry: 2000 });
    vi.spyOn(Math, 'random').mockReturnValue(0.25);
    const waiting = await connect(port);
    await until(() => hub.size === 1);
    fail(new Error('no store'));
    await expect(hub.ready).rejects.toThrow('no store');
    await waiting.ended;
    expect(waiting.retry).toBe(2500);
    const late = await connect(port);
    await late.ended;
    expect(late.retry).toBe(2500);
  });
});
