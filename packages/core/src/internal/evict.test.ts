import { describe, expect, it } from 'vitest';
import { evictOldest } from './evict';

describe('evictOldest', () => {
  it('drops the oldest accepted entry and moves the refused ones behind the rest', () => {
    const map = new Map([
      ['a', 1],
      ['b', 2],
      ['c', 3],
      ['d', 4],
    ]);
    expect(evictOldest(map, (v) => v % 2 === 0, 10)).toBe(2);
    expect([...map.keys()]).toEqual(['c', 'd', 'a']);
  });

  it('looks at no more than `scan` entries, and leaves the map whole when all are refused', () => {
    const map = new Map([
      ['a', 1],
      ['b', 2],
      ['c', 3],
    ]);
    let looked = 0;
    expect(
      evictOldest(
        map,
        () => {
          looked++;
          return false;
        },
        2,
      ),
    ).toBeUndefined();
    expect(looked).toBe(2);
    expect(map.size).toBe(3);
    expect(evictOldest(new Map<string, number>(), () => true, 5)).toBeUndefined();
  });
});
