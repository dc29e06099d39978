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

/**
 * RFC 9110 (10.2.3): Retry-After is an HTTP-date or delta-seconds (`1*DIGIT`), and an invalid
 * value is ignored. Anything with a time of day went to
 * Date.parse, so an ISO date or a date in another zone counted as a date.
 */
describe('parseRetryAfter: only what RFC 9110 allows', () => {
  test('delta-seconds: a sign, an exponent or a bare dot is ignored (-1); a fraction is honoured', () => {
    for (const bad of ['.5', '5.', '+5', '1e3', '1_000', '0x10']) {
      expect(parseRetryAfter(bad, now), bad).toBe(-1);
    }
    expect(parseRetryAfter('007', now)).toBe(7000);
    expect(parseRetryAfter('0.25', now)).toBe(250);
    expect(parseRetryAfter('1.5', now)).toBe(1500);
  });

  test('a date not in an HTTP-date form is ignored: ISO, another zone, lower case, trailing text', () => {
    for (const bad of [
      '2024-01-01T12:00:05Z',
      '2024-01-01T12:00:05.000Z',
      '2024-01-01 12:00:05',
      'Mon, 01 Jan 2024 13:00:05 +0100',
      'Mon, 01 Jan 2024 12:00:05 UTC',
      'Mon, 01 Jan 2024 04:00:05 PST',
      'Mon, 01 Jan 2024 12:00:05',
      'mon, 01 jan 2024 12:00:05 gmt',
      'Mon, 01 Jan 2024 12:00:05 GMT tomorrow',
      'Mon Jan  1 12:00:05 2024 GMT',
      'Mon Jan  1 12:00:05 2024 +0100',
    ]) {
      expect(parseRetryAfter(bad, now), bad).toBe(-1);
    }
  });

  test('each HTTP-date form, GMT, is read', () => {
    expect(parseRetryAfter('Mon, 01 Jan 2024 12:00:05 GMT', now)).toBe(5000);
    expect(parseRetryAfter('Monday, 01-Jan-24 12:00:05 GMT', now)).toBe(5000);
    expect(parseRetryAfter('Mon Jan  1 12:00:05 2024', now)).toBe(5000);
    expect(parseRetryAfter('Mon Jan 11 12:00:05 2024', now)).toBe(10 * 86_400_000 + 5000);
  });
});
