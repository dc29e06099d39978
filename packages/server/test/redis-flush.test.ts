// A stream deleted or flushed under a reader that had not read its last entries yet: those
// entries are gone, and the clients must learn it (keel:reset), never skip them in silence. And a
// flush that sends ids backwards is noticed by the instance that publishes, at its publish.
// Real redis-server.
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { HUB_RESET_EVENT } from '../src/index';
import type { RedisStreamsOptions } from '../src/redis/index';
import { type SseMessage, until } from './helpers';
import {
  appClient,
  holdingProxy,
  inStreamOrder,
  streamKey as key,
  killReader,
  redisInstances,
} from './redis-helpers';

const live = redisInstances();
const quiet = { onError: () => {}, reconnect: { initialDelay: 10, maxDelay: 50 } };
const instance = (stream: string, options: RedisStreamsOptions = {}) =>
  live.instance(stream, { ...quiet, ...options });

let direct: Redis | null = null;
afterEach(() => {
  direct?.disconnect();
  direct = null;
});

/**
 * Two instances on `stream` (the second with no recent events, so its replays read the stream),
 * a client connected to each.
 */
async function twoInstances(stream: string) {
  const a = await instance(stream);
  const b = await instance(stream, { bufferSize: 0 });
  const onA = await a.connect();
  const onB = await b.connect();
  await until(() => a.hub.size === 1 && b.hub.size === 1);
  return { a, b, onA, onB };
}

const names = (events: SseMessage[]): string[] =>
  events.map((e) => (e.event === HUB_RESET_EVENT ? 'reset' : e.data));

describe('redisStreams: entries deleted before the reader read them', () => {
  for (const how of ['DEL', 'FLUSHDB'] as const) {
    it(`${how} of the stream after a few unread entries: the clients are reset, then delivered what follows`, async () => {
      const stream = key();
      const { a, b, onA, onB } = await twoInstances(stream);
      const zero = await a.hub.publish('n', 'zero');
      await Promise.all([onA.waitFor(1), onB.waitFor(1)]);
      direct = new Redis(live.redis.url);
      // In one transaction (so deterministically before either reader reads them): three
      // entries, then the stream is gone, then a new one with an id after the readers' last.
      const next = `${Number(zero.split('-')[0]) + 1000}-0`;
      const tx = direct.multi();
      for (const d of ['x1', 'x2', 'x3']) tx.xadd(stream, '*', 'e', 'n', 'd', d);
      if (how === 'DEL') tx.del(stream);
      else tx.flushdb();
      tx.xadd(stream, next, 'e', 'n', 'd', 'y');
      await tx.exec();
      for (const client of [onA, onB]) {
        await until(() => client.events.some((e) => e.data === 'y'));
        expect(names(client.events)).toEqual(['zero', 'reset', 'y']);
        expect(client.events[1]).toMatchObject({
          id: `${Number(zero.split('-')[0]) + 999}-999999999999999`,
          data: JSON.stringify({ lastEventId: null }),
        });
      }
      // Delivery goes on, and an id from before the loss is reset on either instance.
      const after = await b.hub.publish('n', 'after');
      await until(() => [onA, onB].every((c) => c.events.at(-1)?.id === after));
      for (const target of [a, b]) {
        const back = await target.connect({ 'last-event-id': zero });
        await back.waitFor(1);
        expect(back.events[0]).toMatchObject({ event: HUB_RESET_EVENT, id: after });
        back.close();
      }
      expect(onA.events.filter((e) => e.event === HUB_RESET_EVENT)).toHaveLength(1);
      expect(onB.events.filter((e) => e.event === HUB_RESET_EVENT)).toHaveLength(1);
    }, 20_000);
  }
});

