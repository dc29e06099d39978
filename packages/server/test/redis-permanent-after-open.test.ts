// Errors that retrying cannot fix, arising *after* the store opened (a password rotated under a
// running app, an ACL changed, `requirepass` set): the store keeps retrying, since an operator
// may fix it without a restart, but with backoff (no reconnect loop at `initialDelay`), reports
// each distinct failure once (a RedisStoreError naming what to change, to onError or as one
// process warning) rather than at every retry, and a publish rejects with that typed error as
// cause. Fixed, it reads and publishes again. Real redis-server.
import { Redis } from 'ioredis';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { HubPublishError } from '../src/index';
import type { RedisStreamsOptions } from '../src/redis/index';
import { isRedisStoreError, type RedisStoreError } from '../src/redis/index';
import { until } from './helpers';
import { adminUser, streamKey as key, publishWhenUp, redisInstances } from './redis-helpers';

const live = redisInstances();
let admin: Redis;
beforeAll(async () => {
  // An admin user of its own: the tests turn the default user off or give it a password.
  admin = await adminUser(live.redis.url);
  return () => admin.disconnect();
});

/**
 * The default user off while `run` runs, as on a Redis where every user needs a password (the
 * store sends nothing before its AUTH is answered either way: redis-auth-order.test.ts).
 */
async function withoutDefaultUser(run: () => Promise<void>): Promise<void> {
  await admin.call('ACL', 'SETUSER', 'default', 'off');
  try {
    await run();
  } finally {
    await admin.call('ACL', 'SETUSER', 'default', 'on');
  }
}

const warnings: string[] = [];
const onWarning = (w: Error): void => {
  if (w.message.includes('Redis event store')) warnings.push(w.message);
};
afterEach(() => {
  process.off('warning', onWarning);
  warnings.length = 0;
});

const as = (user: string, password: string): string =>
  live.redis.url.replace('//', `//${user}:${password}@`);

/** A Redis user that may do everything, with password `right`. */
async function user(name: string): Promise<string> {
  await admin.call('ACL', 'SETUSER', name, 'reset', 'on', '>right', '~*', '&*', '+@all');
  return as(name, 'right');
}

/** A counter of `INFO` (`stats` or `commandstats`), e.g. `acl_access_denied_auth`. */
async function stat(section: string, pattern: RegExp): Promise<number> {
  const info = (await admin.info(section)) as string;
  return Number(pattern.exec(info)?.[1] ?? 0);
}
/** Refused AUTHs of Redis user `name` (ACL LOG counts each, merging repeats into one entry). */
async function deniedAuths(name: string): Promise<number> {
  const log = (await admin.call('ACL', 'LOG', '1000')) as unknown[][];
  let count = 0;
  for (const entry of log) {
    const fields = new Map<unknown, unknown>();
    for (let i = 0; i + 1 < entry.length; i += 2) fields.set(entry[i], entry[i + 1]);
    if (fields.get('reason') === 'auth' && fields.get('username') === name) {
      count += Number(fields.get('count'));
    }
  }
  return count;
}
const rejected = (command: string) =>
  stat('commandstats', new RegExp(`cmdstat_${command}:.*rejected_calls=(\\d+)`));

async function atLeast(read: () => Promise<number>, count: number): Promise<void> {
  for (let i = 0; (await read()) < count; i++) {
    expect(i).toBeLessThan(1000);
    await new Promise((r) => setTimeout(r, 5));
  }
}

async function publishError(hub: { publish(e: string, d: unknown): Promise<string> }) {
  const error = await hub.publish('n', 'x').then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(HubPublishError);
  const cause = (error as HubPublishError).cause;
  expect(isRedisStoreError(cause), String(cause)).toBe(true);
  return cause as RedisStoreError;
}

const fast = { initialDelay: 1, maxDelay: 40 };

function collect() {
  const errors: unknown[] = [];
  const storeErrors = () => errors.filter(isRedisStoreError);
  return { errors, storeErrors, onError: (e: unknown) => void errors.push(e) };
}

