// No command of the store reaches Redis before Redis has answered its connection's AUTH: with the
// `default` user on (and without a password, as Redis ships), a command sent right behind a
// refused AUTH is run as `default`. The store's connections have no ready check (see `own` in
// streams.ts), so ioredis alone sends them as soon as AUTH is written. Here `default` may touch
// nothing: a command it ran shows in ACL LOG as its refusal (HELLO and AUTH it may always run).
// Real redis-server.
import { Redis } from 'ioredis';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { createEventHub, HubPublishError } from '../src/index';
import { isRedisStoreError, redisStreams } from '../src/redis/index';
import { until } from './helpers';
import { adminUser, streamKey as key, publishWhenUp, redisInstances } from './redis-helpers';

const live = redisInstances();
let admin: Redis;
beforeAll(async () => {
  admin = await adminUser(live.redis.url);
  await admin.call('ACL', 'SETUSER', 'default', 'reset', 'on', 'nopass');
  return () => admin.disconnect();
});
afterEach(async () => {
  await admin.call('ACL', 'LOG', 'RESET');
});

const as = (user: string, password: string, db = ''): string =>
  `${live.redis.url.replace('//', `//${user}:${password}@`)}${db}`;

/** A Redis user that may do everything, with password `right`. */
async function user(name: string): Promise<void> {
  await admin.call('ACL', 'SETUSER', name, 'reset', 'on', '>right', '~*', '&*', '+@all');
}

/** ACL LOG entries as maps of their fields. */
async function aclLog(): Promise<Map<unknown, unknown>[]> {
  const log = (await admin.call('ACL', 'LOG', '1000')) as unknown[][];
  return log.map((entry) => {
    const fields = new Map<unknown, unknown>();
    for (let i = 0; i + 1 < entry.length; i += 2) fields.set(entry[i], entry[i + 1]);
    return fields;
  });
}

/** The commands Redis ran as `default` (and refused), e.g. `xread`. */
async function ranAsDefault(): Promise<string[]> {
  return (await aclLog())
    .filter((f) => f.get('username') === 'default' && f.get('reason') !== 'auth')
    .map((f) => /\bcmd=(\S+)/.exec(String(f.get('client-info')))?.[1] ?? String(f.get('object')));
}

/** Refused AUTHs of Redis user `name` (ACL LOG merges repeats into one entry with a count). */
async function deniedAuths(name: string): Promise<number> {
  let count = 0;
  for (const f of await aclLog()) {
    if (f.get('reason') === 'auth' && f.get('username') === name) count += Number(f.get('count'));
  }
  return count;
}

async function atLeast(read: () => Promise<number>, count: number): Promise<void> {
  for (let i = 0; (await read()) < count; i++) {
    expect(i).toBeLessThan(2000);
    await new Promise((r) => setTimeout(r, 5));
  }
}

const fast = { initialDelay: 1, maxDelay: 10 };

