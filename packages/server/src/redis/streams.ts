import { type ChainableCommander, Redis, type RedisOptions, ReplyError } from 'ioredis';
import {
  checkFunction,
  checkOptions,
  errorText,
  hidePasswords,
  integer,
  keysOf,
  rangeError,
  typeError,
} from '../checks';
import { type Clock, checkClock, MAX_TIMER_MS, type TimerHandle } from '../clock';
import { bufferBytesOption, EventRing, frameFloor, MAX_BUFFER_SIZE } from '../hub-ring';
import type { HubStore, ReplayRequest, ReplayResult, StoredEvent, StoreSink } from '../hub-store';
import {
  clusterDown,
  inClusterMode,
  isLoading,
  outOfMemory,
  permanentFailure,
  queuedErrors,
  RedisStoreError,
  remedy,
} from './errors';
import { holdUntilAnswered } from './handshake';

/** Options for {@link redisStreams}. */
export interface RedisStreamsOptions {
  /**
   * The Redis server, e.g. `redis://127.0.0.1:6379/0`: a `redis://` or `rediss://` URL (or what
   * ioredis takes besides: `host:port`, a socket path); an empty string or another scheme
   * (`http://`) is a RangeError. Ignored when `client` is given.
   * @default 'redis://127.0.0.1:6379'
   */
  url?: string | undefined;
  /**
   * An ioredis client to publish and replay with (it is not closed by `hub.close()`); the store
   * reads with a `duplicate()` of it. Give it `enableOfflineQueue: false`, or publishes wait for
   * a reconnect instead of rejecting while Redis is down. Its other settings are kept: with
   * ioredis's ready check it refuses publishes while Redis loads its data until the check passes
   * (the error names `LOADING`). Keep that check (the default): without it, ioredis 5 (5.11.1
   * still) can stay "ready" on a closed socket, never reconnecting, when the connection is cut
   * while its `CLIENT SETINFO`/`SETNAME` are unanswered (redis/ioredis#2099), and it sends
   * commands before Redis answered its `AUTH` (run as the `default` user if that is refused).
   * The reader, a duplicate, is not exposed: the store names it with the client's
   * `connectionName` itself, and holds its commands until its `AUTH` is answered.
   *
   * @default undefined (the store connects to `url` itself and closes it with the hub)
   */
  client?: Redis | undefined;
  /**
   * The stream key. Every instance of one app uses the same key.
   * @default 'keel:events'
   */
  stream?: string | undefined;
  /**
   * Entries the stream keeps (`XADD MAXLEN ~`: Redis trims whole nodes, so a few more stay).
   * A client further behind than this gets `keel:reset`.
   * @default 10000
   */
  maxLen?: number | undefined;
  /**
   * Recent events each instance keeps in memory, so a reconnect a few events behind is replayed
   * without a round trip to Redis.
   * @default 100
   */
  bufferSize?: number | undefined;
  /**
   * The most bytes of those recent events an instance keeps (each counted as its id, name and
   * data lengths plus 21): past it the oldest go, however few, so a few huge events cannot make
   * it hold `bufferSize` times their size. A reconnect from before them reads the stream.
   * @default 16777216 (16 MiB)
   */
  bufferBytes?: number | undefined;
  /**
   * How long a publish or replay waits for Redis to answer before it fails, in ms: a Redis that
   * hangs (paused, or a network path that drops packets without a reset) makes a publish reject
   * with `HubPublishError` instead of leaving it, and its request, pending for ever. Applies to
   * the connection the store makes itself (configure a `client` you pass in yourself). Also how
   * long a replay waits for that connection (or `client`) to reconnect when the reader is back.
   * @default 5000
   */
  commandTimeout?: number | undefined;
  /**
   * Backoff after a failed read, doubling from `initialDelay` to `maxDelay` ms; the connections
   * reconnect on the same schedule.
   * @default { initialDelay: 50, maxDelay: 2000 }
   */
  reconnect?:
    | {
        /**
         * The first wait after a failed read, in ms.
         * @default 50
         */
        initialDelay?: number | undefined;
        /**
         * The longest wait, in ms (at least `initialDelay`).
         * @default 2000
         */
        maxDelay?: number | undefined;
      }
    | undefined;
  /**
   * Errors of the background reader (Redis unreachable, a failed resync). Publishes report their
   * own errors by rejecting. What it throws is reported with `process.emitWarning`. A refusal
   * retrying cannot fix that comes after open (a rotated password, a narrowed ACL), or a Redis
   * Cluster down at open (`CLUSTERDOWN`, `TRYAGAIN`: `hub.ready` waits for it), is given once,
   * as a `RedisStoreError` naming what to change, not at every retry. An outage is told by its
   * connection's error, not by the reads it cuts; one with no such error (Redis closed the
   * connection and was back before a reconnect failed) by the first read it cut, once the reader
   * reads again.
   *
   * @default a process warning for each outage, naming the server (not its password) and the
   * connection's error, one for each such refusal, and one when the reader reads again
   */
  onError?: ((error: unknown) => void) | undefined;
  /**
   * The timers of the store's own waits: the backoff between failed reads (and attempts to
   * open), the retries of waking its reader. ioredis's reconnects keep their own timers. Tests
   * pass a manual clock; the same shape as `createApp({ clock })`.
   * @default the system clock
   */
  clock?: Clock | undefined;
}

/**
 * A connection's refusals in a row that retrying cannot fix (see `permanentFailure`), since it
 * last worked: its reconnects back off by them.
 */
interface Refusals {
  count: number;
  /** The last one (Redis's error). */
  last?: unknown;
  /**
   * Redis's messages of this connection's refusals after open, reported (by it or the other
   * connection) once until it works again: a few, one per refused command at most (`CLUSTER`
   * for every cluster answer). Per
   * connection: the other one reading or publishing fixes nothing here.
   */
  told: Set<string>;
}

/** A Redis run (its `run_id`) and an id of the stream that goes with it. */
interface RunAt {
  run: string;
  head: string;
}

/** An entry's fields: `e` event name, `d` data, `t` topic (absent for a broadcast). */
type Fields = string[];
type Entry = [id: string, fields: Fields];

const RESET: ReplayResult = Object.freeze({ kind: 'reset' });
const STREAM_ID = /^(\d{1,15})-(\d{1,15})$/;
/** The largest sequence STREAM_ID accepts (15 digits); no real entry has one that high. */
const MAX_SEQ = '999999999999999';
/** How long `close()` waits for Redis to answer QUIT (at most `commandTimeout`), in ms. */
const QUIT_MS = 1000;

/**
 * Closes `conn` and destroys its socket at once: ioredis only ends it (a FIN) and destroys it
 * after its `disconnectTimeout` (2 s), so a Redis that does not answer (paused) held it open.
 */
function hangUp(conn: Redis): void {
  conn.disconnect();
  // `stream` is undefined until it first connects.
  (conn.stream as Redis['stream'] | undefined)?.destroy();
}

/**
 * Entries fetched per XREAD / XRANGE call. By count only: Redis bounds those replies by COUNT
 * alone (no byte limit), and the gap checks (`gapCheck`, `firstPage`, `msRead`) rely on one
 * fixed page size, so a page of big events is as big as 512 of them.
 */
const PAGE = 512;
/** Characters of event data the reader hands the hub in one event-loop turn (see readLoop). */
const SLICE_CHARS = 256 * 1024;
/** How long one XREAD blocks before it is issued again. */
const BLOCK_MS = 5000;
/**
 * The oldest entries read, when an instance's last entry is lost, to tell an older snapshot (real
 * entries older than it survive) from a stream emptied and marked by another instance (a few
 * markers only): a full page of markers counts as the former (a reset more, never a gap).
 */
const OLDER = 16;
/** Empty stream: XREAD from here gets every entry. */
const START = '0-0';
/**
 * The field of a loss marker entry (`k <id>`): an instance saw entries lost that other instances
 * may not notice (an older snapshot kept their last entry), and reset its clients at `<id>`.
 * Every instance that reads it resets its own clients; a replay across it from an older id is a
 * reset. Never delivered as an event.
 */
const LOSS = 'k';
/**
 * The field of a restart marker (`k '' r <run_id> s <since>`): Redis restarted (a new `run_id`)
 * without a durable AOF, so entries after its last save may be lost, and any instance connected
 * across the restart appends one (not only one that lost its own last entry). Its loss head is
 * the id just before the marker. Instances reset their clients at the first marker of a run,
 * once. `since` (absent in older markers) is an id at or before the restart: every
 * marker of the run is after it, so the first one is found by reading from there.
 */
const RUN = 'r';
const SINCE = 's';
/**
 * The field a loss marker written when ids went backwards carries (`k <head> b 1`): its id was
 * chosen (just after the old ids), not given by Redis in order, so an id just before it is no
 * position a client could resume from: the entries after the flush lie below it.
 */
const BACK = 'b';
/**
 * The field a loss marker of one entry gone carries (`k <id> g 1`, see `goneItself`): `<id>`
 * alone is lost, so an instance whose clients were delivered it live is not reset by it.
 */
const GONE = 'g';

/** Whether `fields` are a restart marker's, of `run` when given. */
function isRunMarker(fields: Fields, run?: string): boolean {
  return fields[0] === LOSS && fields[2] === RUN && (run === undefined || fields[3] === run);
}

/** Whether two entries' fields are the same. */
function sameFields(a: Fields, b: Fields): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/**
 * Whether two stream ids share their millisecond part: compared in place, as the reader notes
 * every event it reads (two slices per event for nothing).
 */
