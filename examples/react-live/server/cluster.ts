import { type ChildProcess, fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
// The throwaway redis-server of the repository's tests (Debian's redis-server, a free loopback
// port, its own temp dir).
import { type RedisServer, startRedis } from '../../../scripts/redis-server.mjs';
import { onShutdown } from './shutdown';

const MAIN = fileURLToPath(new URL('./main.ts', import.meta.url));
const TSCONFIG = fileURLToPath(new URL('../../../tsconfig.json', import.meta.url));

export interface Cluster {
  /** The instances' URLs: A, B. */
  urls: string[];
  redisUrl: string;
  stop(): Promise<void>;
}

/**
 * Two server processes on one Redis (a throwaway redis-server unless `redisUrl` is given): a tab
 * on A and a tab on B see each other's changes, as behind a load balancer.
 */
export async function startCluster(options: {
  distDir?: string;
  redisUrl?: string;
  host?: string;
  /**
   * An instance exited after it started, and not through `stop()` (it crashed, or was killed):
   * `how` is `code 1` or `signal SIGKILL`. Default: said on stderr, the other instance goes on.
   */
  onInstanceExit?: (name: string, how: string) => void;
}): Promise<Cluster> {
  let redis: RedisServer | null = null;
  let redisUrl = options.redisUrl;
  if (redisUrl === undefined) {
    redis = await startRedis();
    redisUrl = redis.url;
  }
  const children: ChildProcess[] = [];
  let stopping = false;
  const onInstanceExit =
    options.onInstanceExit ??
    ((name: string, how: string) => console.error(`react-live: instance ${name} exited (${how})`));
  const stop = async () => {
    stopping = true;
    await Promise.all(
      children.map(
        (child) =>
          new Promise<void>((resolve) => {
            if (child.exitCode !== null || child.signalCode !== null) return resolve();
            child.once('exit', () => resolve());
            child.kill('SIGTERM');
          }),
      ),
    );
    await redis?.dispose();
  };
  try {
    const urls: string[] = [];
    for (const name of ['A', 'B']) {
      const child = fork(MAIN, {
        execArgv: ['--import', 'tsx'],
        env: {
          ...process.env,
          TSX_TSCONFIG_PATH: TSCONFIG,
          REDIS_URL: redisUrl,
          INSTANCE: name,
          PORT: '0',
          HOST: options.host ?? '127.0.0.1',
          ...(options.distDir ? { DIST_DIR: options.distDir } : {}),
        },
      });
      children.push(child);
      urls.push(
        await new Promise<string>((resolve, reject) => {
          child.once('message', (msg) => resolve((msg as { url: string }).url));
          child.once('exit', (code) => reject(new Error(`instance ${name} exited with ${code}`)));
        }),
      );
      // Started: from now on, an exit stop() did not ask for is a crash, and is said.
      child.once('exit', (code, signal) => {
        if (!stopping) onInstanceExit(name, signal ? `signal ${signal}` : `code ${code}`);
      });
    }
    return { urls, redisUrl, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

// `npx -y pnpm@10.34.8 start:cluster`: run until Ctrl-C, or until an instance dies: then the
// rest is stopped and the exit code is 1. Restarting it would hide the crash (its output scrolls
// away) and could loop; a demo that stops says at once that something is wrong.
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  let crash: string | undefined;
  let stopForCrash = () => {}; // until the cluster is there (A may die while B starts)
  const cluster = await startCluster({
    // Empty is unset: a throwaway redis-server, as the instances would otherwise run in memory.
    redisUrl: process.env.REDIS_URL || undefined,
    host: process.env.HOST,
    onInstanceExit(name, how) {
      if (crash !== undefined) return;
      crash = `react-live: instance ${name} exited (${how}); stopping the cluster`;
      stopForCrash();
    },
  });
  stopForCrash = () => {
    console.error(crash);
    void cluster.stop().finally(() => process.exit(1));
  };
  if (crash !== undefined) stopForCrash();
  else console.log(`Redis: ${cluster.redisUrl}. Open A in one tab and B in another.`);
  onShutdown(() => cluster.stop());
}
