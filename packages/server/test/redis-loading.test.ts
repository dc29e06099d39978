// A Redis that is still loading its dataset answers every data command with `-LOADING`: the
// store treats it as a transient state (the reader retries; one warning names the server; a
// publish is refused with a HubPublishError saying so, never lost in silence), and delivers again
// once the load is done. Real redis-server, made to load slowly (`--key-load-delay`).
import { Redis } from 'ioredis';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startRedis } from '../../../scripts/redis-server.mjs';
import { createApp, createEventHub, HUB_RESET_EVENT, HubPublishError } from '../src/index';
import { redisStreams } from '../src/redis/index';
import { sse, start, until } from './helpers';
import { publishWhenUp, streamKey } from './redis-helpers';

const warnings: string[] = [];
const onWarning = (w: Error): void => {
  if (w.message.includes('Redis')) warnings.push(w.message);
};
beforeEach(() => {
  warnings.length = 0;
  process.on('warning', onWarning);
});
afterEach(() => {
  process.off('warning', onWarning);
});

/** Restarts `server` from a snapshot of `keys` filler keys, loading each in `delay` µs. */
async function restartLoading(
  server: Awaited<ReturnType<typeof startRedis>>,
  keys: number,
  delay: number,
): Promise<void> {
  const direct = new Redis(server.url);
  await direct.eval(`for i=1,${keys} do redis.call('set','filler:'..i,i) end return 1`, 0);
  await direct.save();
  direct.disconnect();
  await server.stop();
  await server.start({
    args: ['--key-load-delay', String(delay), '--loading-process-events-interval-bytes', '1024'],
    loading: true,
  });
}

describe('redisStreams: Redis loading its dataset (-LOADING)', () => {
  // An app's own client keeps ioredis's ready check (the store does not change its options): it
  // waits in 'connect' during the load and refuses commands as "Stream isn't writeable"; the
  // publish error must still name the load, not an older connection error.
  for (const via of ['url', 'client'] as const) {
    it(`warns once naming the server, refuses publishes with a typed error, then delivers (${via})`, async () => {
      await loading(via);
    }, 30_000);
  }
});

async function loading(via: 'url' | 'client'): Promise<void> {
  const server = await startRedis();
  const stream = streamKey();
  const client =
    via === 'client'
      ? new Redis(server.url, {
          enableOfflineQueue: false,
          maxRetriesPerRequest: 0,
          retryStrategy: () => 10,
          // Its ready check otherwise waits Redis's whole load estimate between INFO polls.
          maxLoadingRetryTime: 100,
        })
      : undefined;
  client?.on('error', () => {});
  const hub = createEventHub({
    store: redisStreams({
      url: server.url,
      client,
      stream,
      reconnect: { initialDelay: 10, maxDelay: 50 },
    }),
  });
  const app = createApp();
  app.get('/events', (ctx) => hub.connect(ctx));
  let sseClient: Awaited<ReturnType<typeof sse>> | null = null;
  try {
    const { port } = await start(app);
    await hub.ready;
    sseClient = await sse(port, '/events');
    await until(() => hub.size === 1);
    await hub.publish('n', 'before');
    await sseClient.waitFor(1);

    // 20 000 keys at 250 µs each: about 5 s of loading.
    await restartLoading(server, 20_000, 250);
    // Once the connection is back, a publish is refused with Redis's own reason.
    let error: unknown = null;
    for (let i = 0; i < 1000; i++) {
      error = await hub.publish('n', 'during').then(
        () => null,
        (e: unknown) => e,
      );
      if (String((error as Error | null)?.cause).includes('LOADING')) break;
      await new Promise((r) => setTimeout(r, 5));
    }
    expect(error).toBeInstanceOf(HubPublishError);
    expect((error as HubPublishError).reason).toBe('store');
    const cause = (error as HubPublishError).cause as Error;
    expect(cause.message).toContain('LOADING');
    expect(cause.message).toContain(server.url);

    await until(() => warnings.some((w) => w.includes('loading')), 3000);
    const loading = warnings.filter((w) => w.includes('loading'));
    expect(loading).toHaveLength(1);
    expect(loading[0]).toContain(server.url);

    // Done loading: publishes go through and reach the client; the reader says it is back.
    // (An app's client is back once its own ready check passes: later than the store's reader.)
    const after = await publishWhenUp(hub, 'after', 5000);
    await until(() => sseClient!.events.some((e) => e.id === after), 5000);
    await until(() => warnings.some((w) => w.endsWith('again')));
    expect(warnings.filter((w) => w.includes('loading'))).toHaveLength(1);
    const data = sseClient.events.filter((e) => e.event !== HUB_RESET_EVENT).map((e) => e.data);
    expect(data).toEqual(['before', 'after']);
    expect(hub.size).toBe(1);
  } finally {
    sseClient?.close();
    await app.close();
    await hub.close();
    client?.disconnect();
    await server.dispose();
  }
}