describe('redisStreams: a password rotated after open (WRONGPASS on reconnect)', () => {
  it(
    'retries with backoff, tells onError once, publishes reject naming the password; fixed, it goes on',
    () =>
      withoutDefaultUser(async () => {
        const url = await user('rotated');
        const stream = key();
        const { errors, storeErrors, onError } = collect();
        const a = await live.instance(stream, { url, onError, reconnect: fast });
        const client = await a.connect();
        await until(() => a.hub.size === 1);

        const before = await deniedAuths('rotated');
        await admin.call('ACL', 'SETUSER', 'rotated', 'resetpass', '>new');
        await admin.client('KILL', 'USER', 'rotated');
        await until(() => storeErrors().length > 0);
        // Each connection is refused many times: still one report.
        await atLeast(() => deniedAuths('rotated'), before + 12);
        const told = storeErrors();
        expect(told).toHaveLength(1);
        expect(told[0]!.code).toBe('WRONGPASS');
        expect(told[0]!.message).toMatch(/WRONGPASS/);
        expect(told[0]!.message).toMatch(/password in `url`/);
        expect(told[0]!.message).toContain('redis://rotated:***@');
        expect(told[0]!.message).not.toContain('right');
        expect(told[0]!.message).toMatch(/retrying/);
        // And nothing after it: the reads it cuts are not reported one by one (the kill, an outage
        // of its own, may be reported before it).
        expect(errors.slice(errors.indexOf(told[0]) + 1).map(String)).toEqual([]);

        // No reconnect loop at `initialDelay` (1 ms): the attempts back off to `maxDelay` (40 ms).
        // Counted over a window: a slow machine makes fewer, never more, so this cannot flake.
        const from = await deniedAuths('rotated');
        const started = performance.now();
        await new Promise((r) => setTimeout(r, 400));
        const attempts = (await deniedAuths('rotated')) - from;
        const elapsed = performance.now() - started;
        expect(attempts).toBeLessThanOrEqual(2 * (elapsed / fast.maxDelay + 2));

        const cause = await publishError(a.hub);
        expect(cause.code).toBe('WRONGPASS');
        expect(cause.message).toMatch(/could not append to/);
        expect(cause.message).toMatch(/password in `url`/);
        expect(cause.message).not.toContain('right');

        await admin.call('ACL', 'SETUSER', 'rotated', 'resetpass', '>right');
        const id = await publishWhenUp(a.hub, 'back');
        await until(() => client.events.some((e) => e.id === id));

        // A later failure is a new one: told again.
        await admin.call('ACL', 'SETUSER', 'rotated', 'resetpass', '>newer');
        await admin.client('KILL', 'USER', 'rotated');
        await until(() => storeErrors().length === 2);
        await admin.call('ACL', 'SETUSER', 'rotated', 'resetpass', '>right');
        const again = await publishWhenUp(a.hub, 'again');
        await until(() => client.events.some((e) => e.id === again));
        // Once for that second refusal too, however many reconnects it refused.
        expect(storeErrors()).toHaveLength(2);
        expect(storeErrors()[1]!.code).toBe('WRONGPASS');
      }),
    20_000,
  );

  it(
    'without onError: one process warning naming what to change, one when it reads again',
    () =>
      withoutDefaultUser(async () => {
        process.on('warning', onWarning);
        const url = await user('rotated2');
        const a = await live.instance(key(), { url, reconnect: fast });
        const before = await deniedAuths('rotated2');
        await admin.call('ACL', 'SETUSER', 'rotated2', 'resetpass', '>new');
        await admin.client('KILL', 'USER', 'rotated2');
        await atLeast(() => deniedAuths('rotated2'), before + 12);
        await until(() => warnings.length > 0);
        expect(warnings).toHaveLength(1);
        expect(warnings[0]).toMatch(/WRONGPASS/);
        expect(warnings[0]).toMatch(/password in `url`/);
        expect(warnings[0]).toContain('redis://rotated2:***@');
        await admin.call('ACL', 'SETUSER', 'rotated2', 'resetpass', '>right');
        await publishWhenUp(a.hub, 'back');
        await until(() => warnings.length === 2);
        expect(warnings[1]).toMatch(/reads .* again$/);
      }),
    20_000,
  );
});

