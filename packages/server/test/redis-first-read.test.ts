// An instance that has read nothing yet since its stream was empty (it opened on an empty
// stream, or Redis came back without its data) reads from the start of the stream. Entries
// trimmed before that first read were never delivered: its clients get keel:reset, never a
// silent jump to whatever the stream still holds. Real redis-server, two instances.
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { HUB_RESET_EVENT } from '../src/index';
import type { RedisStreamsOptions } from '../src/redis/index';
import { trimmedBeforeFirstRead } from '../src/redis/streams';
import { type SseMessage, until } from './helpers';
import {
  appClient,
  streamKey as key,
  killReader,
  redisInstances,
  startRedis,
} from './redis-helpers';

const live = redisInstances();
const instance = (url: string, stream: string, options: RedisStreamsOptions = {}) =>
  live.instance(stream, { url, onError: () => {}, maxLen: 300, ...options });

/**
 * Appends `count` entries as an instance publishes them (`n` events, data 0, 1, ...) in ONE
 * transaction: no reader sees the stream before all of them are in and `MAXLEN ~ 300` trimmed
 * the oldest, as when other instances publish faster than this one's reader reads.
 */
async function burst(url: string, stream: string, count: number, trim = true): Promise<string[]> {
  const direct = new Redis(url);
  try {
    const tx = direct.multi();
    for (let i = 0; i < count; i++) {
      if (trim) tx.xadd(stream, 'MAXLEN', '~', 300, '*', 'e', 'n', 'd', i);
      else tx.xadd(stream, '*', 'e', 'n', 'd', i);
    }
    const replies = (await tx.exec())!;
    return replies.map(([error, id]) => {
      expect(error).toBeNull();
      return id as string;
    });
  } finally {
    direct.disconnect();
  }
}

/** The first id the stream still holds. */
async function oldest(url: string, stream: string): Promise<string> {
  const direct = new Redis(url);
  try {
    return (await direct.xrange(stream, '-', '+', 'COUNT', 1))[0]![0];
  } finally {
    direct.disconnect();
  }
}

/** How many connections named `name` the server has. */
async function connectionsNamed(url: string, name: string): Promise<number> {
  const direct = new Redis(url);
  try {
    const list = (await direct.client('LIST')) as string;
    return list.split('\n').filter((line) => line.includes(` name=${name} `)).length;
  } finally {
    direct.disconnect();
  }
}

/**
 * The client never skips an entry in silence: each `n` event follows the one before it, or a
 * keel:reset, or is the first. Returns the data of the first `n` event after each reset.
 */
function noSilentGap(events: SseMessage[]): string[] {
  const afterReset: string[] = [];
  let expected: number | null = 0;
  for (const e of events) {
    if (e.event === HUB_RESET_EVENT) {
      expected = null;
      continue;
    }
    const n = Number(e.data);
    if (expected === null) afterReset.push(e.data);
    else expect(n, `after ${expected - 1}`).toBe(expected);
    expected = n + 1;
  }
  return afterReset;
}

