import { describe, expect, it } from 'vitest';
import { HitTally } from './hit-tally';

describe('HitTally', () => {
  function setup() {
    const seen: [string, number][] = [];
    const tally = new HitTally((endpoint, n) => seen.push([endpoint, n]));
    const hit = (spec: { endpoint: string }) => {
      if (tally.spec === spec) tally.pending++;
      else tally.switchTo(spec);
    };
    return { tally, seen, hit };
  }

  it('hands the pending hits over when another spec hits, and on flush', () => {
    const { tally, seen, hit } = setup();
    const a = { endpoint: 'GET /a' };
    const b = { endpoint: 'GET /b' };
    hit(a);
    hit(a);
    hit(a);
    expect(seen).toEqual([]);
    hit(b);
    expect(seen).toEqual([['GET /a', 3]]);
    tally.flush();
    tally.flush(); // nothing pending: nothing handed over twice
    expect(seen).toEqual([
      ['GET /a', 3],
      ['GET /b', 1],
    ]);
    hit(b); // same spec after a flush: counted again from 1
    tally.flush();
    expect(seen.at(-1)).toEqual(['GET /b', 1]);
  });

  it('a different spec object with the same endpoint is a switch, not a miscount', () => {
    const { tally, seen, hit } = setup();
    hit({ endpoint: 'GET /a' });
    hit({ endpoint: 'GET /a' });
    tally.flush();
    expect(seen).toEqual([
      ['GET /a', 1],
      ['GET /a', 1],
    ]);
  });

  it('clear() drops the pending hits', () => {
    const { tally, seen, hit } = setup();
    const a = { endpoint: 'GET /a' };
    hit(a);
    tally.clear();
    tally.flush();
    expect(seen).toEqual([]);
    hit(a);
    tally.flush();
    expect(seen).toEqual([['GET /a', 1]]);
  });
});