describe('redisStreams: the stream deleted under an idle reader', () => {
  it('its idle read finds the last entry gone and nothing left: the clients are reset at once', async () => {
    const named = appClient(live.redis.url, 'flush-idle');
    try {
      await named.connect();
      const stream = key();
      const a = await instance(stream, { client: named });
      const client = await a.connect();
      await until(() => a.hub.size === 1);
      const zero = await a.hub.publish('n', 'zero');
      await client.waitFor(1);
      direct = new Redis(live.redis.url);
      // Entries the reader never read, then the stream is gone: they are lost.
      await direct.multi().xadd(stream, '*', 'e', 'n', 'd', 'x').del(stream).exec();
      // Its XREAD ends as if it waited BLOCK_MS for nothing.
      await killReader(live.redis.url, 'flush-idle', true);
      await client.waitFor(2);
      // At its marker, just after `zero` (see the test below).
      const [ms, seq] = zero.split('-');
      expect(client.events[1]).toMatchObject({
        event: HUB_RESET_EVENT,
        id: `${ms}-${Number(seq) + 1}`,
      });
      const y = await a.hub.publish('n', 'y');
      await until(() => client.events.some((e) => e.id === y));
      expect(names(client.events)).toEqual(['zero', 'reset', 'y']);
    } finally {
      named.disconnect();
    }
  }, 20_000);

  it('a reconnecting reader that finds it empty marks it above its last id: the others reset at once, later ids stay above', async () => {
    const named = appClient(live.redis.url, 'flush-empty');
    try {
      await named.connect();
      const stream = key();
      const a = await instance(stream, { client: named });
      const b = await instance(stream);
      const onA = await a.connect();
      const onB = await b.connect();
      await until(() => a.hub.size === 1 && b.hub.size === 1);
      direct = new Redis(live.redis.url);
      // B's next XREAD (BLOCK 5000) is sent after `ahead` is added: it cannot time out before
      // `blockEnds` (Redis ends a block late, never early; 500 ms kept for the two clocks).
      const blockEnds = performance.now() + 4500;
      // The last entry both read is from a Redis whose clock was an hour ahead: `XADD *` ids
      // now would come out below it.
      const ahead = `${Date.now() + 3_600_000}-0`;
      await direct.xadd(stream, ahead, 'e', 'n', 'd', 'ahead');
      await Promise.all([onA.waitFor(1), onB.waitFor(1)]);
      // Deleted, nothing added since; A's reader reconnects and finds the stream empty.
      await direct.del(stream);
      await killReader(live.redis.url, 'flush-empty');
      // A's marker, just after `ahead`, wakes B's XREAD: B resets at it before its idle check.
      const marker = `${ahead.split('-')[0]}-1`;
      await onB.waitFor(2);
      expect(performance.now()).toBeLessThan(blockEnds);
      expect(onB.events[1]).toMatchObject({ event: HUB_RESET_EVENT, id: marker });
      await onA.waitFor(2);
      expect(onA.events[1]).toMatchObject({ event: HUB_RESET_EVENT, id: marker });
      expect(await direct.xrange(stream, '-', '+')).toEqual([[marker, ['k', ahead, 'b', '1']]]);
      // Later ids are above the old ones (Redis never gives an id below the stream's top).
      const later = await b.hub.publish('n', 'later');
      expect(later > marker).toBe(true);
      await until(() => [onA, onB].every((c) => c.events.some((e) => e.id === later)));
      expect(names(onA.events)).toEqual(['ahead', 'reset', 'later']);
      expect(names(onB.events)).toEqual(['ahead', 'reset', 'later']);
      // Back with the id of the reset: replayed, on either instance; with `ahead`: reset.
      for (const target of [a, b]) {
        const back = await target.connect({ 'last-event-id': marker });
        await back.waitFor(1);
        expect(back.events[0]).toMatchObject({ id: later, data: 'later' });
        back.close();
        const old = await target.connect({ 'last-event-id': ahead });
        await old.waitFor(1);
        expect(old.events[0]).toMatchObject({ event: HUB_RESET_EVENT });
        old.close();
      }
    } finally {
      named.disconnect();
    }
  }, 20_000);
});

