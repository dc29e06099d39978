// Two instances that find the stream emptied at the same time, each after another last entry
// (one had read further): each would append its own marker just after its own last id, and the
// one that read less would read the other's marker later as a second loss, resetting its clients
// twice. Only the marker that lands first is written; the other instance resets at it. Real
// redis-server: `CLIENT PAUSE WRITE` holds both markers until both instances have sent theirs.
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { HUB_RESET_EVENT } from '../src/index';
import { type SseMessage, until } from './helpers';
import { inStreamOrder, streamKey as key, killReader, redisInstances } from './redis-helpers';

const live = redisInstances();
const quiet = { onError: () => {}, reconnect: { initialDelay: 5, maxDelay: 20 } };
const opened: Redis[] = [];
afterEach(async () => {
  for (const r of opened.splice(0)) r.disconnect();
});

const names = (events: SseMessage[]): string[] =>
  events.map((e) => (e.event === HUB_RESET_EVENT ? 'reset' : e.data));

/** A client of Redis user `name` (allowed everything, or all but `without`), named `name` too. */
async function clientOf(admin: Redis, name: string, without?: string): Promise<Redis> {
  const rules = without === undefined ? [] : [`-${without}`];
  await admin.call('ACL', 'SETUSER', name, 'reset', 'on', '>pw', '~*', '&*', '+@all', ...rules);
  const client = new Redis(live.redis.url.replace('//', `//${name}:pw@`), {
    connectionName: name,
    enableOfflineQueue: false,
    lazyConnect: true,
  });
  opened.push(client);
  await client.connect();
  return client;
}

/** Connections of `user` held by `CLIENT PAUSE WRITE` (blocked, not in their XREAD). */
async function paused(admin: Redis, user: string): Promise<number> {
  const list = (await admin.client('LIST')) as string;
  return list
    .split('\n')
    .filter((l) => l.includes(` user=${user} `) && /flags=\S*b/.test(l) && !l.includes('cmd=xread'))
    .length;
}

async function untilPaused(admin: Redis, user: string): Promise<void> {
  for (let i = 0; (await paused(admin, user)) === 0; i++) {
    expect(i).toBeLessThan(2000);
    await new Promise((r) => setTimeout(r, 5));
  }
}

describe('redisStreams: two instances find the stream emptied at once', () => {
  // `lower`: B's marker (just after `d`) lands first, then A's; `higher`: A's (after `e`) first.
  for (const first of ['lower', 'higher'] as const) {
    it(`each client is reset once, whichever marker comes first (${first})`, async () => {
      const admin = new Redis(live.redis.url);
      opened.push(admin);
      const stream = key();
      const a = await live.instance(stream, { ...quiet, client: await clientOf(admin, 'once-a') });
      const b = await live.instance(stream, { ...quiet, client: await clientOf(admin, 'once-b') });
      const onA = await a.connect();
      const onB = await b.connect();
      await until(() => a.hub.size === 1 && b.hub.size === 1);
      const d = await a.hub.publish('n', 'd');
      await Promise.all([onA.waitFor(1), onB.waitFor(1)]);

      // B's reader cut and kept out (its user off): A reads one entry more, `e`.
      await admin.call('ACL', 'SETUSER', 'once-b', 'off');
      await killReader(live.redis.url, 'once-b');
      const e = await a.hub.publish('n', 'e');
      await onA.waitFor(2);
      // The stream emptied; writes held until both instances found it and sent their marker.
      await admin.del(stream);
      await admin.call('CLIENT', 'PAUSE', '20000', 'WRITE');
      try {
        // B's reader reconnects and finds `d` gone; A's idle read ends and finds `e` gone.
        const findB = async () => {
          await admin.call('ACL', 'SETUSER', 'once-b', 'on');
          await untilPaused(admin, 'once-b');
        };
        const findA = async () => {
          await killReader(live.redis.url, 'once-a', true);
          await untilPaused(admin, 'once-a');
        };
        for (const find of first === 'lower' ? [findB, findA] : [findA, findB]) await find();
      } finally {
        await admin.call('CLIENT', 'UNPAUSE');
      }
      const after = await a.hub.publish('n', 'after');
      await until(() => [onA, onB].every((c) => c.events.some((x) => x.id === after)));
      expect(names(onA.events)).toEqual(['d', 'e', 'reset', 'after']);
      expect(names(onB.events)).toEqual(['d', 'reset', 'after']);
      // One loss announced: every marker has the same loss head (a second one, when A read
      // further than the first marker, keeps later ids above `e`).
      const entries = (await admin.xrange(stream, '-', '+')) as [string, string[]][];
      const heads = new Set(entries.filter(([, f]) => f[0] === 'k').map(([, f]) => f[1]));
      expect(heads).toEqual(new Set([first === 'lower' ? d : e]));
      // Back with the id of its reset: replayed what followed; with an id from before: reset.
      for (const [target, client] of [
        [a, onA],
        [b, onB],
      ] as const) {
        const resetId = client.events.find((x) => x.event === HUB_RESET_EVENT)!.id!;
        const back = await target.connect({ 'last-event-id': resetId });
        await back.waitFor(1);
        expect(back.events[0]).toMatchObject({ id: after, data: 'after' });
        back.close();
        const old = await target.connect({ 'last-event-id': d });
        await old.waitFor(1);
        expect(old.events[0]).toMatchObject({ event: HUB_RESET_EVENT });
        old.close();
      }
    }, 30_000);
  }
});

