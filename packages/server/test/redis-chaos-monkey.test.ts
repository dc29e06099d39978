// Chaos against a real redis-server under the Redis Streams hub, part two: redis-server killed
// with SIGKILL in the middle of publishes and restarted on its port (with and without its AOF),
// a Redis that answers slowly (DEBUG SLEEP) past `commandTimeout`, and `maxmemory` reached
// with `noeviction`. Each: what publishers and SSE clients see; nothing hangs, leaks a
// connection or throws unhandled.
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { createEventHub, HUB_RESET_EVENT, HubPublishError } from '../src/index';
import { isRedisStoreError, redisStreams } from '../src/redis/index';
import { guardProcess, within } from './adversarial/harness';
import { until } from './helpers';
import {
  appClient,
  inStreamOrder,
  streamKey as key,
  killReader,
  publishWhenUp,
  type RedisServer,
  redisInstances,
  startRedis,
} from './redis-helpers';

guardProcess();
const live = redisInstances();
const quiet = { onError: () => {}, reconnect: { initialDelay: 10, maxDelay: 50 } };

/** Clients connected to `server` other than `direct` itself. */
async function othersOn(direct: Redis): Promise<number> {
  const list = (await direct.client('LIST')) as string;
  return list.split('\n').filter((line) => line.startsWith('id=')).length - 1;
}

/** Entry ids of `stream` that are events (not loss or restart markers). */
async function eventIds(direct: Redis, stream: string): Promise<string[]> {
  const entries = (await direct.xrange(stream, '-', '+')) as [string, string[]][];
  return entries.filter(([, fields]) => fields[0] !== 'k').map(([id]) => id);
}

describe('redisStreams chaos: redis-server killed (SIGKILL) mid-publish, restarted on its port', () => {
  for (const persistent of [true, false]) {
    it(`${persistent ? 'AOF fsync always: every accepted event arrives, no reset' : 'no persistence: one reset, then every accepted event'}; every publish settles typed`, async () => {
      const server: RedisServer = await startRedis({ persistent });
      try {
        const stream = key();
        const a = await live.instance(stream, { url: server.url, ...quiet, commandTimeout: 1000 });
        const client = await a.connect();
        await until(() => a.hub.size === 1);
        const accepted: string[] = [];
        let refused = 0;
        const settled: Promise<void>[] = [];
        let running = true;
        let n = 0;
        // Four publishers at once, so XADDs are in flight when the server dies.
        const loops = Array.from({ length: 4 }, async () => {
          while (running) {
            const p = a.hub.publish('n', String(n++)).then(
              (id) => void accepted.push(id),
              (error: unknown) => {
                expect(error).toBeInstanceOf(HubPublishError);
                refused++;
              },
            );
            settled.push(p);
            await p;
            await new Promise((r) => setTimeout(r, 1));
          }
        });
        await until(() => accepted.length >= 50, 5000);
        process.kill(server.pid()!, 'SIGKILL');
        await until(() => refused >= 4, 5000);
        await server.stop();
        await server.start();
        const before = accepted.length;
        await until(() => accepted.length >= before + 50, 5000);
        running = false;
        await within(Promise.all(loops), 5000, 'the publishers');
        await within(Promise.all(settled), 5000, 'every publish');
        const direct = new Redis(server.url);
        try {
          const stored = await eventIds(direct, stream);
          const newest = inStreamOrder(accepted).at(-1);
          await until(() => client.events.some((e) => e.id === newest), 3000);
          const resets = client.events.filter((e) => e.event === HUB_RESET_EVENT);
          const got = client.events.filter((e) => e.event !== HUB_RESET_EVENT).map((e) => e.id);
          // Delivered once each, in stream order.
          expect(new Set(got).size).toBe(got.length);
          if (persistent) {
            expect(resets).toEqual([]);
            // An acknowledged XADD was fsynced: all are there, and delivered.
            expect(stored.filter((id) => accepted.includes(id))).toHaveLength(accepted.length);
            expect(got).toEqual(stored);
            // Refused ones in flight at the kill may be stored anyway (ambiguous): at most 4.
            expect(stored.length - accepted.length).toBeLessThanOrEqual(4);
          } else {
            expect(resets).toHaveLength(1);
            const at = client.events.indexOf(resets[0]!);
            // After the reset: exactly what the new server holds.
            expect(got.slice(at)).toEqual(stored);
            for (const id of accepted.slice(before)) expect(stored).toContain(id);
          }
          await a.hub.close();
          // Nothing of the hub stays connected to Redis.
          for (let i = 0; (await othersOn(direct)) > 0; i++) {
            expect(i).toBeLessThan(200);
            await new Promise((r) => setTimeout(r, 10));
          }
        } finally {
          direct.disconnect();
        }
      } finally {
        await server.dispose();
      }
    }, 30_000);
  }
});

