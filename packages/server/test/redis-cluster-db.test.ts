// A Redis in cluster mode has db 0 only: it answers SELECT with `ERR SELECT is not allowed in
// cluster mode`, which retrying cannot fix. With a db other than 0 in `url`, `hub.ready` rejects
// with a RedisStoreError (`DB_INDEX`) saying so, and no SELECT is sent after that. Real
// redis-server started with `--cluster-enabled yes` (its nodes.conf in the server's temp dir).
import { describe, expect, it } from 'vitest';
import { guardProcess } from './adversarial/harness';
import { failedOpen, redisServer } from './redis-helpers';

guardProcess();
const server = redisServer({ cluster: true });

/** SELECTs the server ran (refused ones too). */
async function selects(): Promise<number> {
  const info = (await server.admin.info('commandstats')) as string;
  return Number(/cmdstat_select:calls=(\d+)/.exec(info)?.[1] ?? 0);
}

describe('redisStreams: a db other than 0 on a Redis in cluster mode', () => {
  it('hub.ready rejects naming cluster mode and db 0, not retried', async () => {
    expect(await server.admin.info('server')).toMatch(/redis_mode:cluster/);
    const { error: failure } = await failedOpen({ url: `${server.redis.url}/1` });
    expect(failure.code).toBe('DB_INDEX');
    expect(failure.message).toMatch(/SELECT is not allowed in cluster mode/);
    expect(failure.message).toMatch(/cluster mode has db 0 only/);
    expect(failure.message).toMatch(/db 0 in `url`/);
    // Not the advice for a server with too few `databases` (raising it does not help here).
    expect(failure.message).not.toMatch(/raise `databases`/);
    expect(failure.message).toMatch(/not retried$/);
    // Stopped: no more SELECTs.
    const sent = await selects();
    await new Promise((r) => setTimeout(r, 100));
    expect(await selects()).toBe(sent);
  });
});
