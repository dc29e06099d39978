// An attacker's Last-Event-ID: near misses of the memory store's `<epoch>-<n>` ids (a sign, a
// leading zero, an exponent, past 2^53), ids of the future, a 1 MB value through a server that
// takes such headers, and a client reconnecting thousands of times. Each is one clear, bounded
// answer (`keel:reset` at the current id, never a replay of the wrong events), and nothing is
// left behind: no client, no ctx, no event listed for it.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { appStats } from '../src/app';
import { createEventHub, HUB_RESET_EVENT, memoryStore, type ReplayResult } from '../src/index';
import { guardProcess } from './adversarial/harness';
import { type SseClient, sse, start, trackApps, until } from './helpers';
import { hubApp, listedIn, recordedReplays, redisHubApp, noSink as sink } from './hub-fixture';
import { streamKey as key, redisInstances } from './redis-helpers';

guardProcess();
const make = trackApps();
const live = redisInstances();
const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(
    servers.splice(0).map(
      (s) =>
        new Promise((resolve) => {
          s.closeAllConnections();
          s.close(resolve);
        }),
    ),
  );
});

const everything = { include: () => true, maxBytes: Number.POSITIVE_INFINITY };

describe('memoryStore: ids that look like its own', () => {
  it('only the exact spelling it wrote is a position; near misses and future ids are a reset', () => {
    const store = memoryStore({ bufferSize: 100 });
    const base = store.open(sink) as string;
    const epoch = base.slice(0, -2);
    const ids = Array.from({ length: 20 }, () => store.append('n', 'x', undefined) as string);
    expect(ids[4]).toBe(`${epoch}-5`);
    const replay = (after: string) =>
      store.replay({ after, upTo: ids.at(-1)!, ...everything }) as ReplayResult;
    const answer = replay(`${epoch}-5`);
    expect(answer.kind === 'events' && answer.events.map((e) => e.id)).toEqual(ids.slice(5));
    for (const near of [
      `${epoch}-05`,
      `${epoch}-+5`,
      `${epoch}--5`,
      `${epoch}-5.0`,
      `${epoch}-5e0`,
      `${epoch}-0x5`,
      `${epoch}- 5`,
      `${epoch}-5 `,
      `${epoch}-5\n`,
      `${epoch}-5\u0000`,
      `${epoch}-\u0665`, // Arabic-Indic 5
      `${epoch.toUpperCase()}-5`,
      `${epoch}-`,
      `${epoch}`,
      `-${epoch}-5`,
      `${epoch}-5-5`,
      `${epoch}-21`, // the next id, not yet written
      `${epoch}-${2 ** 53}`,
      `${epoch}-${2 ** 53 + 2}`,
      `${epoch}-${'9'.repeat(400)}`,
      `${epoch}-5${'0'.repeat(1024 * 1024)}`,
      `${epoch}-${'5'.repeat(1024 * 1024)}`,
    ]) {
      if (near === `${epoch}-5`) continue;
      expect(replay(near), JSON.stringify(near.slice(0, 40))).toEqual({ kind: 'reset' });
    }
  });
});

/** The echo of a long id in `keel:reset`: its first 255 characters and an ellipsis. */
const echoed = (id: string) => (id.length <= 256 ? id : `${id.slice(0, 255)}\u2026`);

describe('a long Last-Event-ID: the reset echoes 256 characters at most', () => {
  async function check(port: number, hub: ReturnType<typeof createEventHub>, id: string) {
    const current = hub.lastId;
    const client = await sse(port, '/events', { 'last-event-id': id });
    try {
      await client.waitFor(1);
      expect(client.events[0]).toEqual({
        id: current,
        event: HUB_RESET_EVENT,
        data: JSON.stringify({ lastEventId: echoed(id) }),
      });
      // Connected: live events follow.
      const next = await hub.publish('n', 'after');
      await client.waitFor(2);
      expect(client.events[1]).toEqual({ id: next, event: 'n', data: 'after' });
      expect(hub.metrics.slowDrops).toBe(0);
    } finally {
      client.close();
    }
  }

  it("10 KiB under Node's header limit, to a client whose queue holds 4 KiB", async () => {
    // Echoed whole, the reset was larger than twice the client's queue: dropped as slow before
    // it was sent, the client would reconnect with the same id for ever.
    const app = make({ sse: { maxBufferedBytes: 4096 } });
    const hub = createEventHub();
    app.get('/events', (ctx) => hub.connect(ctx));
    const { port } = await start(app);
    const current = await hub.publish('n', 'before');
    await check(port, hub, `${current}${'9'.repeat(10 * 1024)}`);
  });

  it('1 MB, through a server whose maxHeaderSize takes it', async () => {
    const app = make();
    const hub = createEventHub();
    app.get('/events', (ctx) => hub.connect(ctx));
    const server = createServer(
      { ...app.serverOptions, maxHeaderSize: 4 * 1024 * 1024 },
      app.handler,
    );
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const current = await hub.publish('n', 'before');
    await check(port, hub, `${current}${'9'.repeat(1024 * 1024)}`);
  });
});

