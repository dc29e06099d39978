import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { RequestSpec } from '../request/resolve';
import type { Priority } from '../types/options';
import { Entry } from './entry';
import type { SchedulerJob } from './gate';
import { Group, JobClass, Limiter } from './job-class';
import { Lanes } from './lanes';

let nextId = 1;
function job(priority: Priority = 'normal'): SchedulerJob {
  const id = nextId++;
  return {
    id,
    probe: false,
    aborted: false,
    reason: undefined,
    onAbort: undefined,
    spec: { key: `k${id}`, priority } as RequestSpec,
  };
}

function entry(lanes: Lanes, cls: JobClass, priority: Priority): Entry {
  return new Entry(job(priority), cls, lanes.laneOf(priority));
}

const letter = (lanes: Lanes, e: Entry) => lanes.nameOf(e.lane)[0]!.toUpperCase();

function drain(lanes: Lanes): Entry[] {
  const out: Entry[] = [];
  for (let e = lanes.next(); e !== undefined; e = lanes.next()) out.push(e);
  return out;
}

/** Reference weighted round-robin over three FIFO arrays (the rule in lanes.ts, written plainly). */
function reference(counts: [number, number, number]): string {
  const left = [...counts];
  const weights = [4, 2, 1];
  let out = '';
  let cursor = 0;
  let credit = 4;
  while (left.some((n) => n > 0)) {
    if (left[cursor]! > 0 && credit > 0) {
      left[cursor]!--;
      out += 'HNL'[cursor];
      if (--credit > 0) continue;
    }
    cursor = (cursor + 1) % 3;
    credit = weights[cursor]!;
  }
  return out;
}

