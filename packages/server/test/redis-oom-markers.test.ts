// Redis out of memory (`maxmemory` with `noeviction`) when an instance must announce a loss with
// a marker entry (XADD, refused with OOM): its clients are reset at once anyway and get the
// entries that survived, instead of waiting (with no reset, nothing delivered) until memory
// frees; the marker is appended once Redis takes writes again, so other instances learn of the
// loss then. Real redis-server.
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RedisServer, startRedis } from '../../../scripts/redis-server.mjs';
import { HUB_RESET_EVENT } from '../src/index';
import { type SseMessage, until } from './helpers';
import { streamKey as key, redisInstances } from './redis-helpers';

const live = redisInstances();
const quiet = { onError: () => {}, reconnect: { initialDelay: 10, maxDelay: 50 } };
const names = (events: SseMessage[]): string[] =>
  events.map((e) => (e.event === HUB_RESET_EVENT ? 'reset' : e.data));
type Entry = [string, string[]];

/** Waits until `stream` holds `count` markers for which `is` holds. */
async function markers(direct: Redis, stream: string, is: (f: string[]) => boolean, count = 1) {
  for (let i = 0; ; i++) {
    const entries = (await direct.xrange(stream, '-', '+')) as Entry[];
    if (entries.filter(([, f]) => f[0] === 'k' && is(f)).length === count) return;
    expect(i).toBeLessThan(300);
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('redisStreams: a loss marker refused for memory (OOM)', () => {
  it('the last entry gone, later ones kept: clients reset and served at once, the marker appended once memory frees', async () => {
    const direct = new Redis(live.redis.url);
    try {
      const stream = key();
      const a = await live.instance(stream, quiet);
      const client = await a.connect();
      await until(() => a.hub.size === 1);
      await a.hub.publish('n', 'zero');
      const one = await a.hub.publish('n', 'one');
      await client.waitFor(2);
      // One transaction, seen by the blocked reader only at its end: an entry after `one`,
      // `one` gone (an older entry kept: a loss, not a trim, so a marker is due), Redis full.
      await direct
        .multi()
        .xadd(stream, '*', 'e', 'n', 'd', 'two')
        .xdel(stream, one)
        .config('SET', 'maxmemory-policy', 'noeviction')
        .config('SET', 'maxmemory', '1')
        .exec();
      try {
        await until(() => client.events.some((e) => e.data === 'two'), 2500);
        expect(names(client.events)).toEqual(['zero', 'one', 'reset', 'two']);
        const entries = (await direct.xrange(stream, '-', '+')) as Entry[];
        expect(entries.some(([, f]) => f[0] === 'k')).toBe(false);
      } finally {
        await direct.config('SET', 'maxmemory', '0');
      }
      // Memory frees: the marker is appended (before a read), delivery goes on, no reset more.
      const three = await a.hub.publish('n', 'three');
      await until(() => client.events.some((e) => e.id === three));
      await markers(direct, stream, () => true);
      const four = await a.hub.publish('n', 'four');
      await until(() => client.events.some((e) => e.id === four));
      expect(names(client.events)).toEqual(['zero', 'one', 'reset', 'two', 'three', 'four']);
    } finally {
      direct.disconnect();
    }
  }, 20_000);
});

describe('redisStreams: a restart marker refused for memory (OOM)', () => {
  let durable: RedisServer;
  beforeAll(async () => {
    durable = await startRedis({ persistent: true });
  });
  afterAll(async () => {
    await durable?.dispose();
  });

  it('Redis restarted from a non-durable AOF, full: clients reset at once, later entries served, the marker appended once memory frees', async () => {
    const stream = key();
    const a = await live.instance(stream, { ...quiet, url: durable.url });
    const client = await a.connect();
    await until(() => a.hub.size === 1);
    await a.hub.publish('n', 'zero');
    await a.hub.publish('n', 'one');
    await client.waitFor(2);
    // The same data back, but `appendfsync everysec` (it vouches for nothing) and no memory.
    await durable.stop();
    await durable.start({
      args: ['--appendfsync', 'everysec', '--maxmemory', '1', '--maxmemory-policy', 'noeviction'],
    });
    const direct = new Redis(durable.url);
    try {
      await until(() => client.events.length === 3, 2500);
      expect(names(client.events)).toEqual(['zero', 'one', 'reset']);
      expect(((await direct.xrange(stream, '-', '+')) as Entry[]).length).toBe(2);
      await direct.config('SET', 'maxmemory', '0');
      let three: string | null = null;
      for (let i = 0; three === null; i++) {
        expect(i).toBeLessThan(500);
        three = await a.hub.publish('n', 'three').catch(() => null);
        if (three === null) await new Promise((r) => setTimeout(r, 10));
      }
      await until(() => client.events.some((e) => e.id === three));
      expect(names(client.events)).toEqual(['zero', 'one', 'reset', 'three']);
      await markers(direct, stream, (f) => f[2] === 'r');
      const four = await a.hub.publish('n', 'four');
      await until(() => client.events.some((e) => e.id === four));
      expect(names(client.events)).toEqual(['zero', 'one', 'reset', 'three', 'four']);
    } finally {
      direct.disconnect();
    }
  }, 20_000);
});