describe('redisStreams: entries trimmed before an instance first read the stream', () => {
  it('opened on an empty stream: every instance resets its clients, then delivers what is kept', async () => {
    const stream = key();
    const a = await instance(live.redis.url, stream);
    const b = await instance(live.redis.url, stream);
    expect(a.hub.lastId).toBe(b.hub.lastId); // both opened on the empty stream
    const onA = await a.connect();
    const onB = await b.connect();
    await until(() => a.hub.size === 1 && b.hub.size === 1);
    const ids = await burst(live.redis.url, stream, 1000);
    const kept = await oldest(live.redis.url, stream);
    const first = ids.indexOf(kept);
    expect(first).toBeGreaterThan(0); // the stream was trimmed
    for (const client of [onA, onB]) {
      await until(() => client.events.at(-1)?.id === ids[999]);
      expect(client.events[0]).toMatchObject({ event: HUB_RESET_EVENT });
      expect(client.events[1]).toMatchObject({ id: kept, data: String(first) });
      expect(noSilentGap(client.events)).toEqual([String(first)]);
      expect(client.events).toHaveLength(1 + 1000 - first);
    }
    // The reset does not reach back: an id the stream keeps is replayed exactly, on both.
    const from = ids[990]!;
    for (const target of [a, b]) {
      const moved = await target.connect({ 'last-event-id': from });
      await moved.waitFor(9);
      expect(moved.events.map((e) => e.data)).toEqual(
        Array.from({ length: 9 }, (_, i) => String(991 + i)),
      );
    }
  }, 30_000);

  it('a reader held back on an empty stream while another instance publishes past maxLen', async () => {
    const stream = key();
    const a = await instance(live.redis.url, stream);
    const named = appClient(live.redis.url, 'first-read-b');
    try {
      await named.connect();
      // B's reader retries 800 ms after it is killed: A's burst is in (and trimmed) by then.
      const b = await instance(live.redis.url, stream, {
        client: named,
        reconnect: { initialDelay: 800, maxDelay: 800 },
      });
      const onA = await a.connect();
      const onB = await b.connect();
      await until(() => a.hub.size === 1 && b.hub.size === 1);
      await killReader(live.redis.url, 'first-read-b');
      const ids = await Promise.all(
        Array.from({ length: 1000 }, (_, i) => a.hub.publish('n', String(i))),
      );
      // Only B's command connection is there: its reader has not read since A's burst began.
      expect(await connectionsNamed(live.redis.url, 'first-read-b')).toBe(1);
      for (const client of [onA, onB]) {
        await until(() => client.events.at(-1)?.id === ids[999], 5000);
        noSilentGap(client.events);
      }
      // B read nothing before the stream was trimmed: its client missed entries, and is told.
      expect(onB.events[0]).toMatchObject({ event: HUB_RESET_EVENT });
      expect(onB.events.length).toBeLessThan(1000);
    } finally {
      named.disconnect();
    }
  }, 30_000);

  it('Redis came back without its data: a burst trimmed before the next read is a second reset', async () => {
    const server = await startRedis({ persistent: false });
    try {
      const stream = key();
      const a = await instance(server.url, stream, {
        reconnect: { initialDelay: 10, maxDelay: 50 },
      });
      const onA = await a.connect();
      await until(() => a.hub.size === 1);
      await a.hub.publish('n', 'before');
      await onA.waitFor(1);
      await server.stop();
      await server.start();
      await onA.waitFor(2);
      expect(onA.events[1]).toMatchObject({ event: HUB_RESET_EVENT });
      // The stream is gone: the reader reads from its start again.
      const ids = await burst(server.url, stream, 1000);
      const kept = await oldest(server.url, stream);
      const first = ids.indexOf(kept);
      expect(first).toBeGreaterThan(0);
      await until(() => onA.events.at(-1)?.id === ids[999]);
      expect(onA.events.slice(2, 4)).toMatchObject([
        { event: HUB_RESET_EVENT },
        { id: kept, data: String(first) },
      ]);
      expect(noSilentGap(onA.events.slice(2))).toEqual([String(first)]);
    } finally {
      await server.dispose();
    }
  }, 30_000);

  it('a full first page with nothing trimmed is delivered without a reset, also on a stream emptied before', async () => {
    for (const emptied of [false, true]) {
      const stream = key();
      if (emptied) {
        // The stream exists, empty, with 5 entries removed before the instance opens.
        await burst(live.redis.url, stream, 5, false);
        const direct = new Redis(live.redis.url);
        await direct.xtrim(stream, 'MAXLEN', 0);
        direct.disconnect();
      }
      // maxLen 10 000: the first XREAD returns a full page (512) of the 600 entries.
      const a = await instance(live.redis.url, stream, { maxLen: 10_000 });
      const client = await a.connect();
      await until(() => a.hub.size === 1);
      const ids = await burst(live.redis.url, stream, 600, false);
      await until(() => client.events.at(-1)?.id === ids[599]);
      expect(client.events.map((e) => e.data)).toEqual(ids.map((_, i) => String(i)));
    }
  }, 30_000);

  it('on Redis < 7 (no entries-added in XINFO STREAM) a first page from a stream at maxLen counts as trimmed', async () => {
    const stream = key();
    await burst(live.redis.url, stream, 400, false);
    const direct = new Redis(live.redis.url);
    const info = (await direct.xinfo('STREAM', stream)) as unknown[];
    direct.disconnect();
    // Redis 7 counts what was added: nothing was removed since the stream was empty (0 added).
    expect(trimmedBeforeFirstRead(info, 0, 300)).toBe(false);
    expect(trimmedBeforeFirstRead(info, 0, 500)).toBe(false);
    // The reply of Redis 6.2: without the fields Redis 7 added.
    const older: unknown[] = [];
    for (let i = 0; i < info.length; i += 2) {
      const name = info[i];
      if (name === 'max-deleted-entry-id' || name === 'entries-added') continue;
      if (name === 'recorded-first-entry-id') continue;
      older.push(name, info[i + 1]);
    }
    expect(older.length).toBe(info.length - 6);
    for (const addedWhenEmpty of [0, undefined]) {
      expect(trimmedBeforeFirstRead(older, addedWhenEmpty, 300)).toBe(true); // 400 >= 300
      expect(trimmedBeforeFirstRead(older, addedWhenEmpty, 500)).toBe(false); // never trimmed
    }
    // Opened on Redis 6 (nothing counted then), read on Redis 7: the length rule too.
    expect(trimmedBeforeFirstRead(info, undefined, 300)).toBe(true);
  });
});
