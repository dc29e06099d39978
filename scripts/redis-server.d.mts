/** A real redis-server on 127.0.0.1 with its own temp dir. */
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

/**
 * Starts Debian's `redis-server` on a free loopback port with a temp dir. RDB snapshots are
 * off; `persistent` turns the append-only file on.
 */
export function startRedis(options?: { persistent?: boolean }): Promise<RedisServer>;