describe('redisStreams: ids gone backwards, seen by the instance that publishes', () => {
  it('its own publish at or below its last id resets its clients at once, and the event is delivered', async () => {
    const stream = key();
    const a = await instance(stream);
    const client = await a.connect();
    await until(() => a.hub.size === 1);
    direct = new Redis(live.redis.url);
    // An entry from a Redis whose clock was an hour ahead (or restored from one).
    const ahead = `${Date.now() + 3_600_000}-0`;
    await direct.xadd(stream, ahead, 'e', 'n', 'd', 'ahead');
    await client.waitFor(1);
    await direct.del(stream);
    const now = await a.hub.publish('n', 'now');
    expect(now < ahead).toBe(true);
    // Without waiting for the reader's idle XREAD to end: the reset comes before `now`, which
    // is delivered (the idle check would reset at `now` and skip it).
    await until(() => client.events.some((e) => e.id === now));
    expect(names(client.events)).toEqual(['ahead', 'reset', 'now']);
    const later = await a.hub.publish('n', 'later');
    await until(() => client.events.some((e) => e.id === later));
    expect(names(client.events)).toEqual(['ahead', 'reset', 'now', 'later']);
    // A client gone before the flush comes back with `ahead`: the marker just after it (and
    // `later` after that) is no continuation of it, `now` lies below it: a reset, not a gap.
    const back = await a.connect({ 'last-event-id': ahead });
    await back.waitFor(1);
    expect(back.events[0]).toMatchObject({ event: HUB_RESET_EVENT, id: later });
  }, 20_000);

  it('publishes the reader delivers before their replies arrive are no loss: no reset', async () => {
    const stream = key();
    const a = await instance(stream);
    const b = await instance(stream);
    const client = await a.connect();
    await until(() => a.hub.size === 1);
    // Concurrent publishes from both: A's reader is often past an own id when its reply comes.
    const ids = await Promise.all(
      Array.from({ length: 300 }, (_, i) => (i % 2 ? a : b).hub.publish('n', String(i))),
    );
    // Delivered in stream order: once the newest is there, nothing more can come.
    const ordered = inStreamOrder(ids);
    await until(() => client.events.some((e) => e.id === ordered.at(-1)));
    expect(client.events.some((e) => e.event === HUB_RESET_EVENT)).toBe(false);
    expect(client.events.map((e) => e.id)).toEqual(ordered);
  }, 20_000);
});