describe('redisStreams chaos: a Redis that answers slowly (DEBUG SLEEP)', () => {
  it('a publish past commandTimeout rejects typed; the next publish gets its own id, not the late reply', async () => {
    const server = await startRedis({ config: { 'enable-debug-command': 'yes' } });
    const direct = new Redis(server.url);
    try {
      const stream = key();
      const a = await live.instance(stream, { url: server.url, ...quiet, commandTimeout: 200 });
      const client = await a.connect();
      await until(() => a.hub.size === 1);
      const first = await a.hub.publish('n', 'first');
      await client.waitFor(1);
      const sleeping = direct.debug('SLEEP', '1');
      // Asleep once a PING goes unanswered (then the publish is sent after DEBUG SLEEP began).
      const probe = new Redis(server.url, { commandTimeout: 100, maxRetriesPerRequest: 0 });
      probe.on('error', () => {});
      let awake = true;
      while (awake)
        awake = await probe.ping().then(
          () => true,
          () => false,
        );
      probe.disconnect();
      const slow = a.hub.publish('n', 'slow');
      await expect(slow).rejects.toBeInstanceOf(HubPublishError);
      await expect(slow).rejects.toMatchObject({ cause: { message: /timed out/ } });
      await sleeping;
      const next = await a.hub.publish('n', 'next');
      await until(() => client.events.some((e) => e.id === next), 3000);
      // The refused publish was stored when Redis woke (the documented ambiguity): delivered,
      // under its own id; `next` resolved with the id of `next`.
      expect(client.events.map((e) => e.data)).toEqual(['first', 'slow', 'next']);
      expect(client.events[0]!.id).toBe(first);
      expect(client.events[2]!.id).toBe(next);
      expect(client.events.some((e) => e.event === HUB_RESET_EVENT)).toBe(false);
    } finally {
      direct.disconnect();
      await server.dispose();
    }
  }, 30_000);
});

describe('redisStreams chaos: maxmemory reached with noeviction', () => {
  it('publishes reject typed naming OOM; clients stay and get what is published once memory frees', async () => {
    const server = await startRedis();
    const direct = new Redis(server.url);
    try {
      const stream = key();
      const a = await live.instance(stream, { url: server.url, ...quiet });
      const client = await a.connect();
      await until(() => a.hub.size === 1);
      const first = await a.hub.publish('n', 'first');
      await client.waitFor(1);
      await direct.config('SET', 'maxmemory-policy', 'noeviction');
      await direct.config('SET', 'maxmemory', '1');
      const full = a.hub.publish('n', 'full');
      await expect(full).rejects.toBeInstanceOf(HubPublishError);
      await expect(full).rejects.toMatchObject({ cause: { message: /OOM/ } });
      // A replay from Redis (no ring: an id older than what is kept in memory) still answers.
      const moved = await a.connect({ 'last-event-id': '0-1' });
      await moved.waitFor(1);
      expect(moved.events[0]).toMatchObject({ event: HUB_RESET_EVENT });
      moved.close();
      // Reads are no writes: an instance opening now is ready (Redis refuses any command
      // queued in a MULTI while out of memory, read-only ones too).
      const b = await within(
        live.instance(stream, { url: server.url, ...quiet }),
        3000,
        'an instance opening on a full Redis',
      );
      expect(b.hub.lastId).toBe(first);
      const onB = await b.connect({ 'last-event-id': first });
      await direct.config('SET', 'maxmemory', '0');
      const after = await publishWhenUp(a.hub, 'after');
      await until(() => client.events.some((e) => e.id === after), 3000);
      expect(client.events.map((e) => e.data)).toEqual(['first', 'after']);
      expect(client.events[0]!.id).toBe(first);
      await until(() => onB.events.some((e) => e.id === after), 3000);
      expect(onB.events.map((e) => e.data)).toEqual(['after']);
    } finally {
      direct.disconnect();
      await server.dispose();
    }
  }, 30_000);
});

describe('redisStreams chaos: the reader connection killed (CLIENT KILL)', () => {
  it('the reader reconnects and resumes after its last entry: no reset, no loss, no warning', async () => {
    const named = appClient(live.redis.url, 'monkey-kill');
    const warnings: string[] = [];
    const onWarning = (w: Error): void => void warnings.push(w.message);
    process.on('warning', onWarning);
    try {
      await named.connect();
      const stream = key();
      // The default onError: process warnings.
      const a = await live.instance(stream, {
        client: named,
        reconnect: { initialDelay: 200, maxDelay: 200 },
      });
      const client = await a.connect();
      await until(() => a.hub.size === 1);
      await a.hub.publish('n', 'a');
      await client.waitFor(1);
      await killReader(live.redis.url, 'monkey-kill');
      // Published while the reader is away (the publishing connection is not killed).
      const ids = [await a.hub.publish('n', 'b'), await a.hub.publish('n', 'c')];
      await until(() => client.events.some((e) => e.id === ids[1]), 3000);
      expect(client.events.map((e) => e.data)).toEqual(['a', 'b', 'c']);
      // Reconnected at its first try: no outage to report.
      expect(warnings.filter((w) => w.includes('Redis event store'))).toEqual([]);
    } finally {
      process.off('warning', onWarning);
      named.disconnect();
    }
  }, 20_000);
});

