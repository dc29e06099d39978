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

  // Copies, not the caller's objects: keel calls fetch later (a scheduler queue, a retry), and
  // what is sent must be the body as it was at the call, as with fetch(url, init).
  test.each([
    ['URLSearchParams', () => new URLSearchParams('a=1&a=2&b=3')],
    ['FormData', () => formData()],
  ])(
    '%s is sent as a copy of its entries; no content type may be sent with it (fetch writes it)',
    (_name, make) => {
      const value = make();
      const out = serializeBody(value);
      expect(out.body).not.toBe(value);
      expect(out.body).toBeInstanceOf(value.constructor);
      expect([...(out.body as URLSearchParams)]).toEqual([...value]);
      expect(out.contentType).toBeNull();
    },
  );

  test('a Blob is immutable: it is sent as it is, with no content type (fetch sets it)', () => {
    const blob = new Blob(['x']);
    expect(serializeBody(blob)).toEqual({ body: blob, contentType: undefined });
    expect(serializeBody(blob).body).toBe(blob);
  });

  test('a stream is read once: it is sent as it is (and never retried)', () => {
    const stream = new ReadableStream();
    expect(serializeBody(stream).body).toBe(stream);
  });

  test.each([
    ['ArrayBuffer', () => new Uint8Array([1, 2, 3, 4]).buffer, [1, 2, 3, 4]],
    ['Uint8Array', () => new Uint8Array([1, 2]), [1, 2]],
    ['Float32Array', () => new Float32Array([1]), [0, 0, 0x80, 0x3f]],
    ['a view over part of a buffer', () => new Uint8Array([9, 1, 2, 9]).subarray(1, 3), [1, 2]],
    ['DataView', () => new DataView(new Uint8Array([5, 6, 7]).buffer, 1), [6, 7]],
  ])(
    '%s is sent as a copy of its bytes, with no content type (fetch sets it)',
    (_n, make, bytes) => {
      const value = make();
      const out = serializeBody(value);
      expect(out.body).not.toBe(value);
      const sent = out.body as ArrayBuffer | Uint8Array;
      expect([...new Uint8Array(sent instanceof ArrayBuffer ? sent : sent.buffer)]).toEqual(bytes);
      expect(out.contentType).toBeUndefined();
    },
  );

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

function formData(): FormData {
  const form = new FormData();
  form.append('a', '1');
  form.append('a', '2');
  form.append('f', new File(['x'], 'x.txt', { type: 'text/plain' }));
  return form;
}