describe('redisStreams: ids gone backwards, seen by an instance that did not publish', () => {
  it('the publishing instance appends a marker above the old ids: the others wake and reset at it, later ids go on increasing', async () => {
    const stream = key();
    const a = await instance(stream);
    const b = await instance(stream);
    const onA = await a.connect();
    const onB = await b.connect();
    await until(() => a.hub.size === 1 && b.hub.size === 1);
    direct = new Redis(live.redis.url);
    const ahead = `${Date.now() + 3_600_000}-0`;
    await direct.xadd(stream, ahead, 'e', 'n', 'd', 'ahead');
    await Promise.all([onA.waitFor(1), onB.waitFor(1)]);
    await direct.del(stream);
    const now = await a.hub.publish('n', 'now');
    expect(now < ahead).toBe(true);
    // B's XREAD (after `ahead`) is not woken by `now`: it is by A's marker, just after `ahead`,
    // and B's clients are reset there (B's idle check, 5 s later, would reset at `now`).
    await onB.waitFor(2);
    const marker = `${ahead.split('-')[0]}-1`;
    expect(onB.events[1]).toMatchObject({ event: HUB_RESET_EVENT, id: marker });
    await until(() => onA.events.some((e) => e.id === now));
    expect(names(onA.events)).toEqual(['ahead', 'reset', 'now']);
    // Ids go on after the marker: a publish from either instance is delivered on both, at once.
    const later = await b.hub.publish('n', 'later');
    expect(later > marker).toBe(true);
    await until(() => [onA, onB].every((c) => c.events.some((e) => e.id === later)));
    expect(names(onA.events)).toEqual(['ahead', 'reset', 'now', 'later']);
    expect(names(onB.events)).toEqual(['ahead', 'reset', 'later']);
  }, 20_000);

  it('two instances that both publish after the flush: one marker counts, each client is reset once', async () => {
    const stream = key();
    const a = await instance(stream);
    const b = await instance(stream);
    const c = await instance(stream);
    const clients = [await a.connect(), await b.connect(), await c.connect()];
    await until(() => a.hub.size === 1 && b.hub.size === 1 && c.hub.size === 1);
    direct = new Redis(live.redis.url);
    const ahead = `${Date.now() + 3_600_000}-0`;
    await direct.xadd(stream, ahead, 'e', 'n', 'd', 'ahead');
    await Promise.all(clients.map((cl) => cl.waitFor(1)));
    await direct.del(stream);
    const [fromA, fromC] = await Promise.all([a.hub.publish('n', 'a'), c.hub.publish('n', 'c')]);
    expect(fromA < ahead && fromC < ahead).toBe(true);
    // A marker above `ahead` wakes B.
    await until(() => clients.every((cl) => cl.events.some((e) => e.event === HUB_RESET_EVENT)));
    const later = await b.hub.publish('n', 'later');
    expect(later > ahead).toBe(true);
    await until(() => clients.every((cl) => cl.events.some((e) => e.id === later)));
    for (const client of clients) {
      expect(client.events.filter((e) => e.event === HUB_RESET_EVENT)).toHaveLength(1);
      expect(client.events.at(-1)?.data).toBe('later');
    }
  }, 20_000);

  it('the first publisher cannot wake its reader (no CLIENT in its ACL), a later one can: the later marker resets nobody twice', async () => {
    direct = new Redis(live.redis.url);
    await direct.call('ACL', 'SETUSER', 'noclient', 'on', '>pw', '~*', '&*', '+@all', '-client');
    const stream = key();
    const a = await instance(stream);
    const c = await instance(stream, { url: live.redis.url.replace('//', '//noclient:pw@') });
    const onA = await a.connect();
    const onC = await c.connect();
    await until(() => a.hub.size === 1 && c.hub.size === 1);
    const ahead = `${Date.now() + 3_600_000}-0`;
    await direct.xadd(stream, ahead, 'e', 'n', 'd', 'ahead');
    await Promise.all([onA.waitFor(1), onC.waitFor(1)]);
    await direct.del(stream);
    // C's reader stays blocked after its publish; A's (a higher id) wakes A, whose marker wakes C.
    const fromC = await c.hub.publish('n', 'c');
    const fromA = await a.hub.publish('n', 'a');
    expect(fromC < fromA && fromA < ahead).toBe(true);
    await until(() => onC.events.some((e) => e.data === 'a'));
    const later = await a.hub.publish('n', 'later');
    await until(() => [onA, onC].every((cl) => cl.events.some((e) => e.id === later)));
    expect(names(onC.events)).toEqual(['ahead', 'reset', 'c', 'a', 'later']);
    expect(names(onA.events)).toEqual(['ahead', 'reset', 'a', 'later']);
  }, 20_000);
});

