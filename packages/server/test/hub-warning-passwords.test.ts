// The hub's process warnings quote a store's error text (a custom store's too), and such a text
// can hold a URL with its password (`connect ECONNREFUSED redis://u:pw@host`): the password is
// hidden as in every other message keel builds from a cause's text. Real loopback clients.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createEventHub, type HubStore, memoryStore, type StoreSink } from '../src/index';
import { guardProcess, within } from './adversarial/harness';
import { sse, start, trackApps, until } from './helpers';

guardProcess();
const make = trackApps();

const SECRET = 'hunter2';
const failure = (): Error => new Error(`connect ECONNREFUSED redis://app:${SECRET}@10.0.0.9:6379`);

const warnings: string[] = [];
const onWarning = (w: Error): void => void warnings.push(w.message);
beforeEach(() => {
  warnings.length = 0;
  process.on('warning', onWarning);
});
afterEach(() => {
  process.off('warning', onWarning);
});

async function serve(store: HubStore) {
  const app = make();
  const hub = createEventHub({ store });
  app.get('/events', (ctx) => hub.connect(ctx));
  const { port } = await start(app);
  return { hub, port };
}

function expectHidden(prefix: RegExp): void {
  const ours = warnings.filter((w) => prefix.test(w));
  expect(ours).toHaveLength(1);
  expect(ours[0]).toContain('redis://app:***@10.0.0.9:6379');
  expect(ours[0]).not.toContain(SECRET);
}

describe("the hub's warnings hide a password in a store's error", () => {
  it('a store whose open rejects', async () => {
    const store: HubStore = { ...memoryStore(), open: () => Promise.reject(failure()) };
    const { hub } = await serve(store);
    await expect(hub.ready).rejects.toThrow(SECRET);
    await until(() => warnings.length > 0);
    expectHidden(/^keel: the event hub's store failed to open/);
    await hub.close();
  });

  it('a replay the store cannot answer', async () => {
    const store: HubStore = { ...memoryStore(), replay: () => Promise.reject(failure()) };
    const { hub, port } = await serve(store);
    await hub.ready;
    const client = await sse(port, '/events', { 'last-event-id': 'm-1' });
    await within(client.ended, 4000, 'the resuming client to be ended');
    expect(hub.metrics.replayFailures).toBe(1);
    expectHidden(/^keel: the event hub could not replay/);
    await hub.close();
  });

  it('a stored event that cannot be sent', async () => {
    let sink: StoreSink | null = null;
    const inner = memoryStore();
    const store: HubStore = {
      ...inner,
      open(s) {
        sink = s;
        return inner.open(s);
      },
    };
    const { hub, port } = await serve(store);
    await hub.ready;
    const client = await sse(port, '/events');
    await until(() => hub.size === 1);
    // A custom store handing over data that is not the serialized text it should be.
    const data = {
      toJSON() {
        throw failure();
      },
    };
    sink!.deliver({ id: 'z-1', event: 'n', data: data as never, topic: undefined });
    await until(() => warnings.length > 0);
    expectHidden(/^keel: the event hub skipped stored event "z-1"/);
    expect(client.events).toEqual([]);
    await hub.close();
  });
});
