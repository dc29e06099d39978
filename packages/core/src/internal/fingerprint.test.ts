import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { createFingerprint } from './fingerprint';

const fp = createFingerprint;

describe('createFingerprint', () => {
  test('equal for the same request written differently', () => {
    const a = fp({ method: 'get', url: 'https://A.test:443/x?b=2&a=1#frag' });
    const b = fp({ method: 'GET', url: 'https://a.test/x?a=1&b=2' });
    expect(a).toBe(b);
  });

  test('header names are case-insensitive and order-insensitive', () => {
    expect(fp({ method: 'GET', url: 'https://a.test/', headers: { 'X-A': '1', 'x-b': '2' } })).toBe(
      fp({ method: 'GET', url: 'https://a.test/', headers: { 'x-b': '2', 'x-a': '1' } }),
    );
  });

  test('headers a request refuses name no key: the TypeError / RangeError a request gets', () => {
    const url = 'https://a.test/x';
    expect(() => fp({ method: 'GET', url, headers: { 'x-a': {} as never } })).toThrow(
      new TypeError('keel: `headers["x-a"]` must be a string, got an object'),
    );
    expect(() => fp({ method: 'GET', url, headers: { 'x a': '1' } })).toThrow(RangeError);
    expect(() => fp({ method: 'GET', url, headers: { 'x-a': 'a\nb' } })).toThrow(
      /headers\["x-a"\]/,
    );
    expect(() => fp({ method: 'GET', url, headers: [['x-a', '1']] as never })).toThrow(TypeError);
    // What a request sends is keyed as before: numbers as text, an undefined value left out.
    expect(fp({ method: 'GET', url, headers: { 'X-N': 1 as never, 'x-u': undefined } })).toBe(
      'GET https://a.test/x |h x-n:1',
    );
  });

  test('an object body and its JSON string give the same key', () => {
    expect(fp({ method: 'POST', url: 'https://a.test/', body: { a: 1 } })).toBe(
      fp({ method: 'POST', url: 'https://a.test/', body: '{"a":1}' }),
    );
  });

  test.each([
    ['method', { method: 'POST', url: 'https://a.test/x' }],
    ['path', { method: 'GET', url: 'https://a.test/y' }],
    ['query value', { method: 'GET', url: 'https://a.test/x?a=2' }],
    ['host', { method: 'GET', url: 'https://b.test/x' }],
    ['port', { method: 'GET', url: 'https://a.test:8443/x' }],
    ['header value', { method: 'GET', url: 'https://a.test/x', headers: { accept: 'text/plain' } }],
    ['body', { method: 'GET', url: 'https://a.test/x', body: 'b' }],
  ])('differs when the %s differs', (_what, other) => {
    const base = fp({ method: 'GET', url: 'https://a.test/x?a=1', headers: { accept: 'x' } });
    expect(fp(other)).not.toBe(base);
  });

  test('property: same inputs give the same key; different paths give different keys', () => {
    fc.assert(
      fc.property(fc.webSegment(), fc.webSegment(), (a, b) => {
        const ka = fp({ method: 'GET', url: `https://a.test/p/${a}` });
        const kb = fp({ method: 'GET', url: `https://a.test/p/${b}` });
        expect(ka === fp({ method: 'get', url: `https://a.test/p/${a}` })).toBe(true);
        if (
          new URL(`https://a.test/p/${a}`).pathname !== new URL(`https://a.test/p/${b}`).pathname
        ) {
          expect(ka).not.toBe(kb);
        }
      }),
      { numRuns: 50 },
    );
  });
});