describe('redisStreams: ids gone backwards, seen by an instance whose reader was behind', () => {
  it('an instance that had read past the marker is woken too, and resets at it (not at its idle check)', async () => {
    const proxy = await holdingProxy(live.redis.url, 'reader');
    const bystander = new Redis(live.redis.url, { connectionName: 'bystander' });
    // And one with no name (the store's own readers are named after their stream).
    const unnamed = new Redis(live.redis.url);
    try {
      const stream = key();
      const a = await instance(stream, { url: proxy.url });
      const b = await instance(stream);
      const onA = await a.connect();
      const onB = await b.connect();
      await until(() => a.hub.size === 1 && b.hub.size === 1);
      direct = new Redis(live.redis.url);
      // Another app's reader, blocked in XREAD with another name: not woken.
      let answered = false;
      void bystander.xread('BLOCK', 0, 'STREAMS', key(), '$').then(
        () => {
          answered = true;
        },
        () => {}, // cut by its disconnect below
      );
      let unnamedAnswered = false;
      void unnamed.xread('BLOCK', 0, 'STREAMS', key(), '$').then(
        () => {
          unnamedAnswered = true;
        },
        () => {},
      );
      const ahead = `${Date.now() + 3_600_000}-0`;
      await direct.xadd(stream, ahead, 'e', 'n', 'd', 'ahead');
      await Promise.all([onA.waitFor(1), onB.waitFor(1)]);
      // A's reader falls behind: B reads `ahead2`, A not yet, when the stream is flushed.
      proxy.hold();
      // B's next XREAD (BLOCK 5000) is sent after `ahead2` is added: it cannot time out before
      // `blockEnds` (Redis ends a block late, never early; 500 ms kept for the two clocks).
      const blockEnds = performance.now() + 4500;
      const ahead2 = `${Date.now() + 3_601_000}-0`;
      await direct.xadd(stream, ahead2, 'e', 'n', 'd', 'ahead2');
      await onB.waitFor(2);
      await direct.del(stream);
      const now = await a.hub.publish('n', 'now');
      expect(now < ahead).toBe(true);
      proxy.release();
      // A's marker, just after `ahead` (the last id A read), is below B's: B is woken all the
      // same and resets at it, not at its idle check, once its XREAD times out.
      await onB.waitFor(3);
      expect(performance.now()).toBeLessThan(blockEnds);
      const marker = `${ahead.split('-')[0]}-1`;
      expect(onB.events[2]).toMatchObject({ event: HUB_RESET_EVENT, id: marker });
      // B found the ids gone back below `ahead2`, the last it read: its own marker, just above
      // it, wakes any reader that read as far (none here); later ids go on above it.
      const markerB = `${ahead2.split('-')[0]}-1`;
      for (
        let i = 0;
        ((await direct.xrevrange(stream, '+', '-', 'COUNT', 1))[0]?.[0] ?? '') !== markerB;
        i++
      ) {
        expect(i).toBeLessThan(1000);
        await new Promise((r) => setTimeout(r, 5));
      }
      const later = await a.hub.publish('n', 'later');
      expect(later > markerB).toBe(true);
      await until(() => [onA, onB].every((c) => c.events.some((e) => e.id === later)));
      expect(names(onB.events)).toEqual(['ahead', 'ahead2', 'reset', 'later']);
      expect(names(onA.events)).toEqual(['ahead', 'reset', 'now', 'later']);
      expect(answered).toBe(false);
      expect(unnamedAnswered).toBe(false);
    } finally {
      bystander.disconnect();
      unnamed.disconnect();
      await proxy.close();
    }
  }, 20_000);
});

