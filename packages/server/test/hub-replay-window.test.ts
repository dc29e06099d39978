// The exact edges of the replay window, as the README's "Ids and replay" states them: the
// oldest `Last-Event-ID` a store can still answer exactly is the id just before the oldest event
// it keeps (memory: the last `bufferSize` events; Redis: the instance's recent events, then the
// stream), and one older is a `keel:reset`; the newest id replays nothing; an id one past it is
// none of the store's. Memory through a hub app; Redis on a real redis-server, its stream
// trimmed exactly (`XTRIM MAXLEN`, not `~`) so the oldest kept entry is known.
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { HUB_RESET_EVENT, memoryStore } from '../src/index';
import { type SseClient, type SseMessage, sse, trackApps, until } from './helpers';
import { hubApp } from './hub-fixture';
import { streamKey as key, redisInstances } from './redis-helpers';

const make = trackApps();
const live = redisInstances();

let direct: Redis | null = null;
afterEach(() => {
  direct?.disconnect();
  direct = null;
});

const shown = (events: readonly SseMessage[]): string[] =>
  events.map((e) => (e.event === HUB_RESET_EVENT ? `reset@${e.id}` : `${e.data}@${e.id}`));

/**
 * What a client back with `lastEventId` is sent before the live event `publish` sends (so a
 * replay that ends short, or a reset that comes late, shows).
 */
async function sentOnReconnect(
  port: number,
  lastEventId: string,
  publish: () => Promise<string>,
  track: (client: SseClient) => SseClient = (c) => c,
): Promise<string[]> {
  const client = track(await sse(port, '/events', { 'last-event-id': lastEventId }));
  try {
    // Attached once its response began: the replay (or reset) is written before any live event
    // (held meanwhile), so the live one marks its end.
    const id = await publish();
    await new Promise<void>((resolve, reject) => {
      const check = (): void => {
        if (client.events.some((e) => e.id === id)) resolve();
        else client.waitFor(client.events.length + 1).then(check, reject);
      };
      check();
    });
    return shown(client.events.slice(0, -1));
  } finally {
    client.close();
  }
}

describe('memory store (bufferSize 3, events e1..e5 published: e3, e4, e5 kept)', () => {
  async function filled() {
    const app = make();
    const { hub, port } = await hubApp(app, memoryStore({ bufferSize: 3 }));
    const ids: string[] = [];
    for (let i = 1; i <= 5; i++) ids.push(await hub.publish('n', `e${i}`));
    let n = 5;
    const next = () => hub.publish('n', `live${++n}`);
    return { hub, port, ids, next };
  }

  it('the id just before the oldest kept event (e2): replayed exactly, e3..e5', async () => {
    const { port, ids, next } = await filled();
    expect(await sentOnReconnect(port, ids[1]!, next)).toEqual([
      `e3@${ids[2]}`,
      `e4@${ids[3]}`,
      `e5@${ids[4]}`,
    ]);
  });

  it('one older (e1, evicted): keel:reset at the newest id, nothing replayed', async () => {
    const { port, ids, next } = await filled();
    expect(await sentOnReconnect(port, ids[0]!, next)).toEqual([`reset@${ids[4]}`]);
  });

  it('the newest id (e5): nothing replayed, no reset; one past it (never given): reset', async () => {
    const { port, ids, next } = await filled();
    expect(await sentOnReconnect(port, ids[4]!, next)).toEqual([]);
    const [epoch] = ids[4]!.split('-');
    const live6 = `${epoch}-6`; // given by the publish above
    expect(await sentOnReconnect(port, `${epoch}-8`, next)).toEqual([`reset@${live6}`]);
  });

  it('bufferSize 0: only the newest id is answered exactly; the one before it is a reset', async () => {
    const app = make();
    const { hub, port } = await hubApp(app, memoryStore({ bufferSize: 0 }));
    const a = await hub.publish('n', 'a');
    const b = await hub.publish('n', 'b');
    const next = () => hub.publish('n', 'live');
    expect(await sentOnReconnect(port, b, next)).toEqual([]);
    const newest = hub.lastId;
    expect(await sentOnReconnect(port, a, next)).toEqual([`reset@${newest}`]);
  });
});

describe('redis (entries a millisecond apart, so no id is the very next of another)', () => {
  /**
   * An instance with `bufferSize` recent events on a fresh stream holding e1..e5 (ids one
   * millisecond apart, a minute ahead, read by the instance; `sameMs`: in one millisecond, each
   * the very next id of the one before), trimmed to the last `kept`.
   */
  async function filled(bufferSize: number, kept = 5, sameMs = false) {
    const stream = key();
    const at = await live.instance(stream, { bufferSize, onError: () => {} });
    const watcher = live.track(await sse(at.port, '/events'));
    await until(() => at.hub.size === 1);
    direct = new Redis(live.redis.url);
    const ms = Date.now() + 60_000;
    const ids: string[] = [];
    for (let i = 1; i <= 5; i++) {
      const id = sameMs ? `${ms}-${i}` : `${ms + i}-0`;
      ids.push((await direct.xadd(stream, id, 'e', 'n', 'd', `e${i}`))!);
    }
    await watcher.waitFor(5);
    if (kept < 5) expect(await direct.xtrim(stream, 'MAXLEN', kept)).toBe(5 - kept);
    let n = 5;
    const next = () => at.hub.publish('n', `live${++n}`);
    const back = (id: string) => sentOnReconnect(at.port, id, next, live.track);
    return { ids, back, hub: at.hub };
  }

  it('the instance keeps e4, e5: e3 (just before them) is answered from them, e2 from the stream', async () => {
    const { ids, back } = await filled(2);
    expect(await back(ids[2]!)).toEqual([`e4@${ids[3]}`, `e5@${ids[4]}`]);
    // Now with the live event of that reconnect after them.
    const replayed = await back(ids[1]!);
    expect(replayed.slice(0, 3)).toEqual([`e3@${ids[2]}`, `e4@${ids[3]}`, `e5@${ids[4]}`]);
    expect(replayed.slice(3)).toEqual([expect.stringMatching(/^live6@/)]);
  });

  it('the stream trimmed to e3..e5, no recent events: e3 (the oldest kept) is replayed exactly', async () => {
    const { ids, back } = await filled(0, 3);
    expect(await back(ids[2]!)).toEqual([`e4@${ids[3]}`, `e5@${ids[4]}`]);
  });

  it('the stream trimmed to e3..e5: e2 (just trimmed, not the very id before e3) is a reset', async () => {
    const { ids, back } = await filled(0, 3);
    expect(await back(ids[1]!)).toEqual([`reset@${ids[4]}`]);
  });

  it('the stream trimmed to e3..e5 with ids in one millisecond: e2, whose very next id is e3, is replayed exactly (nothing can lie between)', async () => {
    const { ids, back, hub } = await filled(0, 3, true);
    expect(await back(ids[1]!)).toEqual([`e3@${ids[2]}`, `e4@${ids[3]}`, `e5@${ids[4]}`]);
    // e1 could have had entries after it (e2 was one): a reset, at the newest id (live6's).
    const newest = hub.lastId;
    expect(await back(ids[0]!)).toEqual([`reset@${newest}`]);
  });

  it('the newest id: nothing replayed, no reset; an id after it no entry has: a reset', async () => {
    const { ids, back } = await filled(0);
    expect(await back(ids[4]!)).toEqual([]);
    const [ms] = ids[4]!.split('-');
    const result = await back(`${ms}-7`);
    expect(result).toHaveLength(1);
    expect(result[0]).toMatch(/^reset@/);
  });
});
