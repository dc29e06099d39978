import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createConnection, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const BINARY = process.env.REDIS_SERVER ?? '/usr/bin/redis-server';

/** A real redis-server on 127.0.0.1 with its own temp dir, for one test file. */
export interface RedisServer {
  readonly port: number;
  readonly url: string;
  /** Whether it keeps its data across a restart (append-only file, fsync always). */
  readonly persistent: boolean;
  /** Stops it (SIGTERM; with persistence the data is on disk). */
  stop(): Promise<void>;
  /** Starts it again on the same port and dir. */
  start(): Promise<void>;
  /** Stops it and removes its dir. */
  dispose(): Promise<void>;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

function ping(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port });
    socket.setTimeout(500);
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.once('data', (data) => {
      socket.destroy();
      resolve(data.toString().startsWith('+PONG'));
    });
    socket.once('timeout', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', () => resolve(false));
  });
}

/**
 * Starts `redis-server` (Debian's package; `scripts/ensure-redis.sh` installs it) on a free
 * loopback port. RDB snapshots are off; `persistent` turns the append-only file on.
 */
export async function startRedis(options: { persistent?: boolean } = {}): Promise<RedisServer> {
  if (!existsSync(BINARY)) {
    throw new Error(
      `${BINARY} is missing: run packages/server/scripts/ensure-redis.sh (apt-get install redis-server)`,
    );
  }
  const persistent = options.persistent ?? false;
  const dir = mkdtempSync(join(tmpdir(), 'keel-redis-'));
  let child: ChildProcess | null = null;
  let port = 0;

  async function start(): Promise<void> {
    if (port === 0) port = await freePort();
    const proc = spawn(
      BINARY,
      [
        '--port',
        String(port),
        '--bind',
        '127.0.0.1',
        '--dir',
        dir,
        '--save',
        '',
        '--appendonly',
        persistent ? 'yes' : 'no',
        '--appendfsync',
        'always',
        '--daemonize',
        'no',
        '--logfile',
        '',
        '--loglevel',
        'warning',
      ],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    child = proc;
    let exited = false;
    proc.once('exit', () => {
      exited = true;
    });
    for (let i = 0; i < 500; i++) {
      if (exited) throw new Error(`redis-server exited at start (port ${port})`);
      if (await ping(port)) return;
      await new Promise((r) => setTimeout(r, 10));
    }
    throw new Error(`redis-server did not answer on port ${port}`);
  }

  async function stop(): Promise<void> {
    const proc = child;
    child = null;
    if (proc === null || proc.exitCode !== null) return;
    await new Promise<void>((resolve) => {
      proc.once('exit', () => resolve());
      proc.kill('SIGTERM');
    });
  }

  await start();
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    persistent,
    stop,
    start,
    async dispose() {
      await stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
