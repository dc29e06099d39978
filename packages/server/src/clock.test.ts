import { describe, expect, it } from 'vitest';
import { ManualClock } from '../test/helpers';
import { checkClock, repeat, systemClock } from './clock';

describe('clock', () => {
  it('repeat re-arms one timer per tick and stops for good', () => {
    const clock = new ManualClock();
    let ticks = 0;
    const stop = repeat(clock, 100, () => ticks++);
    expect(clock.active).toBe(1);
    clock.tick(350);
    expect(ticks).toBe(3);
    expect(clock.active).toBe(1);
    stop();
    stop();
    expect(clock.active).toBe(0);
    clock.tick(1000);
    expect(ticks).toBe(3);
  });

  it('a tick that stops its own repeat leaves no timer behind', () => {
    const clock = new ManualClock();
    const stop = repeat(clock, 10, () => stop());
    clock.tick(10);
    expect(clock.active).toBe(0);
  });

  it('the system clock does not keep the process alive', () => {
    const handle = systemClock.setTimeout(() => {}, 60_000) as NodeJS.Timeout;
    expect(handle.hasRef()).toBe(false);
    systemClock.clearTimeout(handle);
    expect(checkClock(undefined)).toBe(systemClock);
  });
});