function sameMs(a: string, b: string): boolean {
  const dash = a.indexOf('-');
  if (b.charCodeAt(dash) !== 45) return false; // '-'
  for (let i = 0; i < dash; i++) if (a.charCodeAt(i) !== b.charCodeAt(i)) return false;
  return true;
}

/** -1, 0 or 1 for two valid stream ids. */
function compareIds(a: string, b: string): number {
  const ma = STREAM_ID.exec(a)!;
  const mb = STREAM_ID.exec(b)!;
  return Number(ma[1]) - Number(mb[1]) || Number(ma[2]) - Number(mb[2]);
}

/**
 * `compareIds` for the instance's ring: NaN for an id STREAM_ID does not take, be it the
 * client's or an entry's (one written past the hub with a longer number), so the lookup misses
 * and the replay reads the stream instead of throwing.
 */
function ringOrder(id: string, held: string): number {
  return STREAM_ID.test(id) && STREAM_ID.test(held) ? compareIds(id, held) : Number.NaN;
}

/**
 * An id just before `id` that no entry can have: the reset id when entries before `id` were
 * lost, so a client holding it was reset (and one holding an older id is reset again).
 */
function idBefore(id: string): string {
  const [, ms, seq] = STREAM_ID.exec(id)!;
  if (seq !== '0') return `${ms}-${Number(seq) - 1}`;
  return `${Number(ms) - 1}-${MAX_SEQ}`;
}

/** An id just after `id` (the next sequence number of its millisecond; `idBefore`'s inverse). */
function idAfter(id: string): string {
  const [, ms, seq] = STREAM_ID.exec(id)!;
  return seq === MAX_SEQ ? `${Number(ms) + 1}-0` : `${ms}-${Number(seq) + 1}`;
}

/** A number field of an `XINFO STREAM` reply (a flat list of names and values), if it has one. */
function infoNumber(info: unknown[], name: string): number | undefined {
  for (let i = 0; i + 1 < info.length; i += 2) {
    if (info[i] === name)
      return typeof info[i + 1] === 'number' ? (info[i + 1] as number) : undefined;
  }
  return undefined;
}

/**
 * Whether entries were removed from a stream before a reader that has read nothing of it since
 * it was empty read its first entry: `info` is the stream's `XINFO STREAM`, taken with that read
 * (one transaction); `addedWhenEmpty` its `entries-added` when it was empty. Redis 7 counts what
 * was ever added: removed ones (added minus length) beyond those removed before are entries
 * added since, never read. Older Redis does not count: a stream at `maxLen` may have been
 * trimmed, so it is taken as a loss (a reset more than needed, never a gap in silence).
 */
export function trimmedBeforeFirstRead(
  info: unknown[],
  addedWhenEmpty: number | undefined,
  maxLen: number,
): boolean {
  const length = infoNumber(info, 'length') ?? 0;
  const added = infoNumber(info, 'entries-added');
  if (added !== undefined && addedWhenEmpty !== undefined) return added - length > addedWhenEmpty;
  return length >= maxLen;
}

/**
 * Where `conn` connects, for messages: `redis://user:***@host:port/db` (the password never shown),
 * or the socket path.
 */
function redisAddress(conn: Redis): string {
  const { host, port, path, db, username, password, tls } = conn.options;
  // A path made of a mistyped URL (`redis:/u:pw@host` is read as the path `/u:pw@host`).
  if (path) return hidePasswords(path);
  const user = username || password ? `${username ?? ''}${password ? ':***' : ''}@` : '';
  return `${tls ? 'rediss' : 'redis'}://${user}${host}:${port}${db ? `/${db}` : ''}`;
}

/** A field of an `INFO` reply (`name:value` lines). */
function infoField(info: string, name: string): string | undefined {
  const at = info.indexOf(`\n${name}:`);
  if (at === -1) return undefined;
  const from = at + name.length + 2;
  const end = info.indexOf('\n', from);
  return info.slice(from, end === -1 ? undefined : end).trim();
}

/** The loss head of a marker entry `id` (see LOSS, RUN), or undefined for a malformed one. */
function lossHeadOf(id: string, fields: Fields): string | undefined {
  if (isRunMarker(fields)) return idBefore(id);
  const head = fields[1];
  return head !== undefined && STREAM_ID.test(head) ? head : undefined;
}

function toEvent(id: string, fields: Fields): StoredEvent {
  let event = 'message';
  let data = '';
  let topic: string | undefined;
  for (let i = 0; i + 1 < fields.length; i += 2) {
    const value = fields[i + 1]!;
    switch (fields[i]) {
      case 'e':
        event = value;
        break;
      case 'd':
        data = value;
        break;
      case 't':
        topic = value;
        break;
    }
  }
  return { id, event, data, topic };
}

const REDIS_STREAMS_KEYS = keysOf<RedisStreamsOptions>({
  url: 0,
  client: 0,
  stream: 0,
  maxLen: 0,
  bufferSize: 0,
  bufferBytes: 0,
  commandTimeout: 0,
  reconnect: 0,
  onError: 0,
  clock: 0,
});
const RECONNECT_KEYS = keysOf<NonNullable<RedisStreamsOptions['reconnect']>>({
  initialDelay: 0,
  maxDelay: 0,
});

/**
 * A hub store on a Redis stream, shared by every instance of an app:
 *
 * - `publish` is one `XADD <stream> MAXLEN ~ <maxLen> *`; its id (the stream id, e.g.
 *   `1732612345678-0`) is the SSE id, global and ordered across instances.
 * - Each instance reads the stream with `XREAD BLOCK` on its own connection and delivers every
 *   entry, in stream order, to its own clients; so does the instance that published it.
 * - A client may reconnect to any instance with `Last-Event-ID`: it gets exactly the entries
 *   after it (from the instance's recent events, else `XRANGE`), or `keel:reset` when that id
 *   is no longer in the stream (trimmed, not an id of it) or from before Redis lost entries
 *   (an instance that sees a loss another may not notice appends a marker entry, never
 *   delivered: every instance that reads it resets its clients, a replay across it resets).
 * - Redis down: publishes reject at once (`HubPublishError`), clients stay connected, the reader
 *   retries with backoff and resumes after the last entry it delivered. If that entry is gone
 *   when Redis is back (it restarted without persistence, or trimmed past it), its clients get
 *   `keel:reset`. A restart (a new `run_id`) of a Redis that does not vouch for its data (AOF
 *   with `appendfsync always`) is taken as a loss by every instance connected across it, even
 *   one whose last entry survived: it resets its clients and announces it with a marker.
 *
 * - An instance that has read nothing since the stream was empty (it opened on an empty stream,
 *   or Redis lost it) and whose first read brings a full page checks `XINFO STREAM` with it:
 *   entries trimmed before that read are a `keel:reset` too. Exact on Redis 7 or later
 *   (`entries-added`); on Redis 5 and 6 a stream at `maxLen` counts as trimmed.
 *
 * ioredis (an optional peer dependency of `@keel/server`) must be installed.
 *
 * @example
 * import { redisStreams } from '@keel/server/redis';
 * const hub = createEventHub({ store: redisStreams({ url: process.env.REDIS_URL }) });
 */
