// A connection of the store cut by Redis (CLIENT KILL, a proxy, a network reset) right after it
// connected, while its first command is unanswered. ioredis 5 without the ready check sends
// CLIENT SETINFO (and SETNAME) on connect and declares the connection ready once they settle:
// cut then, it went "ready" on a closed socket after scheduling its reconnect, which then never
// happened (redis/ioredis#2099), and every publish was refused for ever ("Stream isn't
// writeable"). Driven here by a loopback proxy that cuts each new connection at its first bytes.
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { HubPublishError } from '../src/index';
import { guardProcess } from './adversarial/harness';
import { until } from './helpers';
import { appClient, streamKey as key, killReader, redisInstances } from './redis-helpers';

guardProcess();
const live = redisInstances();

/**
 * A TCP proxy on 127.0.0.1:0 to `target`. `cutAll()` closes every connection through it now;
 * the next `n` connections after `cutNext(n)` are closed when their first bytes arrive (before
 * Redis sees them, so nothing is ever answered on them).
 */
async function cuttingProxy(target: URL) {
  const sockets = new Set<Socket>();
  let toCut = 0;
  let cut = 0;
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => {});
    if (toCut > 0) {
      toCut--;
      socket.once('data', () => {
        cut++;
        socket.destroy();
      });
      return;
    }
    const upstream = createConnection(Number(target.port), target.hostname);
    sockets.add(upstream);
    upstream.on('close', () => {
      sockets.delete(upstream);
      socket.destroy();
    });
    upstream.on('error', () => {});
    socket.on('close', () => upstream.destroy());
    socket.pipe(upstream).pipe(socket);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `redis://127.0.0.1:${port}`,
    cutAll(): void {
      for (const s of sockets) s.destroy();
    },
    cutNext(n: number): void {
      toCut = n;
    },
    get cut(): number {
      return cut;
    },
    async close(): Promise<void> {
      for (const s of sockets) s.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

const proxies: { close(): Promise<void> }[] = [];
afterEach(async () => {
  await Promise.all(proxies.splice(0).map((p) => p.close()));
});

describe('redisStreams: a connection cut right after it connected, its first command unanswered', () => {
  it('reconnects: publishes are taken again and delivered', async () => {
    const proxy = await cuttingProxy(new URL(live.redis.url));
    proxies.push(proxy);
    const a = await live.instance(key(), {
      url: proxy.url,
      onError: () => {},
      reconnect: { initialDelay: 10, maxDelay: 50 },
    });
    const client = await a.connect();
    await until(() => a.hub.size === 1);
    await a.hub.publish('n', 'before');
    await client.waitFor(1);
    // Both connections (publisher and reader) cut, and each one's next connection cut again at
    // its first command.
    proxy.cutNext(2);
    proxy.cutAll();
    // Each connection reconnects within `maxDelay` (50 ms) of a failure; a publish refused
    // meanwhile rejects typed. 200 tries 10 ms apart are far more than that needs (the loop
    // ends at the first taken one); a connection stuck "ready" on a closed socket refuses
    // every one of them.
    let id: string | null = null;
    for (let i = 0; id === null && i < 200; i++) {
      id = await a.hub.publish('n', 'after').then(
        (x) => x,
        (e: unknown) => {
          expect(e).toBeInstanceOf(HubPublishError);
          return null;
        },
      );
      if (id === null) await new Promise((r) => setTimeout(r, 10));
    }
    expect(id).not.toBeNull();
    // The reader came back too: the client gets it. (Its cut connection may come after the
    // publish was taken: counted once the client has it.)
    await until(() => client.events.some((e) => e.id === id), 5000);
    await until(() => proxy.cut === 2, 5000);
    expect(client.events.map((e) => e.data)).toEqual(['before', 'after']);
  }, 20_000);

  it("the reader of an app's client (named like it) reconnects and delivers again", async () => {
    const proxy = await cuttingProxy(new URL(live.redis.url));
    proxies.push(proxy);
    const named = appClient(proxy.url, 'cut-reader');
    try {
      await named.connect();
      const a = await live.instance(key(), {
        client: named,
        onError: () => {},
        reconnect: { initialDelay: 10, maxDelay: 50 },
      });
      const client = await a.connect();
      await until(() => a.hub.size === 1);
      await a.hub.publish('n', 'before');
      await client.waitFor(1);
      // Only the reader is cut (found by the name it carries), and its next connection too.
      proxy.cutNext(1);
      await killReader(live.redis.url, 'cut-reader');
      await until(() => proxy.cut === 1, 5000);
      const id = await a.hub.publish('n', 'after');
      // It reconnects within `maxDelay` (50 ms); stuck "ready" on a closed socket, it never
      // would, and the client would get nothing more.
      await until(() => client.events.some((e) => e.id === id), 5000);
      expect(client.events.map((e) => e.data)).toEqual(['before', 'after']);
    } finally {
      named.disconnect();
    }
  }, 20_000);
});
