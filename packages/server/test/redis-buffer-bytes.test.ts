// An instance's recent events were bounded by count alone (`bufferSize`): a few huge events made
// it hold up to `bufferSize` times their size. `bufferBytes` bounds them in bytes too; a
// reconnect from before what it still holds reads the stream (XRANGE), never a reset for it.
// Real redis-server.
import { describe, expect, it } from 'vitest';
import { createApp, type HubStore } from '../src/index';
import { redisStreams } from '../src/redis/index';
import { sse, until } from './helpers';
import { hubApp } from './hub-fixture';
import { streamKey as key, redisInstances } from './redis-helpers';

const live = redisInstances();

describe('redisStreams({ bufferBytes })', () => {
  it('holds at most that many bytes of recent events; older ids are replayed from the stream', async () => {
    const inner = redisStreams({ url: live.redis.url, stream: key(), bufferBytes: 600 });
    /** Replays that went to Redis (answered later, not from the recent events). */
    let reads = 0;
    const store: HubStore = {
      open: (target) => inner.open(target),
      append: (event, data, topic) => inner.append(event, data, topic),
      replay(request) {
        const answer = inner.replay(request);
        if (answer instanceof Promise) reads++;
        return answer;
      },
      close: () => inner.close(),
    };
    const app = createApp();
    const { hub, port } = await hubApp(app, store);
    live.trackApp(app, hub);
    await hub.ready;
    const ids: string[] = [];
    // About 137 bytes each (id, name, 100 bytes of data, 21): 600 bytes hold the last 4.
    for (let i = 0; i < 6; i++) ids.push(await hub.publish('n', `${i}`.repeat(100)));
    await until(() => hub.lastId === ids[5]);
    const recent = live.track(await sse(port, '/events', { 'last-event-id': ids[2]! }));
    await recent.waitFor(3);
    expect(recent.events.map((e) => e.id)).toEqual(ids.slice(3));
    expect(reads).toBe(0);
    const older = live.track(await sse(port, '/events', { 'last-event-id': ids[0]! }));
    await older.waitFor(5);
    expect(older.events.map((e) => e.id)).toEqual(ids.slice(1));
    expect(reads).toBe(1);
  });

  it('is a whole number of bytes', () => {
    for (const bad of [-1, 1.5, '1']) {
      expect(() => redisStreams({ bufferBytes: bad as never })).toThrow(/bufferBytes/);
    }
  });
});