export function redisStreams(options: RedisStreamsOptions = {}): HubStore {
  checkOptions('redisStreams options', options, REDIS_STREAMS_KEYS);
  const key = options.stream ?? 'keel:events';
  if (typeof key !== 'string') throw typeError('stream', 'a non-empty string', key);
  if (key === '') throw rangeError('stream', 'a non-empty string', key);
  const maxLen = integer('maxLen', options.maxLen, 10_000, 1, undefined, 'entries');
  const bufferSize = integer('bufferSize', options.bufferSize, 100, 0, MAX_BUFFER_SIZE, 'events');
  const bufferBytes = bufferBytesOption(options.bufferBytes);
  const commandTimeout = integer(
    'commandTimeout',
    options.commandTimeout,
    5000,
    1,
    MAX_TIMER_MS,
    'ms',
  );
  const reconnect = options.reconnect === undefined ? {} : options.reconnect;
  checkOptions('reconnect', reconnect, RECONNECT_KEYS);
  const initialDelay = integer(
    'reconnect.initialDelay',
    reconnect.initialDelay,
    50,
    1,
    MAX_TIMER_MS,
    'ms',
  );
  const maxDelay = integer('reconnect.maxDelay', reconnect.maxDelay, 2000, 1, MAX_TIMER_MS, 'ms');
  if (maxDelay < initialDelay) {
    throw rangeError(
      'reconnect.maxDelay',
      `at least \`reconnect.initialDelay\` (${initialDelay} ms)`,
      maxDelay,
    );
  }
  if (options.url !== undefined) {
    if (typeof options.url !== 'string') {
      throw typeError('url', 'a Redis URL string (redis://host:port/db)', options.url);
    }
    // Empty (`REDIS_URL=` in a shell) ioredis reads as 127.0.0.1:6379, another scheme (http://)
    // and a scheme with one slash (`redis:/u:pw@host`) as a socket path, and one with no scheme
    // (`//h:1/2`) as a host whose db is a socket path on older ioredis: all fail later, far
    // from the option. A host:port (`redis:6379` too) or a path is what ioredis takes besides.
    const head = /^(?:([a-z][a-z\d+.-]*):)?(\/*)/i.exec(options.url)!;
    const scheme = head[1]?.toLowerCase();
    const slashes = head[2]!.length;
    if (
      options.url.trim() === '' ||
      (scheme === undefined
        ? slashes >= 2
        : slashes === 1 || (slashes > 1 && scheme !== 'redis' && scheme !== 'rediss'))
    ) {
      throw rangeError('url', 'a redis:// or rediss:// URL', options.url);
    }
    // ioredis reads `/abc` as db NaN and SELECTs it on every connect, a refusal nothing catches
    // (the process ends), and `/1.5` as db 1. A socket path (`/tmp/r.sock`) has no db part but
    // its `?db=`; of repeated `db`s ioredis takes the last: every one is checked.
    const [, path, query] = (
      slashes === 1
        ? /^()[^?#]*(?:\?([^#]*))?/.exec(options.url)
        : /^(?:[a-z][a-z\d+.-]*:\/\/)?[^/?#]*(?:\/([^?#]*))?(?:\?([^#]*))?/i.exec(options.url)
    )!;
    const dbs = new URLSearchParams(query).getAll('db');
    if ((path && !/^\d+$/.test(path)) || dbs.some((db) => !/^\d+$/.test(db))) {
      throw rangeError('url', 'a Redis URL whose db (its path, or ?db=) is a number', options.url);
    }
  }
  if (options.onError !== undefined) checkFunction('onError', options.onError);
  const clock = checkClock(options.clock);
  if (options.client !== undefined && !(options.client instanceof Redis)) {
    throw typeError('client', 'an ioredis Redis client', options.client);
  }
  /** A first read at least this long is checked for a gap (see firstPage). */
  const gapCheck = Math.min(PAGE, maxLen);
  const backoff = (attempt: number): number =>
    Math.min(maxDelay, initialDelay * 2 ** Math.min(attempt, 20));
  /** The reader's and the publishing connection's refusals (see `Refusals`). */
  const readerRefusals: Refusals = { count: 0, told: new Set() };
  const commandRefusals: Refusals = { count: 0, told: new Set() };

  // Commands fail at once while disconnected (no offline queue, no resend of a command whose
  // answer was lost): a publish must reject, not wait or be sent twice.
  // No ready check: ioredis would hold a connection to a Redis still loading its data in a
  // silent 'connect' state (commands refused as "not writeable", no event); without it Redis
  // answers `-LOADING` itself, which the reader retries and reports, and a publish names.
  // No CLIENT SETINFO / SETNAME on connect: without the ready check, ioredis 5 takes the
  // connection as ready once those settle, even when it was cut meanwhile (their replies never
  // came); it is then "ready" on a closed socket and its scheduled reconnect never happens
  // (redis/ioredis#2099). Without them it is ready at once, before a close can be seen.
  // So ioredis takes a connection as ready once its AUTH is written: `holdUntilAnswered` holds
  // the store's commands until Redis answered it (refused, one would run as the `default` user).
  // ioredis counts reconnects from its last 'ready', which (without the ready check) comes before
  // AUTH is answered: a refused AUTH would be retried at `initialDelay` for ever. Refusals in a
  // row count on, so those retries back off to `maxDelay` too.
  const own = (refusals: Refusals): Partial<RedisOptions> => ({
    enableReadyCheck: false,
    disableClientInfo: true,
    connectionName: undefined,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    autoResendUnfulfilledCommands: false,
    retryStrategy: (times: number) => backoff(times - 1 + refusals.count),
    lazyConnect: true,
  });
  const shared = options.client;
  const commands =
    shared ??
    new Redis(options.url ?? 'redis://127.0.0.1:6379', {
      ...own(commandRefusals),
      commandTimeout,
    });
  // A blocking XREAD holds its connection: the reader gets its own. Its commands time out, so a
  // connection that died silently is noticed.
  const reader = commands.duplicate({ ...own(readerRefusals), commandTimeout: BLOCK_MS + 5000 });
  /**
   * A connection's AUTH was answered OK: its next outage's reconnects start again from
   * `initialDelay`, and its past refusal is no longer why a command fails (reporting the same
   * refusal again waits for a read or publish that works: `worksAgain`).
   */
  const connected = (refusals: Refusals) => (): void => {
    refusals.count = 0;
    refusals.last = undefined;
  };
  // A shared client's own commands are its owner's (ioredis's ready check holds them).
  const commandsGate =
    shared === undefined ? holdUntilAnswered(commands, connected(commandRefusals)) : undefined;
  const readerAnswered = connected(readerRefusals);
  // A reader waiting out its backoff (its reads failed while Redis was away) reads at once: its
  // connection is back, and ioredis's reconnects run on their own schedule, not in step.
  const readerGate = holdUntilAnswered(reader, () => {
    readerAnswered();
    wake?.();
  });
  /**
   * The reader's connection name, set by the reader itself (see `own`): a shared client's, else
   * one naming the stream, so that `wakeReaders` wakes only readers of it, not every unnamed
   * XREAD of the user (another app's). No space or control character (Redis refuses them in a
   * name; CLIENT LIST separates fields by spaces): those become `?`, at worst waking a reader more.
   */
  const readerName = shared?.options.connectionName || `keel:${key.replace(/[^!-~]/g, '?')}`;

  let sink: StoreSink | null = null;
  let closed = false;
  /** The close under way: a second `close()` resolves with it, once the connections are down. */
  let releasing: Promise<void> | null = null;
  /** The last entry this instance delivered: XREAD goes on after it. */
  let last = START;
  /**
   * The last entry the reader read (or the newest at open): `last` is an entry while it equals
   * this, else the id of a reset, which no entry has (see `lost`). START once its loss is told.
   */
  let lastRead = START;
  /**
   * The entries read in the millisecond of `lastRead`, as read, up to it (the last PAGE of them;
   * empty when not known): while `last` is `lastRead`, the stream must still hold exactly these
   * there. Another entry at one of their ids (other fields), or at an id it did not read, is a
   * new stream whose ids started again (a DEL, then `XADD *` in the same millisecond); one read
   * and deleted since (XDEL) is no entry missed (see `reused`). Checking
   * `lastRead` alone misses a reused last id whose fields happen to be the same (the same
   * invalidation published again) while the entries below it are others.
   */
  let msRead: Entry[] = [];
  /** The id of the last loss reset known here: a replay from an older id is a reset. */
  let floor = START;
  /** The lowest `after` and highest `upTo` of the stream replays (XRANGE) since (see `deliveredLive`). */
  let crossedFrom: string | null = null;
  let crossedTo: string | null = null;
  /** The id this instance last reset its clients at (see `resetClients`). */
  let resetAt = START;
  /**
   * The stream's `entries-added` (Redis >= 7) when this instance last found it empty (0 when it
   * did not exist), undefined on older Redis: see `firstPage`.
   */
  let addedWhenEmpty: number | undefined;
  // Entries are pushed as XREAD reads them: in stream order (a reset clears the ring).
  const ring = new EventRing(bufferSize, START, ringOrder, bufferBytes);
  /** The `run_id` of the Redis process this instance last talked to (a restart changes it). */
  let runId: string | null = null;
  /**
   * `handled`: the restart this instance reset its clients for, and the id it reset at (or the
   * first marker's loss head, when it opened after that marker). `firstOfRun`: a run and the
   * loss head of its first restart marker (see firstMarker).
   */
  let handled: RunAt | null = null;
  let firstOfRun: RunAt | null = null;
  /**
   * The reader connection's `CLIENT ID` (undefined until known on this connection, null when
   * `CLIENT` is refused): an own publish that finds ids gone backwards wakes its XREAD with it.
   */
  let readerId: number | null | undefined;
  /** A marker's fields that Redis refused for memory (OOM): appended once it takes writes. */
  let unsent: string[] | null = null;
  /** An own publish's id at or below `last` (ids went backwards), for the reader to reset at. */
  let behind: string | null = null;
  /** `last` when `behind` was noted: lower by the time it is handled, a reset since covers it. */
  let behindAt = START;
  let unblockTimer: TimerHandle | null = null;
  /** Whether the current outage was reported by the default warning (so its end is too). */
  let warned = false;
  /** Ends the current wait (`sleep`) now, its timer cleared. */
  let wake: (() => void) | null = null;
  /** Ends the replays' waits for the publishing connection (see `commandsReady`), for `close()`. */
  const commandWaits = new Set<() => void>();
  const where = redisAddress(reader);

  const userOnError = options.onError;
  /** Calls onError; what it throws is a process warning (thrown here it would stop the reader). */
  const tell = (error: unknown): void => {
    try {
      userOnError!(error);
    } catch (err) {
      process.emitWarning(err instanceof Error ? err : String(err));
    }
  };
  const warnOnce = (cause: unknown): void => {
    if (warned) return;
    warned = true;
    process.emitWarning(
      `keel: the Redis event store cannot read ${key} from ${where} (${errorText(cause)}); retrying`,
    );
  };
  /**
   * Why the publishing connection is down: its last connection error (ECONNREFUSED, ...), null
   * once it is ready. A shared client's errors are its owner's to listen to: the reader's (a
   * duplicate, to the same server) stand in for them, and its `LOADING`.
   */
  let down: unknown = null;
  /** Whether the current load of Redis's dataset was reported (once, like an outage). */
  let warnedLoading = false;
  /**
   * The first read the current outage cut, until something explains that outage: the reader
   * connection's own error (reported by its listener) or its refusal. One that nothing explained
   * (Redis closed the connection cleanly and was back before a reconnect failed: ioredis then
   * emits no error) is reported when the reader reads again, so an outage is never silent.
   */
  let cut: unknown = null;
  let cutExplained = false;
  const report = (error: unknown): void => {
    if (closed || refusal(readerRefusals, error)) return;
    // A read cut by a lost or refused connection (no answer of Redis: ioredis's "Stream isn't
    // writeable" for a read sent while it reconnects): the connection's own error says why (its
    // refusal, ECONNREFUSED, ...), reported by its listener; the reads it cuts are not, one by one.
    if (!(error instanceof ReplyError) && (readerRefusals.count > 0 || reader.status !== 'ready')) {
      cut ??= error;
      return;
    }
    // An app's client keeps ioredis's ready check: during a load it waits in 'connect' and
    // refuses commands as "not writeable", with no error of its own. The reader's `LOADING`
    // (its duplicate has no ready check) is why; a publish names it (see `failed`).
    if (shared !== undefined && isLoading(error)) down = error;
    if (userOnError) tell(error);
    else if (isLoading(error)) {
      if (warnedLoading) return;
      warnedLoading = warned = true;
      process.emitWarning(
        `keel: Redis at ${where} is loading its dataset (LOADING); the event store retries reading ${key}, and refuses publishes until it is loaded`,
      );
    }
    // A read cut by a lost connection fails with ioredis's MaxRetriesPerRequestError or "Stream
    // isn't writeable": the connection's own error (ECONNREFUSED, ...) says why, when it comes.
    else if (reader.status === 'ready') warnOnce(error);
  };
  /** The reader read again: the end of an outage the warning reported. */
  const recovered = (): void => {
    const unexplained = cutExplained ? null : cut;
    cut = null;
    cutExplained = false;
    if (unexplained !== null && userOnError && !closed) tell(unexplained);
    if (readerRefusals.count > 0 || readerRefusals.told.size > 0) worksAgain(readerRefusals);
    if (shared !== undefined && isLoading(down)) down = null;
    if (!warned) return;
    warned = warnedLoading = false;
    if (!closed)
      process.emitWarning(`keel: the Redis event store reads ${key} from ${where} again`);
  };
  /** The refusal that fails the open (see `refusal`), once there is one. */
  let refused: unknown = null;
  /** Until `open()` is done: what a refusal does (see `refusal`). */
  let opening = true;
  /**
   * An error retrying cannot fix (see `permanentFailure`), of `refusals`' connection: true (it is
   * handled here); false for any other. While the store opens it fails the open: noted in
   * `refused` (and not reported: `hub.ready` rejects with it), and the open's
   * backoff ends (ioredis reports a refused AUTH only to the connection's listener, then
   * reconnects and fails the same way for ever). After open (a password rotated, an ACL
   * changed, `requirepass` set) it is retried all the same, since it can be fixed without
   * restarting the app, but reported here once, as a RedisStoreError naming what to change,
   * until that connection works again: true then.
   */
  const refusal = (refusals: Refusals, error: unknown): boolean => {
    const code = permanentFailure(error);
    if (code === undefined) return false;
    // A cluster down for now (see `clusterDown`) is waited for at open: reported once, as after.
    if (opening && !clusterDown(error)) {
      // `hub.ready` rejects with it, typed: not given to onError as well (each connection's
      // attempt before the open loop sees it would be one more).
      refused = error;
      wake?.();
      return true;
    }
    // One refusal comes twice for the reader (its 'error' listener, and the read it fails):
    // counted once, or its backoff would reach `maxDelay` twice as fast.
    if (error === refusals.last) return true;
    refusals.count++;
    refusals.last = error;
    const text = errorText(error);
    // A slot moving (or a failover) gives several cluster answers in turn (ASK, MOVED, each
    // naming a node; CLUSTERDOWN): one report for them, until the store works again.
    const seen = code === 'CLUSTER' ? code : text;
    // The reader's outage is reported by the warning (its own, or the other connection's for
    // the same refusal): its end is too.
    if (refusals === readerRefusals && !userOnError) warned = true;
    // Told once for both connections (refused alike after a rotation); each keeps it until it
    // works again, so the other one reading or publishing does not make it told again.
    const told = readerRefusals.told.has(seen) || commandRefusals.told.has(seen);
    refusals.told.add(seen);
    if (told) return true;
    const tellRefusal = (): void => {
      if (closed) return;
      const failure = new RedisStoreError(
        code,
        `keel: the Redis event store cannot use ${key} on ${where} (${text}): ${remedy(code, key, dbFacts(error))}; retrying`,
        { cause: error },
      );
      // Not `warned` for the publishing connection's: the reader may read on, no "reads again".
      if (userOnError) tell(failure);
      else process.emitWarning(failure.message);
    };
    // Its message names the server's `databases`, asked for first (a cluster node: db 0 only).
    if (code === 'DB_INDEX' && !inClusterMode(error)) void askDatabases().then(tellRefusal);
    else tellRefusal();
    return true;
  };
  /** The server's `databases` (for a refused SELECT's message), once known. */
  let databases: number | undefined;
  let asking: Promise<void> | null = null;
  /** Its connection, closed with the store. */
  let probe: Redis | null = null;
  const dbFacts = (cause: unknown) => ({
    index: reader.options.db ?? 0,
    databases,
    cluster: inClusterMode(cause),
    user: reader.options.username,
    down: clusterDown(cause),
  });
  /**
   * Asks the server its `databases` (`CONFIG GET`, once) on a connection of its own in db 0:
   * the store's are refused their SELECT. Left undefined when refused (an ACL without `CONFIG`).
   */
  const askDatabases = (): Promise<void> => {
    if (databases !== undefined) return Promise.resolve();
    asking ??= (async () => {
      const conn = reader.duplicate({
        db: 0,
        lazyConnect: true,
        retryStrategy: () => null,
        connectTimeout: BLOCK_MS,
        commandTimeout: BLOCK_MS,
      });
      conn.on('error', () => {});
      probe = conn;
      // Nothing before its AUTH is answered, as on the store's own connections.
      const gate = holdUntilAnswered(conn, () => {});
      try {
        await conn.connect();
        await gate.held();
        const reply = (await conn.config('GET', 'databases')) as unknown[];
        const limit = Number(reply[1]);
        if (Number.isInteger(limit) && limit > 0) databases = limit;
      } catch {
        // Refused or down: the message says `databases` without its value.
      } finally {
        conn.disconnect();
        probe = null;
        asking = null;
      }
    })();
    return asking;
  };
  /** A refused connection works again: a refusal of it after this one is reported again. */
  const worksAgain = (refusals: Refusals): void => {
    refusals.count = 0;
    refusals.last = undefined;
    refusals.told.clear();
  };
  // ioredis reports each failed connect here; the default warning is given once per outage.
  const connectionError =
    (refusals: Refusals) =>
    (error: unknown): void => {
      // Any error of the reader's connection (told now, or a refusal told once) explains the
      // reads its outage cuts.
      if (refusals === readerRefusals) cutExplained = true;
      if (closed || refusal(refusals, error)) return;
      if (userOnError) tell(error);
      else if (refusals === readerRefusals) warnOnce(error);
    };
  reader.on('error', connectionError(readerRefusals));
  if (shared === undefined) commands.on('error', connectionError(commandRefusals));
  const publisher = shared === undefined ? commands : reader;
  publisher.on('error', (error: unknown) => {
    down = error;
  });
  publisher.on('ready', () => {
    down = null;
  });
  /**
   * A failed command of a publish or replay: ioredis says only "Stream isn't writeable and
   * enableOfflineQueue options is false" during an outage; this names the server (password
   * hidden) and the stream, with the connection's own error as cause when it is down.
   */
  const failed =
    (what: string) =>
    (error: unknown): never => {
      // Its connection's AUTH refused since it was last answered OK: that is why it is down.
      const refusal = commandRefusals.last;
      const cause =
        refusal !== undefined && !(error instanceof ReplyError)
          ? refusal
          : commands.status !== 'ready' && down !== null
            ? down
            : error;
      const message = `keel: the Redis event store could not ${what} ${key} on ${where} (${errorText(cause)})`;
      const code = permanentFailure(cause);
      // One retrying cannot fix (a password rotated, an ACL changed): typed, with what to change.
      throw code === undefined
        ? new Error(message, { cause })
        : new RedisStoreError(code, `${message}: ${remedy(code, key, dbFacts(cause))}`, { cause });
    };
  // A new connection has a new id.
  reader.on('close', () => {
    readerId = undefined;
  });
  /**
   * Wakes the reader's blocked XREAD (it returns as if it waited for nothing) to handle
   * `behind`. Sent on the other connection; if the reader was not blocked at that instant (its
   * XREAD still on the way), tried again a few times.
   */
  const unblock = (tries: number): void => {
    unblockTimer = null;
    if (closed || behind === null || typeof readerId !== 'number') return;
    (commands.client('UNBLOCK', readerId) as Promise<number>).then(
      (woken) => {
        if (woken === 0 && tries > 1 && !closed) {
          unblockTimer = clock.setTimeout(() => unblock(tries - 1), 10);
        }
      },
      () => {}, // refused or down: the reader notices after its idle XREAD (BLOCK_MS)
    );
  };
  /**
   * An own entry at or below `from`, the last entry the reader had delivered when the publish was
   * sent: that one was gone by then (an `XADD *` id is above every id the stream ever held), the
   * stream was deleted and refilled by a Redis whose clock is behind. The reader, blocked after
   * `last`, would wait for the new ids to pass it; it is woken now (see `publishedBehind`).
   * (`last` itself may be past `id` with no loss: the reader can deliver it, and later entries,
   * before the reply arrives. Below `from`, the reader found ids gone backwards meanwhile and
   * reset its clients at `last`: it reads `id` after that, or the reset covered it.)
   */
  const appended = (id: string, from: string): string => {
    if (commandRefusals.count > 0 || commandRefusals.told.size > 0) worksAgain(commandRefusals);
    if (
      from !== START &&
      behind === null &&
      compareIds(id, from) <= 0 &&
      compareIds(last, from) >= 0
    ) {
      behind = id;
      behindAt = last;
      unblock(5);
    }
    return id;
  };
  // Made once: a publish adds one closure only, for the reader's position when it was sent.
  const appendFailed = failed('append to');
  const replayFailed = failed('replay from');

  function sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = (): void => {
        clock.clearTimeout(timer);
        if (wake === done) wake = null;
        resolve();
      };
      const timer = clock.setTimeout(done, ms);
      wake = done;
    });
  }

  /**
   * Resolves when a replay's commands may be sent: at once when the publishing connection is up
   * (then once its AUTH is answered, see `commandsGate`) or gone for good. While it reconnects
   * and the reader is back (Redis answers: it is back soon), once it is back, or after
   * `commandTimeout` (on the store's clock), when the replay fails as it would have at once.
   * With the reader down too (an outage) it fails at once, its client sent to retry later; so
   * does a publish, always.
   */
  function commandsReady(): Promise<void> | undefined {
    const status = commands.status;
    if (
      closed ||
      reader.status !== 'ready' ||
      status === 'ready' ||
      status === 'connect' ||
      status === 'end'
    ) {
      return commandsGate?.held();
    }
    return new Promise<void>((resolve) => {
      const done = (): void => {
        clock.clearTimeout(timer);
        commands.off('ready', done);
        commands.off('end', done);
        commandWaits.delete(done);
        resolve();
      };
      const timer = clock.setTimeout(done, commandTimeout);
      commands.on('ready', done);
      commands.on('end', done);
      commandWaits.add(done);
    }).then(() => commandsGate?.held());
  }

  /** Connects `conn` if it never was, and waits for its AUTH's answer (see `own`). */
  async function connect(conn: Redis): Promise<void> {
    if (conn.status === 'wait') await conn.connect();
    await (conn === reader ? readerGate : commandsGate)?.held();
  }

  /**
   * `read`'s reply with the stream's `XINFO STREAM` in one transaction (nothing is added or
   * trimmed between them), or the error XINFO answered with (there is no stream).
   */
  async function withInfo(
    read: (tx: ChainableCommander) => ChainableCommander,
  ): Promise<{ reply: unknown; info: unknown[] | Error }> {
    let replies: [Error | null, unknown][];
    try {
      replies = (await read(reader.multi()).xinfo('STREAM', key).exec())!;
    } catch (error) {
      // Out of memory (`maxmemory`, `noeviction`), Redis refuses any command queued in a MULTI,
      // reads too: else an instance could not open until memory frees. Nothing can be added
      // then (XADD is refused too), so the two in a row see the same entries, unless a trim
      // comes between: that can only make a gap look larger (a reset more, never one less).
      // Else the reason of `EXECABORT` is what a queued command was refused for (NOPERM).
      if (!outOfMemory(error)) throw queuedErrors(error)?.[0] ?? error;
      replies = (await read(reader.pipeline()).xinfo('STREAM', key).exec())!;
    }
    const [readError, reply] = replies[0]!;
    if (readError) throw readError;
    const [infoError, info] = replies[1]!;
    return { reply, info: infoError ?? (info as unknown[]) };
  }

  /**
   * The newest entry's id, or START for an empty stream: then reading starts from the stream's
   * first entry, and `addedWhenEmpty` is noted (with it: nothing can be added between).
   */
  async function newestId(): Promise<string> {
    const { reply, info } = await withInfo((tx) => tx.xrevrange(key, '+', '-', 'COUNT', 1));
    const newest = reply as Entry[];
    if (newest.length > 0) return newest[0]![0];
    // With no entry, XINFO fails only when there is no stream: one made later counts from 0.
    addedWhenEmpty = info instanceof Error ? 0 : infoNumber(info, 'entries-added');
    return START;
  }

  /**
   * The server's `run_id`, and whether it vouches it kept every entry across a restart: an AOF
   * fsynced before each reply (`appendfsync always`), and not a replica promoted in place (its
   * data may lag its old master's). Anything else (RDB snapshots, `everysec`, no persistence,
   * CONFIG refused) may have lost entries. Durability is checked only for a restart: a `run_id`
   * other than `known`. Throws a `LOADING` error while Redis loads its data.
   */
  async function serverState(
    known: string | null,
  ): Promise<{ run: string; durable: boolean; since: string }> {
    let reply: string;
    try {
      reply = (await reader.info()) as string;
    } catch (error) {
      // A user refused INFO: no run id (restarts are then known by a lost entry only).
      if (error instanceof Error && error.message.startsWith('NOPERM')) {
        return { run: '', durable: false, since: '-' };
      }
      throw error;
    }
    const info = `\n${reply}`;
    if (infoField(info, 'loading') === '1') {
      throw new Error('LOADING Redis is loading the dataset in memory');
    }
    const run = infoField(info, 'run_id') ?? '';
    let durable = false;
    if (
      known !== null &&
      run !== known &&
      infoField(info, 'aof_enabled') === '1' &&
      (infoField(info, 'second_repl_offset') ?? '-1') === '-1'
    ) {
      const reply = await reader.config('GET', 'appendfsync').catch(() => null);
      durable = Array.isArray(reply) && reply[1] === 'always';
    }
    // When it started, in its clock (which gives `XADD *` ids): uptime is whole seconds, and a
    // second more is kept for the clock's steps. '-' (the stream's start) when not told.
    const now = Number(infoField(info, 'server_time_usec'));
    const up = Number(infoField(info, 'uptime_in_seconds'));
    const started = Math.floor(now / 1000) - (up + 2) * 1000;
    return { run, durable, since: started > 0 ? `${started}-0` : '-' };
  }

  /**
   * Redis restarted as `run` without vouching it kept every entry: entries after its last save
   * may be lost, also ones this instance never read (its reader was behind), so its own last
   * entry may well survive. Its clients are reset here, before anything not yet delivered: at
   * the id just before the first entry after `last`, or at the start of an empty stream. Unless
   * an instance already did, a restart marker is appended first, so that instances connected
   * across the restart but whose reader has not resynced yet, or started since, learn of it even
   * if this one dies (each instance connected across it announces it; one reset per run).
   */
  async function restarted(run: string, since: string): Promise<void> {
    const next = (await reader.xrange(
      key,
      last === START ? '-' : `(${last}`,
      '+',
      'COUNT',
      PAGE,
    )) as Entry[];
    let first = next[0]?.[0];
    const known = next.some(([, fields]) => isRunMarker(fields, run));
    let newest = START;
    if (!known && (first !== undefined || (newest = await newestId()) !== START)) {
      const id = await appendMarker([LOSS, '', RUN, run, SINCE, since]);
      // Entries published since the look above (`newest` may be one): the first of them is
      // next, else they would be skipped. Read after the marker, so none comes between.
      if (first === undefined) first = await firstFrom(reader, last === START ? '-' : `(${last}`);
      // The marker is next when it is lower: so it is when ids went backwards (the restored
      // stream's clock is behind this instance's last entry), which reading after `last` skips.
      if (id !== undefined && (first === undefined || compareIds(id, first) < 0)) first = id;
    }
    // No next entry and no marker (refused for memory): after the newest entry, which is at or
    // before `last` (the last one delivered, or older when ids went backwards).
    const head = first !== undefined ? idBefore(first) : newest;
    handled = { run, head };
    last = head;
    resetClients(head);
  }

  /**
   * Appends a marker entry and returns its id. Refused for memory (`maxmemory` with
   * `noeviction`), it is kept to append before a later read and undefined returned: this
   * instance's clients are reset and served the entries that survived meanwhile (as reads go on
   * when Redis is full), and the others learn of the loss once Redis takes writes again (no
   * entry can be published before then). Any other error is thrown (an outage: retried).
   */
  async function appendMarker(fields: string[]): Promise<string | undefined> {
    try {
      const id = (await reader.xadd(key, 'MAXLEN', '~', maxLen, '*', ...fields)) as string;
      if (unsent === fields) unsent = null;
      return id;
    } catch (error) {
      if (!(error instanceof Error && error.message.startsWith('OOM '))) throw error;
      if (unsent !== fields && userOnError) tell(error);
      unsent = fields;
      return undefined;
    }
  }

  /**
   * Every reset of this instance's clients (a loss, a restart, ids gone backwards): they get
   * `keel:reset` at `id`, the ring restarts there, and a replay from before `lossHead` is a reset
   * too (`floor`).
   */
  function resetClients(id: string, lossHead = id): void {
    floor = lossHead;
    resetAt = id;
    ring.clear(id);
    sink?.reset(id);
  }

  /** The id of the first entry at or after `start` (`(id` for after it), if any. */
  async function firstFrom(conn: Redis, start: string): Promise<string | undefined> {
    return ((await conn.xrange(key, start, '+', 'COUNT', 1)) as Entry[])[0]?.[0];
  }

  async function has(conn: Redis, id: string): Promise<boolean> {
    if (conn === commands) await commandsReady();
    return ((await conn.xrange(key, id, id)) as Entry[]).length > 0;
  }

  /**
   * The last delivered entry is gone (Redis restarted without its data or from an older
   * snapshot, trimmed past it, or the stream was deleted), so entries after it may be lost too.
   * The one handler of that, wherever it is found (a resync, a read's check). Resets this
   * instance's clients at an id after every id delivered so far and before every entry still to
   * deliver: just before `next` (the first entry held after the lost one), or, with none, just
   * after the lost one. Reading goes on from there (from the newest entry without `next`): what
   * was published meanwhile (perhaps by a faster instance) is still delivered. A client that
   * comes back with an id from before the reset is reset too (`floor`).
   *
   * With no `next` and the newest entry below the lost one, ids went backwards (the stream was
   * deleted or flushed, then refilled by a Redis whose clock is behind the old ids): XREAD after
   * `last` would skip every new entry until the clock passes it. The clients are reset at the
   * newest entry (an id a replay can start from), and reading goes on after it. With no entry
   * at all (deleted, nothing added since), a marker just after the lost one is written for the
   * same reason, and the clients are reset at it.
   */
  async function lost(next: string | undefined): Promise<void> {
    let head: string;
    let resume: string;
    if (next !== undefined && STREAM_ID.test(next)) {
      head = idBefore(next);
      // `next` directly follows `last`: nothing in between could exist, so this instance's
      // clients missed nothing. But when `last` is an entry read here (not a reset's id), that
      // entry itself is gone (an XDEL, then a publish in the same millisecond).
      if (head === last) {
        if (last === lastRead) await goneItself(last, next);
        return;
      }
      resume = head;
    } else {
      const newest = await newestId();
      if (newest !== START && newest !== last) {
        // Ids went backwards (see above). The other instances' readers, blocked after old ids
        // too, are woken (see `markAbove`).
        if (compareIds(newest, last) < 0) {
          const from = last;
          last = newest;
          resetClients(newest);
          await markAbove(from, idBefore((await firstFrom(reader, '-')) ?? newest));
          return;
        }
        // Entries came after the look that found none after `last` (another instance published
        // meanwhile): the first of them is `next`; reading from the newest would skip them.
        return lost(await firstFrom(reader, `(${last}`));
      }
      if (newest === START && last !== START) {
        // Empty (deleted or flushed, nothing added since): the others, blocked after old ids,
        // learn it only from an entry above theirs, and `XADD *` of a Redis whose clock is
        // behind gives lower ones. The marker just after `last` wakes them (`markAbove`) and
        // keeps later ids above the old ones. The clients are reset at it, the loss head is
        // `last` (so its own marker, read next, resets nobody here again), and reading goes on
        // from the stream's start, so an entry published meanwhile below it is delivered too.
        // Written only while the stream is still empty: another instance that found it so too,
        // after another last id, would write a marker of its own, and each instance would read
        // the other's as a second loss. One came first: this one is handled as any entry is.
        const from = last;
        const marked = await markIfEmpty(from);
        if (marked === false) return cameFirst(from);
        last = START;
        resetClients(idAfter(from), from);
        if (marked) await wakeReaders().catch(() => {});
        return;
      }
      head = newest === START ? START : idAfter(last);
      resume = newest;
    }
    let lossHead = head;
    // With nothing read yet (last is START), nothing older can survive: a trim.
    if (head !== START && last !== START) {
      // Entries older than the lost one survive: no trim (that removes the oldest first) but a
      // loss (an older snapshot) another instance may not notice, its own last entry kept, or
      // may not have seen (started after it). Announced in the stream, before anything changes
      // here: if Redis fails meanwhile, the next resync finds the same loss and tries again.
      // Unless they are only markers of an emptied stream (or of ids gone backwards): another
      // instance found it emptied first and announced it, and every instance that had read an
      // entry from before finds it gone, as this one did. A marker of its own would be a second
      // loss to the others, already reset for that one. Not when this instance reset its clients
      // at (or after) the newest marker itself: what it delivered since is what is lost now, and
      // a client still at that reset's id (on any instance) missed it.
      const older = (await reader.xrange(key, '-', idBefore(last), 'COUNT', OLDER)) as Entry[];
      const marks = older.filter(([, fields]) => fields[0] === LOSS && fields[2] === BACK);
      const newestMark = marks[marks.length - 1]?.[0];
      const seen = newestMark !== undefined && compareIds(newestMark, resetAt) <= 0;
      if (marks.length < older.length || older.length === OLDER || seen) {
        await appendMarker([LOSS, head]);
      } else if (newestMark !== undefined) {
        // The loss those markers announced: a client reset at the newest of them (on another
        // instance) has every entry since, and one from before it is reset here too.
        lossHead = newestMark;
      }
    }
    last = resume;
    resetClients(head, lossHead);
  }

  /**
   * Entry `id`, read by this instance, is gone, and the next entry (`next`) is its very next id:
   * no other entry was lost, and this instance's clients (which had `id`) are not reset. A client
   * holding an older id did miss it, on any instance: one that never had it in memory would
   * replay past it, one whose reader was behind would deliver the next entry without it. A loss
   * marker at `id` tells them (reset there, and a replay from before `id` that crosses it is a
   * reset), unless nothing older survives (a trim, oldest first: an older id is gone, so reset
   * anyway). A replay here from before `id` is a reset too (`floor`, also before the ring, which
   * holds `id`), as it is on the others. Not when `next` is a marker (one of ids gone backwards
   * is written just after the old ids): it announces the loss itself, and is read next.
   */
  async function goneItself(id: string, next: string): Promise<void> {
    const following = ((await reader.xrange(key, next, next)) as Entry[])[0];
    if (
      following?.[1][0] !== LOSS &&
      (await reader.xrange(key, '-', idBefore(id), 'COUNT', 1)).length > 0
    ) {
      await appendMarker([LOSS, id, GONE, '1']);
      if (compareIds(id, floor) > 0) floor = id;
    }
    // Told once: its own marker, or a resync that finds it gone again, resets nobody here.
    lastRead = START;
    msRead = [];
  }

  /**
   * The loss at `lossHead` announced by entry `id`: new here (this instance's last entry
   * survived it, or it came after), so this instance's clients may have missed entries too.
   * They are reset at the marker, which a replay can start from on any instance.
   */
  async function announced(id: string, fields: Fields): Promise<void> {
    const lossHead = lossHeadOf(id, fields);
    if (lossHead === undefined) return;
    if (isRunMarker(fields)) {
      // One reset per restart, however many instances announced it.
      const run = fields[3];
      if (handled !== null && run === handled.run) return;
      handled = run === undefined ? null : { run, head: lossHead };
      // Not the restart's first marker: this instance opened after that one, so its clients
      // came after the restart (a replay across the first marker was a reset).
      const first = await firstMarker(reader, id, fields);
      if (first !== undefined) {
        if (handled !== null) handled.head = first;
        return;
      }
    }
    if (compareIds(lossHead, floor) <= 0) return; // this instance saw it (or a later one)
    if (fields[2] === GONE && deliveredLive(lossHead)) {
      // Its clients have it; one back with an older id is reset, as on any instance.
      floor = lossHead;
      return;
    }
    resetClients(id, lossHead);
  }

  /**
   * Whether every client here has entry `id`: the reader read it (the ring holds it, so no reset
   * since) and no replay here read the stream across it (one after it was deleted missed it).
   */
  function deliveredLive(id: string): boolean {
    if (id === ring.base) return false;
    if (ring.between(id, id, { include: () => false, maxBytes: 0 }) === null) return false;
    // Stream replays that ended at or before the ring's start cannot cross an id it holds.
    if (crossedTo !== null && compareIds(crossedTo, ring.base) <= 0) crossedFrom = crossedTo = null;
    return (
      crossedFrom === null || compareIds(crossedFrom, id) >= 0 || compareIds(crossedTo!, id) < 0
    );
  }

  /**
   * The loss head of the first restart marker of the run of marker `id`, when that is an earlier
   * one: each instance connected across a restart may append one, so later ones are duplicates,
   * however many entries lie between. Read from the marker's `since` (its restart) on, once per
   * run: the first marker of a run stays the first (later ones get higher ids).
   */
  async function firstMarker(conn: Redis, id: string, fields: Fields): Promise<string | undefined> {
    const run = fields[3] ?? '';
    const head = idBefore(id);
    if (firstOfRun?.run !== run) {
      let start = fields[4] === SINCE && STREAM_ID.test(fields[5] ?? '') ? fields[5]! : '-';
      let first = head;
      for (;;) {
        const page = (await conn.xrange(key, start, head, 'COUNT', PAGE)) as Entry[];
        const found = page.find(([, f]) => isRunMarker(f, run));
        if (found !== undefined) first = idBefore(found[0]);
        if (found !== undefined || page.length < PAGE) break;
        start = `(${page[page.length - 1]![0]}`;
      }
      firstOfRun = { run, head: first };
    }
    return compareIds(firstOfRun.head, head) < 0 ? firstOfRun.head : undefined;
  }

  /**
   * The first page of a stream this instance has read nothing of since it was empty, read again
   * with its `XINFO STREAM` in one transaction: a full page from the start may come after
   * entries trimmed before this instance read them (its reader was behind by more than `maxLen`).
   * If so, its clients are reset before the page, as for any gap.
   */
  async function firstPage(): Promise<Entry[]> {
    const { reply, info } = await withInfo((tx) => tx.xread('COUNT', PAGE, 'STREAMS', key, START));
    const entries = reply === null ? [] : (reply as [string, Entry[]][])[0]![1];
    if (entries.length === 0) return entries;
    if (info instanceof Error) throw info;
    if (trimmedBeforeFirstRead(info, addedWhenEmpty, maxLen)) await lost(entries[0]![0]);
    return entries;
  }

  /**
   * An own publish got the id `behind`, at or below `last`: ids went backwards (see `appended`).
   * The clients are reset just before it and reading goes on from there, so it is delivered (the
   * entries others published since the flush, before it, are what the reset tells to refetch).
   *
   * The other instances' XREADs, blocked after the old ids, are not woken by lower ones: a loss
   * marker is appended with the id just after `last` (above every id this instance read), which
   * wakes every reader blocked at or below it, tells it of the loss (it resets its clients at the
   * marker), and keeps the ids of later entries (`XADD *`) above the old ones. Its loss head is
   * just before the stream's oldest entry (the first one since the flush), so two instances
   * that both saw the flush announce the same loss (the second marker, refused or read, resets
   * nothing more). An instance whose reader had read past `last` (this one was behind) is not
   * woken by the marker: the readers blocked like this one are woken too (`wakeReaders`). Best
   * effort: refused (another instance's marker came first, and wakes them; Redis full or down;
   * no `CLIENT` in the ACL), the others reset at their idle check, as before.
   */
  async function publishedBehind(): Promise<boolean> {
    const id = behind!;
    behind = null;
    // Read past it meanwhile, or reset since (a resync found the ids gone back: `lost`), which
    // covers it or reads it next.
    if (last === START || compareIds(id, last) > 0 || compareIds(last, behindAt) < 0) {
      return false;
    }
    const from = last;
    const oldest = await firstFrom(reader, '-');
    const lossHead = idBefore(oldest !== undefined && compareIds(oldest, id) < 0 ? oldest : id);
    const head = idBefore(id);
    last = head;
    resetClients(head, lossHead);
    await markAbove(from, lossHead);
    return true;
  }

  /**
   * Ids went backwards below `from`, the last id this instance read, or the stream is empty
   * (see `lost`): the loss marker (see
   * `publishedBehind`) with the id just after it, which wakes every reader blocked at or below
   * it, and `wakeReaders` for those that read past it. Best effort: refused (another instance's
   * marker came first, and wakes them; Redis full or down), the others reset at their idle check.
   */
  async function markAbove(from: string, lossHead: string): Promise<void> {
    await reader
      .xadd(key, 'MAXLEN', '~', maxLen, idAfter(from), LOSS, lossHead, BACK, '1')
      .then(wakeReaders)
      .catch(() => {});
  }

  /**
   * `markIfEmpty` found an entry in the emptied stream, after `from` was lost: another instance's
   * marker of the same loss (its loss head is that instance's last id), handled as if it had
   * been there when this instance looked, or else a publish, handled as any entry is. Above
   * `from` (that instance had read further), the clients are reset at it, as that instance's
   * are, and the marker, read next, resets nobody again. Below, ids went backwards here: as in
   * `lost`, reset at it and marked above `from`, with the same loss head.
   */
  async function cameFirst(from: string): Promise<void> {
    const first = ((await reader.xrange(key, '-', '+', 'COUNT', 1)) as Entry[])[0];
    if (first === undefined || first[1][0] !== LOSS || first[1][2] !== BACK) return lost(undefined);
    const [marker, fields] = first;
    const head = lossHeadOf(marker, fields) ?? from;
    if (compareIds(marker, from) > 0) {
      last = START;
      resetClients(marker, head);
      return;
    }
    last = marker;
    resetClients(marker);
    await markAbove(from, head);
  }

  /**
   * The marker of an emptied stream (see `lost`), appended just after `from` only if the stream
   * is still empty (`WATCH`, so no entry can come between the look and the write): true when
   * written, false when an entry (another instance's marker) came first, undefined when it could
   * not be written (Redis full or down: the others reset at their idle check). Without `WATCH`
   * in the ACL, written as before, unconditionally.
   */
  async function markIfEmpty(from: string): Promise<boolean | undefined> {
    const args = [key, 'MAXLEN', '~', maxLen, idAfter(from), LOSS, from, BACK, '1'] as const;
    try {
      await reader.watch(key);
    } catch (error) {
      if (!(error instanceof ReplyError) || isLoading(error)) return undefined;
      return reader.xadd(...args).then(
        () => true,
        () => undefined,
      );
    }
    try {
      if ((await reader.xlen(key)) > 0) {
        // An empty transaction ends the WATCH (else it would abort the reader's next one).
        await reader.multi().exec();
        return false;
      }
      // Null: the stream changed after the WATCH.
      return (
        (await reader
          .multi()
          .xadd(...args)
          .exec()) !== null
      );
    } catch {
      // A transaction refused (OOM) ends the WATCH, as a lost connection does; anything else
      // (the XLEN refused) leaves it: ended here, or the reader's next MULTI would be aborted.
      await reader
        .multi()
        .exec()
        .catch(() => {});
      return undefined;
    }
  }

  /**
   * Wakes every connection blocked in `XREAD` that looks like this instance's reader (same Redis
   * user, db and connection name: `keel:<stream>` unless a shared client names it): `CLIENT UNBLOCK` ends its read as if it waited for nothing.
   * A reader of this stream after an id above the marker (it read further than this instance
   * before the flush) then finds its last entry gone and resets at the newest one, the marker,
   * at once instead of at its idle check. Any other (a reader of another stream, or at or below
   * the marker, already woken) just reads again.
   */
  async function wakeReaders(): Promise<void> {
    const { username, db } = reader.options;
    const like = [`db=${db ?? 0}`, `name=${readerName}`, 'cmd=xread'];
    const user = `user=${username || 'default'}`;
    const list = (await reader.call('CLIENT', 'LIST', 'TYPE', 'normal')) as string;
    const woken: Promise<unknown>[] = [];
    for (const line of list.split('\n')) {
      const fields = line.trim().split(' ');
      const flags = fields.find((f) => f.startsWith('flags='));
      if (
        !flags?.includes('b') ||
        !like.every((f) => fields.includes(f)) ||
        // No `user=` before Redis 6 (no ACL): everyone is the default user.
        !fields.every((f) => !f.startsWith('user=') || f === user)
      ) {
        continue;
      }
      woken.push(reader.client('UNBLOCK', fields[0]!.slice('id='.length)));
    }
    await Promise.all(woken);
  }

  /** After a failed read: checks that the last delivered entry is still there. */
  async function resync(): Promise<void> {
    const server = await serverState(runId);
    // A restart: unless it kept every entry, any instance may have lost some it never read.
    if (runId !== null && server.run !== runId && !server.durable) {
      await restarted(server.run, server.since);
      runId = server.run;
      return;
    }
    runId = server.run;
    if (last === START) return;
    // The last entry, or else the first after it: one round trip.
    const at = await firstFrom(reader, last);
    if (at !== last) await lost(at);
  }

  /**
   * Whether the stream at `from` (`kept`) or below it in its millisecond (`below`, the entries
   * from the first of `msRead` up to before `from`) holds an entry other than those read there.
   * One read there and gone since (an XDEL) is no entry missed.
   */
  function reused(from: string, kept: Entry, below: Entry[] | null): boolean {
    const read = msRead;
    if (read.length === 0 || from !== lastRead) return false;
    if (!sameFields(read[read.length - 1]![1], kept[1])) return true;
    if (below === null) return false;
    let r = 0;
    for (const [id, fields] of below) {
      while (r < read.length - 1 && read[r]![0] !== id) r++;
      if (r === read.length - 1 || !sameFields(read[r]![1], fields)) return true;
    }
    return false;
  }

  /** Notes an entry the reader read, in `msRead` (see there) and as `last`. */
  function noteRead(id: string, fields: Fields): void {
    const first = msRead[0]?.[0];
    if (first !== undefined && !sameMs(first, id)) msRead = [];
    // Trimmed to the last PAGE once per read (see `readLoop`), not here: a shift per entry
    // once full is O(PAGE) each.
    msRead.push([id, fields]);
    last = lastRead = id;
  }

  async function readLoop(): Promise<void> {
    let failures = 0;
    let needsResync = false;
    while (!closed) {
      try {
        await connect(reader);
        if (needsResync) {
          await resync();
          needsResync = false;
        }
        if (readerId === undefined) {
          // Refused (an ACL without CLIENT, a proxy): the idle XREAD's check is left.
          const refusedReply = (error: unknown): null => {
            if (error instanceof ReplyError && !isLoading(error)) return null;
            throw error;
          };
          [readerId] = await Promise.all([
            (reader.client('ID') as Promise<number>).catch(refusedReply),
            reader.client('SETNAME', readerName).catch(refusedReply),
          ]);
        }
        if (behind !== null) await publishedBehind();
        if (unsent !== null) await appendMarker(unsent);
        const from = last;
        // Sent with the read, so answered right after it without a round trip of its own:
        // whether `from` is still there. Gone, the entries after it that the read did not get
        // may be gone too (the stream was deleted or flushed, or trimmed past it) and what it
        // got is no continuation: a loss, however few entries it brought.
        // And the entries read below it in its millisecond, still the same (see `msRead`).
        if (msRead.length > PAGE) msRead = msRead.slice(-PAGE);
        const checked = from === lastRead && msRead.length > 1 ? msRead : null;
        const [reply, kept, below] = await Promise.all([
          reader.xread('COUNT', PAGE, 'BLOCK', BLOCK_MS, 'STREAMS', key, from) as Promise<
            [string, Entry[]][] | null
          >,
          from === START ? null : (reader.xrange(key, from, from) as Promise<Entry[]>),
          checked === null
            ? null
            : (reader.xrange(key, checked[0]![0], `(${from}`, 'COUNT', checked.length) as Promise<
                Entry[]
              >),
        ]);
        failures = 0;
        recovered();
        if (closed) continue;
        // Woken (by the UNBLOCK, or by another instance's marker before that came) with an own
        // publish behind: reset first, then read again from just before it, so this reply (read
        // after the old ids) is not taken for a loss of its own.
        if (behind !== null && ((await publishedBehind()) || reply === null)) continue;
        let entries = reply === null ? [] : reply[0]![1];
        if (from === START) {
          // Nothing read since the stream was empty: a full page may follow trimmed entries.
          if (entries.length >= gapCheck) entries = await firstPage();
          // The last entry still there: no entry can be missing, no id below it (none went back).
        } else if (kept!.length === 0) await lost(entries[0]?.[0]);
        else if (reused(from, kept![0]!, below)) {
          // The stream was deleted and refilled up to and past `from` in its millisecond: the
          // new entries at or below it are never read after it. Reset at it (what follows is
          // delivered), and an id from before it is reset on replay (its entry is another).
          resetClients(from);
          msRead = [...(below ?? []), kept![0]!];
        }
        // Reset to an id no entry has meanwhile: what was read before is no longer what to check.
        if (last !== lastRead) msRead = [];
        let turn = 0;
        for (const [id, fields] of entries) {
          noteRead(id, fields);
          if (fields[0] === LOSS) {
            await announced(id, fields);
            continue;
          }
          const event = toEvent(id, fields);
          ring.push(event);
          sink?.deliver(event);
          // A page read after an outage can hold megabytes: handed over in one turn, it passed
          // what one turn may queue for a client and reset every client, fast ones too. Node
          // writes to the sockets between slices (the next read waits for the loop: in order).
          turn += event.data.length;
          if (turn > SLICE_CHARS) {
            turn = 0;
            await new Promise((resolve) => setImmediate(resolve));
            if (closed) break;
          }
        }
      } catch (error) {
        if (closed) return;
        report(error);
        needsResync = true;
        await sleep(backoff(failures++));
      }
    }
  }

  /**
   * Whether a client whose `after` is no entry (the id of a reset: `idBefore(next)` or
   * `idAfter(lost)`, sent by the instance that reset it) has every entry before `first` (the
   * first entry after `after`, if any). Yes when no id fits between them (`first` is the very
   * next id, and no marker of ids gone backwards), or when `after` is the loss this instance knows of (`floor`: that instance reset its
   * clients there and then delivered every later entry) and no entry after it was trimmed since
   * (the oldest entry is older). So a client moved to another instance after a loss is not reset
   * a second time.
   */
  async function resumable(after: string, first: Entry | undefined): Promise<boolean> {
    // Not across a marker of ids gone backwards (see BACK): `after` is then an old id, gone.
    const back = first?.[1][0] === LOSS && first[1][2] === BACK;
    if (first !== undefined && first[0] === idAfter(after) && !back) return true;
    if (after !== floor || floor === START) return false;
    const oldest = await firstFrom(commands, '-');
    return oldest !== undefined && compareIds(oldest, after) < 0;
  }

  async function xrangeReplay(
    after: string,
    upTo: string,
    include: (topic: string | undefined) => boolean,
    maxBytes: number,
  ): Promise<ReplayResult> {
    // The first entry must be `after` itself (then nothing between was trimmed), or `after` must
    // be a reset id whose successor is sure: see `resumable`.
    if (crossedFrom === null || compareIds(after, crossedFrom) < 0) crossedFrom = after;
    if (crossedTo === null || compareIds(upTo, crossedTo) > 0) crossedTo = upTo;
    const events: StoredEvent[] = [];
    let bytes = 0;
    let start = after;
    let first = true;
    await commandsReady();
    for (;;) {
      const page = (await commands.xrange(key, start, upTo, 'COUNT', PAGE)) as Entry[];
      let i = 0;
      if (first) {
        first = false;
        if (page[0]?.[0] === after) i = 1;
        else if (!(await resumable(after, page[0]))) return RESET;
      }
      for (; i < page.length; i++) {
        const fields = page[i]![1];
        if (fields[0] === LOSS) {
          // A loss after `after`: what followed the client's id may be gone. Another marker of
          // the restart this instance reset for (`handled`) is a duplicate for an id from then.
          const duplicate =
            handled !== null &&
            isRunMarker(fields, handled.run) &&
            compareIds(after, handled.head) >= 0;
          const lossHead = lossHeadOf(page[i]![0], fields);
          if (!duplicate && lossHead !== undefined && compareIds(lossHead, after) > 0) {
            // A restart marker after an earlier one of its run (at or before `after`, else
            // this replay crossed that one first): the client came after the restart.
            if (!isRunMarker(fields)) return RESET;
            const first = await firstMarker(commands, page[i]![0], fields);
            if (first === undefined || compareIds(after, first) < 0) return RESET;
          }
          continue;
        }
        const event = toEvent(page[i]![0], fields);
        if (!include(event.topic)) continue;
        bytes += frameFloor(event);
        if (bytes > maxBytes) return RESET;
        events.push(event);
      }
      if (page.length < PAGE) return { kind: 'events', events };
      start = `(${page[page.length - 1]![0]}`;
    }
  }

  /** A replay told without Redis: a reset, or from this instance's recent events. */
  function replayAtOnce({
    after,
    upTo,
    include,
    maxBytes,
  }: ReplayRequest): ReplayResult | undefined {
    // Ids from before a loss: what followed them may be gone, even if they are still there.
    if (!STREAM_ID.test(after) || compareIds(after, floor) < 0) return RESET;
    return ring.between(after, upTo, { include, maxBytes }) ?? undefined;
  }

  return {
    async open(target) {
      sink = target;
      let seen: Entry[] = [];
      for (let attempt = 0; ; attempt++) {
        if (closed) throw new Error('keel: the Redis event store was closed before it opened');
        if (refused !== null) {
          if (permanentFailure(refused) === 'DB_INDEX' && !inClusterMode(refused)) {
            await askDatabases();
          }
          throw refuse(refused);
        }
        try {
          await Promise.all([connect(reader), shared === undefined ? connect(commands) : null]);
          runId = (await serverState(null)).run;
          last = await newestId();
          // The reader's commands, once (no entry is read): a user refused one fails here, not
          // in a read loop that would retry for ever after `hub.ready`. The XRANGE gets the
          // entries of `last`'s millisecond up to it: taken as read (`msRead`), so a stream
          // deleted and refilled there before the first read is told (see `reused`).
          const replies = (await reader
            .pipeline()
            .xread('COUNT', 1, 'STREAMS', key, last)
            .xrange(
              key,
              last === START ? START : `${last.slice(0, last.indexOf('-'))}-0`,
              last,
              'COUNT',
              PAGE,
            )
            .exec())!;
          for (const [error] of replies) if (error) throw error;
          seen = replies[1]![1] as Entry[];
          break;
        } catch (error) {
          // Closed meanwhile (its connections cut): no backoff, the check above ends the open.
          if (closed) continue;
          // A refusal (this one, or one a connection reported meanwhile) fails the open above;
          // a cluster down for now is retried like an outage, reported once (see `refusal`).
          if (permanentFailure(error) !== undefined && !clusterDown(error)) refused = error;
          else if (refused === null) {
            report(error);
            await sleep(backoff(attempt));
          }
        }
      }
      opening = false;
      recovered();
      lastRead = last;
      // More than a page in that millisecond (its first page does not end at `last`): unknown.
      msRead = seen.at(-1)?.[0] === last ? seen : [];
      ring.clear(last);
      void readLoop();
      return last;
    },
    append(event, data, topic) {
      const args: (string | number)[] = ['MAXLEN', '~', maxLen, '*', 'e', event, 'd', data];
      if (topic !== undefined) args.push('t', topic);
      const from = last;
      // Reconnected, its AUTH not answered yet: sent once it is (a closure in that case only).
      const held = commandsGate?.held();
      const sent =
        held === undefined
          ? (commands.xadd(key, ...args) as Promise<string>)
          : held.then(() => commands.xadd(key, ...args) as Promise<string>);
      return sent.then((id) => appended(id, from), appendFailed);
    },
    replayAtOnce,
    replay(request) {
      const local = replayAtOnce(request);
      if (local !== undefined) return local;
      const { after, upTo, include, maxBytes } = request;
      if (compareIds(after, upTo) > 0) {
        // The client saw an entry this instance has not read yet (it came from a faster
        // instance): live delivery catches up, skipping through `after`.
        return has(commands, after).then(
          (found) =>
            found ? { kind: 'ahead', has: (id: string) => compareIds(id, after) <= 0 } : RESET,
          replayFailed,
        );
      }
      return xrangeReplay(after, upTo, include, maxBytes).then(undefined, replayFailed);
    },
    close: release,
  };

  /**
   * Opening failed for good (see `permanentFailure`): the store stops (no reconnect, no timer)
   * and `hub.ready` rejects with what to change.
   */
  function refuse(cause: unknown): RedisStoreError {
    const code = permanentFailure(cause)!;
    void release();
    return new RedisStoreError(
      code,
      `keel: the Redis event store cannot open ${key} on ${where} (${errorText(cause)}): ${remedy(code, key, dbFacts(cause))}; not retried`,
      { cause },
    );
  }

  function release(): Promise<void> {
    releasing ??= releaseNow();
    return releasing;
  }

  async function releaseNow(): Promise<void> {
    closed = true;
    sink = null;
    if (unblockTimer !== null) clock.clearTimeout(unblockTimer);
    wake?.();
    for (const done of [...commandWaits]) done();
    if (probe !== null) hangUp(probe);
    hangUp(reader);
    if (shared !== undefined) return;
    // QUIT lets the replies of publishes still in flight arrive first; a Redis that does not
    // answer (paused, a path that drops packets) must not hold `hub.close()` up to
    // `commandTimeout`: waited for at most QUIT_MS, on the store's clock.
    await new Promise<void>((resolve) => {
      const timer = clock.setTimeout(resolve, Math.min(QUIT_MS, commandTimeout));
      void commands
        .quit()
        .catch(() => {})
        .finally(() => {
          clock.clearTimeout(timer);
          resolve();
        });
    });
    hangUp(commands);
  }
}
