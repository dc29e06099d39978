import { describe, expect, test } from 'vitest';
import { parseRetryAfter } from './retry-after';

const now = Date.UTC(2024, 0, 1, 12, 0, 0);

describe('parseRetryAfter', () => {
  test('delta-seconds are converted to milliseconds', () => {
    expect(parseRetryAfter('0')).toBe(0);
    expect(parseRetryAfter('3')).toBe(3000);
    expect(parseRetryAfter(' 120 ')).toBe(120_000);
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
});
