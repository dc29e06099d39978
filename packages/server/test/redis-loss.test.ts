// The loss marker of the Redis store lives in Redis: an instance that did not see a loss (it
// started after it, or was elsewhere) still answers an id from before the loss with keel:reset,
// never with a replay that silently skips the lost entries. Real redis-server, two instances.
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { HUB_RESET_EVENT } from '../src/index';
import type { RedisStreamsOptions } from '../src/redis/index';
import { until } from './helpers';
import {
  appClient,
  streamKey as key,
  killReader,
  publishWhenUp,
  redisInstances,
  startRedis,
  whenReady,
} from './redis-helpers';

const live = redisInstances();
const instance = (url: string, stream: string, options: RedisStreamsOptions = {}) =>
  live.instance(stream, {
    url,
    onError: () => {},
    reconnect: { initialDelay: 10, maxDelay: 50 },
    ...options,
  });

describe('redisStreams: a loss seen by one instance is known to every instance', () => {
  it('Redis restored an older snapshot: an instance started after the loss resets an id from before it', async () => {
    const server = await startRedis({ persistent: false });
    try {
      const stream = key();
      const a = await instance(server.url, stream);
      const onA = await a.connect();
      await until(() => a.hub.size === 1);
      const idA = await a.hub.publish('n', 'a');
      const idB = await a.hub.publish('n', 'b');
      const direct = new Redis(server.url);
      await direct.save(); // the snapshot holds a and b
      direct.disconnect();
      await a.hub.publish('n', 'c');
      await a.hub.publish('n', 'd');
      await onA.waitFor(4);
      await server.stop(); // c and d are lost
      await server.start();
      await onA.waitFor(5);
      expect(onA.events[4]!.event).toBe(HUB_RESET_EVENT);
      const e = await publishWhenUp(a.hub, 'e');
      await onA.waitFor(6);
      let newest = e;
      // B opens after the loss: it never saw c or d, nor their loss.
      for (const bufferSize of [100, 0]) {
        const b = await instance(server.url, stream, { bufferSize });
        await until(() => b.hub.lastId === newest);
        for (const lastEventId of [idA, idB]) {
          const back = await b.connect({ 'last-event-id': lastEventId });
          await back.waitFor(1);
          expect(back.events[0], `${lastEventId} on B (bufferSize ${bufferSize})`).toMatchObject({
            event: HUB_RESET_EVENT,
            data: JSON.stringify({ lastEventId }),
            id: newest,
          });
          back.close();
        }
        // An id after the loss is replayed exactly on B.
        const from = newest;
        newest = await b.hub.publish('n', 'f');
        await until(() => b.hub.lastId === newest);
        const after = await b.connect({ 'last-event-id': from });
        await after.waitFor(1);
        expect(after.events).toEqual([{ id: newest, event: 'n', data: 'f' }]);
        after.close();
      }
    } finally {
      await server.dispose();
    }
  }, 30_000);

  it('an instance whose reader was behind when Redis lost entries resets its clients too', async () => {
    const server = await startRedis({ persistent: false });
    const named = appClient(server.url, 'loss-b');
    try {
      await named.connect();
      const stream = key();
      const a = await instance(server.url, stream);
      // B's reader retries only after 800 ms: it will not have read c and d when they are lost.
      const b = await instance(server.url, stream, {
        client: named,
        reconnect: { initialDelay: 800, maxDelay: 800 },
      });
      const onB = await b.connect();
      await until(() => b.hub.size === 1);
      await a.hub.publish('n', 'a');
      await a.hub.publish('n', 'b');
      await onB.waitFor(2);
      const direct = new Redis(server.url);
      await direct.save(); // the snapshot holds a and b
      direct.disconnect();
      await killReader(server.url, 'loss-b');
      await a.hub.publish('n', 'c');
      const d = await a.hub.publish('n', 'd');
      await until(() => a.hub.lastId === d);
      expect(b.hub.lastId < d).toBe(true); // B has not read c, d
      await server.stop(); // c and d are lost; B's last entry (b) is not
      await server.start();
      const e = await publishWhenUp(a.hub, 'e');
      await until(() => b.hub.lastId >= e, 3000);
      await until(() => onB.events.some((x) => x.event === HUB_RESET_EVENT), 3000);
      // B's client never silently skips c and d: it is told to refetch.
      const names = onB.events.map((x) => (x.event === HUB_RESET_EVENT ? 'reset' : x.data));
      expect(names.slice(0, 2)).toEqual(['a', 'b']);
      expect(names).toContain('reset');
      expect(names.filter((n) => n === 'c' || n === 'd')).toEqual([]);
    } finally {
      named.disconnect();
      await server.dispose();
    }
  }, 30_000);
  it('a client reset on one instance moves to another that learned the loss from the marker: no second reset', async () => {
    const server = await startRedis({ persistent: false });
    const named = appClient(server.url, 'loss-moved');
    try {
      await named.connect();
      const stream = key();
      // A keeps no recent events in memory either: a reconnect to A is answered from Redis too.
      const a = await instance(server.url, stream, { bufferSize: 0 });
      const b = await instance(server.url, stream, {
        client: named,
        reconnect: { initialDelay: 800, maxDelay: 800 },
      });
      const onA = await a.connect();
      await until(() => a.hub.size === 1);
      await a.hub.publish('n', 'a');
      await a.hub.publish('n', 'b');
      await onA.waitFor(2);
      const direct = new Redis(server.url);
      await direct.save(); // the snapshot holds a and b
      direct.disconnect();
      await killReader(server.url, 'loss-moved'); // B learns of the loss from A's marker only
      await a.hub.publish('n', 'c');
      await a.hub.publish('n', 'd');
      await onA.waitFor(4);
      await server.stop(); // c and d are lost
      await server.start();
      await onA.waitFor(5);
      const reset = onA.events[4]!;
      expect(reset.event).toBe(HUB_RESET_EVENT);
      const e = await publishWhenUp(a.hub, 'e');
      await onA.waitFor(6);
      expect(onA.events[5]).toMatchObject({ id: e, data: 'e' });
      await until(() => b.hub.lastId >= e, 3000);
      // B replays with `named`, reconnecting on its own schedule (not its reader's).
      await whenReady(named);
      // A's client had a reset at its id and everything since: moving back to A (from Redis)
      // or over to B with that id, it is replayed what follows, not reset a second time.
      for (const [name, target] of [
        ['A', a],
        ['B', b],
      ] as const) {
        const moved = await target.connect({ 'last-event-id': reset.id! });
        await moved.waitFor(1);
        expect(moved.events[0], `reset id on ${name}`).toEqual({ id: e, event: 'n', data: 'e' });
        moved.close();
      }
    } finally {
      named.disconnect();
      await server.dispose();
    }
  }, 30_000);

  it('the only instance that saw the loss died before announcing it: the others still reset, and so does one started later', async () => {
    const server = await startRedis({ persistent: false });
    const named = appClient(server.url, 'loss-alone');
    try {
      await named.connect();
      const stream = key();
      const a = await instance(server.url, stream);
      // B's reader retries only after 300 ms: it will not have read c and d when they are lost.
      const b = await instance(server.url, stream, {
        client: named,
        reconnect: { initialDelay: 300, maxDelay: 300 },
      });
      const onB = await b.connect();
      await until(() => b.hub.size === 1);
      const idA = await a.hub.publish('n', 'a');
      const idB = await a.hub.publish('n', 'b');
      await onB.waitFor(2);
      const direct = new Redis(server.url);
      await direct.save(); // the snapshot holds a and b
      direct.disconnect();
      await killReader(server.url, 'loss-alone');
      await a.hub.publish('n', 'c');
      const d = await a.hub.publish('n', 'd');
      await until(() => a.hub.lastId === d);
      expect(b.hub.lastId < d).toBe(true); // B has not read c, d
      await a.hub.close(); // the only instance that read c and d dies before Redis restarts
      await server.stop(); // c and d are lost; B's last entry (b) is not
      await server.start();
      const e = await publishWhenUp(b.hub, 'e');
      await until(() => onB.events.some((x) => x.id === e), 3000);
      await until(() => onB.events.some((x) => x.event === HUB_RESET_EVENT), 3000);
      // B's client never silently skips c and d: it is told to refetch before it gets e (which
      // B may publish before its reader is back: the reset comes before what it has not read).
      const names = onB.events.map((x) => (x.event === HUB_RESET_EVENT ? 'reset' : x.data));
      expect(names).toEqual(['a', 'b', 'reset', 'e']);
      // An instance started after the restart answers an id from before it with keel:reset.
      const c = await instance(server.url, stream, { bufferSize: 0 });
      for (const lastEventId of [idA, idB]) {
        const back = await c.connect({ 'last-event-id': lastEventId });
        await back.waitFor(1);
        expect(back.events[0], lastEventId).toMatchObject({
          event: HUB_RESET_EVENT,
          id: c.hub.lastId,
        });
        back.close();
      }
    } finally {
      named.disconnect();
      await server.dispose();
    }
  }, 30_000);

  it('two instances each announced one restart: an instance started after it resets no client a second time', async () => {
    const server = await startRedis({ persistent: false });
    const named = appClient(server.url, 'loss-twice', {
      // Back after B's reader (2 s): B's replays below wait for it (`whenReady`), as they must
      // under any load; without that wait they were ended, unanswered (a flaky test).
      retryStrategy: () => 3500,
    });
    try {
      await named.connect();
      const stream = key();
      const a = await instance(server.url, stream, { bufferSize: 0 });
      // B's reader retries only after 2 s: it is more than a page (512 entries) behind A's
      // marker when it reconnects, so it does not see it and appends a marker of its own.
      const b = await instance(server.url, stream, {
        client: named,
        reconnect: { initialDelay: 2000, maxDelay: 2000 },
      });
      const onA = await a.connect();
      const onB = await b.connect();
      await until(() => a.hub.size === 1 && b.hub.size === 1);
      const old = await a.hub.publish('n', 'old');
      await Promise.all([onA.waitFor(1), onB.waitFor(1)]);
      await killReader(server.url, 'loss-twice');
      const burst = await Promise.all(
        Array.from({ length: 600 }, (_, i) => a.hub.publish('n', `x${i}`)),
      );
      await until(() => a.hub.lastId === burst.at(-1));
      const direct = new Redis(server.url);
      await direct.save(); // the snapshot holds everything: the restart loses nothing here
      direct.disconnect();
      await server.stop();
      await server.start();
      await until(() => onA.events.some((x) => x.event === HUB_RESET_EVENT), 3000);
      const e = await publishWhenUp(a.hub, 'e');
      await until(() => onA.events.some((x) => x.id === e));
      // C opens after A's marker, before B's: its client comes with the id of e.
      const c = await instance(server.url, stream, { bufferSize: 0 });
      const onC = await c.connect({ 'last-event-id': e });
      await until(() => c.hub.size === 1);
      await until(() => onB.events.some((x) => x.id === e), 5000);
      const check = new Redis(server.url);
      const markers = ((await check.xrange(stream, '-', '+')) as [string, string[]][]).filter(
        ([, fields]) => fields[0] === 'k',
      );
      check.disconnect();
      expect(markers).toHaveLength(2); // one per instance connected across the restart
      const f = await a.hub.publish('n', 'f');
      await until(() => [onA, onB, onC].every((x) => x.events.some((y) => y.id === f)));
      for (const [name, client] of [
        ['A', onA],
        ['B', onB],
      ] as const) {
        const resets = client.events.filter((x) => x.event === HUB_RESET_EVENT);
        expect(resets, `resets on ${name}`).toHaveLength(1);
      }
      // C's client connected after the restart with an id after the first marker: no reset.
      expect(onC.events).toEqual([{ id: f, event: 'n', data: 'f' }]);
      // Ids from after the first marker are replayed across the second on every instance, also
      // on D, opened after both markers (it read neither: it answers from Redis alone); one from
      // before the restart is reset.
      const d = await instance(server.url, stream, { bufferSize: 0 });
      const resetId = onA.events.find((x) => x.event === HUB_RESET_EVENT)!.id!;
      await whenReady(named); // B replays from Redis with it
      for (const [name, target] of [
        ['A', a],
        ['B', b],
        ['C', c],
        ['D', d],
      ] as const) {
        for (const from of [resetId, e]) {
          const moved = await target.connect({ 'last-event-id': from });
          await until(() => moved.events.some((x) => x.id === f));
          const data = moved.events.map((x) => (x.event === HUB_RESET_EVENT ? 'reset' : x.data));
          expect(data, `${from} on ${name}`).toEqual(from === e ? ['f'] : ['e', 'f']);
          moved.close();
        }
        const back = await target.connect({ 'last-event-id': old });
        await back.waitFor(1);
        expect(back.events[0], `old on ${name}`).toMatchObject({ event: HUB_RESET_EVENT });
        back.close();
      }
    } finally {
      named.disconnect();
      await server.dispose();
    }
  }, 30_000);

  it('a duplicate restart marker more than a page (512 entries) after the first: no second reset, on any instance', async () => {
    const server = await startRedis({ persistent: false });
    const named = appClient(server.url, 'loss-far');
    try {
      await named.connect();
      const stream = key();
      const a = await instance(server.url, stream, { bufferSize: 0 });
      // B's reader retries only after 3 s: it misses A's marker (more than a page after its
      // last entry) and appends its own, after more than a page of entries published since.
      const b = await instance(server.url, stream, {
        client: named,
        reconnect: { initialDelay: 3000, maxDelay: 3000 },
      });
      const onA = await a.connect();
      await until(() => a.hub.size === 1);
      await a.hub.publish('n', 'old');
      await onA.waitFor(1);
      await until(() => b.hub.lastId === a.hub.lastId);
      await killReader(server.url, 'loss-far');
      const before = await Promise.all(
        Array.from({ length: 600 }, (_, i) => a.hub.publish('n', `x${i}`)),
      );
      await until(() => a.hub.lastId === before.at(-1));
      const direct = new Redis(server.url);
      await direct.save(); // the snapshot holds everything: the restart loses nothing here
      await server.stop();
      await server.start();
      await until(() => onA.events.some((x) => x.event === HUB_RESET_EVENT), 3000);
      const e = await publishWhenUp(a.hub, 'e');
      // C opens after A's marker: its client comes with the id of e.
      const c = await instance(server.url, stream, { bufferSize: 0 });
      const onC = await c.connect({ 'last-event-id': e });
      await until(() => c.hub.size === 1);
      const after = await Promise.all(
        Array.from({ length: 600 }, (_, i) => a.hub.publish('n', `y${i}`)),
      );
      const markers = async () =>
        ((await direct.xrange(stream, '-', '+')) as [string, string[]][])
          .filter(([, fields]) => fields[0] === 'k')
          .map(([id]) => id);
      for (let i = 0; (await markers()).length < 2; i++) {
        expect(i).toBeLessThan(1000);
        await new Promise((r) => setTimeout(r, 10));
      }
      const [first, second] = await markers();
      // The setup holds: e and the 600 entries lie between the two markers.
      expect(first! < e && e < after[0]! && after.at(-1)! < second!).toBe(true);
      const f = await a.hub.publish('n', 'f');
      await until(() => [onA, onC].every((x) => x.events.some((y) => y.id === f)), 5000);
      direct.disconnect();
      expect(onA.events.filter((x) => x.event === HUB_RESET_EVENT)).toHaveLength(1);
      // C's client came after the restart: the second marker is no loss to it.
      expect(onC.events.filter((x) => x.event === HUB_RESET_EVENT)).toEqual([]);
      expect(onC.events).toHaveLength(601);
      // A replay from e crosses the second marker only: exact on every instance, also on D,
      // opened after both markers.
      const d = await instance(server.url, stream, { bufferSize: 0 });
      for (const [name, target] of [
        ['A', a],
        ['C', c],
        ['D', d],
      ] as const) {
        const moved = await target.connect({ 'last-event-id': e });
        await until(() => moved.events.some((x) => x.id === f));
        expect(moved.events[0], `e on ${name}`).toMatchObject({ data: 'y0' });
        expect(moved.events, `e on ${name}`).toHaveLength(601);
        moved.close();
      }
    } finally {
      named.disconnect();
      await server.dispose();
    }
  }, 30_000);
});