describe('redisStreams: a rotation fixed, then an outage', () => {
  it('the publishing connection reconnects after `initialDelay` again, though nothing was published since the fix', async () => {
    const url = await user('refixed');
    // The store's publishing connection, told apart by its commandTimeout.
    const commandTimeout = 4321;
    const a = await live.instance(key(), {
      url,
      commandTimeout,
      onError: () => {},
      reconnect: { initialDelay: 1, maxDelay: 1000 },
    });
    const before = await deniedAuths('refixed');
    await admin.call('ACL', 'SETUSER', 'refixed', 'resetpass', '>new');
    await admin.client('KILL', 'USER', 'refixed');
    // Both connections refused a few times in a row: their reconnects back off.
    await atLeast(() => deniedAuths('refixed'), before + 16);
    await admin.call('ACL', 'SETUSER', 'refixed', 'resetpass', '>right');
    // Both connected again (AUTH answered), no publish: the reader reads, the other is idle.
    await atLeast(async () => {
      const list = (await admin.client('LIST')) as string;
      return list.split('\n').filter((l) => l.includes(' user=refixed ')).length;
    }, 2);
    await admin.client('LIST'); // a round trip more: the AUTH replies reached the store
    // The delay ioredis waits before each reconnect of it (its 'reconnecting' event).
    const delays: number[] = [];
    const emit = Redis.prototype.emit;
    const spy = vi.spyOn(Redis.prototype, 'emit').mockImplementation(function (
      this: Redis,
      event: string | symbol,
      ...args: unknown[]
    ) {
      if (event === 'reconnecting' && this.options.commandTimeout === commandTimeout) {
        delays.push(args[0] as number);
      }
      return emit.call(this, event, ...args);
    });
    try {
      await admin.client('KILL', 'USER', 'refixed');
      await until(() => delays.length > 0);
      expect(delays[0]).toBe(1);
      await publishWhenUp(a.hub, 'back');
    } finally {
      spy.mockRestore();
    }
  });
});

describe('redisStreams: an ACL changed after open (NOPERM on XREAD and XADD)', () => {
  it('the reader retries with backoff and tells onError once; publishes reject naming the grant; granted, it goes on', async () => {
    const url = await user('narrowed');
    const stream = key();
    const { errors, storeErrors, onError } = collect();
    const a = await live.instance(stream, { url, onError, reconnect: fast });
    const client = await a.connect();
    await until(() => a.hub.size === 1);

    const before = await rejected('xread');
    await admin.call('ACL', 'SETUSER', 'narrowed', '-xread', '-xadd');
    // Wake the blocked XREAD (it was allowed when sent): the next one is refused.
    const list = (await admin.client('LIST')) as string;
    const reader = list
      .split('\n')
      .find((l) => l.includes(' user=narrowed ') && l.includes('cmd=xread'));
    await admin.client('UNBLOCK', /id=(\d+)/.exec(reader!)![1]!);
    await atLeast(() => rejected('xread'), before + 6);
    expect(storeErrors()).toHaveLength(1);
    expect(errors).toHaveLength(1);
    const told = storeErrors()[0]!;
    expect(told.code).toBe('NOPERM');
    expect(told.message).toMatch(/NOPERM.*xread/i);
    expect(told.message).toMatch(/grant the Redis user/);
    expect(told.message).toContain(stream);

    const cause = await publishError(a.hub);
    expect(cause.code).toBe('NOPERM');
    expect(cause.message).toMatch(/NOPERM.*xadd/i);
    expect(cause.message).toMatch(/grant the Redis user/);

    await admin.call('ACL', 'SETUSER', 'narrowed', '+xread', '+xadd');
    const id = await publishWhenUp(a.hub, 'granted');
    await until(() => client.events.some((e) => e.id === id));
    expect(errors).toHaveLength(1);
  }, 20_000);
});

describe('redisStreams: requirepass set after open (NOAUTH on reconnect)', () => {
  it('tells onError once, publishes reject naming the missing password; unset, it goes on', async () => {
    const stream = key();
    const { storeErrors, onError } = collect();
    const options: RedisStreamsOptions = { onError, reconnect: fast };
    const a = await live.instance(stream, options);
    const client = await a.connect();
    await until(() => a.hub.size === 1);
    try {
      await admin.config('SET', 'requirepass', 'secret');
      await admin.client('KILL', 'USER', 'default', 'SKIPME', 'yes');
      await until(() => storeErrors().length > 0);
      await new Promise((r) => setTimeout(r, 200));
      expect(storeErrors()).toHaveLength(1);
      expect(storeErrors()[0]!.code).toBe('NOAUTH');
      expect(storeErrors()[0]!.message).toMatch(/requires a password/);
      const cause = await publishError(a.hub);
      expect(cause.code).toBe('NOAUTH');
      expect(cause.message).toMatch(/requires a password/);
    } finally {
      await admin.config('SET', 'requirepass', '');
    }
    const id = await publishWhenUp(a.hub, 'open again');
    await until(() => client.events.some((e) => e.id === id));
    expect(storeErrors()).toHaveLength(1);
  }, 20_000);
});

