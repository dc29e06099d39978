// A custom store whose `open` rejects (or resolves to something that is not an id): every SSE
// client, connected before or after, is ended (none waits for ever), `ready` rejects with the
// store's error and a process warning says so once, publishes reject with HubPublishError, and
// nothing is left behind (no client, no stream, no unhandled rejection). Real loopback clients.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  createEventHub,
  HubPublishError,
  type HubStore,
  memoryStore,
  type StoreSink,
} from '../src/index';
import { guardProcess, within } from './adversarial/harness';
import { sse, start, trackApps, until } from './helpers';

guardProcess();
const make = trackApps();

const warnings: Error[] = [];
const onWarning = (w: Error): void => void warnings.push(w);
beforeEach(() => {
  warnings.length = 0;
  process.on('warning', onWarning);
});
afterEach(() => {
  process.off('warning', onWarning);
});

/** The in-memory store, except that `open` answers what the test says, when it says. */
function gatedStore() {
  const inner = memoryStore();
  let settle!: { resolve: (id: unknown) => void; reject: (err: unknown) => void };
  const opened = new Promise<string>((resolve, reject) => {
    settle = { resolve: resolve as (id: unknown) => void, reject };
  });
  let appends = 0;
  const store: HubStore = {
    open: (sink: StoreSink) => opened.then(() => inner.open(sink)).then((id) => id),
    append(event, data, topic) {
      appends++;
      return inner.append(event, data, topic);
    },
    replay: (request) => inner.replay(request),
    close: () => inner.close(),
  };
  return { store, settle, appends: () => appends };
}

async function setup() {
  const gated = gatedStore();
  const app = make();
  const hub = createEventHub({ store: gated.store });
  app.get('/events', (ctx) => hub.connect(ctx));
  const { port } = await start(app);
  return { app, hub, port, gated };
}

describe('a store whose open rejects', () => {
  it('ends the clients connected before and after, rejects ready and publishes, warns once', async () => {
    const { hub, port, gated } = await setup();
    const before = await sse(port, '/events');
    const resuming = await sse(port, '/events', { 'last-event-id': 'x-1' });
    await until(() => hub.size === 2);
    const failure = new Error('store is down for good');
    gated.settle.reject(failure);
    await expect(hub.ready).rejects.toBe(failure);
    await within(Promise.all([before.ended, resuming.ended]), 4000, 'the early clients to end');
    // Connected after the failure: ended at once, not held for an opening that never comes.
    const after = await sse(port, '/events');
    expect(after.status).toBe(200);
    await within(after.ended, 4000, 'the late client to end');
    expect([before, resuming, after].map((c) => c.events)).toEqual([[], [], []]);
    expect(hub.size).toBe(0);
    // A publish is refused, and the store is not asked to take it.
    const published = hub.publish('n', 'lost?');
    await expect(published).rejects.toBeInstanceOf(HubPublishError);
    await expect(published).rejects.toMatchObject({ reason: 'store', cause: failure });
    expect(gated.appends()).toBe(0);
    const ours = warnings.filter((w) => w.message.includes('store is down for good'));
    expect(ours).toHaveLength(1);
    expect(ours[0]!.message).toMatch(/^keel: the event hub's store failed to open/);
    await hub.close();
  });

  it.each([undefined, 42, ''])(
    'resolving to %j (not an id) is the same failure, as a TypeError / RangeError',
    async (junk) => {
      const app = make();
      let release!: () => void;
      const gate = new Promise<void>((resolve) => {
        release = resolve;
      });
      const store: HubStore = { ...memoryStore(), open: () => gate.then(() => junk as never) };
      const hub = createEventHub({ store });
      app.get('/events', (ctx) => hub.connect(ctx));
      const { port } = await start(app);
      const early = await sse(port, '/events');
      await until(() => hub.size === 1);
      release();
      await expect(hub.ready).rejects.toThrow(
        /^keel: `store.open\(\) id` must be a non-empty string, got /,
      );
      await within(early.ended, 4000, 'the client to end');
      const late = await sse(port, '/events');
      await within(late.ended, 4000, 'the late client to end');
      expect(hub.size).toBe(0);
      await hub.close();
    },
  );
});
