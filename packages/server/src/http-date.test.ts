import { describe, expect, it } from 'vitest';
import { parseHttpDate } from './http-date';

const now = Date.parse('2026-06-01T00:00:00Z');

describe('parseHttpDate', () => {
  it('reads the three forms RFC 9110 §5.6.7 names', () => {
    const t = Date.parse('1994-11-06T08:49:37Z');
    expect(parseHttpDate('Sun, 06 Nov 1994 08:49:37 GMT', now)).toBe(t);
    expect(parseHttpDate('Sunday, 06-Nov-94 08:49:37 GMT', now)).toBe(t);
    expect(parseHttpDate('Sun Nov  6 08:49:37 1994', now)).toBe(t);
    expect(parseHttpDate('Sun Nov 06 08:49:37 1994', now)).toBe(t);
  });

  it('places an RFC 850 two-digit year within 50 years of now', () => {
    expect(parseHttpDate('Wednesday, 01-Jan-76 00:00:00 GMT', now)).toBe(Date.UTC(2076, 0, 1));
    expect(parseHttpDate('Saturday, 01-Jan-77 00:00:00 GMT', now)).toBe(Date.UTC(1977, 0, 1));
    const later = Date.parse('2090-01-01T00:00:00Z');
    expect(parseHttpDate('Wednesday, 01-Jan-10 00:00:00 GMT', later)).toBe(Date.UTC(2110, 0, 1));
  });

  it('takes 29 February only in a leap year, and years below 100 as written', () => {
    expect(parseHttpDate('Thu, 29 Feb 2024 00:00:00 GMT', now)).toBe(Date.UTC(2024, 1, 29));
    expect(parseHttpDate('Wed, 29 Feb 2023 00:00:00 GMT', now)).toBeNull();
    expect(parseHttpDate('Tue, 29 Feb 2000 00:00:00 GMT', now)).toBe(Date.UTC(2000, 1, 29));
    expect(parseHttpDate('Thu, 29 Feb 1900 00:00:00 GMT', now)).toBeNull();
    const year50 = new Date(0);
    year50.setUTCFullYear(50, 0, 1);
    const name = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'][year50.getUTCDay()];
    expect(parseHttpDate(`${name}, 01 Jan 0050 00:00:00 GMT`, now)).toBe(year50.getTime());
  });

  it('a leap second is the next minute, on the weekday of its own date', () => {
    expect(parseHttpDate('Sat, 31 Dec 2016 23:59:60 GMT', now)).toBe(Date.UTC(2017, 0, 1));
  });

  it('refuses what is no HTTP-date', () => {
    for (const value of [
      '',
      '9999',
      '0',
      'Sun, 06 Nov 1994 08:49:37 GMT ',
      ' Sun, 06 Nov 1994 08:49:37 GMT',
      'Sun, 06 Nov 1994 08:49:37 UTC',
      'Sun, 06 Nov 94 08:49:37 GMT',
      'Sun, 06 nov 1994 08:49:37 GMT',
      'SUN, 06 Nov 1994 08:49:37 GMT',
      'Mon, 06 Nov 1994 08:49:37 GMT',
      'Sunday, 06 Nov 1994 08:49:37 GMT',
      'Sun, 06-Nov-94 08:49:37 GMT',
      'Sunday, 06-Nov-1994 08:49:37 GMT',
      'Sunnyday, 06-Nov-94 08:49:37 GMT',
      'Sun Nov 6 08:49:37 1994',
      'Sun Nov  6 08:49:37 1994 GMT',
      'Sun, 00 Nov 1994 08:49:37 GMT',
      'Wed, 31 Nov 1994 08:49:37 GMT',
      'Sun, 06 Nov 1994 24:00:00 GMT',
      'Sun, 06 Nov 1994 08:60:00 GMT',
      'Sun, 06 Nov 1994 08:49:61 GMT',
      'Sun, 06 Nov 1994 08:49:37 GMT, Mon, 07 Nov 1994 08:49:37 GMT',
      '1994-11-06T08:49:37Z',
      'Sun, 06 Nov 1994 ０8:49:37 GMT',
    ]) {
      expect(parseHttpDate(value, now), value).toBeNull();
    }
  });
});
