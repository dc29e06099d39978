import { afterEach, describe, expect, it, vi } from 'vitest';
import { MicrotaskBatch } from './microtask-batch';

describe('MicrotaskBatch', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('runs pushed items later, in order, with one queued microtask per burst', async () => {
    const queued = vi.spyOn(globalThis, 'queueMicrotask');
    const ran: string[] = [];
    const batch = new MicrotaskBatch<string, number>((item, n) => ran.push(`${item}${n}`));
    batch.push('a', 1);
    batch.push('b', 2);
    batch.push('c', 3);
    expect(ran).toEqual([]);
    expect(queued).toHaveBeenCalledTimes(1);
    await Promise.resolve();
    expect(ran).toEqual(['a1', 'b2', 'c3']);
  });

  it('an item pushed while a batch runs goes to the next batch, after the current one', async () => {
    const ran: string[] = [];
    const batch: MicrotaskBatch<string, undefined> = new MicrotaskBatch((item) => {
      ran.push(item);
      if (item === 'a') batch.push('late', undefined);
    });
    batch.push('a', undefined);
    batch.push('b', undefined);
    await Promise.resolve();
    expect(ran).toEqual(['a', 'b']);
    await Promise.resolve();
    expect(ran).toEqual(['a', 'b', 'late']);
  });

  it('a throwing item is reported and the rest of the batch still runs', async () => {
    const reported: unknown[] = [];
    const ran: string[] = [];
    const boom = new Error('boom');
    const batch = new MicrotaskBatch<string, undefined>(
      (item) => {
        if (item === 'bad') throw boom;
        ran.push(item);
      },
      (err) => reported.push(err),
    );
    batch.push('a', undefined);
    batch.push('bad', undefined);
    batch.push('c', undefined);
    for (let i = 0; i < 3; i++) await Promise.resolve();
    expect(ran).toEqual(['a', 'c']);
    expect(reported).toEqual([boom]);
  });
});
