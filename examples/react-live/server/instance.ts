import { redisStreams } from '@keel/server/redis';
import { Redis } from 'ioredis';
import { createLiveApp } from './app';
import { redisTodos } from './todos';

export interface InstanceOptions {
  distDir: string;
  port?: number;
  host?: string;
  /** Share events and todos with other instances through this Redis; default: all in memory. */
  redisUrl?: string;
}

/** One server instance: in memory, or on Redis so that several serve the same tabs. */
export async function startInstance(options: InstanceOptions) {
  const host = options.host ?? '127.0.0.1';
  let redis: Redis | null = null;
  let live: ReturnType<typeof createLiveApp>;
  if (options.redisUrl === undefined) {
    live = createLiveApp({ distDir: options.distDir });
  } else {
    // Another scheme ioredis would read as a socket path (`connect ENOENT //host:6379`).
    if (!/^rediss?:\/\//i.test(options.redisUrl)) {
      const shown = URL.canParse(options.redisUrl)
        ? redactUrl(options.redisUrl)
        : JSON.stringify(hidePasswords(options.redisUrl));
      throw new RangeError(
        `react-live: REDIS_URL must be a redis:// or rediss:// URL, got ${shown}`,
      );
    }
    redis = await reachRedis(options.redisUrl);
    watchRedis(redis, options.redisUrl);
    live = createLiveApp({
      distDir: options.distDir,
      todoStore: await redisTodos(redis, 'react-live:todos', ['Try keel', 'Open a second tab']),
      events: redisStreams({ url: options.redisUrl, stream: 'react-live:events' }),
    });
  }
  // With Redis the hub is ready after its first round trip; tabs connect after that.
  await live.hub.ready;
  const server = await live.app.listen(options.port ?? 0, host).catch(async (error: unknown) => {
    await live.hub.close();
    await redis?.quit().catch(() => redis.disconnect());
    throw error instanceof Error && 'syscall' in error
      ? new ListenError(host, options.port ?? 0, error)
      : error;
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : (options.port ?? 0);
  return {
    ...live,
    // An IPv6 host is written in brackets in a URL (`http://[::1]:3000`).
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
    async close() {
      await live.app.close();
      await live.hub.close();
      // Redis may be gone already (Ctrl-C reaches redis-server too): quit then rejects.
      await redis?.quit().catch(() => redis.disconnect());
    },
  };
}

/** Redis did not answer at startup (a wrong REDIS_URL, or no redis-server running). */
export class RedisUnreachableError extends Error {
  override name = 'RedisUnreachableError';
  constructor(url: string, cause: unknown) {
    // A cause's text can quote the URL (ioredis quotes a socket path, which can be a mistyped one).
    const why = hidePasswords(cause instanceof Error ? cause.message || cause.name : String(cause));
    super(`react-live: cannot reach Redis at ${redactUrl(url)} (REDIS_URL): ${why}`, { cause });
  }
}

/** The server could not listen (the port in use, a host not on this machine, no permission). */
export class ListenError extends Error {
  override name = 'ListenError';
  constructor(host: string, port: number, cause: Error) {
    // `listen EADDRINUSE: address already in use 127.0.0.1:3000` -> `address already in use`
    const why = cause.message.replace(/^\S+ \S+: /, '').replace(/ \S+:\d+$/, '');
    super(`react-live: cannot listen on ${host}:${port} (HOST, PORT): ${why}`, { cause });
  }
}

/** `PORT` as a port number (0, a free one, when unset or empty); a RangeError saying what is wrong. */
export function portFrom(value: string | undefined): number {
  if (value === undefined || value === '') return 0;
  const port = Number(value);
  if (!/^\d+$/.test(value) || port > 65_535) {
    throw new RangeError(
      `react-live: PORT must be an integer in 0-65535, got ${JSON.stringify(value)}`,
    );
  }
  return port;
}

/**
 * `text` with every URL password in it (`user:password@`, `:password@`) replaced by `***`, for a
 * message built from a URL or from an error's text: the password runs to the last `@` of its word.
 */
export function hidePasswords(text: string): string {
  return text.replace(/([^\s/@:"'`(]*:)[^\s/"'`]*@/g, '$1***@');
}

/** `url` with its password replaced by `***`, for messages. */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    // A URL with no authority keeps a userinfo in its path (`redis:/u:pw@host`).
    return hidePasswords(parsed.href);
  } catch {
    return '(an unparsable URL)';
  }
}

/**
 * A connection to `url` once it answered, or a RedisUnreachableError with the first connection
 * error: at startup a wrong URL is a mistake to say at once, not an outage to wait out (ioredis
 * would queue the first commands and fail them ~10 s later with MaxRetriesPerRequestError).
 */
async function reachRedis(url: string): Promise<Redis> {
  const redis = new Redis(url, { lazyConnect: true });
  let cause: unknown;
  const onError = (error: unknown) => {
    cause ??= error;
  };
  redis.on('error', onError);
  try {
    await redis.connect();
    return redis;
  } catch (error) {
    redis.disconnect();
    throw new RedisUnreachableError(url, cause ?? error);
  } finally {
    redis.off('error', onError);
  }
}

/**
 * Reports an outage of the todos' connection once (a process warning, like the hub's store), and
 * again after it was back. ioredis without an `error` listener prints every failed reconnect
 * ("[ioredis] Unhandled error event") for as long as Redis is away.
 */
function watchRedis(redis: Redis, url: string): void {
  let down = false;
  redis.on('error', (error: Error) => {
    if (down) return;
    down = true;
    process.emitWarning(
      `react-live: the todos' Redis at ${redactUrl(url)} failed; retrying (${hidePasswords(error.message)})`,
    );
  });
  redis.on('ready', () => {
    down = false;
  });
}
