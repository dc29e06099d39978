import { describe, expect, test } from 'vitest';
import { type ClientOptions, createClient, type RequestOptions } from '../src/index';
import { sleep } from '../src/internal/sleep';
import { FakeClock, makeClient, settle } from './helpers';

/**
 * Timers cannot wait longer than 2^31-1 ms: Node (and browsers) fire a longer one after 1 ms, so
 * `timeout: 2 ** 31` timed out after 3 ms and a rate-limit interval that long re-armed its budget
 * timer ~850 times a second. Such values are refused, and every delay keel arms is clamped.
 */
const MAX = 2 ** 31 - 1;
const fetch = async () => new Response('');

describe('timer overflow', () => {
  test.each<[string, ClientOptions, RegExp]>([
    [
      'timeout',
      { timeout: 2 ** 31 },
      /`timeout` must be a non-negative number of ms, at most 2147483647, got 2147483648/,
    ],
    [
      'retry.baseDelay',
      { retry: { baseDelay: 2 ** 31 } },
      /`retry.baseDelay` must be .*at most 2147483647/,
    ],
    [
      'retry.maxDelay',
      { retry: { maxDelay: 2 ** 40 } },
      /`retry.maxDelay` must be .*at most 2147483647/,
    ],
    ['retry.maxRetryAfter', { retry: { maxRetryAfter: 2 ** 31 } }, /retry.maxRetryAfter/],
    [
      'scheduler.rateLimit.interval',
      { scheduler: { rateLimit: { requests: 1, interval: 2 ** 31 } } },
      /`scheduler.rateLimit.interval` .*at most 2147483647/,
    ],
    [
      'adaptive.maxBackoffMs',
      { adaptive: { enabled: true, maxBackoffMs: 2 ** 31 } },
      /`adaptive.maxBackoffMs` .*at most 2147483647/,
    ],
  ])('createClient refuses %s >= 2^31 ms with a RangeError naming it', (_, options, message) => {
    const make = () => createClient({ fetch, ...options });
    expect(make).toThrow(RangeError);
    expect(make).toThrow(message);
  });

  test.each<[string, RequestOptions]>([
    ['timeout', { timeout: 2 ** 31 }],
    ['retry.baseDelay', { retry: { baseDelay: 2 ** 31 } }],
  ])('a request with %s >= 2^31 ms rejects with a RangeError, sending nothing', async (_, o) => {
    const t = makeClient({}, { handler: () => Response.json(1) });
    const outcome = await settle(t.client.get('/x', o));
    expect(outcome.state).toBe('rejected');
    expect((outcome as { reason: unknown }).reason).toBeInstanceOf(RangeError);
    expect(t.fake.calls).toHaveLength(0);
  });

  test('the largest timeout a timer can hold is accepted and armed as it is', async () => {
    const t = makeClient({ timeout: MAX, retry: { attempts: 1 } });
    const p = settle(t.client.get('/long'));
    await t.clock.advance(0);
    expect(t.clock.pendingDelays()).toEqual([MAX]);
    await t.clock.advance(MAX - 1);
    expect(t.fake.calls).toHaveLength(1);
    await t.clock.advance(1);
    expect((await p).state).toBe('rejected');
  });

  test('a delay above the cap is clamped to it, never handed to a timer as it is', async () => {
    const clock = new FakeClock();
    void sleep(clock, 2 ** 40);
    void sleep(clock, Number.POSITIVE_INFINITY);
    void sleep(clock, Number.NaN);
    void sleep(clock, -5);
    expect(clock.history.map((h) => h.ms)).toEqual([MAX, MAX, 0, 0]);
    await clock.runAll();
  });
});