/**
 * The id of `name`'s one connection not blocked (the store's publishing connection), once its
 * reader is blocked in XREAD: the other one.
 */
async function publishingConnection(name: string): Promise<string> {
  for (let i = 0; ; i++) {
    expect(i).toBeLessThan(1000);
    const lines = ((await admin.client('LIST')) as string)
      .split('\n')
      .filter((l) => l.includes(` user=${name} `));
    const blocked = lines.filter((l) => /flags=\S*b/.test(l));
    if (lines.length === 2 && blocked.length === 1) {
      return /id=(\d+)/.exec(lines.find((l) => !blocked.includes(l))!)![1]!;
    }
    await new Promise((r) => setTimeout(r, 5));
  }
}

describe('redisStreams: only the publishing connection refused, the reader reading on', () => {
  async function setup(name: string, options: RedisStreamsOptions) {
    const url = await user(name);
    const stream = key();
    const a = await live.instance(stream, { url, reconnect: fast, ...options });
    const client = await a.connect();
    await until(() => a.hub.size === 1);
    await admin.call('ACL', 'SETUSER', name, 'resetpass', '>new');
    await admin.client('KILL', 'ID', await publishingConnection(name));
    /** Another app adds an entry; the reader reads it, and the publisher is refused after. */
    const readWhileRefused = async (n: number) => {
      const id = (await admin.xadd(stream, '*', 'e', 'n', 'd', `"${n}"`))!;
      await until(() => client.events.some((e) => e.id === id));
      await atLeast(() => deniedAuths(name), (await deniedAuths(name)) + 2);
    };
    const fix = async () => {
      await admin.call('ACL', 'SETUSER', name, 'resetpass', '>right');
      await publishWhenUp(a.hub, 'back');
    };
    return { a, readWhileRefused, fix };
  }

  it(
    'tells onError its refusal once, however often the reader reads',
    () =>
      withoutDefaultUser(async () => {
        const { storeErrors, onError } = collect();
        const { readWhileRefused, fix } = await setup('pubonly', { onError });
        await until(() => storeErrors().length > 0);
        for (let n = 0; n < 3; n++) await readWhileRefused(n);
        expect(storeErrors()).toHaveLength(1);
        expect(storeErrors()[0]!.code).toBe('WRONGPASS');
        await fix();
      }),
    20_000,
  );

  it(
    'without onError: one warning, and no "reads again" (the reader never stopped)',
    () =>
      withoutDefaultUser(async () => {
        process.on('warning', onWarning);
        const { readWhileRefused, fix } = await setup('pubonly2', {});
        await until(() => warnings.length > 0);
        for (let n = 0; n < 3; n++) await readWhileRefused(n);
        expect(warnings).toHaveLength(1);
        expect(warnings[0]).toMatch(/WRONGPASS/);
        await fix();
        expect(warnings).toHaveLength(1);
      }),
    20_000,
  );
});

describe('redisStreams: a refused reader backs off as documented', () => {
  it(
    'each refusal doubles its reconnect delay once (not counted twice)',
    () =>
      withoutDefaultUser(async () => {
        const url = await user('doubled');
        const a = await live.instance(key(), {
          url,
          onError: () => {},
          reconnect: { initialDelay: 1, maxDelay: 10_000 },
        });
        // The delay ioredis waits before each reconnect of the reader (told apart by its
        // commandTimeout, the XREAD's block plus 5 s).
        const delays: number[] = [];
        const emit = Redis.prototype.emit;
        const spy = vi.spyOn(Redis.prototype, 'emit').mockImplementation(function (
          this: Redis,
          event: string | symbol,
          ...args: unknown[]
        ) {
          if (event === 'reconnecting' && this.options.commandTimeout === 10_000) {
            delays.push(args[0] as number);
          }
          return emit.call(this, event, ...args);
        });
        try {
          await admin.call('ACL', 'SETUSER', 'doubled', 'resetpass', '>new');
          await admin.client('KILL', 'USER', 'doubled');
          await until(() => delays.length >= 5, 5000);
          // The cut, then one refusal more before each.
          expect(delays.slice(0, 5)).toEqual([1, 2, 4, 8, 16]);
        } finally {
          spy.mockRestore();
          await admin.call('ACL', 'SETUSER', 'doubled', 'resetpass', '>right');
        }
        await publishWhenUp(a.hub, 'back');
      }),
    20_000,
  );
});
