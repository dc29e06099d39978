// One instance's path to Redis cut while another publishes 400 events of 10 KB (Redis keeps
// them all): when the path came back, its reader handed a whole XREAD page (up to 512 entries,
// 4 MB) to the hub in one turn, past what one turn may queue for a client (2 x
// maxBufferedBytes) and what the hub holds beyond: every client of that instance got
// `keel:reset` and lost half the events, however fast it read. The README says an outage
// alone resets nobody. The reader now lets Node write between slices of a page.
import { describe, expect, it } from 'vitest';
import { createApp } from '../src/index';
import { redisStreams } from '../src/redis/index';
import { guardProcess } from './adversarial/harness';
import { sse, until } from './helpers';
import { hubApp } from './hub-fixture';
import { holdingProxy, streamKey as key, redisInstances } from './redis-helpers';

guardProcess();
const live = redisInstances();

describe('redisStreams: a page of megabytes read after an outage', () => {
  it('reaches a client that reads, in order, with no reset', async () => {
    const stream = key();
    const a = await live.instance(stream);
    const proxy = await holdingProxy(live.redis.url, 'reader');
    try {
      const app = createApp();
      const { hub, port } = await hubApp(app, redisStreams({ url: proxy.url, stream }));
      live.trackApp(app, hub);
      await hub.ready;
      const client = live.track(await sse(port, '/events'));
      await until(() => hub.size === 1);
      proxy.hold();
      const data = 'x'.repeat(10_000);
      const ids: string[] = [];
      for (let i = 0; i < 400; i++) ids.push(await a.hub.publish('n', `${i} ${data}`));
      proxy.release();
      // (Not waitFor: its failure message would print 4 MB of events.)
      const reset = () => client.events.some((e) => e.event === 'keel:reset');
      for (let i = 0; i < 2000 && client.events.length < 400 && !reset(); i++) {
        await new Promise((r) => setTimeout(r, 10));
      }
      expect(reset()).toBe(false);
      expect(client.events.length).toBe(400);
      expect(client.events.map((e) => e.id).join()).toBe(ids.join());
    } finally {
      await proxy.close();
    }
  }, 30_000);
});
