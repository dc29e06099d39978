import { describe, expect, test } from 'vitest';
import { serializeBody } from './body';

describe('serializeBody', () => {
  test('undefined and null send no body', () => {
    expect(serializeBody(undefined)).toEqual({ body: undefined, contentType: undefined });
    expect(serializeBody(null)).toEqual({ body: undefined, contentType: undefined });
  });

  test('a string passes through as is', () => {
    expect(serializeBody('{"raw":true}').body).toBe('{"raw":true}');
  });

  test.each([
    ['URLSearchParams', () => new URLSearchParams('a=1')],
    ['FormData', () => new FormData()],
  ])(
    '%s passes through untouched; no content type may be sent with it (fetch writes it)',
    (_name, make) => {
      const value = make();
      const out = serializeBody(value);
      expect(out.body).toBe(value);
      expect(out.contentType).toBeNull();
    },
  );

  test.each([
    ['Blob', () => new Blob(['x'])],
    ['ArrayBuffer', () => new ArrayBuffer(4)],
    ['Uint8Array', () => new Uint8Array([1, 2])],
    ['Float32Array', () => new Float32Array(2)],
    ['DataView', () => new DataView(new ArrayBuffer(2))],
  ])('%s passes through untouched, with no content type (fetch sets it)', (_name, make) => {
    const value = make();
    const out = serializeBody(value);
    expect(out.body).toBe(value);
    expect(out.contentType).toBeUndefined();
  });

  test('objects, arrays, numbers and booleans are JSON with application/json', () => {
    expect(serializeBody({ a: 1, b: [true] })).toEqual({
      body: '{"a":1,"b":[true]}',
      contentType: 'application/json',
    });
    expect(serializeBody([1, 2]).body).toBe('[1,2]');
    expect(serializeBody(0).body).toBe('0');
    expect(serializeBody(false).body).toBe('false');
  });

  test('toJSON is honoured (a Date becomes its ISO string)', () => {
    expect(serializeBody({ at: new Date(0) }).body).toBe('{"at":"1970-01-01T00:00:00.000Z"}');
  });

  test('a BigInt is a TypeError naming the body', () => {
    expect(() => serializeBody({ n: 10n })).toThrow(TypeError);
    expect(() => serializeBody({ n: 10n })).toThrow(/body/);
  });

  test('a cycle is a TypeError naming the body', () => {
    const a: Record<string, unknown> = {};
    a.self = a;
    expect(() => serializeBody(a)).toThrow(TypeError);
    expect(() => serializeBody(a)).toThrow(/body/);
  });

  test('functions and symbols cannot be serialized', () => {
    expect(() => serializeBody(() => 1)).toThrow(TypeError);
    expect(() => serializeBody(Symbol('s'))).toThrow(TypeError);
  });
});
