// A reconnect's `Last-Event-ID` is looked up in the replay buffer. An id it does not hold (junk,
// foreign, too old) was found missing by comparing it with every held event: with a large
// `bufferSize`, each reconnect with a junk id cost a scan of the whole buffer, at a client's will.
// Counted in reads of the events' ids, not in time. The ring keeps no index (a Map of every held
// id, at most 2^24 keys): ids are pushed in the store's order, so a lookup is by number (the memory
// store's `<epoch>-<n>` count pushes) or a bisection (Redis stream ids).

import { describe, expect, it } from 'vitest';
import { EventRing, type IdOrder } from '../src/hub-ring';
import type { StoredEvent } from '../src/hub-store';

/** The order of `<p>-<n>` ids (n counts pushes), NaN for any other string. */
function counting(prefix: string): IdOrder {
  const seq = (id: string) =>
    /^\d+$/.test(id.slice(prefix.length + 1)) && id.startsWith(`${prefix}-`)
      ? Number(id.slice(prefix.length + 1))
      : Number.NaN;
  return (id, held) => seq(id) - seq(held);
}

/** The order of `<ms>-<seq>` ids, by sign only (as Redis stream ids): the ring must bisect. */
const streamOrder: IdOrder = (id, held) => {
  const parse = (x: string) => /^(\d+)-(\d+)$/.exec(x);
  const a = parse(id);
  const b = parse(held);
  if (a === null || b === null) return Number.NaN;
  return Math.sign(Number(a[1]) - Number(b[1]) || Number(a[2]) - Number(b[2]));
};

/** Every event, no byte limit: the lookup alone. */
const ALL = { include: () => true, maxBytes: Number.POSITIVE_INFINITY };

/** The replayed events, or null for an id not held. */
function between(ring: EventRing, after: string, upTo: string): StoredEvent[] | null {
  const answer = ring.between(after, upTo, ALL);
  if (answer === null) return null;
  if (answer.kind !== 'events') throw new Error(`unexpected ${answer.kind}`);
  return [...answer.events];
}

/** Events whose `id` getter counts its reads. */
function counted(): { make(id: string): StoredEvent; reads(): number } {
  let reads = 0;
  return {
    make(id) {
      return {
        get id() {
          reads++;
          return id;
        },
        event: 'e',
        data: id,
        topic: undefined,
      };
    },
    reads: () => reads,
  };
}

/** The lookup as it was (newest first, then forward to `upTo`): the results to keep. */
function reference(held: StoredEvent[], base: string, after: string, upTo: string) {
  let from: number;
  if (after === base) from = 0;
  else {
    from = -1;
    for (let i = held.length - 1; i >= 0; i--) {
      if (held[i]!.id === after) {
        from = i + 1;
        break;
      }
    }
    if (from === -1) return null;
  }
  const out: StoredEvent[] = [];
  if (after === upTo) return out;
  for (let i = from; i < held.length; i++) {
    out.push(held[i]!);
    if (held[i]!.id === upTo) break;
  }
  return out;
}

