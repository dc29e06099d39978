import { describe, expect, test } from 'vitest';
import { Deduper } from './deduper';

describe('Deduper', () => {
  test('one value per key', () => {
    const d = new Deduper<object>();
    const a = {};
    d.set('k', a);
    expect(d.get('k')).toBe(a);
    expect(d.has('k')).toBe(true);
    expect(d.size).toBe(1);
    expect([...d.values()]).toEqual([a]);
  });

  test('delete(key, value) only removes the key while it maps to that value', () => {
    const d = new Deduper<object>();
    const old = {};
    const next = {};
    d.set('k', old);
    d.set('k', next);
    expect(d.delete('k', old)).toBe(false);
    expect(d.get('k')).toBe(next);
    expect(d.delete('k', next)).toBe(true);
    expect(d.has('k')).toBe(false);
  });

  test('delete(key) and clear', () => {
    const d = new Deduper<number>();
    d.set('a', 1);
    d.set('b', 2);
    expect(d.delete('a')).toBe(true);
    d.clear();
    expect(d.size).toBe(0);
  });
});

describe('Deduper.run (standalone coalescing)', () => {
  test('concurrent calls share one start; a settled promise is forgotten', async () => {
    const d = new Deduper<Promise<number>>();
    let starts = 0;
    let release!: (n: number) => void;
    const start = () => {
      starts++;
      return new Promise<number>((r) => {
        release = r;
      });
    };
    const a = d.run('k', start);
    const b = d.run('k', start);
    expect(b).toBe(a);
    expect(starts).toBe(1);
    release(7);
    expect(await b).toBe(7);
    await Promise.resolve();
    expect(d.has('k')).toBe(false);
    d.run('k', start);
    expect(starts).toBe(2);
  });

  test('a rejected promise is forgotten too', async () => {
    const d = new Deduper<Promise<never>>();
    const p = d.run('k', () => Promise.reject(new Error('x')));
    await expect(p).rejects.toThrow('x');
    await Promise.resolve();
    expect(d.size).toBe(0);
  });

  test('a thenable whose `then` throws is not kept: the throw reaches the caller, the next call starts', () => {
    // It stayed in the map for good: every later run(key) got the broken value, never a start.
    const d = new Deduper<PromiseLike<number>>();
    const boom = new Error('then');
    const broken = {
      // biome-ignore lint/suspicious/noThenProperty: a hostile thenable on purpose
      then() {
        throw boom;
      },
    } as unknown as PromiseLike<number>;
    expect(() => d.run('k', () => broken)).toThrow(boom);
    expect(d.has('k')).toBe(false);
    const fine = Promise.resolve(1);
    expect(d.run('k', () => fine)).toBe(fine);
  });
});
