// Redis restarted without its data: the reader resyncs, finds the new run, and resets its
// clients just before the first entry after its last one, appending a restart marker. An entry
// another instance publishes while it looks (after its XRANGE found nothing, before it reads
// the newest id) must be delivered after the reset, not skipped: the reset goes before it.
// Real redis-server, restarted; the store connects through a loopback proxy that lets a
// publish land exactly between those two reads (before the reader's XREVRANGE goes on).
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { HUB_RESET_EVENT } from '../src/index';
import { type SseMessage, until } from './helpers';
import { streamKey as key, publishWhenUp, redisInstances } from './redis-helpers';

const live = redisInstances();
const closing: (() => void)[] = [];
afterEach(() => {
  for (const close of closing.splice(0)) close();
});

const names = (events: SseMessage[]): string[] =>
  events.map((e) => (e.event === HUB_RESET_EVENT ? 'reset' : e.data));

/**
 * A TCP proxy to the file's redis-server. `before(chunk)`, awaited before a chunk from the
 * store goes on (the socket paused meanwhile, so the order stays).
 */
async function proxy(before: (chunk: Buffer) => Promise<void>): Promise<number> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((down) => {
    const up = createConnection({ host: '127.0.0.1', port: live.redis.port });
    sockets.add(down).add(up);
    const end = (): void => {
      down.destroy();
      up.destroy();
    };
    for (const s of [down, up]) s.on('error', end).on('close', end);
    up.on('data', (chunk) => down.write(chunk));
    down.on('data', (chunk) => {
      down.pause();
      void before(chunk).then(() => {
        up.write(chunk);
        down.resume();
      });
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  closing.push(() => {
    for (const s of sockets) s.destroy();
    server.close();
  });
  return (server.address() as { port: number }).port;
}

describe('redisStreams: an entry published while the reader resyncs after a restart', () => {
  it('is delivered after the reset, not skipped', async () => {
    const stream = key();
    let armed = false;
    let injected = false;
    const port = await proxy(async (chunk) => {
      // The reader's newest-id read (a MULTI with XREVRANGE): another instance publishes first.
      if (!armed || !chunk.includes('xrevrange')) return;
      armed = false;
      const direct = new Redis(live.redis.url);
      try {
        await direct.xadd(stream, '*', 'e', 'n', 'd', 'between');
        injected = true;
      } finally {
        direct.disconnect();
      }
    });
    const a = await live.instance(stream, {
      url: `redis://127.0.0.1:${port}`,
      onError: () => {},
      reconnect: { initialDelay: 5, maxDelay: 20 },
    });
    const client = await a.connect();
    await until(() => a.hub.size === 1);
    const before = await a.hub.publish('n', 'before');
    await client.waitFor(1);
    expect(before).toMatch(/^\d+-\d+$/);

    await live.redis.stop();
    armed = true;
    await live.redis.start();
    await until(() => injected);
    const after = await publishWhenUp(a.hub, 'after');
    await until(() => client.events.some((e) => e.id === after));
    expect(names(client.events)).toEqual(['before', 'reset', 'between', 'after']);
  }, 20_000);
});
