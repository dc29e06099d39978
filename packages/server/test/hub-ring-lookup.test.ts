// A reconnect's `Last-Event-ID` is looked up in the replay buffer. An id it does not hold (junk,
// foreign, too old) was found missing by comparing it with every held event: with a large
// `bufferSize`, each reconnect with a junk id cost a scan of the whole buffer, at a client's will.
// Counted in reads of the events' ids, not in time.

import { describe, expect, it } from 'vitest';
import { EventRing } from '../src/hub-ring';
import type { StoredEvent } from '../src/hub-store';

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
    const ring = new EventRing(n, 'e-0');
    const events = counted();
    // Full, and wrapped past its start once.
    for (let i = 1; i <= n + n / 2; i++) ring.push(events.make(`e-${i}`));
    const newest = `e-${n + n / 2}`;
    const before = events.reads();
    for (const junk of ['junk', 'e-1', 'e-0', `e-${n * 9}`, '', '__proto__', 'constructor']) {
      expect(between(ring, junk, newest)).toBeNull();
    }
    expect(events.reads() - before).toBeLessThanOrEqual(7);
    // A held id near the oldest: found at once, then two reads per event replayed (its size and
    // whether it is `upTo`), and one.
    const oldest = n / 2 + 1;
    const mark = events.reads();
    const replay = between(ring, `e-${oldest + 10}`, `e-${oldest + 20}`)!;
    expect(replay.map((e) => e.data)).toEqual(
      Array.from({ length: 10 }, (_, i) => `e-${oldest + 11 + i}`),
    );
    expect(events.reads() - mark).toBeLessThanOrEqual(22);
  });

  it('gives what the scan gave: pushes, evictions, clears, ids repeated, index spans rolled over', () => {
    let seed = 7;
    const random = (k: number): number => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      return seed % k;
    };
    for (const capacity of [0, 1, 2, 3, 5, 8, 13]) {
      // Index spans of 2 and 3 ids: a span is let go while the ring still holds later ones.
      for (const span of [2, 3, 1000]) {
        const ring = new EventRing(capacity, 'b-0', span);
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
            // Now and then an id pushed again (a store must not, but the lookup stays the same).
            const id = roll === 1 && next > 2 ? `i-${next - 2}` : `i-${next++}`;
            const event: StoredEvent = { id, event: 'e', data: String(step), topic: undefined };
            ring.push(event);
            if (capacity === 0) base = id;
            else {
              held.push(event);
              if (held.length > capacity) base = held.shift()!.id;
            }
          }
          expect(ring.base).toBe(base);
          const ids = [base, 'junk', ...held.map((e) => e.id), `i-${next - capacity - 3}`];
          for (let q = 0; q < 4; q++) {
            const after = ids[random(ids.length)]!;
            const upTo = ids[random(ids.length)]!;
            expect(between(ring, after, upTo)).toEqual(reference(held, base, after, upTo));
          }
        }
      }
    }
  });
});