describe('Lanes', () => {
  it('serves high / normal / low by weighted round-robin 4:2:1, FIFO within a lane', () => {
    const lanes = new Lanes(true);
    const cls = new JobClass('', undefined, [], [], 3);
    const pushed: Entry[] = [];
    // Interleaved arrival: the order of arrival across lanes must not matter, only within one.
    for (let i = 0; i < 40; i++) {
      for (const p of ['low', 'normal', 'high'] as const) {
        if (p === 'low' && i >= 10) continue;
        if (p === 'normal' && i >= 20) continue;
        const e = entry(lanes, cls, p);
        lanes.push(e);
        pushed.push(e);
      }
    }
    expect(lanes.sizes).toEqual([40, 20, 10]);
    const order = drain(lanes);
    expect(order.map((e) => letter(lanes, e)).join('')).toBe('HHHHNNL'.repeat(10));
    for (const p of [0, 1, 2]) {
      const taken = order.filter((e) => e.lane === p);
      expect(taken).toEqual(pushed.filter((e) => e.lane === p));
    }
    expect(lanes.total).toBe(0);
  });

  it('skips an empty lane and hands its turn on (uneven mix)', () => {
    const lanes = new Lanes(true);
    const cls = new JobClass('', undefined, [], [], 3);
    for (let i = 0; i < 30; i++) lanes.push(entry(lanes, cls, 'low'));
    for (let i = 0; i < 10; i++) lanes.push(entry(lanes, cls, 'normal'));
    for (let i = 0; i < 25; i++) lanes.push(entry(lanes, cls, 'high'));
    const got = drain(lanes)
      .map((e) => letter(lanes, e))
      .join('');
    expect(got).toBe(reference([25, 10, 30]));
    expect(got.startsWith('HHHHNNLHHHHNNL')).toBe(true);
  });

  it('matches the reference order for any mix', () => {
    fc.assert(
      fc.property(
        fc.tuple(fc.nat(30), fc.nat(30), fc.nat(30)),
        ([h, n, l]: [number, number, number]) => {
          const lanes = new Lanes(true);
          const cls = new JobClass('', undefined, [], [], 3);
          for (let i = 0; i < l; i++) lanes.push(entry(lanes, cls, 'low'));
          for (let i = 0; i < h; i++) lanes.push(entry(lanes, cls, 'high'));
          for (let i = 0; i < n; i++) lanes.push(entry(lanes, cls, 'normal'));
          const got = drain(lanes)
            .map((e) => letter(lanes, e))
            .join('');
          expect(got).toBe(reference([h, n, l]));
        },
      ),
    );
  });

  it('is one FIFO without priorities, reported as normal', () => {
    const lanes = new Lanes(false);
    const cls = new JobClass('', undefined, [], [], 1);
    const pushed = (['low', 'high', 'normal', 'high'] as const).map((p) => {
      const e = entry(lanes, cls, p);
      lanes.push(e);
      return e;
    });
    expect(lanes.count).toBe(1);
    expect(pushed.every((e) => lanes.nameOf(e.lane) === 'normal')).toBe(true);
    expect(drain(lanes)).toEqual(pushed);
  });

  it('skips a blocked class without losing the places of its jobs', () => {
    const lanes = new Lanes(false);
    const host = new Limiter('a.test', 1);
    const capped = new JobClass('a', undefined, [host], [host], 1);
    host.classes.add(capped);
    const free = new JobClass('', undefined, [], [], 1);
    const a1 = entry(lanes, capped, 'normal');
    const b1 = entry(lanes, free, 'normal');
    const a2 = entry(lanes, capped, 'normal');
    const b2 = entry(lanes, free, 'normal');
    for (const e of [a1, b1, a2, b2]) lanes.push(e);
    host.active = 1; // saturated
    expect(lanes.next()).toBe(b1);
    expect(lanes.next()).toBe(b2);
    expect(lanes.next()).toBeUndefined();
    const b3 = entry(lanes, free, 'normal');
    lanes.push(b3);
    host.active = 0;
    lanes.readmit(capped);
    // a1 and a2 arrived before b3: they go first once the host frees.
    expect(drain(lanes)).toEqual([a1, a2, b3]);
  });

  it('holds a paused group and re-admits it in arrival order', () => {
    const lanes = new Lanes(true);
    const group = new Group('g');
    const grouped = new JobClass('g', group, [], [], 3);
    const plain = new JobClass('', undefined, [], [], 3);
    const g1 = entry(lanes, grouped, 'high');
    const p1 = entry(lanes, plain, 'high');
    const g2 = entry(lanes, grouped, 'high');
    for (const e of [g1, p1, g2]) lanes.push(e);
    group.paused = true;
    expect(lanes.next()).toBe(p1);
    expect(lanes.next()).toBeUndefined();
    expect(lanes.total).toBe(2);
    group.paused = false;
    lanes.readmit(grouped);
    expect(drain(lanes)).toEqual([g1, g2]);
  });

  it('removes from the middle, moves between lanes, and re-inserts at the front', () => {
    const lanes = new Lanes(true);
    const cls = new JobClass('', undefined, [], [], 3);
    const es = [0, 1, 2, 3].map(() => entry(lanes, cls, 'low'));
    for (const e of es) lanes.push(e);
    lanes.remove(es[1]!);
    lanes.move(es[3]!, lanes.laneOf('high'));
    expect(lanes.sizes).toEqual([1, 0, 2]);
    const first = lanes.next()!;
    expect(first).toBe(es[3]);
    const mark = lanes.mark();
    const second = lanes.next()!;
    expect(second).toBe(es[0]);
    // Undo: the job could not start; it goes back to its place and the cursor is restored.
    lanes.restore(mark);
    lanes.push(second, true);
    expect(drain(lanes)).toEqual([es[0], es[2]]);
  });

  it('drains a large mixed queue completely, FIFO within each lane', () => {
    const lanes = new Lanes(true);
    const cls = new JobClass('', undefined, [], [], 3);
    const n = 30_000;
    const kinds = ['high', 'normal', 'low'] as const;
    for (let i = 0; i < n; i++) lanes.push(entry(lanes, cls, kinds[i % 3]!));
    let count = 0;
    let outOfOrder = 0;
    const lastSeq = [0, 0, 0];
    for (let e = lanes.next(); e !== undefined; e = lanes.next()) {
      if (e.seq <= lastSeq[e.lane]!) outOfOrder++;
      lastSeq[e.lane] = e.seq;
      count++;
    }
    expect({ count, outOfOrder, left: lanes.total }).toEqual({ count: n, outOfOrder: 0, left: 0 });
  });
});

describe('LaneQueue.insert (jobs back from a rate wait)', () => {
  it('puts k jobs back in ascending order at O(1) each, positions 1..k, ahead of the rest', () => {
    const lanes = new Lanes(false);
    const cls = new JobClass('', undefined, [], [], lanes.count);
    const q = cls.queues[0]!;
    const k = 2000;
    const all = Array.from({ length: 2 * k }, () => entry(lanes, cls, 'normal'));
    let reads = 0;
    all.forEach((e, i) => {
      // Count how often the walk compares arrival orders: O(k^2) is ~k^2/2 reads.
      Object.defineProperty(e, 'seq', {
        get() {
          reads++;
          return i + 1;
        },
        set() {},
      });
    });
    // The first k were parked for budget; the others stayed queued behind them.
    for (const e of all.slice(k)) q.push(e);
    const positions = all.slice(0, k).map((e) => q.insert(e));
    expect(positions).toEqual(Array.from({ length: k }, (_, i) => i + 1));
    expect(reads).toBeLessThan(4 * k);
    const order: Entry[] = [];
    for (let e = q.head; e !== undefined; e = e.next) order.push(e);
    expect(order).toEqual(all);
    // A removal ahead of the last insert: the next insert finds its place from the head.
    q.remove(all[0]!);
    const late = entry(lanes, cls, 'normal');
    Object.defineProperty(late, 'seq', { get: () => k + 0.5, set() {} });
    expect(q.insert(late)).toBe(k);
    expect(late.prev).toBe(all[k - 1]);
    expect(late.next).toBe(all[k]);
  });
});
