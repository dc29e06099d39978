import { describe, expect, it } from 'vitest';
import { FakeAbortSource, FakeClock, track } from '../../test/helpers';
import { sleep } from './sleep';

describe('sleep', () => {
  it('resolves after ms on the clock and gives the abort slot back', async () => {
    const clock = new FakeClock();
    const s = new FakeAbortSource();
    const p = track(sleep(clock, 100, s));
    expect(s.onAbort).toBeTypeOf('function');
    await clock.advance(99);
    expect(p.current.state).toBe('pending');
    await clock.advance(1);
    expect(p.current.state).toBe('fulfilled');
    expect(s.onAbort).toBeUndefined();
    expect(clock.live).toBe(0);
  });

  it('rejects with the reason as soon as the source aborts, and clears its timer', async () => {
    const clock = new FakeClock();
    const s = new FakeAbortSource();
    const p = track(sleep(clock, 100, s));
    const reason = new Error('cancelled');
    s.abort(reason);
    await clock.advance(0);
    expect(p.current).toEqual({ state: 'rejected', reason });
    expect(s.onAbort).toBeUndefined();
    expect(clock.live).toBe(0);
  });

  it('an already-aborted source rejects at once with no timer', async () => {
    const clock = new FakeClock();
    const s = new FakeAbortSource();
    const reason = new Error('gone');
    s.abort(reason);
    await expect(sleep(clock, 100, s)).rejects.toBe(reason);
    expect(clock.created).toBe(0);
  });
});
