// After a failed read the reader waits (backoff) before it tries again; the connection
// reconnects on its own schedule. Once the connection is back (its handshake answered) the
// reader reads at once, not when its wait ends: else a reader that failed a few times while
// Redis restarted waited up to `maxDelay` more with Redis already there. The store's waits run
// on an injected clock that is never advanced here, so only the reconnect can end them. Real
// redis-server, stopped and started again.
import { describe, expect, it } from 'vitest';
import type { Clock } from '../src/index';
import { until } from './helpers';
import {
  appClient,
  streamKey as key,
  killReader,
  publishWhenUp,
  redisInstances,
} from './redis-helpers';

const live = redisInstances();

/** A clock whose timers never fire (nothing advances it): only what it holds is seen. */
function stoppedClock() {
  const pending = new Set<object>();
  const clock: Clock = {
    now: () => Date.now(),
    setTimeout: () => {
      const handle = {};
      pending.add(handle);
      return handle;
    },
    clearTimeout: (handle) => void pending.delete(handle as object),
  };
  return { clock, pending };
}

describe('redisStreams: the reader after an outage', () => {
  it('reads again as soon as its connection is back, not when its backoff ends', async () => {
    const { clock, pending } = stoppedClock();
    const errors: unknown[] = [];
    const a = await live.instance(key(), {
      clock,
      onError: (e) => void errors.push(e),
      reconnect: { initialDelay: 5, maxDelay: 20 },
    });
    const client = await a.connect();
    await until(() => a.hub.size === 1);
    expect(pending.size).toBe(0);

    await live.redis.stop();
    // The read failed: the reader waits on the clock (for ever, here).
    await until(() => pending.size === 1);
    await live.redis.start();
    const id = await publishWhenUp(a.hub, 'back');
    await until(() => client.events.some((e) => e.id === id), 5000);
    // Its wait ended by the reconnect: its timer is cleared, none left behind.
    expect(pending.size).toBe(0);
    expect(errors.length).toBeGreaterThan(0);
  }, 20_000);

  it('an outage no connection error explains is told once, when the reader reads again', async () => {
    // Redis closes the reader's connection cleanly (CLIENT KILL) and is there when it reconnects:
    // ioredis emits no error, only the blocked read fails. That read is the outage's only trace.
    const errors: unknown[] = [];
    const named = appClient(live.redis.url, 'cut-told');
    try {
      await named.connect();
      const a = await live.instance(key(), {
        client: named,
        onError: (e) => void errors.push(e),
        reconnect: { initialDelay: 5, maxDelay: 20 },
      });
      const client = await a.connect();
      await until(() => a.hub.size === 1);
      await killReader(live.redis.url, 'cut-told');
      const id = await publishWhenUp(a.hub, 'back');
      await until(() => client.events.some((e) => e.id === id), 5000);
      await until(() => errors.length > 0, 2000);
      expect(errors).toHaveLength(1);
      expect(errors[0]).toBeInstanceOf(Error);
    } finally {
      named.disconnect();
    }
  }, 20_000);

  it('a `clock` without its methods is a TypeError naming it', async () => {
    const { redisStreams } = await import('../src/redis/index');
    expect(() => redisStreams({ clock: {} as Clock })).toThrow(/`clock.now`/);
  });
});