describe('redisStreams: the emptied stream found by one instance after another', () => {
  // B finds the stream emptied and marks it (a marker just after its last entry `d`), an entry
  // is published, and only then A, which had read further (`e`), finds `e` gone. The marker is
  // older than `e`: it is no older snapshot that kept entries A read before (A used to announce
  // a loss of its own, a second marker, and B's clients got a second `keel:reset`).
  it("another instance's marker is no older snapshot: each client is reset once", async () => {
    const admin = new Redis(live.redis.url);
    opened.push(admin);
    const stream = key();
    const a = await live.instance(stream, { ...quiet, client: await clientOf(admin, 'seq-a') });
    const b = await live.instance(stream, { ...quiet, client: await clientOf(admin, 'seq-b') });
    const onA = await a.connect();
    const onB = await b.connect();
    await until(() => a.hub.size === 1 && b.hub.size === 1);
    const d = await a.hub.publish('n', 'd');
    await Promise.all([onA.waitFor(1), onB.waitFor(1)]);

    // B's reader kept out (its user off): A reads one entry more, `e`; then A's reader is out.
    await admin.call('ACL', 'SETUSER', 'seq-b', 'off');
    await killReader(live.redis.url, 'seq-b');
    const e = await a.hub.publish('n', 'e');
    await onA.waitFor(2);
    await admin.call('ACL', 'SETUSER', 'seq-a', 'off');
    await killReader(live.redis.url, 'seq-a');
    await admin.del(stream);

    // B comes back first: finds `d` gone, marks the emptied stream, resets its clients.
    await admin.call('ACL', 'SETUSER', 'seq-b', 'on');
    await onB.waitFor(2);
    expect(onB.events[1]).toMatchObject({ event: HUB_RESET_EVENT });
    const marked = (await admin.xrange(stream, '-', '+')) as [string, string[]][];
    expect(marked.map(([, f]) => f)).toEqual([['k', d, 'b', '1']]);
    const f = await b.hub.publish('n', 'f');
    expect(inStreamOrder([e, f])).toEqual([e, f]);
    await onB.waitFor(3);

    // Then A: finds `e` gone, the entry after it `f`, and older than `e` only B's marker.
    await admin.call('ACL', 'SETUSER', 'seq-a', 'on');
    await until(() => onA.events.some((x) => x.id === f), 5000);
    const after = await a.hub.publish('n', 'after');
    await until(() => [onA, onB].every((c) => c.events.some((x) => x.id === after)));
    expect(names(onA.events)).toEqual(['d', 'e', 'reset', 'f', 'after']);
    expect(names(onB.events)).toEqual(['d', 'reset', 'f', 'after']);
    // No second loss announced.
    const entries = (await admin.xrange(stream, '-', '+')) as [string, string[]][];
    expect(entries.filter(([, x]) => x[0] === 'k')).toEqual(marked);

    // A client moved after its reset (to either instance) is replayed what followed; one with an
    // id from before the loss is reset.
    for (const [from, to] of [
      [onA, b],
      [onB, a],
      [onA, a],
      [onB, b],
    ] as const) {
      const resetId = from.events.find((x) => x.event === HUB_RESET_EVENT)!.id!;
      const back = await to.connect({ 'last-event-id': resetId });
      await back.waitFor(1);
      expect(names(back.events)[0]).toBe('f');
      await back.waitFor(2);
      expect(names(back.events)).toEqual(['f', 'after']);
      back.close();
    }
    for (const [target, old] of [
      [a, d],
      [a, e],
      [b, d],
      [b, e],
    ] as const) {
      const client = await target.connect({ 'last-event-id': old });
      await client.waitFor(1);
      expect(client.events[0]).toMatchObject({ event: HUB_RESET_EVENT });
      client.close();
    }
  }, 30_000);
});

