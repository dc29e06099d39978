// More entries in one millisecond than the reader takes per read (PAGE, 512): the reader's
// id-reuse check keeps the entries of the last millisecond it read (`msRead`, trimmed to a page),
// and a replay from the stream pages through them by XRANGE. Every client must get each of them
// once, in order, live and on a reconnect from the middle of the burst; a stream deleted and
// refilled under those ids with other entries must be told (keel:reset), not delivered as if
// nothing happened. Real redis-server.
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { HUB_RESET_EVENT } from '../src/index';
import { type SseMessage, until } from './helpers';
import { streamKey as key, redisInstances } from './redis-helpers';

const live = redisInstances();
const quiet = { onError: () => {}, reconnect: { initialDelay: 10, maxDelay: 50 } };

let direct: Redis | null = null;
afterEach(() => {
  direct?.disconnect();
  direct = null;
});

const BURST = 1300;

/** `BURST` entries `0..BURST-1` in the millisecond after `after`'s, in one transaction. */
async function burst(stream: string, after: string, tag = ''): Promise<string[]> {
  direct ??= new Redis(live.redis.url);
  const ms = Number(after.split('-')[0]) + 1;
  const ids: string[] = [];
  const tx = direct.multi();
  for (let i = 0; i < BURST; i++) {
    const id = `${ms}-${i}`;
    ids.push(id);
    tx.xadd(stream, id, 'e', 'n', 'd', `${tag}${i}`);
  }
  const replies = (await tx.exec())!;
  for (const [error] of replies) expect(error).toBeNull();
  return ids;
}

const datas = (events: SseMessage[]) =>
  events.map((e) => (e.event === HUB_RESET_EVENT ? 'reset' : e.data));

describe('redisStreams: a burst of more than a page of entries in one millisecond', () => {
  it('live, and replayed from its middle: each entry once, in order', async () => {
    const stream = key();
    const a = await live.instance(stream, quiet);
    // No recent events: its replays read the stream.
    const b = await live.instance(stream, { ...quiet, bufferSize: 0 });
    const onA = await a.connect();
    const onB = await b.connect();
    await until(() => a.hub.size === 1 && b.hub.size === 1);
    const zero = await a.hub.publish('n', 'zero');
    await Promise.all([onA.waitFor(1), onB.waitFor(1)]);

    const ids = await burst(stream, zero);
    await Promise.all([onA.waitFor(1 + BURST, 20_000), onB.waitFor(1 + BURST, 20_000)]);
    const expected = ['zero', ...ids.map((_, i) => String(i))];
    expect(datas(onA.events)).toEqual(expected);
    expect(datas(onB.events)).toEqual(expected);
    expect(onA.events.slice(1).map((e) => e.id)).toEqual(ids);

    // Reconnects with an id in the burst, on both instances: the rest of it, then what follows.
    const from = 700;
    const again = await Promise.all([
      a.connect({ 'last-event-id': ids[from]! }),
      b.connect({ 'last-event-id': ids[from]! }),
    ]);
    const rest = ids.slice(from + 1).map((_, i) => String(from + 1 + i));
    for (const c of again) await c.waitFor(rest.length, 20_000);
    const after = await a.hub.publish('n', 'after');
    for (const c of again) {
      await c.waitFor(rest.length + 1, 20_000);
      expect(datas(c.events)).toEqual([...rest, 'after']);
    }
    expect(after > ids.at(-1)!).toBe(true);
  });

  it('deleted and refilled under the same ids with other entries: the clients are reset', async () => {
    const stream = key();
    const a = await live.instance(stream, quiet);
    const onA = await a.connect();
    await until(() => a.hub.size === 1);
    const zero = await a.hub.publish('n', 'zero');
    await onA.waitFor(1);
    const ids = await burst(stream, zero);
    await onA.waitFor(1 + BURST, 20_000);

    // Gone, and refilled in the same millisecond with other entries up to (and past) the last
    // id read: what the reader read is no longer what the stream holds there.
    await direct!.del(stream);
    await burst(stream, zero, 'new');
    await direct!.xadd(stream, `${Number(ids[0]!.split('-')[0]) + 5}-0`, 'e', 'n', 'd', 'later');
    await until(() => datas(onA.events).includes('reset'));
    const seen = datas(onA.events);
    // Nothing of the refill is taken for the entries read before.
    expect(seen.slice(0, 1 + BURST)).toEqual(['zero', ...ids.map((_, i) => String(i))]);
  });
});
