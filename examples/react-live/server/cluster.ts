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
}): Promise<Cluster> {
  let redis: RedisServer | null = null;
  let redisUrl = options.redisUrl;
  if (redisUrl === undefined) {
    redis = await startRedis();
    redisUrl = redis.url;
  }
  const children: ChildProcess[] = [];
  const stop = async () => {
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
    }
    return { urls, redisUrl, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

// `npx -y pnpm@10.34.8 start:cluster`: run until Ctrl-C.
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const cluster = await startCluster({
    redisUrl: process.env.REDIS_URL,
    host: process.env.HOST,
  });
  console.log(`Redis: ${cluster.redisUrl}. Open A in one tab and B in another.`);
  onShutdown(() => cluster.stop());
}
