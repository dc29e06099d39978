import { describe, expect, it } from 'vitest';
import {
  bodyCharset,
  charsetParam,
  type Decoder,
  formDecoder,
  isMediaType,
  isToken,
} from './charset';
import { HttpException } from './errors';

function decoder(type: string): Decoder {
  const charset = bodyCharset(type, false);
  if (charset === null || charset instanceof HttpException) throw new Error(`no decoder: ${type}`);
  return charset;
}

describe('charsetParam', () => {
  it('finds the charset parameter, quoted or not, names without case', () => {
    expect(charsetParam('text/plain')).toBeNull();
    expect(charsetParam('text/plain; format=flowed')).toBeNull();
    expect(charsetParam('text/plain; CharSet=Latin1')).toBe('Latin1');
    expect(charsetParam('text/plain;charset="iso-8859-1"')).toBe('iso-8859-1');
    expect(charsetParam('text/plain; a="x;charset=no"; charset=koi8-r')).toBe('koi8-r');
    expect(charsetParam('text/plain; flag; charset=koi8-r')).toBe('koi8-r');
    expect(charsetParam('text/plain; charset="a\\"b"')).toBe('a"b');
    expect(charsetParam('text/plain; charset="unterminated')).toBeNull();
    expect(charsetParam('text/plain; xcharset=latin1')).toBeNull();
  });

  it('gives UTF-8 labels as the one shared string', () => {
    for (const type of [
      'text/plain; charset=utf-8',
      'text/plain; charset=UTF-8 ',
      'text/plain; charset=Utf8; format=flowed',
      'text/plain; charset="UTF-8"',
    ]) {
      expect(charsetParam(type), type).toBe('utf-8');
    }
  });
});

describe('bodyCharset', () => {
  it('UTF-8 under any of its labels is the fast path (null)', () => {
    for (const label of ['utf-8', 'UTF8', 'unicode-1-1-utf-8']) {
      expect(bodyCharset(`text/plain; charset=${label}`, false), label).toBeNull();
      expect(bodyCharset(`application/json; charset=${label}`, true), label).toBeNull();
    }
  });

  it('windows-1252 (and latin1, which names it) decodes 0x80-0x9F as WHATWG maps them', () => {
    const bytes = Uint8Array.from({ length: 32 }, (_, i) => 0x80 + i);
    const expected = '€\u0081‚ƒ„…†‡ˆ‰Š‹Œ\u008dŽ\u008f\u0090‘’“”•–—˜™š›œ\u009džŸ';
    for (const label of ['windows-1252', 'latin1', 'iso-8859-1', 'us-ascii']) {
      expect(decoder(`text/plain; charset=${label}`).decode(bytes), label).toBe(expected);
    }
    expect(decoder('text/plain; charset=latin1').decode(Uint8Array.of(0xe9, 0x41))).toBe('éA');
  });
});

describe('formDecoder', () => {
  it('decodes runs of escapes as the charset bytes, and leaves the rest', () => {
    const decode = formDecoder(decoder('text/plain; charset=utf-16le'));
    expect(decode('%41%00%03%26!')).toBe('A☃!');
    const latin = formDecoder(decoder('text/plain; charset=latin1'));
    expect(latin('caf%e9 %zz %4')).toBe('café %zz %4');
    expect(latin('plain')).toBe('plain');
  });
});

describe('isMediaType', () => {
  it('compares the type without case, OWS and parameters, and nothing more', () => {
    for (const type of [
      'application/json',
      'Application/JSON',
      ' application/json ',
      'application/json\t; charset=utf-8',
      'APPLICATION/JSON;x',
    ]) {
      expect(isMediaType(type, 'application/json'), type).toBe(true);
    }
    for (const type of [
      '',
      ';application/json',
      'application/jsonx',
      'application/json\u00a0',
      'application/graphql-response+json',
      'xapplication/json',
    ]) {
      expect(isMediaType(type, 'application/json'), type).toBe(false);
    }
  });
});

describe('isToken', () => {
  it('compares the whole value without case and OWS, and nothing more', () => {
    for (const value of ['identity', 'IDENTITY', ' Identity\t', '\t identity  ']) {
      expect(isToken(value, 'identity'), value).toBe(true);
    }
    for (const value of [
      '',
      ' ',
      'identity\u00a0',
      '\u00a0identity',
      'identity;q=1',
      'identity, identity',
      'identityx',
      'xidentity',
    ]) {
      expect(isToken(value, 'identity'), value).toBe(false);
    }
  });
});
