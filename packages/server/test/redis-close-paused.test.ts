// `hub.close()` with Redis paused (SIGSTOP: the kernel still holds its sockets, nothing answers):
// the store's QUIT is never answered. It waited for it up to `commandTimeout` (24 days at most),
// so an app's shutdown hung with it. The wait is bounded on the store's clock (a manual one
// here), then the connections are destroyed. Real redis-server.
import { describe, expect, it } from 'vitest';
import { createEventHub } from '../src/index';
import { redisStreams } from '../src/redis/index';
import { ManualClock, settle } from './helpers';
import { streamKey as key, startRedis } from './redis-helpers';

/** Open TCP handles of this process (sockets and servers). */
const tcpHandles = (): number =>
  process.getActiveResourcesInfo().filter((r) => r === 'TCPWrap' || r === 'TCPSocketWrap').length;

describe('hub.close() with Redis paused', () => {
  it('waits for QUIT a bounded time on the store clock, then destroys its connections', async () => {
    const server = await startRedis();
    const pid = server.pid()!;
    let stopped = false;
    try {
      const before = tcpHandles();
      const clock = new ManualClock();
      const hub = createEventHub({
        store: redisStreams({
          url: server.url,
          stream: key(),
          clock,
          commandTimeout: 2_000_000_000,
          onError: () => {},
        }),
      });
      await hub.ready;
      await hub.publish('n', 'x');
      process.kill(pid, 'SIGSTOP');
      stopped = true;
      let closed = false;
      const closing = hub.close().then(() => {
        closed = true;
      });
      // Closed again meanwhile (a second shutdown hook): done only once the first is.
      let again = false;
      const closingAgain = hub.close().then(() => {
        again = true;
      });
      await settle(10);
      expect(closed).toBe(false); // QUIT sent, unanswered
      expect(again).toBe(false);
      clock.tick(1000);
      await Promise.all([closing, closingAgain]);
      // Destroyed, not ended: a FIN to a paused Redis would leave them open (ioredis destroys
      // them after its own 2 s).
      await settle();
      expect(tcpHandles()).toBeLessThanOrEqual(before);
      expect(clock.active).toBe(0);
    } finally {
      if (stopped) process.kill(pid, 'SIGCONT');
      await server.dispose();
    }
  }, 20_000);

  it('closed while it opens: hub.ready settles at once, no backoff timer is left', async () => {
    const server = await startRedis();
    const pid = server.pid()!;
    process.kill(pid, 'SIGSTOP');
    try {
      const clock = new ManualClock();
      const hub = createEventHub({
        store: redisStreams({ url: server.url, stream: key(), clock, onError: () => {} }),
      });
      let settled = false;
      void hub.ready.then(
        () => (settled = true),
        () => (settled = true),
      );
      // Its first command (INFO) is sent and unanswered.
      await settle(10);
      const closing = hub.close();
      clock.tick(1000); // the QUIT wait
      await closing;
      await settle(10);
      // The failed INFO did not start an attempt's backoff after the close.
      expect(settled).toBe(true);
      expect(clock.active).toBe(0);
    } finally {
      process.kill(pid, 'SIGCONT');
      await server.dispose();
    }
  }, 20_000);
});
