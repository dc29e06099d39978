/** A real redis-server on 127.0.0.1 with its own temp dir. */
export interface RedisServer {
  readonly port: number;
  readonly url: string;
  /** Whether it keeps its data across a restart (append-only file, fsync always). */
  readonly persistent: boolean;
  /** Stops it (SIGTERM; with persistence the data is on disk). */
  stop(): Promise<void>;
  /** The running process's pid (for SIGSTOP / SIGCONT), undefined when stopped. */
  pid(): number | undefined;
  /**
   * Starts it again on the same port and dir. `args`: more redis-server arguments for this run
   * (e.g. `--key-load-delay`), after those given to `startRedis` (a repeated setting: this run's
   * wins); `loading`: resolve once it answers at all, also `-LOADING` (still
   * loading its data), instead of once it answers PING.
   */
  start(how?: { args?: string[]; loading?: boolean }): Promise<void>;
  /** Stops it and removes its dir. */
  dispose(): Promise<void>;
}

/**
 * Starts Debian's `redis-server` on a free loopback port with a temp dir of its own. RDB
 * snapshots are off; `persistent` turns the append-only file on; `args`: more redis-server
 * arguments, for every start of it (`['--cluster-enabled', 'yes']`: its nodes.conf in its dir).
 */
export function startRedis(options?: {
  persistent?: boolean;
  args?: string[];
}): Promise<RedisServer>;
