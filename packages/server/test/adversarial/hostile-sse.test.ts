// A hostile client against the hub's SSE route, over raw sockets: malformed, repeated, padded and
// oversized Last-Event-ID headers, and clients that abort in the middle of a replay (in memory
// and from Redis). Each is answered (or dropped by Node) without a crash, an unhandled
// rejection, a client left attached or a ctx left in use, and the server serves on.
import { Redis } from 'ioredis';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { appStats } from '../../src/app';
import { createEventHub, HUB_RESET_EVENT } from '../../src/index';
import { socketBytes, start, trackApps, until } from '../helpers';
import { streamKey as key, redisInstances } from '../redis-helpers';
import { guardProcess, rawSocket } from './harness';

guardProcess();
const make = trackApps();
const live = redisInstances();

const request = (lastEventId: string) =>
  `GET /events HTTP/1.1\r\nHost: x\r\nLast-Event-ID: ${lastEventId}\r\nConnection: close\r\n\r\n`;

async function memoryHub(events = 20, size = 10) {
  const app = make();
  const hub = createEventHub({ bufferSize: 1000 });
  app.get('/events', (ctx) => hub.connect(ctx));
  app.get('/ping', (ctx) => ctx.send('pong'));
  const { port } = await start(app);
  const ids: string[] = [];
  for (let i = 0; i < events; i++) ids.push(await hub.publish('n', String(i).repeat(size)));
  const serving = async () => {
    const out = await socketBytes(
      port,
      'GET /ping HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n',
    );
    expect(out).toMatch(/pong$/);
    await until(() => hub.size === 0 && appStats(app).inflight === 0);
  };
  return { app, hub, port, ids, serving };
}

describe('malformed Last-Event-ID headers', () => {
  it.each([
    ['a control character', 'a\u0001b', /^HTTP\/1\.1 400 /],
    ['an obs-fold continuation', 'a\r\n b', /^HTTP\/1\.1 400 /],
    ['a NUL', 'a\u0000b', /^HTTP\/1\.1 400 /],
    ['20 KiB', 'a'.repeat(20 * 1024), /^HTTP\/1\.1 431 /],
  ])(
    '%s: Node refuses the request; nothing attached; the server serves on',
    async (_, id, status) => {
      const { port, serving } = await memoryHub();
      const out = await socketBytes(port, request(id));
      expect(out).toMatch(status);
      expect(out).not.toContain('event-stream');
      await serving();
    },
  );

  it('repeated: the joined value is no id, so keel:reset at the current id', async () => {
    const { port, hub, ids, serving } = await memoryHub();
    const out = await socketBytes(
      port,
      `GET /events HTTP/1.1\r\nHost: x\r\nLast-Event-ID: ${ids[3]}\r\nLast-Event-ID: ${ids[5]}\r\n\r\n`,
    );
    expect(out).toContain(`id: ${hub.lastId}\nevent: ${HUB_RESET_EVENT}\n`);
    expect(out).not.toMatch(/\nevent: n\n/);
    await serving();
  });

  it('padded with spaces and tabs: Node trims them, the replay is exact', async () => {
    const { port, ids, serving } = await memoryHub();
    const out = await socketBytes(port, request(` \t${ids[17]}\t `));
    expect(out).not.toContain(HUB_RESET_EVENT);
    expect([...out.matchAll(/\nid: (\S+)\n/g)].map((m) => m[1])).toEqual(ids.slice(18));
    await serving();
  });
});

describe('a client that aborts mid-replay', () => {
  it('in memory: a replay larger than a socket buffer, cut after its first bytes', async () => {
    const { app, hub, port, ids, serving } = await memoryHub(400, 1000);
    for (let round = 0; round < 20; round++) {
      const socket = await rawSocket(port);
      socket.send(request(ids[0]!));
      await socket.until('id: ');
      socket.end();
    }
    await serving();
    expect(hub.metrics.clients).toBe(0);
    expect(appStats(app).inflight).toBe(0);
  });

  it('from Redis: the XRANGE answer arrives for a client already gone', async () => {
    const a = await live.instance(key(), { bufferSize: 0 });
    const ids: string[] = [];
    for (let i = 0; i < 1500; i++) ids.push(await a.hub.publish('n', String(i).repeat(100)));
    await until(() => a.hub.lastId === ids[1499]);
    for (let round = 0; round < 10; round++) {
      const socket = await rawSocket(a.port);
      socket.send(request(ids[0]!));
      // Gone once the stream opened: the replay (three XRANGE pages) is still being read.
      await socket.until('\r\n\r\n');
      socket.end();
    }
    await until(() => a.hub.size === 0);
    // The instance goes on: a fresh resume is exact.
    const back = await a.connect({ 'last-event-id': ids[1497]! });
    await back.waitFor(2);
    expect(back.events.map((e) => e.id)).toEqual(ids.slice(1498));
    expect(appStats(a.app).inflight).toBe(1);
  }, 30_000);
});

describe('an entry written to the Redis stream past the hub', () => {
  const warnings: string[] = [];
  const onWarning = (w: Error): void => void warnings.push(w.message);
  beforeEach(() => {
    warnings.length = 0;
    process.on('warning', onWarning);
  });
  afterEach(() => void process.off('warning', onWarning));

  it('with an event name no SSE frame can carry: skipped live and in every replay, reported once', async () => {
    const stream = key();
    for (const bufferSize of [100, 0]) {
      warnings.length = 0;
      const a = await live.instance(stream, { bufferSize });
      const onA = await a.connect();
      await until(() => a.hub.size === 1);
      const first = await a.hub.publish('n', 'one');
      const direct = new Redis(live.redis.url);
      const bad = await direct.xadd(stream, '*', 'e', 'evil\nevent: forged', 'd', 'x');
      direct.disconnect();
      const good = await a.hub.publish('n', 'two');
      await until(() => onA.events.some((e) => e.id === good));
      expect(onA.events.slice(-2).map((e) => e.data)).toEqual(['one', 'two']);
      // A reconnect from before it (from memory, or through XRANGE) is exact, without it.
      for (let i = 0; i < 3; i++) {
        const back = await a.connect({ 'last-event-id': first });
        await back.waitFor(1);
        expect(back.events).toEqual([{ id: good, event: 'n', data: 'two' }]);
        back.close();
      }
      const ours = warnings.filter((w) => w.includes(JSON.stringify(bad)));
      expect(ours).toHaveLength(1);
      expect(ours[0]).toMatch(/^keel: the event hub skipped stored event/);
      await a.hub.close();
    }
  }, 30_000);
});