describe('redisStreams: nothing is sent before its AUTH is answered', () => {
  it('a password rotated after open: the reconnects (reader and publisher) run nothing as `default`', async () => {
    await user('rotor');
    const stream = key();
    const errors: unknown[] = [];
    const a = await live.instance(stream, {
      url: as('rotor', 'right'),
      onError: (e) => void errors.push(e),
      reconnect: fast,
    });
    const client = await a.connect();
    await until(() => a.hub.size === 1);
    await a.hub.publish('n', 'before');
    await client.waitFor(1);
    expect(await ranAsDefault()).toEqual([]);

    const before = await deniedAuths('rotor');
    await admin.call('ACL', 'SETUSER', 'rotor', 'resetpass', '>new');
    await admin.client('KILL', 'USER', 'rotor');
    // Publishes all along: each is refused (HubPublishError), none is run as `default`.
    let publishing = true;
    const publishes = (async () => {
      let refused = 0;
      while (publishing) {
        await a.hub.publish('n', 'x').then(
          () => {},
          (e: unknown) => {
            expect(e).toBeInstanceOf(HubPublishError);
            refused++;
          },
        );
        await new Promise((r) => setImmediate(r));
      }
      return refused;
    })();
    await atLeast(() => deniedAuths('rotor'), before + 40);
    publishing = false;
    expect(await publishes).toBeGreaterThan(0);
    expect(await ranAsDefault()).toEqual([]);
    expect(errors.filter(isRedisStoreError).map((e) => e.code)).toEqual(['WRONGPASS']);

    await admin.call('ACL', 'SETUSER', 'rotor', 'resetpass', '>right');
    const id = await publishWhenUp(a.hub, 'back');
    await until(() => client.events.some((e) => e.id === id));
    expect(client.events.map((e) => e.data)).toEqual(['before', 'back']);
  }, 30_000);

  it('a wrong password at open: hub.ready rejects (WRONGPASS), nothing was run as `default`', async () => {
    await user('wrong');
    for (let i = 0; i < 5; i++) {
      const hub = createEventHub({
        store: redisStreams({ url: as('wrong', 'nope'), stream: key(), reconnect: fast }),
      });
      const error = await hub.ready.then(
        () => null,
        (e: unknown) => e,
      );
      expect(isRedisStoreError(error) && error.code).toBe('WRONGPASS');
      await hub.close();
    }
    expect(await deniedAuths('wrong')).toBeGreaterThan(0);
    expect(await ranAsDefault()).toEqual([]);
  }, 20_000);

  it('a SELECT refused at open: hub.ready rejects (NOPERM), nothing was run in db 0', async () => {
    await admin.call(
      'ACL',
      'SETUSER',
      'nodb',
      'reset',
      'on',
      '>right',
      '~*',
      '&*',
      '+@all',
      '-select',
    );
    await admin.config('RESETSTAT');
    const stream = key();
    const hub = createEventHub({
      store: redisStreams({ url: as('nodb', 'right', '/3'), stream, reconnect: fast }),
    });
    const error = await hub.ready.then(
      () => null,
      (e: unknown) => e,
    );
    expect(isRedisStoreError(error) && error.code).toBe('NOPERM');
    expect(String(error)).toMatch(/select/i);
    await hub.close();
    const commands = (await admin.info('commandstats')) as string;
    expect(commands).not.toMatch(/cmdstat_xread:/);
    expect(commands).not.toMatch(/cmdstat_xrevrange:/);
  });

  it('a password where the default user needs none (ioredis goes on, warning): the store opens', async () => {
    await admin.call('ACL', 'SETUSER', 'default', 'on', 'nopass', '~*', '&*', '+@all');
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    try {
      const url = live.redis.url.replace('//', '//:unneeded@');
      const a = await live.instance(key(), { url, onError: () => {} });
      const client = await a.connect();
      await until(() => a.hub.size === 1);
      const id = await a.hub.publish('n', 'x');
      await until(() => client.events.some((e) => e.id === id));
      expect(warn).toHaveBeenCalled();
    } finally {
      warn.mockRestore();
      await admin.call('ACL', 'SETUSER', 'default', 'reset', 'on', 'nopass');
    }
  });

  it("an app's client: the store's reader (its duplicate) runs nothing as `default` either", async () => {
    await user('shared');
    const client = new Redis(as('shared', 'right'), {
      enableOfflineQueue: false,
      lazyConnect: true,
    });
    try {
      await client.connect();
      const stream = key();
      const a = await live.instance(stream, { client, onError: () => {}, reconnect: fast });
      const before = await deniedAuths('shared');
      await admin.call('ACL', 'SETUSER', 'shared', 'resetpass', '>new');
      // The reader only: the app's client (its AUTH answered long ago) stays connected.
      const list = (await admin.client('LIST')) as string;
      const reader = list
        .split('\n')
        .find((l) => l.includes(' user=shared ') && l.includes('cmd=xread'));
      await admin.client('KILL', 'ID', /id=(\d+)/.exec(reader!)![1]!);
      await atLeast(() => deniedAuths('shared'), before + 100);
      expect(await ranAsDefault()).toEqual([]);
      await admin.call('ACL', 'SETUSER', 'shared', 'resetpass', '>right');
      const on = await a.connect();
      await until(() => a.hub.size === 1);
      const id = await publishWhenUp(a.hub, 'back');
      await until(() => on.events.some((e) => e.id === id));
    } finally {
      client.disconnect();
    }
  }, 20_000);
});