describe('redisStreams: ids gone backwards, found by a reconnecting reader', () => {
  /** An app's client named `name` (its reader carries the name: `killReader` finds it). */
  async function named(name: string): Promise<Redis> {
    const client = appClient(live.redis.url, name);
    await client.connect();
    return client;
  }

  it('its resync appends a marker above the old ids: the other instances wake and reset at it', async () => {
    const client = await named('back-resync');
    try {
      const stream = key();
      const a = await instance(stream, { client });
      const b = await instance(stream);
      const onA = await a.connect();
      const onB = await b.connect();
      await until(() => a.hub.size === 1 && b.hub.size === 1);
      direct = new Redis(live.redis.url);
      const ahead = `${Date.now() + 3_600_000}-0`;
      await direct.xadd(stream, ahead, 'e', 'n', 'd', 'ahead');
      await Promise.all([onA.waitFor(1), onB.waitFor(1)]);
      // Flushed and refilled below `ahead`: no blocked XREAD (after `ahead`) is woken by it.
      await direct.del(stream);
      const low = await direct.xadd(stream, '*', 'e', 'n', 'd', 'low');
      // A's reader reconnects, finds its last entry gone and the newest below it.
      await killReader(live.redis.url, 'back-resync');
      await onA.waitFor(2);
      expect(onA.events[1]).toMatchObject({ event: HUB_RESET_EVENT, id: low });
      // B resets at A's marker, just above `ahead` (at its idle check it would reset at `low`).
      await onB.waitFor(2);
      const marker = `${ahead.split('-')[0]}-1`;
      expect(onB.events[1]).toMatchObject({ event: HUB_RESET_EVENT, id: marker });
      const later = await b.hub.publish('n', 'later');
      await until(() => [onA, onB].every((c) => c.events.some((e) => e.id === later)));
      expect(names(onA.events)).toEqual(['ahead', 'reset', 'later']);
      expect(names(onB.events)).toEqual(['ahead', 'reset', 'later']);
    } finally {
      client.disconnect();
    }
  }, 20_000);

  it('an own publish sent before that resync: its clients are reset once, the others at the marker above the old ids', async () => {
    const client = await named('back-publish');
    try {
      const stream = key();
      // A's reader, once cut, reads again only after 2 s: the publish below is answered first.
      const slow = { initialDelay: 2000, maxDelay: 2000 };
      const a = await instance(stream, { client, reconnect: slow });
      const b = await instance(stream);
      const onA = await a.connect();
      const onB = await b.connect();
      await until(() => a.hub.size === 1 && b.hub.size === 1);
      direct = new Redis(live.redis.url);
      const ahead = `${Date.now() + 3_600_000}-0`;
      await direct.xadd(stream, ahead, 'e', 'n', 'd', 'ahead');
      await Promise.all([onA.waitFor(1), onB.waitFor(1)]);
      await direct.del(stream);
      await killReader(live.redis.url, 'back-publish');
      // At or below A's last entry: behind, for a reader that resyncs before it handles it.
      const now = await a.hub.publish('n', 'now');
      expect(now < ahead).toBe(true);
      await Promise.all([onA.waitFor(2), onB.waitFor(2)]);
      const marker = `${ahead.split('-')[0]}-1`;
      expect(onB.events[1]).toMatchObject({ event: HUB_RESET_EVENT, id: marker });
      const later = await b.hub.publish('n', 'later');
      await until(() => [onA, onB].every((c) => c.events.some((e) => e.id === later)));
      expect(names(onA.events)).toEqual(['ahead', 'reset', 'later']);
      expect(names(onB.events)).toEqual(['ahead', 'reset', 'later']);
    } finally {
      client.disconnect();
    }
  }, 20_000);
});

describe('redisStreams: ids gone backwards, an own publish answered after the resync', () => {
  it('is no publish behind: the resync reset covers it, its clients are reset once', async () => {
    const proxy = await holdingProxy(live.redis.url, 'first');
    const client = appClient(proxy.url, 'back-late');
    try {
      await client.connect();
      const stream = key();
      const a = await instance(stream, { client });
      const onA = await a.connect();
      await until(() => a.hub.size === 1);
      direct = new Redis(live.redis.url);
      const ahead = `${Date.now() + 3_600_000}-0`;
      await direct.xadd(stream, ahead, 'e', 'n', 'd', 'ahead');
      await onA.waitFor(1);
      await direct.del(stream);
      // The publish is stored, its reply held: A's reader resyncs first (cut, it reconnects),
      // finds the ids gone back and resets at the newest entry, that publish.
      proxy.hold();
      const published = a.hub.publish('n', 'now');
      let now = '';
      for (let i = 0; now === ''; i++) {
        expect(i).toBeLessThan(1000);
        now = (await direct.xrevrange(stream, '+', '-', 'COUNT', 1))[0]?.[0] ?? '';
        if (now === '') await new Promise((r) => setTimeout(r, 5));
      }
      await killReader(live.redis.url, 'back-late');
      await onA.waitFor(2);
      expect(onA.events[1]).toMatchObject({ event: HUB_RESET_EVENT, id: now });
      proxy.release();
      expect(await published).toBe(now);
      const later = await a.hub.publish('n', 'later');
      await until(() => onA.events.some((e) => e.id === later));
      expect(names(onA.events)).toEqual(['ahead', 'reset', 'later']);
    } finally {
      client.disconnect();
      await proxy.close();
    }
  }, 20_000);
});

