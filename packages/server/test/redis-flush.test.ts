// A stream deleted or flushed under a reader that had not read its last entries yet: those
// entries are gone, and the clients must learn it (keel:reset), never skip them in silence. And a
// flush that sends ids backwards is noticed by the instance that publishes, at its publish.
// Real redis-server.
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { HUB_RESET_EVENT } from '../src/index';
import type { RedisStreamsOptions } from '../src/redis/index';
import { type SseMessage, until } from './helpers';
import { streamKey as key, redisInstances } from './redis-helpers';

const live = redisInstances();
const quiet = { onError: () => {}, reconnect: { initialDelay: 10, maxDelay: 50 } };
const instance = (stream: string, options: RedisStreamsOptions = {}) =>
  live.instance(stream, { ...quiet, ...options });

let direct: Redis | null = null;
afterEach(() => {
  direct?.disconnect();
  direct = null;
});

const names = (events: SseMessage[]): string[] =>
  events.map((e) => (e.event === HUB_RESET_EVENT ? 'reset' : e.data));

describe('redisStreams: entries deleted before the reader read them', () => {
  for (const how of ['DEL', 'FLUSHDB'] as const) {
    it(`${how} of the stream after a few unread entries: the clients are reset, then delivered what follows`, async () => {
      const stream = key();
      const a = await instance(stream);
      const b = await instance(stream, { bufferSize: 0 });
      const onA = await a.connect();
      const onB = await b.connect();
      await until(() => a.hub.size === 1 && b.hub.size === 1);
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
