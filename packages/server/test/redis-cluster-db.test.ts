// A Redis in cluster mode has db 0 only: it answers SELECT with `ERR SELECT is not allowed in
// cluster mode`, which retrying cannot fix. With a db other than 0 in `url`, `hub.ready` rejects
// with a RedisStoreError (`DB_INDEX`) saying so, and no SELECT is sent after that. Real
// redis-server started with `--cluster-enabled yes` (its nodes.conf in the server's temp dir).
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RedisServer, startRedis } from '../../../scripts/redis-server.mjs';
import { createEventHub, HubPublishError } from '../src/index';
import { isRedisStoreError, type RedisStoreError, redisStreams } from '../src/redis/index';
import { guardProcess, within } from './adversarial/harness';
import { streamKey as key } from './redis-helpers';

guardProcess();
let redis: RedisServer;
let admin: Redis;
beforeAll(async () => {
  redis = await startRedis();
  await redis.stop();
  await redis.start({ args: ['--cluster-enabled', 'yes'] });
  admin = new Redis(redis.url);
});
afterAll(async () => {
  admin?.disconnect();
  await redis?.dispose();
});

/** SELECTs the server ran (refused ones too). */
async function selects(): Promise<number> {
  const info = (await admin.info('commandstats')) as string;
  return Number(/cmdstat_select:calls=(\d+)/.exec(info)?.[1] ?? 0);
}

describe('redisStreams: a db other than 0 on a Redis in cluster mode', () => {
  it('hub.ready rejects naming cluster mode and db 0, not retried', async () => {
    expect(await admin.info('server')).toMatch(/redis_mode:cluster/);
    const errors: unknown[] = [];
    const hub = createEventHub({
      store: redisStreams({
        url: `${redis.url}/1`,
        stream: key(),
        onError: (e) => void errors.push(e),
        reconnect: { initialDelay: 5, maxDelay: 10 },
      }),
    });
    const error = await within(
      hub.ready.then(
        () => null,
        (e: unknown) => e,
      ),
      3000,
      'hub.ready',
    );
    expect(isRedisStoreError(error), String(error)).toBe(true);
    const failure = error as RedisStoreError;
    expect(failure.code).toBe('DB_INDEX');
    expect(failure.message).toMatch(/SELECT is not allowed in cluster mode/);
    expect(failure.message).toMatch(/cluster mode has db 0 only/);
    expect(failure.message).toMatch(/db 0 in `url`/);
    // Not the advice for a server with too few `databases` (raising it does not help here).
    expect(failure.message).not.toMatch(/raise `databases`/);
    expect(failure.message).toMatch(/not retried$/);
    expect(errors).toEqual([]);
    const publish = await hub.publish('n', 'x').then(
      () => null,
      (e: unknown) => e,
    );
    expect(publish).toBeInstanceOf(HubPublishError);
    expect((publish as HubPublishError).cause).toBe(error);
    const sent = await selects();
    await new Promise((r) => setTimeout(r, 100));
    expect(await selects()).toBe(sent);
    await hub.close();
  });
});
