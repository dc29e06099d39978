import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { type AddressInfo, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, expect, it, vi } from 'vitest';
import { type RedisServer, startRedis } from '../../../scripts/redis-server.mjs';
import { RedisUnreachableError, startInstance } from '../server/instance';

// One instance on Redis (`REDIS_URL=... pnpm serve`, what start:cluster runs twice) while Redis
// goes away: the todos' own ioredis connection says so once, as the hub's store does, instead of
// ioredis printing "[ioredis] Unhandled error event" for every failed reconnect.

let redis: RedisServer | undefined;
let instance: Awaited<ReturnType<typeof startInstance>> | undefined;
const distDir = mkdtempSync(join(tmpdir(), 'keel-react-live-instance-'));

afterEach(async () => {
  await instance?.close();
  await redis?.dispose();
  instance = undefined;
  redis = undefined;
  vi.restoreAllMocks();
});

afterAll(() => {
  rmSync(distDir, { recursive: true, force: true });
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

/** Runs `server/main.ts` as `pnpm serve` does, with `env`; resolves its exit code and output. */
async function serve(
  env: Record<string, string>,
  stopWhenListening = false,
): Promise<{ code: number | null; out: string }> {
  const root = fileURLToPath(new URL('..', import.meta.url));
  const proc = spawn(
    join(root, 'node_modules/.bin/tsx'),
    ['--tsconfig', '../../tsconfig.json', 'server/main.ts'],
    {
      cwd: root,
      env: { ...process.env, DIST_DIR: distDir, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let out = '';
  proc.stdout.on('data', (chunk: Buffer) => {
    out += chunk.toString();
    if (stopWhenListening && out.includes('open it in two tabs')) proc.kill('SIGTERM');
  });
  proc.stderr.on('data', (chunk: Buffer) => {
    out += chunk.toString();
  });
  const code = await new Promise<number | null>((resolve) => proc.once('exit', resolve));
  return { code, out: out.trim() };
}

it('REDIS_URL unreachable at start: one clear error naming it (password hidden), exit code 1', async () => {
  // As `REDIS_URL=... pnpm serve` runs it. Nothing listens on port 1.
  const { code, out } = await serve({ REDIS_URL: 'redis://:hunter2@127.0.0.1:1' });
  expect(code).toBe(1);
  expect(out).toBe(
    'react-live: cannot reach Redis at redis://:***@127.0.0.1:1 (REDIS_URL): ' +
      'connect ECONNREFUSED 127.0.0.1:1',
  );
});

it('REDIS_URL of another scheme: one line naming it, exit code 1; empty: in memory, as when unset', async () => {
  // Before: `cannot reach Redis at http://127.0.0.1:6379/ (REDIS_URL): connect ENOENT //127.0.0.1:6379`
  // (ioredis read it as a socket path), and `REDIS_URL=` tried 127.0.0.1:6379.
  expect(await serve({ REDIS_URL: 'http://u:hunter2@127.0.0.1:6379' })).toEqual({
    code: 1,
    out: 'react-live: REDIS_URL must be a redis:// or rediss:// URL, got http://u:***@127.0.0.1:6379/',
  });
  // Stopped (SIGTERM) once it says where it listens.
  const { code, out } = await serve({ REDIS_URL: '' }, true);
  expect(out).toMatch(/^keel react-live: http:\/\/127\.0\.0\.1:\d+ {2}\(open it in two tabs\)$/);
  expect(code).toBe(0);
});

it('a bad PORT, or one in use: one line naming it, exit code 1 (was a stack trace)', async () => {
  // Checked before Redis is reached: nothing is connected for a run that cannot listen.
  for (const port of ['abc', '70000', '-1', '3.5']) {
    expect(await serve({ PORT: port, REDIS_URL: 'redis://127.0.0.1:1' })).toEqual({
      code: 1,
      out: `react-live: PORT must be an integer in 0-65535, got "${port}"`,
    });
  }
  const taken = createServer();
  await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
  const { port } = taken.address() as AddressInfo;
  try {
    expect(await serve({ PORT: String(port) })).toEqual({
      code: 1,
      out: `react-live: cannot listen on 127.0.0.1:${port} (HOST, PORT): address already in use`,
    });
  } finally {
    await new Promise((resolve) => taken.close(resolve));
  }
});

it('a password is hidden in every message built from REDIS_URL or from an error quoting it', async () => {
  // `redis:/` with one slash parses as a URL with no password, so redactUrl kept it whole.
  await expect(
    startInstance({ distDir, redisUrl: 'redis:/u:hunter2@127.0.0.1:1' }),
  ).rejects.toThrow(
    'react-live: REDIS_URL must be a redis:// or rediss:// URL, got redis:/u:***@127.0.0.1:1',
  );
  // ioredis quotes a socket path, which can be a mistyped URL.
  const error = new RedisUnreachableError(
    'redis://u:hunter2@127.0.0.1:1',
    new Error('connect ENOENT /u:hunter2@127.0.0.1:1'),
  );
  expect(error.message).toBe(
    'react-live: cannot reach Redis at redis://u:***@127.0.0.1:1 (REDIS_URL): ' +
      'connect ENOENT /u:***@127.0.0.1:1',
  );
});

// `HOST=::1` printed `http://::1:47922`, which no browser (nor `new URL`) opens. (A machine
// without IPv6 loopback cannot run it.)
const ipv6 = await new Promise<boolean>((resolve) => {
  const probe = createServer();
  probe.once('error', () => resolve(false));
  probe.listen(0, '::1', () => probe.close(() => resolve(true)));
});
it.skipIf(!ipv6)('an IPv6 host is printed in brackets: the URL opens', async () => {
  instance = await startInstance({ distDir, host: '::1' });
  expect(instance.url).toMatch(/^http:\/\/\[::1\]:\d+$/);
  const res = await fetch(new URL('/api/todos', instance.url));
  expect(res.status).toBe(200);
});
