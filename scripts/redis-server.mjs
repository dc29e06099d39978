// A throwaway redis-server for tests, the react-live cluster and the hub benchmark: Debian's
// `redis-server` (scripts/ensure-apt.sh / packages/server/scripts/ensure-redis.sh install it) on a
// free loopback port with its own temp dir, stopped and removed by `dispose()`.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createConnection, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const BINARY = process.env.REDIS_SERVER ?? '/usr/bin/redis-server';

function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** Whether the server answers; `loading`: a `-LOADING` answer (still loading its data) counts. */
function ping(port, loading = false) {
  return new Promise((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port });
    socket.setTimeout(500);
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.once('data', (data) => {
      socket.destroy();
      const text = data.toString();
      resolve(text.startsWith('+PONG') || (loading && text.startsWith('-LOADING')));
    });
    socket.once('timeout', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', () => resolve(false));
  });
}

/** See redis-server.d.mts. */
export async function startRedis(options = {}) {
  if (!existsSync(BINARY)) {
    throw new Error(
      `${BINARY} is missing: run packages/server/scripts/ensure-redis.sh (apt-get install redis-server)`,
    );
  }
  const persistent = options.persistent ?? false;
  // Kept for every start (a restart's own `args` come after them, and win for a repeated setting).
  const config = options.args ?? [];
  const dir = mkdtempSync(join(tmpdir(), 'keel-redis-'));
  const port = await freePort();
  let child = null;

  async function start(how = {}) {
    const proc = spawn(
      BINARY,
      [
        ...['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', ''],
        ...['--appendonly', persistent ? 'yes' : 'no', '--appendfsync', 'always'],
        ...['--daemonize', 'no', '--logfile', '', '--loglevel', 'warning'],
        ...config,
        ...(how.args ?? []),
      ],
      { stdio: 'ignore' },
    );
    child = proc;
    let exited = false;
    proc.once('exit', () => {
      exited = true;
    });
    for (let i = 0; i < 500; i++) {
      if (exited) throw new Error(`redis-server exited at start (port ${port})`);
      if (await ping(port, how.loading)) return;
      await new Promise((r) => setTimeout(r, 10));
    }
    throw new Error(`redis-server did not answer on port ${port}`);
  }

  async function stop() {
    const proc = child;
    child = null;
    // Killed by a signal (a test's SIGKILL), it has no exit code but a signal code.
    if (proc === null || proc.exitCode !== null || proc.signalCode !== null) return;
    await new Promise((resolve) => {
      proc.once('exit', () => resolve());
      proc.kill('SIGTERM');
    });
  }

  await start();
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    persistent,
    pid: () => child?.pid,
    stop,
    start,
    async dispose() {
      await stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
