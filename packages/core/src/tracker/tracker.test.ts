import { describe, expect, test } from 'vitest';
import { Tracker } from './tracker';

describe('Tracker', () => {
  test('idle -> pending -> success', () => {
    const t = new Tracker('k');
    expect(t.state).toBe('idle');
    t.start(10);
    expect(t.state).toBe('pending');
    t.attempt();
    expect(t.state).toBe('pending');
    expect(t.attempts).toBe(1);
    t.succeed(20);
    expect(t).toMatchObject({ state: 'success', startedAt: 10, endedAt: 20, settled: true });
  });

  test('a second attempt moves to retrying, then error', () => {
    const t = new Tracker('k');
    t.start(0);
    t.attempt();
    t.attempt();
    expect(t.state).toBe('retrying');
    expect(t.attempts).toBe(2);
    const err = new Error('x');
    t.fail(5, err);
    expect(t.state).toBe('error');
    expect(t.error).toBe(err);
  });

  test('a scheduled retry moves to retrying before the next attempt starts', () => {
    const t = new Tracker('k');
    t.start(0);
    t.attempt();
    t.retry();
    expect(t.state).toBe('retrying');
    t.attempt();
    expect(t.state).toBe('retrying');
  });

  test('cancelled is terminal; later moves are ignored', () => {
    const t = new Tracker('k');
    t.start(0);
    t.cancel(3);
    t.succeed(4);
    t.fail(5, new Error());
    t.attempt();
    t.retry();
    t.start(6);
    expect(t).toMatchObject({ state: 'cancelled', endedAt: 3, attempts: 0 });
  });

  test('ending from idle records the start time (cache hits)', () => {
    const t = new Tracker('k');
    t.succeed(7);
    expect(t).toMatchObject({ state: 'success', startedAt: 7, endedAt: 7 });
  });
});
