import { brand, hasBrand } from '../errors';

const REDIS_STORE_ERROR = Symbol.for('keel.server.RedisStoreError');

/**
 * The Redis error codes the store cannot get past by retrying: a wrong password (`WRONGPASS`,
 * `ERR invalid password` before Redis 6), none given where one is needed (`NOAUTH`), a command
 * the Redis user may not run (`NOPERM`), a stream key holding another type (`WRONGTYPE`), a Redis
 * without streams (`ERR unknown command`, Redis < 5), a db the server does not have (`ERR DB index
 * is out of range` to `SELECT`: the db in `url` is not below the server's `databases`; `ERR SELECT
 * is not allowed in cluster mode`: a cluster node has db 0 only), a Redis Cluster node that does
 * not serve the stream's hash slot (`MOVED`, `ASK`: another node does; `CLUSTERDOWN`: none does,
 * or the cluster is down; `TRYAGAIN`: the slot is being moved): the store follows no cluster
 * redirect. `CLUSTERDOWN` and `TRYAGAIN` are retried at open too (see `clusterDown`).
 */
export type RedisStoreFailure =
  | 'WRONGPASS'
  | 'NOAUTH'
  | 'NOPERM'
  | 'WRONGTYPE'
  | 'UNKNOWN_COMMAND'
  | 'DB_INDEX'
  | 'CLUSTER';

/**
 * Redis refused `redisStreams` for its configuration, not an outage: retrying fails the same way
 * until someone changes it. At open the store stops (`hub.ready` rejects with this, publishes
 * reject with a `HubPublishError` whose `cause` it is), but for a cluster down for now
 * (`CLUSTERDOWN`, `TRYAGAIN`: retried as after open). After open (a password rotated, an ACL
 * changed, the stream's cluster slot moved) it keeps retrying with backoff: `onError` (or one
 * process warning) gets this once per distinct refusal, and each refused publish rejects with a `HubPublishError` whose `cause` it
 * is. The message names the Redis error, the server (password hidden), the stream and what to
 * change; `cause` is Redis's own error.
 */
export class RedisStoreError extends Error {
  override name = 'RedisStoreError' as const;
  /** Which configuration error Redis answered with. */
  readonly code: RedisStoreFailure;

  /**
   * @param code What Redis refused.
   * @param message The whole message.
   * @param options `cause`: Redis's error.
   */
  constructor(code: RedisStoreFailure, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
    brand(this, REDIS_STORE_ERROR);
  }
}

/** True for a {@link RedisStoreError}, also one from another copy of this package. */
export function isRedisStoreError(value: unknown): value is RedisStoreError {
  return value instanceof RedisStoreError || hasBrand(value, REDIS_STORE_ERROR);
}

/**
 * The failure `error` is when retrying cannot fix it, else undefined (an outage, `LOADING`
 * (`isLoading`), `OOM` (`outOfMemory`)).
 */
export function permanentFailure(error: unknown): RedisStoreFailure | undefined {
  if (!(error instanceof Error)) return undefined;
  // A refused EXEC (an ACL without it) aborts the transaction with its own refusal as reason.
  const text = error.message.replace(/^EXECABORT Transaction discarded because of: /, '');
  for (const code of ['WRONGPASS', 'NOAUTH', 'NOPERM', 'WRONGTYPE'] as const) {
    if (text.startsWith(`${code} `)) return code;
  }
  if (text.startsWith('ERR invalid password') || text.startsWith('ERR invalid username')) {
    return 'WRONGPASS';
  }
  if (text.startsWith('ERR unknown command')) return 'UNKNOWN_COMMAND';
  // A cluster node answers a key it does not serve so (any command on the stream, each time).
  if (/^(?:MOVED|ASK|CLUSTERDOWN|TRYAGAIN) /.test(text)) return 'CLUSTER';
  if (
    text.startsWith('ERR DB index is out of range') ||
    text.startsWith('ERR invalid DB index') ||
    inClusterMode(error)
  ) {
    return 'DB_INDEX';
  }
  return undefined;
}

/**
 * A cluster that does not serve the stream's slot for now (`CLUSTERDOWN`: down, a failover under
 * way, its slots not assigned yet; `TRYAGAIN`: the slot moving): unlike a redirect, the same node
 * may serve it in a moment, so the open waits for it (a rolling deploy during a failover would
 * otherwise fail every instance it starts) instead of failing `hub.ready`.
 */
export function clusterDown(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const text = error.message.replace(/^EXECABORT Transaction discarded because of: /, '');
  return /^(?:CLUSTERDOWN|TRYAGAIN) /.test(text);
}

/** A refused SELECT of a Redis in cluster mode (db 0 only, whatever its `databases` says). */
export function inClusterMode(error: unknown): boolean {
  return error instanceof Error && error.message.startsWith('ERR SELECT is not allowed in cluster');
}