describe('EventRing.between: the lookup of Last-Event-ID', () => {
  it('an id it does not hold costs no scan of a 100,000-event buffer', () => {
    const n = 100_000;
    const ring = new EventRing(n, 'e-0', counting('e'));
    const events = counted();
    // Full, and wrapped past its start once.
    for (let i = 1; i <= n + n / 2; i++) ring.push(events.make(`e-${i}`));
    const newest = `e-${n + n / 2}`;
    const before = events.reads();
    for (const junk of ['junk', 'e-1', 'e-0', `e-${n * 9}`, '', '__proto__', 'constructor']) {
      expect(between(ring, junk, newest)).toBeNull();
    }
    // The oldest held id and the newest at most, for each.
    expect(events.reads() - before).toBeLessThanOrEqual(14);
    // A held id near the oldest: found at once (the oldest, the newest and its own), then two
    // reads per event replayed (its size and whether it is `upTo`).
    const oldest = n / 2 + 1;
    const mark = events.reads();
    const replay = between(ring, `e-${oldest + 10}`, `e-${oldest + 20}`)!;
    expect(replay.map((e) => e.data)).toEqual(
      Array.from({ length: 10 }, (_, i) => `e-${oldest + 11 + i}`),
    );
    expect(events.reads() - mark).toBeLessThanOrEqual(23);
  });

  it('ids that do not count pushes (stream ids): a bisection, a few dozen reads at most', () => {
    const n = 100_000;
    const ring = new EventRing(n, '0-0', streamOrder);
    const events = counted();
    const ids: string[] = [];
    // Gaps between milliseconds, several per millisecond: no id tells its position.
    for (let i = 1; i <= n + n / 2; i++) {
      const id = `${1000 + 3 * Math.floor(i / 4)}-${i % 4}`;
      ids.push(id);
      ring.push(events.make(id));
    }
    const held = ids.slice(n / 2);
    const newest = held.at(-1)!;
    for (const at of [0, 1, 777, n / 2, n - 2]) {
      const mark = events.reads();
      const replay = between(ring, held[at]!, held[at + 1]!)!;
      expect(replay.map((e) => e.id)).toEqual([held[at + 1]]);
      // The oldest, the newest, one probe and 18 steps at most; 2 reads for the event.
      expect(events.reads() - mark).toBeLessThanOrEqual(23);
    }
    for (const miss of [
      ids[0]!,
      '1000-9',
      `${1000 + 3 * 30_000 + 1}-0`,
      '99999999-0',
      'x',
      '-1-0',
    ]) {
      const mark = events.reads();
      expect(between(ring, miss, newest)).toBeNull();
      expect(events.reads() - mark).toBeLessThanOrEqual(20);
    }
  });

  for (const [name, order] of [
    ['ids that count pushes', counting('i')],
    [
      'ids with gaps, ordered by sign only',
      (id: string, held: string) => Math.sign(counting('i')(id, held)),
    ],
  ] as const) {
    it(`gives what the scan gave (${name}): pushes, evictions, clears, junk and future ids`, () => {
      let seed = 7;
      const random = (k: number): number => {
        seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
        return seed % k;
      };
      for (const capacity of [0, 1, 2, 3, 5, 8, 13, 100]) {
        const ring = new EventRing(capacity, 'b-0', order);
        const held: StoredEvent[] = [];
        let base = 'b-0';
        let next = 1;
        for (let step = 0; step < 400; step++) {
          const roll = random(20);
          if (roll === 0) {
            base = `c-${next}`;
            ring.clear(base);
            held.length = 0;
          } else {
            // Pushes count up; a stream-like id may skip numbers (time passes between entries).
            if (name !== 'ids that count pushes' && roll === 1) next += random(5);
            const id = `i-${next++}`;
            const event: StoredEvent = { id, event: 'e', data: String(step), topic: undefined };
            ring.push(event);
            if (capacity === 0) base = id;
            else {
              held.push(event);
              if (held.length > capacity) base = held.shift()!.id;
            }
          }
          expect(ring.base).toBe(base);
          const ids = [
            base,
            'junk',
            ...held.map((e) => e.id),
            `i-${next - capacity - 3}`,
            `i-${next + 2}`,
            `i-0${next - 1}`,
            `i--${next - 1}`,
          ];
          for (let q = 0; q < 4; q++) {
            const after = ids[random(ids.length)]!;
            const upTo = ids[random(ids.length)]!;
            expect(between(ring, after, upTo)).toEqual(reference(held, base, after, upTo));
          }
        }
      }
    });
  }
});

describe('a byte bound (maxBytes)', () => {
  // A few huge events must not make the ring hold `capacity` times their size: the oldest go
  // once the held events' frameFloor bytes pass it, however few are held.
  const event = (n: number, size: number): StoredEvent => ({
    id: `i-${n}`,
    event: 'e',
    data: 'x'.repeat(size),
    topic: undefined,
  });
  // frameFloor of event(n, size) for a one-digit n: 3 + 1 + size + 21.
  const bytes = (size: number) => size + 25;

  it('lets the oldest go once the held bytes pass it; a lookup of one gone misses', () => {
    const ring = new EventRing(100, 'i-0', counting('i'), 3 * bytes(100));
    for (let n = 1; n <= 3; n++) ring.push(event(n, 100));
    expect(ring.base).toBe('i-0');
    ring.push(event(4, 100));
    expect(ring.base).toBe('i-1');
    expect(between(ring, 'i-0', 'i-4')).toBeNull();
    expect(between(ring, 'i-1', 'i-4')?.map((e) => e.id)).toEqual(['i-2', 'i-3', 'i-4']);
    // One large event takes the room of several.
    ring.push(event(5, 2 * bytes(100) - bytes(0)));
    expect(ring.base).toBe('i-3');
    expect(between(ring, 'i-3', 'i-5')?.map((e) => e.id)).toEqual(['i-4', 'i-5']);
  });

  it('an event larger than the bound is not held: base moves past it', () => {
    const ring = new EventRing(100, 'i-0', counting('i'), 1000);
    ring.push(event(1, 10));
    ring.push(event(2, 2000));
    expect(ring.base).toBe('i-2');
    expect(between(ring, 'i-2', 'i-2')).toEqual([]);
    expect(between(ring, 'i-1', 'i-2')).toBeNull();
    ring.push(event(3, 10));
    expect(between(ring, 'i-2', 'i-3')?.map((e) => e.id)).toEqual(['i-3']);
  });

  it('clear() forgets the bytes held', () => {
    const ring = new EventRing(100, 'i-0', counting('i'), 2 * bytes(100));
    ring.push(event(1, 100));
    ring.push(event(2, 100));
    ring.clear('i-2');
    ring.push(event(3, 100));
    ring.push(event(4, 100));
    expect(ring.base).toBe('i-2');
  });
});