describe('redisStreams chaos: the stream trimmed under a reader (maxLen tiny)', () => {
  it('a reader the trim passed resets its clients once, then delivers exactly what the stream holds', async () => {
    const direct = new Redis(live.redis.url);
    try {
      const stream = key();
      const a = await live.instance(stream, { ...quiet, maxLen: 1 });
      const client = await a.connect();
      await until(() => a.hub.size === 1);
      await a.hub.publish('n', 'zero');
      await client.waitFor(1);
      // In one transaction, so the reader sees only its end: 400 entries published with
      // MAXLEN ~ 1, which trims whole nodes: some stay, the oldest (and zero) are gone.
      const tx = direct.multi();
      for (let i = 0; i < 400; i++) tx.xadd(stream, 'MAXLEN', '~', 1, '*', 'e', 'n', 'd', `${i}`);
      const ids = ((await tx.exec()) ?? []).map(([, id]) => id as string);
      await until(() => client.events.some((e) => e.id === ids.at(-1)), 3000);
      const stored = await eventIds(direct, stream);
      expect(stored.length).toBeLessThan(400);
      expect(client.events.filter((e) => e.event === HUB_RESET_EVENT)).toHaveLength(1);
      expect(client.events[1]).toMatchObject({ event: HUB_RESET_EVENT });
      expect(client.events.slice(2).map((e) => e.id)).toEqual(stored);
      // Exact XTRIM to nothing under the (now idle) reader, then a publish: one more reset.
      await direct.xtrim(stream, 'MAXLEN', 0);
      const last = await a.hub.publish('n', 'last');
      await until(() => client.events.some((e) => e.id === last), 3000);
      expect(client.events.filter((e) => e.event === HUB_RESET_EVENT)).toHaveLength(2);
      expect(client.events.at(-2)).toMatchObject({ event: HUB_RESET_EVENT });
    } finally {
      direct.disconnect();
    }
  }, 20_000);
});

describe('redisStreams chaos: a Redis user refused a command the store reads with', () => {
  it('the error names the refused command (NOPERM), not only EXECABORT, and is not retried', async () => {
    const admin = new Redis(live.redis.url);
    await admin.call('ACL', 'SETUSER', 'noxinfo', 'on', '>pw', '~*', '&*', '+@all', '-xinfo');
    admin.disconnect();
    const errors: unknown[] = [];
    const store = redisStreams({
      url: live.redis.url.replace('//', '//noxinfo:pw@'),
      stream: key(),
      onError: (error) => void errors.push(error),
      reconnect: { initialDelay: 10, maxDelay: 50 },
    });
    const hub = createEventHub({ store });
    try {
      const error = await within(
        hub.ready.then(
          () => null,
          (e: unknown) => e,
        ),
        3000,
        'ready',
      );
      expect(isRedisStoreError(error)).toBe(true);
      expect(String(error)).toMatch(/NOPERM.*xinfo/i);
      expect(errors).toEqual([]);
    } finally {
      await hub.close();
    }
  }, 20_000);
});

describe('redisStreams chaos: every connection killed again and again (CLIENT KILL TYPE normal)', () => {
  it('clients of two instances get every stored event once, in order, with no reset', async () => {
    const direct = new Redis(live.redis.url);
    try {
      const stream = key();
      const a = await live.instance(stream, { ...quiet });
      const b = await live.instance(stream, { ...quiet, bufferSize: 0 });
      const onA = await a.connect();
      const onB = await b.connect();
      await until(() => a.hub.size === 1 && b.hub.size === 1);
      const accepted: string[] = [];
      let running = true;
      let n = 0;
      const loops = [a, b].map(async (x) => {
        while (running) {
          await x.hub.publish('n', String(n++)).then(
            (id) => void accepted.push(id),
            (error: unknown) => expect(error).toBeInstanceOf(HubPublishError),
          );
          await new Promise((r) => setTimeout(r, 1));
        }
      });
      for (let i = 0; i < 30; i++) {
        await direct.client('KILL', 'TYPE', 'normal', 'SKIPME', 'yes');
        await new Promise((r) => setTimeout(r, 20 + (i % 3) * 15));
      }
      running = false;
      await within(Promise.all(loops), 5000, 'the publishers');
      const last = await publishWhenUp(a.hub, 'last');
      const stored = await eventIds(direct, stream);
      expect(stored.filter((id) => accepted.includes(id))).toHaveLength(accepted.length);
      for (const [name, client] of [
        ['A', onA],
        ['B', onB],
      ] as const) {
        await until(() => client.events.some((e) => e.id === last), 5000);
        expect(
          client.events.map((e) => e.id),
          name,
        ).toEqual(stored);
      }
    } finally {
      direct.disconnect();
    }
  }, 30_000);
});
