import { describe, expect, it } from 'vitest';
import { resolveSchedulerOptions } from './options';

describe('resolveSchedulerOptions', () => {
  it('is undefined when absent and fills defaults when present', () => {
    expect(resolveSchedulerOptions(undefined)).toBeUndefined();
    expect(resolveSchedulerOptions({})).toMatchObject({
      enabled: true,
      concurrency: 8,
      priority: false,
      rateLimit: undefined,
    });
  });

  it('lower-cases host caps', () => {
    const c = resolveSchedulerOptions({ hosts: { 'API.Example.com': 2 } })!;
    expect([...c.hosts]).toEqual([['api.example.com', 2]]);
  });

  it.each([
    [{ concurrency: 0 }, /`scheduler\.concurrency` must be an integer >= 1, got 0/],
    [{ concurrency: 1.5 }, /scheduler\.concurrency/],
    [{ concurrency: Number.NaN }, /scheduler\.concurrency/],
    [{ rateLimit: { requests: 0, interval: 1000 } }, /scheduler\.rateLimit\.requests/],
    [{ rateLimit: { requests: -1, interval: 1000 } }, /scheduler\.rateLimit\.requests/],
    [{ rateLimit: { requests: 1, interval: 0 } }, /scheduler\.rateLimit\.interval/],
    [{ rateLimit: { requests: 1, interval: -5 } }, /scheduler\.rateLimit\.interval/],
    [{ hosts: { 'a.test': 0 } }, /`scheduler\.hosts\["a\.test"\]` must be an integer >= 1/],
  ])('rejects %j with a RangeError naming the field', (options, message) => {
    expect(() => resolveSchedulerOptions(options as never)).toThrow(RangeError);
    expect(() => resolveSchedulerOptions(options as never)).toThrow(message);
  });

  it.each([
    [null, 'keel: `scheduler` must be an object, got null'],
    [{ enabled: 'yes' }, /`scheduler\.enabled` must be true or false, got "yes"/],
    [{ priority: 1 }, /`scheduler\.priority` must be true or false, got 1/],
    [{ hosts: 3 }, /`scheduler\.hosts` must be an object/],
    [{ rateLimit: 5 }, /`scheduler\.rateLimit` must be an object/],
  ])('rejects %j with a TypeError', (options, message) => {
    expect(() => resolveSchedulerOptions(options as never)).toThrow(TypeError);
    expect(() => resolveSchedulerOptions(options as never)).toThrow(message);
  });
});
