import { describe, expect, test } from 'vitest';
import type { CacheMeta } from '../types/client';
import { compileTarget, type Matchable } from './match';

const item = (path: string, tags: string[] = [], origin = 'https://a.test'): Matchable => ({
  key: `GET ${origin}${path}`,
  path,
  origin,
  tags,
  meta: (): CacheMeta => ({ key: `GET ${origin}${path}`, tags, storedAt: 1, expiresAt: 2 }),
});

describe('compileTarget', () => {
  test('a path is segment-aware', () => {
    const m = compileTarget('/users');
    expect(m(item('/users'))).toBe(true);
    expect(m(item('/users/7'))).toBe(true);
    expect(m(item('/users/7/posts'))).toBe(true);
    expect(m(item('/users-x'))).toBe(false);
    expect(m(item('/userss'))).toBe(false);
    expect(m(item('/api/users'))).toBe(false);
  });

  test('query variants of the path match (the query is not part of the path)', () => {
    // Entries store the pathname only, so /users?x=1 is the item with path /users.
    expect(compileTarget('/users?x=1')(item('/users'))).toBe(true);
    expect(compileTarget('/users#x')(item('/users/2'))).toBe(true);
  });

  test('a trailing slash is ignored; "/" matches everything', () => {
    expect(compileTarget('/users/')(item('/users'))).toBe(true);
    expect(compileTarget('/')(item('/anything/deep'))).toBe(true);
  });

  test('a path without a leading slash is treated as absolute', () => {
    expect(compileTarget('users')(item('/users/1'))).toBe(true);
  });

  test('an absolute URL pins the origin', () => {
    const m = compileTarget('https://a.test/users');
    expect(m(item('/users/1'))).toBe(true);
    expect(m(item('/users/1', [], 'https://b.test'))).toBe(false);
  });

  test('an array targets tags (any of them)', () => {
    const m = compileTarget(['a', 'b']);
    expect(m(item('/x', ['b']))).toBe(true);
    expect(m(item('/x', ['c']))).toBe(false);
    expect(m(item('/x'))).toBe(false);
    expect(compileTarget([])(item('/x', ['a']))).toBe(false);
  });

  test('a predicate gets CacheMeta', () => {
    const seen: CacheMeta[] = [];
    const m = compileTarget((meta) => {
      seen.push(meta);
      return meta.tags.includes('t');
    });
    expect(m(item('/x', ['t']))).toBe(true);
    expect(seen[0]).toEqual({
      key: 'GET https://a.test/x',
      tags: ['t'],
      storedAt: 1,
      expiresAt: 2,
    });
  });

  test('a bad target is a TypeError', () => {
    expect(() => compileTarget(5 as never)).toThrow(TypeError);
    expect(() => compileTarget([5] as never)).toThrow(TypeError);
  });
});

describe('compileTarget with a baseURL', () => {
  test('a relative path also matches under the base path', () => {
    const m = compileTarget('/users', 'https://a.test/v1/');
    expect(m(item('/v1/users/3'))).toBe(true);
    expect(m(item('/users'))).toBe(true);
    expect(m(item('/v1/users-x'))).toBe(false);
    expect(m(item('/v2/users'))).toBe(false);
  });

  test('a base without a path changes nothing', () => {
    expect(compileTarget('/users', 'https://a.test')(item('/x/users'))).toBe(false);
  });
});
