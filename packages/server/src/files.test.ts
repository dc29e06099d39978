import { describe, expect, it } from 'vitest';
import { isNotModified, MAX_RANGES, pickRange } from './files';

describe('pickRange', () => {
  const parts = (n: number) => `bytes=${Array.from({ length: n }, () => '0-1').join(',')}`;

  it('one window, or null for the whole file: never a response larger than the file', () => {
    expect(pickRange(100, 'bytes=10-19')).toEqual({ start: 10, end: 19 });
    expect(pickRange(100, 'bytes=0-10,5-15')).toEqual({ start: 0, end: 15 });
    expect(pickRange(100, 'bytes=0-1,10-11')).toBeNull();
    expect(pickRange(100, 'bytes=-500')).toEqual({ start: 0, end: 99 });
    expect(pickRange(100, 'bytes=200-')).toBe('unsatisfiable');
    expect(pickRange(100, 'items=0-1')).toBeNull();
    expect(pickRange(100, 'nonsense')).toBeNull();
  });

  it(`parses at most ${MAX_RANGES} parts`, () => {
    expect(pickRange(100, parts(MAX_RANGES + 1))).toBeNull();
    expect(pickRange(100, parts(MAX_RANGES))).toEqual({ start: 0, end: 1 });
  });
});

describe('isNotModified', () => {
  const etag = '"64-1"';
  const mtime = Date.parse('2026-01-01T00:00:00Z');
  const now = mtime + 60_000;

  it('If-None-Match wins over If-Modified-Since; a request no-cache does not skip the check', () => {
    expect(isNotModified({ 'if-none-match': `W/${etag}` }, etag, mtime, now)).toBe(true);
    expect(
      isNotModified(
        { 'if-none-match': '"other"', 'if-modified-since': new Date(mtime).toUTCString() },
        etag,
        mtime,
        now,
      ),
    ).toBe(false);
    expect(
      isNotModified({ 'if-modified-since': new Date(mtime).toUTCString() }, etag, mtime, now),
    ).toBe(true);
    // no-cache asks for validation, which this is (fetch sends it with every validator).
    expect(
      isNotModified({ 'if-none-match': '*', 'cache-control': 'no-cache' }, etag, mtime, now),
    ).toBe(true);
    expect(isNotModified({ 'if-modified-since': 'garbage' }, etag, mtime, now)).toBe(false);
  });

  it('a date later than now is invalid (RFC 9110 §13.1.3): ignored', () => {
    const at = (ms: number) => ({ 'if-modified-since': new Date(ms).toUTCString() });
    expect(isNotModified(at(now + 1000), etag, mtime, now)).toBe(false);
    expect(isNotModified(at(now), etag, mtime, now)).toBe(true);
  });
});