/**
 * The ACL rules for every command the store sends on its own connections (AUTH, HELLO and QUIT
 * need none), as `ACL SETUSER` takes them: the NOPERM advice and the README list these (a test
 * checks both). Needed: refused, the store cannot open (or, `+xadd`, publish); `+select` for a
 * db other than 0 only.
 */
export const NEEDED_RULES = [
  '+select',
  '+xadd',
  '+xread',
  '+xrange',
  '+xrevrange',
  '+xinfo|stream',
  '+multi',
  '+exec',
] as const;
/**
 * Refused, the store does without: `INFO` (a restart's `run_id`), `CONFIG GET` (`appendfsync`,
 * `databases`), `CLIENT` (its reader's id and name, waking readers when ids went backwards),
 * `WATCH` (one marker for an emptied stream found by two instances at once).
 */
export const OPTIONAL_RULES = [
  '+info',
  '+config|get',
  '+client|id',
  '+client|setname',
  '+client|list',
  '+client|unblock',
  '+watch',
] as const;
export const ACL_RULES = [...NEEDED_RULES, ...OPTIONAL_RULES].join(' ');

/** What the ACL must grant on `key` (its glob characters escaped, as `~` reads a pattern). */
function grant(key: string, user: string | undefined): string {
  const pattern = key.replace(/[*?[\]\\]/g, '\\$&');
  return `grant the Redis user what the store sends: ACL SETUSER ${user || 'default'} ~${pattern} ${ACL_RULES} (from ${OPTIONAL_RULES[0]} on optional: without them it does without restart detection and prompt wake-ups; +select for a db other than 0 only)`;
}

/**
 * What to change for `code`, for the message. `db`: for `DB_INDEX`, the db asked for and the
 * server's `databases` (undefined when `CONFIG GET` was refused), or `cluster` (see
 * `inClusterMode`); for `NOPERM`, the Redis user; for `CLUSTER`, `down`: see `clusterDown`.
 */
export function remedy(
  code: RedisStoreFailure,
  key: string,
  db?: {
    index: number;
    databases: number | undefined;
    cluster?: boolean;
    user?: string;
    down?: boolean;
  },
): string {
  switch (code) {
    case 'WRONGPASS':
      return 'check the user name and password in `url` (or of the `client`)';
    case 'NOAUTH':
      return 'this Redis requires a password: give it in `url` (redis://user:password@host)';
    case 'NOPERM':
      return grant(key, db?.user);
    case 'WRONGTYPE':
      return `${key} holds another type than a stream: choose another \`stream\` key, or delete that key`;
    case 'UNKNOWN_COMMAND':
      return 'the store needs Redis 5 or later (streams)';
    case 'CLUSTER':
      if (db?.down) {
        return `the cluster does not serve the hash slot of ${key} (\`CLUSTER KEYSLOT ${key}\`) for now (down, a failover or resharding under way, or no node assigned it): the store waits for it; if this node is to serve no slot, give it a standalone Redis or the cluster node that serves that slot`;
      }
      return `the store does not follow Redis Cluster redirects: give it a standalone Redis, or the cluster node that serves the hash slot of ${key} (\`CLUSTER KEYSLOT ${key}\`), with the cluster up`;
    case 'DB_INDEX': {
      const index = db?.index ?? 0;
      if (db?.cluster) {
        return `a Redis in cluster mode has db 0 only: use db 0 in \`url\` (or of the \`client\`), not db ${index}`;
      }
      const limit = db?.databases;
      const choose = limit === undefined ? 'a lower db' : `a db from 0 to ${limit - 1}`;
      const setting = limit === undefined ? 'setting' : `is ${limit}`;
      return `db ${index} is out of range (the server's \`databases\` ${setting}): choose ${choose} in \`url\` (or of the \`client\`), or raise \`databases\` in the Redis config`;
    }
  }
}

/** Redis's answer while it loads its dataset into memory (after a restart, a full resync). */
export function isLoading(error: unknown): boolean {
  return error instanceof Error && error.message.startsWith('LOADING ');
}

/** Why Redis refused the commands of a transaction it aborted (`EXECABORT`), per ioredis. */
export function queuedErrors(error: unknown): unknown[] | undefined {
  const queued = (error as { previousErrors?: unknown } | null)?.previousErrors;
  return Array.isArray(queued) && queued.length > 0 ? queued : undefined;
}

/** A transaction Redis refused because it is out of memory: reads are retried outside one. */
export function outOfMemory(error: unknown): boolean {
  return (
    queuedErrors(error)?.some((e) => e instanceof Error && e.message.startsWith('OOM ')) === true
  );
}
