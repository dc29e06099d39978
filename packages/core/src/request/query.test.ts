import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { buildQuery } from './query';

describe('buildQuery', () => {
  test('serializes primitives and keeps insertion order', () => {
    expect(buildQuery({ b: 2, a: 'x', t: true, f: false, z: 0 })).toBe(
      'b=2&a=x&t=true&f=false&z=0',
    );
  });

  test('arrays repeat the key', () => {
    expect(buildQuery({ tag: ['x', 'y', 3] })).toBe('tag=x&tag=y&tag=3');
  });

  test('null and undefined are dropped, also inside arrays', () => {
    expect(buildQuery({ a: null, b: undefined, c: [null, 'k', undefined], d: 'v' })).toBe(
      'c=k&d=v',
    );
  });

  test('empty string is kept (it is a value), empty array adds nothing', () => {
    expect(buildQuery({ a: '', b: [] })).toBe('a=');
  });

  test('encodes keys and values with percent-encoding (spaces as %20)', () => {
    expect(buildQuery({ 'a b': 'c&d=e', q: 'ü/?#' })).toBe('a%20b=c%26d%3De&q=%C3%BC%2F%3F%23');
  });

  test('no params gives an empty string', () => {
    expect(buildQuery(undefined)).toBe('');
    expect(buildQuery(null)).toBe('');
    expect(buildQuery({})).toBe('');
  });

  test('ignores inherited keys', () => {
    const params = Object.create({ inherited: 'x' }) as Record<string, string>;
    params.own = 'y';
    expect(buildQuery(params)).toBe('own=y');
  });

  test('property: URLSearchParams parses back exactly the non-null values, in order', () => {
    const value = fc.oneof(
      fc.string(),
      fc.integer(),
      fc.boolean(),
      fc.constant(null),
      fc.constant(undefined),
    );
    fc.assert(
      fc.property(
        fc.dictionary(fc.string({ minLength: 1 }), fc.oneof(value, fc.array(value))),
        (params) => {
          const parsed = [...new URLSearchParams(buildQuery(params)).entries()];
          const expected: [string, string][] = [];
          for (const key of Object.keys(params)) {
            const v = params[key];
            for (const item of Array.isArray(v) ? v : [v]) {
              if (item !== null && item !== undefined) expected.push([key, String(item)]);
            }
          }
          expect(parsed).toEqual(expected);
        },
      ),
    );
  });
});
