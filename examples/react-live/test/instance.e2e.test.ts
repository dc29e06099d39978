import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it, vi } from 'vitest';
import { type RedisServer, startRedis } from '../../../scripts/redis-server.mjs';
import { startInstance } from '../server/instance';

// One instance on Redis (`REDIS_URL=... pnpm serve`, what start:cluster runs twice) while Redis
// goes away: the todos' own ioredis connection says so once, as the hub's store does, instead of
// ioredis printing "[ioredis] Unhandled error event" for every failed reconnect.

let redis: RedisServer | undefined;
let instance: Awaited<ReturnType<typeof startInstance>> | undefined;
const distDir = mkdtempSync(join(tmpdir(), 'keel-react-live-instance-'));

afterEach(async () => {
  await instance?.close();
  await redis?.dispose();
  rmSync(distDir, { recursive: true, force: true });
  vi.restoreAllMocks();
});

it('a Redis outage is reported once per outage, not by ioredis for every reconnect', async () => {
  redis = await startRedis();
  instance = await startInstance({ distDir, redisUrl: redis.url });
  const errors = vi.spyOn(console, 'error').mockImplementation(() => {});
  const warnings: string[] = [];
  const onWarning = (warning: Error) => warnings.push(warning.message);
  process.on('warning', onWarning);
  try {
    await redis.stop();
    // ioredis retries every 50, 100, 150... ms: a few reconnects fail within a second.
    const deadline = Date.now() + 5000;
    while (!warnings.some((w) => w.includes('todos')) && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 50));
    }
    await new Promise((r) => setTimeout(r, 1000));
  } finally {
    process.off('warning', onWarning);
  }
  const todoWarnings = warnings.filter((w) => w.includes('todos'));
  expect(todoWarnings).toHaveLength(1);
  expect(todoWarnings[0]).toContain(redis.url);
  expect(errors.mock.calls.flat().join(' ')).not.toContain('Unhandled error event');
  // Back up: the list is served again.
  await redis.start();
  const res = await fetch(`${instance.url}/api/todos`);
  expect(res.status).toBe(200);
});
