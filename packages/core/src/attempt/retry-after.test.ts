import { describe, expect, test } from 'vitest';
import { parseRetryAfter } from './retry-after';

const now = Date.UTC(2024, 0, 1, 12, 0, 0);

describe('parseRetryAfter', () => {
  test('delta-seconds are converted to milliseconds', () => {
    expect(parseRetryAfter('0')).toBe(0);
    expect(parseRetryAfter('3')).toBe(3000);
    expect(parseRetryAfter(' 120 ')).toBe(120_000);
  });

  test('delta-seconds past 2^31 are taken as 2^31 s (RFC 9111, 1.2.2): finite, never Infinity', () => {
    const cap = 2 ** 31 * 1000;
    expect(parseRetryAfter('9'.repeat(400))).toBe(cap);
    expect(parseRetryAfter(`${'9'.repeat(400)}.5`)).toBe(cap);
    expect(parseRetryAfter('2147483648')).toBe(cap);
    expect(parseRetryAfter('2147483647')).toBe(2147483647000);
  });

  test('an HTTP date is measured from now', () => {
    const at = new Date(now + 5000).toUTCString();
    expect(parseRetryAfter(at, now)).toBe(5000);
  });

  test('a date in the past is 0', () => {
    expect(parseRetryAfter(new Date(now - 5000).toUTCString(), now)).toBe(0);
  });

  test('absent or unparsable is -1', () => {
    expect(parseRetryAfter(null)).toBe(-1);
    expect(parseRetryAfter(undefined)).toBe(-1);
    expect(parseRetryAfter('')).toBe(-1);
    expect(parseRetryAfter('soon')).toBe(-1);
    expect(parseRetryAfter('-5')).toBe(-1);
    expect(parseRetryAfter('1e3')).toBe(-1);
  });

  test('only the three HTTP-date forms are dates: garbage Date.parse would read is -1', () => {
    // V8's Date.parse reads these as 2001-05-01, 2030-01-01 and 2001-01-01.
    for (const garbage of ['soon 5', 'x 2030', 'Tomorrow 1', 'in 2099', 'a, 1']) {
      expect(parseRetryAfter(garbage, now)).toBe(-1);
    }
    const at = now + 5000;
    const imf = new Date(at).toUTCString();
    expect(parseRetryAfter(imf, now)).toBe(5000);
    // RFC 850 (obsolete, two-digit year) and asctime.
    expect(parseRetryAfter('Monday, 01-Jan-24 12:00:05 GMT', now)).toBe(5000);
    expect(parseRetryAfter('Mon Jan  1 12:00:05 2024', now)).toBe(5000);
  });
});
