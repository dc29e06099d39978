// The last entry an instance read is deleted (XDEL) and the next entry has the very next id (a
// publish in the same millisecond: Redis keeps the stream's last id, so `XADD *` gives
// `<ms>-<n+1>`).
// The reader found nothing missing between its last entry and the next one, which is true for its
// own clients (they have the deleted entry), and stopped there: the deleted entry itself was
// announced to no one. A client holding an older id, on an instance that never had the entry
// in memory, was replayed past it without a reset, and an instance whose reader was behind
// delivered the next entry to its clients without the deleted one, silently. Real redis-server;
// the entry after the deleted one is added with an explicit id, the very next one.
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { HUB_RESET_EVENT } from '../src/index';
import { type SseMessage, until } from './helpers';
import { appClient, streamKey as key, killReader, redisInstances } from './redis-helpers';

const live = redisInstances();
const quiet = { onError: () => {}, reconnect: { initialDelay: 5, maxDelay: 20 } };
const opened: Redis[] = [];
afterEach(async () => {
  for (const r of opened.splice(0)) r.disconnect();
});

const names = (events: SseMessage[]): string[] =>
  events.map((e) => (e.event === HUB_RESET_EVENT ? 'reset' : e.data));

/** The id just after `id` in its millisecond. */
const next = (id: string): string => {
  const [ms, seq] = id.split('-');
  return `${ms}-${Number(seq) + 1}`;
};

describe('redisStreams: a delivered entry deleted, the next one with the very next id', () => {
  it('is announced: an older id is reset on any instance, a reader that was behind resets; the clients that had it are not', async () => {
    const admin = new Redis(live.redis.url);
    opened.push(admin);
    const named = appClient(live.redis.url, 'next-id-b');
    opened.push(named);
    await named.connect();
    const stream = key();
    const a = await live.instance(stream, quiet);
    // B's reader retries only after 800 ms once cut: it will not have read `f` when it is deleted.
    const b = await live.instance(stream, {
      client: named,
      onError: () => {},
      reconnect: { initialDelay: 800, maxDelay: 800 },
    });
    const onA = await a.connect();
    const onB = await b.connect();
    await until(() => a.hub.size === 1 && b.hub.size === 1);
    const d = await a.hub.publish('n', 'd');
    await onA.waitFor(1);
    await onB.waitFor(1);
    await killReader(live.redis.url, 'next-id-b');
    const f = await a.hub.publish('n', 'f');
    await onA.waitFor(2);
    expect(await admin.xdel(stream, f)).toBe(1);
    const g = await admin.xadd(stream, next(f), 'e', 'n', 'd', 'g');
    expect(g).toBe(next(f));
    await until(() => onA.events.some((x) => x.id === g));
    // B read `g` without `f`: its client is told to refetch.
    await until(() => onB.events.some((x) => x.event === HUB_RESET_EVENT), 3000);
    expect(names(onB.events)).toEqual(['d', 'g', 'reset']);
    // An instance started after it, which never had `f` in memory: a client back with an id from
    // before `f` is reset, one back with `f` (it missed nothing) is replayed what followed.
    const c = await live.instance(stream, quiet);
    const fromD = await c.connect({ 'last-event-id': d });
    await fromD.waitFor(1);
    expect(fromD.events[0]).toMatchObject({
      event: HUB_RESET_EVENT,
      data: JSON.stringify({ lastEventId: d }),
    });
    const fromF = await c.connect({ 'last-event-id': f });
    const h = await a.hub.publish('n', 'h');
    await fromF.waitFor(2);
    expect(fromF.events).toEqual([
      { id: g, event: 'n', data: 'g' },
      { id: h, event: 'n', data: 'h' },
    ]);
    // A's client had `f`, and nothing can lie between `f` and `g`: never reset.
    await until(() => onA.events.some((x) => x.id === h));
    expect(names(onA.events)).toEqual(['d', 'f', 'g', 'h']);
    // On A, which still holds `f` in memory, an id from before it is reset as on any instance.
    const backOnA = await a.connect({ 'last-event-id': d });
    await backOnA.waitFor(1);
    expect(backOnA.events[0]).toMatchObject({ event: HUB_RESET_EVENT });
  }, 20_000);

  /**
   * A and C on one stream, each with a client, have read `d0`..`d<n>` and `f`; C's reader is cut
   * (back after 800 ms), `g` is added with the very next id and A reads it. `gone()` deletes `f`
   * and resolves once C has announced it (its marker is in the stream).
   */
  async function readPastF(n: number, bufferSize?: number) {
    const admin = new Redis(live.redis.url);
    opened.push(admin);
    const named = appClient(live.redis.url, 'next-id-c');
    opened.push(named);
    await named.connect();
    const stream = key();
    const a = await live.instance(stream, { ...quiet, bufferSize });
    const c = await live.instance(stream, {
      client: named,
      onError: () => {},
      reconnect: { initialDelay: 800, maxDelay: 800 },
    });
    const onA = await a.connect();
    const onC = await c.connect();
    await until(() => a.hub.size === 1 && c.hub.size === 1);
    const ds: string[] = [];
    for (let i = 0; i <= n; i++) ds.push(await a.hub.publish('n', `d${i}`));
    const f = await a.hub.publish('n', 'f');
    await onA.waitFor(n + 2);
    await onC.waitFor(n + 2);
    await killReader(live.redis.url, 'next-id-c');
    const g = await admin.xadd(stream, next(f), 'e', 'n', 'd', 'g');
    expect(g).toBe(next(f));
    await until(() => onA.events.some((x) => x.id === g));
    const announced = async (): Promise<void> => {
      for (let i = 0; !(await admin.xrange(stream, '-', '+')).some(([, x]) => x[0] === 'k'); i++) {
        expect(i).toBeLessThan(1000);
        await new Promise((r) => setTimeout(r, 5));
      }
    };
    const gone = async (): Promise<void> => {
      expect(await admin.xdel(stream, f)).toBe(1);
    };
    return { a, c, onA, onC, ds, f, g, gone, announced };
  }

  it('an instance that had read the deleted entry and the next one is not reset by its marker', async () => {
    const { a, onA, onC, gone, announced } = await readPastF(0);
    // A read `f` and `g` before `f` was deleted: its client has every entry.
    await gone();
    // C finds `f` gone and announces it (for clients holding an older id).
    await announced();
    const h = await a.hub.publish('n', 'h');
    await until(
      () => onA.events.some((x) => x.id === h) && onC.events.some((x) => x.id === h),
      3000,
    );
    expect(names(onA.events)).toEqual(['d0', 'f', 'g', 'h']);
    expect(names(onC.events)).toEqual(['d0', 'f', 'g', 'h']);
  }, 20_000);

  it('but a client it replayed from the stream across the deleted entry is reset', async () => {
    // A keeps 3 recent events: a client back from `d0` is replayed from the stream (XRANGE).
    const { a, onA, ds, g, gone, announced } = await readPastF(4, 3);
    await gone();
    const back = await a.connect({ 'last-event-id': ds[0]! });
    await until(() => back.events.some((x) => x.id === g));
    // Replayed after `f` was deleted: it missed `f`, which A's own client had.
    expect(names(back.events)).toEqual(['d1', 'd2', 'd3', 'd4', 'g']);
    await announced();
    await until(() => back.events.some((x) => x.event === HUB_RESET_EVENT), 3000);
    expect(names(back.events)).toEqual(['d1', 'd2', 'd3', 'd4', 'g', 'reset']);
    expect(names(onA.events).at(-1)).toBe('reset');
  }, 20_000);
});