describe('redisStreams: ids reused after DEL within one millisecond', () => {
  // `XADD *` after a DEL in the millisecond of the old entries gives `<ms>-0`, `<ms>-1`, ... again
  // (a new stream has no last id): `<ms>-*` (that millisecond, its sequence from Redis) makes
  // the same ids deterministically. The reader's last id exists again.
  /** Entries `o0`..`o4` in one millisecond (a minute ahead), added on `direct`. */
  async function fiveInOneMs(stream: string): Promise<{ ms: number; old: string[] }> {
    direct = new Redis(live.redis.url);
    const ms = Date.now() + 60_000;
    const old: string[] = [];
    for (let i = 0; i < 5; i++) {
      old.push((await direct.xadd(stream, `${ms}-*`, 'e', 'n', 'd', `o${i}`))!);
    }
    return { ms, old };
  }

  /**
   * Two instances (one with no recent events) read `o0`..`o4` in one millisecond (`opened`: they
   * open on them, the last one their newest entry, and have read nothing yet); the stream is
   * deleted and refilled there with `refill` (its first five get the same ids): every client is
   * reset, then given what follows the old last id, and an old id is reset on replay.
   */
  async function refilled(refill: readonly string[], opened = false): Promise<void> {
    const stream = key();
    const before = opened ? await fiveInOneMs(stream) : null;
    const { a, b, onA, onB } = await twoInstances(stream);
    const { ms, old } = before ?? (await fiveInOneMs(stream));
    const read = opened ? [] : ['o0', 'o1', 'o2', 'o3', 'o4'];
    await Promise.all([onA.waitFor(read.length), onB.waitFor(read.length)]);
    const tx = direct!.multi().del(stream);
    for (const d of refill) tx.xadd(stream, `${ms}-*`, 'e', 'n', 'd', d);
    const added = (await tx.exec())!.slice(1).map(([, id]) => id as string);
    expect(added.slice(0, 5)).toEqual(old);
    const last = refill.at(-1)!;
    for (const client of [onA, onB]) {
      await until(() => client.events.some((e) => e.data === last));
      // The new entries at or below the last id the reader had: a reset, not a silent gap.
      expect(names(client.events)).toEqual([...read, 'reset', ...refill.slice(5)]);
    }
    // A client back with an old id (its entry is another now) is reset on either instance.
    for (const target of [a, b]) {
      const back = await target.connect({ 'last-event-id': old[2]! });
      await back.waitFor(1);
      expect(back.events[0]).toMatchObject({ event: HUB_RESET_EVENT });
      back.close();
    }
  }

  it('a reader whose last id was reused is reset, never skips the new entries below it; an old id is reset on replay', async () => {
    await refilled(['n0', 'n1', 'n2', 'n3', 'n4', 'n5', 'n6']);
  }, 20_000);

  it('a reader whose last id was reused with the same fields is reset: the entries below it are others', async () => {
    // The last entry read comes back with the same fields (the same invalidation published
    // again), the ones below it with others: a check of the last entry alone passed.
    await refilled(['n0', 'n1', 'n2', 'n3', 'o4', 'n5', 'n6']);
  }, 20_000);

  it('an instance that opened on the old entries and read none yet is reset too', async () => {
    // It knew none of the entries it had read: the open's XRANGE of its newest entry seeds that.
    await refilled(['n0', 'n1', 'n2', 'n3', 'n4', 'n5', 'n6'], true);
  }, 20_000);

  it('an instance that opened on the old entries, the last one back with the same fields: reset', async () => {
    await refilled(['n0', 'n1', 'n2', 'n3', 'o4', 'n5', 'n6'], true);
  }, 20_000);

  it('an entry deleted below the last one read, in its millisecond, resets nobody (nothing was missed)', async () => {
    const stream = key();
    const a = await instance(stream);
    const onA = await a.connect();
    await until(() => a.hub.size === 1);
    const { ms, old } = await fiveInOneMs(stream);
    await onA.waitFor(5);
    await direct!.xdel(stream, old[2]!);
    await direct!.xadd(stream, `${ms}-*`, 'e', 'n', 'd', 'n5');
    const later = await a.hub.publish('n', 'later');
    await until(() => onA.events.some((e) => e.id === later));
    expect(names(onA.events)).toEqual(['o0', 'o1', 'o2', 'o3', 'o4', 'n5', 'later']);
  }, 20_000);
});
