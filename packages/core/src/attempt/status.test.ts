import { describe, expect, test } from 'vitest';
import { isRetriableStatus, isSuccessStatus } from './status';

describe('status helpers', () => {
  test('isSuccessStatus: 2xx only', () => {
    expect([200, 201, 204, 299].every(isSuccessStatus)).toBe(true);
    expect([undefined, 199, 300, 304, 404, 500].some((s) => isSuccessStatus(s))).toBe(false);
  });

  test('isRetriableStatus: 408, 429, 500, 502, 503, 504 by default', () => {
    const retriable = [];
    for (let s = 100; s < 600; s++) if (isRetriableStatus(s)) retriable.push(s);
    expect(retriable).toEqual([408, 429, 500, 502, 503, 504]);
    expect(isRetriableStatus(undefined)).toBe(false);
  });
});