/** Opens `n` clients, `parallel` at a time; each must get `check`ed and is closed after. */
async function storm(
  n: number,
  parallel: number,
  open: (i: number) => Promise<SseClient>,
  check: (client: SseClient, i: number) => void,
): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < n) {
      const i = next++;
      const client = await open(i);
      try {
        await client.waitFor(1);
        check(client, i);
      } finally {
        client.close();
      }
    }
  };
  await Promise.all(Array.from({ length: parallel }, worker));
}

describe('a client reconnecting thousands of times', () => {
  // Counted, not timed: as fast as loopback goes, 50 (Redis: 30) at a time.
  it('memory: each gets keel:reset at once; nothing listed, nothing left attached', {
    timeout: 60_000,
  }, async () => {
    const app = make({ sse: { maxBufferedBytes: 4096 } });
    const { store, answers } = recordedReplays(memoryStore({ bufferSize: 10_000 }));
    const { hub, port } = await hubApp(app, store, { topics: (ctx) => [`t:${ctx.query('n')}`] });
    const kinds = () => answers.map((a) => a.kind);
    const listed = () => listedIn(answers);
    const first = await hub.publish('n', 'x'.repeat(100));
    for (let i = 1; i < 10_000; i++) await hub.publish('n', 'x'.repeat(100));
    const [epoch] = first.split('-');
    const sent = [first, `${epoch}-${10_001}`, `${epoch}--1`, '-1', 'junk', 'x'.repeat(8000)];
    const n = 2000;
    await storm(
      n,
      50,
      (i) => sse(port, `/events?n=${i}`, { 'last-event-id': sent[i % sent.length]! }),
      (client, i) => {
        expect(client.events[0]).toEqual({
          id: hub.lastId,
          event: HUB_RESET_EVENT,
          data: JSON.stringify({ lastEventId: echoed(sent[i % sent.length]!) }),
        });
      },
    );
    await until(() => hub.size === 0 && appStats(app).inflight === 0);
    expect(hub.metrics).toMatchObject({ clients: 0, resets: n, slowDrops: 0, replayFailures: 0 });
    expect(kinds()).toHaveLength(n);
    expect(new Set(kinds())).toEqual(new Set(['reset']));
    expect(listed()).toBe(0);
    // The hub serves on: a client with the newest id is live.
    const client = await sse(port, '/events?n=0', { 'last-event-id': hub.lastId });
    try {
      const id = await hub.publish('n', 'live');
      await client.waitFor(1);
      expect(client.events).toEqual([{ id, event: 'n', data: 'live' }]);
    } finally {
      client.close();
    }
  });

  it('redis: each gets keel:reset; no event listed, no replay failure', {
    timeout: 60_000,
  }, async () => {
    const { app, hub, port, answers } = await redisHubApp(
      live,
      { stream: key(), bufferSize: 100 },
      { sse: { maxBufferedBytes: 4096 } },
    );
    const kinds = () => answers.map((a) => a.kind);
    const listed = () => listedIn(answers);
    const ids: string[] = [];
    for (let i = 0; i < 1000; i++) ids.push(await hub.publish('n', 'x'.repeat(100)));
    await until(() => hub.lastId === ids.at(-1));
    // From the instance buffer, from XRANGE, before the stream, of the future, malformed.
    const sent = [ids[950]!, ids[0]!, '0-1', '99999999999999-0', '1-1-1', '-1-0'];
    const n = 300;
    await storm(
      n,
      30,
      (i) => sse(port, '/events', { 'last-event-id': sent[i % sent.length]! }),
      (client, i) => {
        expect(client.events[0]).toEqual({
          id: hub.lastId,
          event: HUB_RESET_EVENT,
          data: JSON.stringify({ lastEventId: echoed(sent[i % sent.length]!) }),
        });
      },
    );
    await until(() => hub.size === 0 && appStats(app).inflight === 0);
    expect(hub.metrics).toMatchObject({ clients: 0, resets: n, slowDrops: 0, replayFailures: 0 });
    expect(new Set(kinds())).toEqual(new Set(['reset']));
    expect(listed()).toBe(0);
  });
});
