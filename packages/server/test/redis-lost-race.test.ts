// The last delivered entry found gone with nothing after it, and entries added between that
// check and the store's next command (its look at the newest entry): they are delivered after
// the reset, never skipped. The concurrent XADD is sent by the test from another connection
// right before the store's command reaches Redis (a hook on the reader connection's MULTI), so
// the interleaving is deterministic. Real redis-server.
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { HUB_RESET_EVENT } from '../src/index';
import { type SseMessage, until } from './helpers';
import { appClient, streamKey as key, killReader, redisInstances } from './redis-helpers';

const live = redisInstances();
const quiet = { onError: () => {}, reconnect: { initialDelay: 10, maxDelay: 50 } };
const names = (events: SseMessage[]): string[] =>
  events.map((e) => (e.event === HUB_RESET_EVENT ? 'reset' : e.data));

/**
 * A client named `name` whose duplicate (the store's reader) runs `before` (once, when armed)
 * right before its next MULTI is sent.
 */
function hooked(name: string) {
  const client = appClient(live.redis.url, name);
  let before: (() => Promise<unknown>) | null = null;
  const duplicate = client.duplicate.bind(client);
  client.duplicate = (override) => {
    const reader = duplicate(override);
    const multi = reader.multi.bind(reader) as () => ReturnType<Redis['multi']>;
    reader.multi = (() => {
      const tx = multi();
      const run = before;
      before = null;
      if (run !== null) {
        const exec = tx.exec.bind(tx);
        tx.exec = (async () => {
          await run();
          return exec();
        }) as typeof tx.exec;
      }
      return tx;
    }) as typeof reader.multi;
    return reader;
  };
  return {
    client,
    arm(fn: () => Promise<unknown>) {
      before = fn;
    },
  };
}

describe('redisStreams: entries added while a loss is handled', () => {
  it('the last entry gone, nothing after it, then an entry before the newest-id look: reset, then that entry', async () => {
    const { client: named, arm } = hooked('lost-race');
    const direct = new Redis(live.redis.url);
    try {
      await named.connect();
      const stream = key();
      const a = await live.instance(stream, { ...quiet, client: named });
      const client = await a.connect();
      await until(() => a.hub.size === 1);
      const zero = await a.hub.publish('n', 'zero');
      await client.waitFor(1);
      // The stream is gone under the idle reader; its XREAD (woken below) and the check of its
      // last entry find nothing. Right before the store looks for the newest entry, another
      // instance publishes.
      await direct.del(stream);
      const y = `${Number(zero.split('-')[0]) + 1000}-0`;
      arm(() => direct.xadd(stream, y, 'e', 'n', 'd', 'y'));
      await killReader(live.redis.url, 'lost-race', true);
      await until(() => client.events.some((e) => e.data === 'y'), 2500);
      expect(names(client.events)).toEqual(['zero', 'reset', 'y']);
      // Delivery goes on, with no second reset.
      const after = await a.hub.publish('n', 'after');
      await until(() => client.events.some((e) => e.id === after));
      expect(names(client.events)).toEqual(['zero', 'reset', 'y', 'after']);
    } finally {
      direct.disconnect();
      named.disconnect();
    }
  }, 20_000);
});
