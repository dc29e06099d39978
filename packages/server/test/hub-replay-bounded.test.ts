// A reconnect with a valid but old `Last-Event-ID` made the store build the list of every event
// since that id (the whole buffer, a ring of any `bufferSize`) before the hub's byte limit
// (`sse.maxBufferedBytes`) turned it into a reset: a client (or a thousand reconnecting tabs)
// sending the oldest id allocated the whole ring at each reconnect. The stores now stop reading
// once the events of the client's topics cannot fit, and answer `reset`, as the hub would have.
// Counted in events handed back and in `include` calls, never in time.
import { describe, expect, it } from 'vitest';
import { HUB_RESET_EVENT, memoryStore, type ReplayResult } from '../src/index';
import { formatEvent } from '../src/sse';
import { guardProcess } from './adversarial/harness';
import { sse, trackApps, until } from './helpers';
import { hubApp, recordedReplays as recorded, redisHubApp, noSink as sink } from './hub-fixture';
import { streamKey as key, redisInstances } from './redis-helpers';

guardProcess();
const make = trackApps();
const live = redisInstances();

/** Events in an answer (0 for a reset or `ahead`). */
const handedBack = (answers: ReplayResult[]): number[] =>
  answers.map((a) => (a.kind === 'events' ? a.events.length : 0));

describe('memoryStore.replay with an old id and a small maxBytes', () => {
  function filled(n: number, topic?: (i: number) => string | undefined) {
    const store = memoryStore({ bufferSize: n });
    const oldest = store.open(sink) as string;
    let newest = oldest;
    for (let i = 0; i < n; i++) newest = store.append('n', 'x'.repeat(10), topic?.(i)) as string;
    return { store, oldest, newest };
  }

  it('reads only as far as maxBytes allows, then answers reset', () => {
    const { store, oldest, newest } = filled(100_000);
    let asked = 0;
    const answer = store.replay({
      after: oldest,
      upTo: newest,
      include: () => {
        asked++;
        return true;
      },
      maxBytes: 1000,
    }) as ReplayResult;
    expect(answer).toEqual({ kind: 'reset' });
    // Each event's frame is at least its data, id and name: fewer than 1000 / 30 fit.
    expect(asked).toBeLessThanOrEqual(40);
  });

  it('counts only the events of the client: the others are passed over, not handed back', () => {
    // One event in 1000 is the client's.
    const { store, oldest, newest } = filled(100_000, (i) => (i % 1000 === 0 ? 'mine' : 'other'));
    const answer = store.replay({
      after: oldest,
      upTo: newest,
      include: (topic) => topic === 'mine',
      maxBytes: 10_000,
    }) as ReplayResult;
    expect(answer.kind).toBe('events');
    expect(answer.kind === 'events' && answer.events.map((e) => e.topic)).toEqual(
      Array(100).fill('mine'),
    );
  });

  it('a replay within maxBytes is exact, up to its last byte (multi-byte data, line breaks)', () => {
    const store = memoryStore({ bufferSize: 10 });
    const oldest = store.open(sink) as string;
    const data = ['abc', '\u00e9\u20ac\u{1F600}', 'a\r\nb\rc\n', '', '\uD800'];
    const ids = data.map((d) => store.append('n', d, undefined) as string);
    const all = { after: oldest, upTo: ids.at(-1)!, include: () => true };
    // The bytes of the frames the hub writes, which the limit is measured against.
    const exact = data.reduce(
      (sum, d, i) => sum + Buffer.byteLength(formatEvent('n', d, ids[i])),
      0,
    );
    const answer = store.replay({ ...all, maxBytes: exact }) as ReplayResult;
    expect(answer.kind === 'events' && answer.events.map((e) => e.id)).toEqual(ids);
  });
});

describe('a hub client reconnecting with the oldest id of a large buffer', () => {
  it('memory: keel:reset, and the store hands back no event list', async () => {
    const app = make({ sse: { maxBufferedBytes: 4096 } });
    const { store, answers } = recorded(memoryStore({ bufferSize: 20_000 }));
    const { hub, port } = await hubApp(app, store);
    const first = await hub.publish('n', 'x'.repeat(50));
    for (let i = 1; i < 20_000; i++) await hub.publish('n', 'x'.repeat(50));
    for (let tab = 0; tab < 3; tab++) {
      const client = await sse(port, '/events', { 'last-event-id': first });
      await client.waitFor(1);
      expect(client.events[0]).toEqual({
        id: hub.lastId,
        event: HUB_RESET_EVENT,
        data: JSON.stringify({ lastEventId: first }),
      });
      client.close();
    }
    expect(answers.map((a) => a.kind)).toEqual(['reset', 'reset', 'reset']);
    await until(() => hub.size === 0);
  });
});

describe('redis: the same old id', () => {
  const redisHub = (bufferSize: number) =>
    redisHubApp(
      live,
      { stream: key(), bufferSize, maxLen: 100_000 },
      { sse: { maxBufferedBytes: 4096 } },
    );

  /** Publishes `n` events, 100 at a time; resolves with their ids once delivered. */
  async function publish(
    hub: Awaited<ReturnType<typeof redisHub>>['hub'],
    n: number,
    data: string,
  ) {
    const ids: string[] = [];
    for (let i = 0; i < n; i += 100) {
      ids.push(...(await Promise.all(Array.from({ length: 100 }, () => hub.publish('n', data)))));
    }
    const newest = ids.reduce((a, b) => (compare(a, b) > 0 ? a : b));
    await until(() => hub.lastId === newest, 10_000);
    return ids.sort(compare);
  }
  const compare = (a: string, b: string) => {
    const [at, as] = a.split('-').map(Number);
    const [bt, bs] = b.split('-').map(Number);
    return at! - bt! || as! - bs!;
  };

  it('from the instance buffer: keel:reset, no event list', async () => {
    const { hub, port, answers } = await redisHub(5000);
    const ids = await publish(hub, 5000, 'x'.repeat(50));
    const client = live.track(await sse(port, '/events', { 'last-event-id': ids[0]! }));
    await client.waitFor(1);
    expect(client.events[0]!.event).toBe(HUB_RESET_EVENT);
    expect(handedBack(answers)).toEqual([0]);
  });

  it('from XRANGE, events with empty data: their frames count, not only their data', async () => {
    const { hub, port, answers } = await redisHub(1);
    const ids = await publish(hub, 3000, '');
    const client = live.track(await sse(port, '/events', { 'last-event-id': ids[0]! }));
    await client.waitFor(1);
    expect(client.events[0]!.event).toBe(HUB_RESET_EVENT);
    expect(handedBack(answers)).toEqual([0]);
  });
});
