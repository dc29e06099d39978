import fc from 'fast-check';
import { describe, expect, test, vi } from 'vitest';
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

  test.each([
    ['a scalar and an array of one give the same pair', { a: 1 }, 'a=1'],
    ['', { a: [1] }, 'a=1'],
    [
      'an array keeps its order among the other keys',
      { a: 'x', b: [2, 1], c: 'y' },
      'a=x&b=2&b=1&c=y',
    ],
    [
      'null and undefined skipped whether alone or in an array',
      { a: null, b: [undefined], c: 0 },
      'c=0',
    ],
    [
      'a hole in an array is skipped as undefined',
      { a: new Array<string>(3).fill('x', 0, 1).fill('y', 2) },
      'a=x&a=y',
    ],
    ['false and 0 are values', { a: false, b: [0, false] }, 'a=false&b=0&b=false'],
    ['a bigint is written as its digits', { a: 10n as never }, 'a=10'],
    [
      'pairs of a URLSearchParams, repeated keys in order',
      new URLSearchParams('b=2&a=x&b=1'),
      'b=2&a=x&b=1',
    ],
    ['pairs of a Map', new Map([['k', ['v', 'w']]]) as never, 'k=v&k=w'],
  ])('table: %s', (_what, params, query) => {
    expect(buildQuery(params as Parameters<typeof buildQuery>[0])).toBe(query);
  });

  test.each([
    ['an object', { a: { b: 1 } }],
    ['an array inside an array (one level only)', { a: [['x']] }],
    ['an object inside an array', { a: ['x', { b: 1 }] }],
    ['a function', { a: () => 1 }],
    ['a Date', { a: new Date(0) }],
    // String(symbol) is "Symbol(x)": it was sent as the value.
    ['a symbol', { a: Symbol('x') }],
    ['a symbol inside an array', { a: ['x', Symbol('y')] }],
  ])('%s is a TypeError naming the param', (_what, params) => {
    const error = (() => {
      try {
        buildQuery(params as never);
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(TypeError);
    expect((error as Error).message).toMatch(
      /^keel: `params\["a"\]` must be a string, number or boolean, got /,
    );
  });

  test('a scalar value, the common case, is not wrapped in an array (no flat per value)', () => {
    const flat = vi.spyOn(Array.prototype, 'flat');
    try {
      expect(buildQuery({ a: 1, b: 'x', c: null, d: [1, 2] })).toBe('a=1&b=x&d=1&d=2');
      expect(flat).not.toHaveBeenCalled();
    } finally {
      flat.mockRestore();
    }
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
