// A replay sent while the store's publishing connection (which replays) is still reconnecting,
// its reader already back (or never cut), failed at once ("Stream isn't writeable"): the hub
// ended the client unanswered, and it came back after its backoff for nothing. It now waits for
// the connection to be ready, within `commandTimeout`. Real redis-server.
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { createApp, HubPublishError } from '../src/index';
import { redisStreams } from '../src/redis/index';
import { ManualClock, sse, until } from './helpers';
import { hubApp } from './hub-fixture';
import { appClient, streamKey as key, redisInstances } from './redis-helpers';

const live = redisInstances();

/** Kills the connection of `url`'s Redis whose last command was `cmd` and whose name is `name`. */
async function kill(url: string, cmd: string, name = ''): Promise<void> {
  const direct = new Redis(url);
  try {
    const list = (await direct.client('LIST')) as string;
    const line = list
      .split('\n')
      .find((l) => l.includes(` name=${name} `) && l.includes(`cmd=${cmd}`));
    expect(line, `a connection named "${name}" whose last command was ${cmd}`).toBeDefined();
    await direct.client('KILL', 'ID', /id=(\d+)/.exec(line!)![1]!);
  } finally {
    direct.disconnect();
  }
}

/** A hub on the file's Redis (no recent events: every replay reads the stream) and 3 events. */
async function setup(options: Parameters<typeof redisStreams>[0]) {
  const app = createApp();
  const store = redisStreams({ url: live.redis.url, stream: key(), bufferSize: 0, ...options });
  const { hub, port } = await hubApp(app, store);
  live.trackApp(app, hub);
  await hub.ready;
  const ids: string[] = [];
  for (let i = 0; i < 3; i++) ids.push(await hub.publish('n', `e${i}`));
  await until(() => hub.lastId === ids[2]);
  return { hub, port, ids };
}

describe('redisStreams: a replay while the publishing connection reconnects', () => {
  it("a shared client's: the replay waits for it, and the client is replayed", async () => {
    const name = `app-${Date.now()}`;
    const client = appClient(live.redis.url, name, { retryStrategy: () => 300 });
    await client.connect();
    try {
      const { hub, port, ids } = await setup({ client, onError: () => {} });
      await kill(live.redis.url, 'xadd', name);
      await until(() => client.status === 'reconnecting');
      const back = live.track(await sse(port, '/events', { 'last-event-id': ids[0]! }));
      await back.waitFor(2, 4000);
      expect(back.events.map((e) => e.id)).toEqual(ids.slice(1));
      expect(hub.metrics.replayFailures).toBe(0);
    } finally {
      client.disconnect();
    }
  });

  it("the store's own: the replay waits for it, and the client is replayed", async () => {
    const { hub, port, ids } = await setup({
      onError: () => {},
      reconnect: { initialDelay: 300, maxDelay: 300 },
    });
    await kill(live.redis.url, 'xadd');
    // A publish rejected: the connection knows it is down (it reconnects in 300 ms).
    await expect(hub.publish('n', 'x')).rejects.toBeInstanceOf(HubPublishError);
    const back = live.track(await sse(port, '/events', { 'last-event-id': ids[0]! }));
    await back.waitFor(2, 4000);
    expect(back.events.map((e) => e.id)).toEqual(ids.slice(1));
    expect(hub.metrics.replayFailures).toBe(0);
  });

  /**
   * A store on a manual clock whose publishing connection was cut (ioredis reconnects it only
   * after the test), and a client whose replay waits for it: `timers` the clock's before it.
   */
  async function waiting() {
    const clock = new ManualClock();
    const { hub, port, ids } = await setup({
      clock,
      commandTimeout: 1000,
      onError: () => {},
      reconnect: { initialDelay: 60_000, maxDelay: 60_000 },
    });
    await kill(live.redis.url, 'xadd');
    await expect(hub.publish('n', 'x')).rejects.toBeInstanceOf(HubPublishError);
    const timers = clock.active;
    const back = live.track(await sse(port, '/events', { 'last-event-id': ids[0]! }));
    await until(() => clock.active === timers + 1);
    return { clock, hub, back, timers };
  }

  it('not back within commandTimeout (on the store clock): the replay fails, the client is ended', async () => {
    const { clock, hub, back, timers } = await waiting();
    expect(hub.metrics).toMatchObject({ replaying: 1, replayFailures: 0 });
    clock.tick(1000);
    await back.ended;
    expect(back.events).toEqual([]);
    expect(hub.metrics).toMatchObject({ replaying: 0, replayFailures: 1 });
    expect(clock.active).toBe(timers);
  });

  it('hub.close() ends the wait at once: no timer left', async () => {
    const { clock, hub, back } = await waiting();
    await hub.close();
    await back.ended;
    expect(clock.active).toBe(0);
  });
});