describe('redisStreams: an emptied stream, WATCH refused by the ACL', () => {
  it('the marker is written all the same, unconditionally; the clients are reset once', async () => {
    const admin = new Redis(live.redis.url);
    opened.push(admin);
    const stream = key();
    const errors: unknown[] = [];
    const client = await clientOf(admin, 'nowatch', 'watch');
    const a = await live.instance(stream, { ...quiet, onError: (e) => errors.push(e), client });
    const onA = await a.connect();
    await until(() => a.hub.size === 1);
    const d = await a.hub.publish('n', 'd');
    await onA.waitFor(1);
    await admin.del(stream);
    await killReader(live.redis.url, 'nowatch', true);
    await onA.waitFor(2);
    const [ms, seq] = d.split('-');
    const marker = `${ms}-${Number(seq) + 1}`;
    expect(onA.events[1]).toMatchObject({ event: HUB_RESET_EVENT, id: marker });
    expect(await admin.xrange(stream, '-', '+')).toEqual([[marker, ['k', d, 'b', '1']]]);
    const after = await a.hub.publish('n', 'after');
    await until(() => onA.events.some((x) => x.id === after));
    expect(names(onA.events)).toEqual(['d', 'reset', 'after']);
    expect(errors).toEqual([]);
  }, 20_000);
});

describe("redisStreams: a loss after the instance's own reset at its marker", () => {
  // The instance found the stream emptied, marked it and reset its clients at that marker; it
  // then delivered `f`, which is lost (deleted) while the marker survives. Older than `f` there is
  // only a marker, but its own, whose reset came before `f`: no other instance's earlier find of
  // the same loss. A client still at the marker's id missed `f`: it is reset, not replayed `g`.
  it('a client back with the id of the earlier reset is reset, not replayed past the loss', async () => {
    const admin = new Redis(live.redis.url);
    opened.push(admin);
    const stream = key();
    const a = await live.instance(stream, quiet);
    const onA = await a.connect();
    await until(() => a.hub.size === 1);
    const d = await a.hub.publish('n', 'd');
    await onA.waitFor(1);
    await admin.del(stream);
    await killReader(live.redis.url, `keel:${stream}`, true);
    await onA.waitFor(2);
    const marker = onA.events[1]!;
    expect(marker).toMatchObject({ event: HUB_RESET_EVENT });
    const f = await a.hub.publish('n', 'f');
    await onA.waitFor(3);
    expect(await admin.xdel(stream, f)).toBe(1);
    // `g` in a later millisecond of Redis's clock: `idAfter(f)` would leave no id between them,
    // and the reader would find nothing missing after `f`.
    for (let i = 0; ; i++) {
      const [seconds, micros] = (await admin.time()).map(Number) as [number, number];
      if (seconds * 1000 + Math.floor(micros / 1000) > Number(f.split('-')[0])) break;
      expect(i).toBeLessThan(1000);
      await new Promise((r) => setTimeout(r, 1));
    }
    const g = await a.hub.publish('n', 'g');
    await until(() => onA.events.some((x) => x.id === g));
    expect(names(onA.events)).toEqual(['d', 'reset', 'f', 'reset', 'g']);
    expect(inStreamOrder([d, marker.id!, f, g])).toEqual([d, marker.id!, f, g]);
    // Back with the first reset's id (it missed `f`), or with `f` itself: reset.
    for (const old of [marker.id!, f]) {
      const client = await a.connect({ 'last-event-id': old });
      await client.waitFor(1);
      expect(client.events[0], old).toMatchObject({ event: HUB_RESET_EVENT });
      client.close();
    }
    // With the second reset's id: replayed what followed.
    const second = onA.events[3]!.id!;
    const back = await a.connect({ 'last-event-id': second });
    await back.waitFor(1);
    expect(back.events[0]).toMatchObject({ id: g, data: 'g' });
    back.close();
  }, 20_000);
});
