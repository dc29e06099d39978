// Text and urlencoded bodies are decoded by the charset their Content-Type declares (they were
// always read as UTF-8: `café` sent as Latin-1 came out `caf\uFFFD`); a charset keel cannot
// decode is a 415 naming it. JSON is UTF-8 (RFC 8259 §8.1): another declared charset is a 415.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type App, createApp } from '../src/index';
import { raw, start } from './helpers';

let app: App;
let port: number;
let ran = 0;

beforeAll(async () => {
  app = createApp({ parsers: { text: ['text/*'], raw: ['application/octet-stream'] } });
  app.post('/echo', (ctx) => {
    ran++;
    return ctx.json({ body: Buffer.isBuffer(ctx.body) ? ctx.body.toString('hex') : ctx.body });
  });
  ({ port } = await start(app));
});

afterAll(async () => {
  await app.close();
});

async function post(type: string, body: Buffer | string) {
  const res = await raw(port, {
    method: 'POST',
    path: '/echo',
    headers: { 'content-type': type },
    body,
  });
  return { status: res.status, json: JSON.parse(res.body) as Record<string, unknown> };
}

describe('text bodies', () => {
  it('are decoded by their declared charset', async () => {
    const cases: [string, Buffer, string][] = [
      ['text/plain; charset=iso-8859-1', Buffer.from('café', 'latin1'), 'café'],
      ['text/plain; charset=latin1', Buffer.from('Jörg', 'latin1'), 'Jörg'],
      ['text/plain;charset="ISO-8859-1"', Buffer.from('naïve', 'latin1'), 'naïve'],
      // WHATWG: windows-1252 (what browsers send for Latin-1 too) has € at 0x80.
      ['text/plain; charset=windows-1252', Buffer.from([0x80, 0x35]), '€5'],
      ['text/plain; charset=utf-16le', Buffer.from('héllo ☃', 'utf16le'), 'héllo ☃'],
      // Its byte order mark is dropped, as UTF-8's is.
      [
        'text/plain; charset=UTF-16LE',
        Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('x', 'utf16le')]),
        'x',
      ],
      ['text/plain; charset=utf-16be', Buffer.from([0x00, 0x41, 0x26, 0x03]), 'A☃'],
      [
        'text/plain; charset=shift_jis',
        Buffer.from([0x83, 0x65, 0x83, 0x58, 0x83, 0x67]),
        'テスト',
      ],
      // Other parameters around it, a quoted `;` included.
      [
        'text/plain; format=flowed; x="a;charset=klingon"; charset=latin1',
        Buffer.from('é', 'latin1'),
        'é',
      ],
      ['text/plain; charset=utf-8', Buffer.from('\ufeffcafé'), 'café'],
      ['text/plain; charset="UTF8"', Buffer.from('café'), 'café'],
      ['text/plain', Buffer.from('café'), 'café'],
    ];
    for (const [type, bytes, text] of cases) {
      const res = await post(type, bytes);
      expect(res, type).toEqual({ status: 200, json: { body: text } });
    }
  });

  it('reads the charset parameter as body-parser does (jshttp content-type): OWS around `=`', async () => {
    // Hand-parsed, `charset = latin1` was no charset parameter: Latin-1 bytes read as UTF-8
    // came out `caf\uFFFD`. Express reads it (content-type trims OWS around name and value).
    for (const type of [
      'text/plain; charset = latin1',
      'text/plain; charset =latin1; format=flowed',
      'text/plain;charset= "latin1"',
    ]) {
      expect(await post(type, Buffer.from('café', 'latin1')), type).toEqual({
        status: 200,
        json: { body: 'café' },
      });
    }
  });

  it('a charset keel cannot decode is a 415 naming it, and no handler runs', async () => {
    const before = ran;
    for (const [type, name] of [
      ['text/plain; charset=klingon', 'klingon'],
      ['text/plain; charset="x-unknown-8"', 'x-unknown-8'],
      // WHATWG's "replacement" encoding: no decoder for it.
      ['text/plain; charset=iso-2022-kr', 'iso-2022-kr'],
    ] as const) {
      const res = await post(type, 'hello');
      expect(res.status, type).toBe(415);
      expect(res.json.message, type).toBe(`Unsupported charset "${name}" in Content-Type`);
    }
    // Not a charset name at all: not echoed.
    const odd = await post('text/plain; charset="a b"', 'hello');
    expect(odd.status).toBe(415);
    expect(odd.json.message).toBe('Unsupported charset in Content-Type (not a charset name)');
    expect(ran).toBe(before);
  });
});

describe('urlencoded bodies', () => {
  it('are decoded by their declared charset, percent-escapes included', async () => {
    const body = Buffer.concat([
      Buffer.from('name=caf%E9&raw='),
      Buffer.from('é', 'latin1'),
      Buffer.from('&euro=%80+5&%E9=k'),
    ]);
    const res = await post('application/x-www-form-urlencoded; charset=windows-1252', body);
    expect(res).toEqual({
      status: 200,
      json: { body: { name: 'café', raw: 'é', euro: '€ 5', é: 'k' } },
    });
    // A `%` without two hex digits stays as it is.
    const loose = await post(
      'application/x-www-form-urlencoded; charset=latin1',
      'a=100%&b=%zz%E9',
    );
    expect(loose).toEqual({ status: 200, json: { body: { a: '100%', b: '%zzé' } } });
    // UTF-8, declared or not, as before.
    for (const type of [
      'application/x-www-form-urlencoded',
      'application/x-www-form-urlencoded; charset=UTF-8',
    ]) {
      expect(await post(type, 'name=J%C3%B6rg'), type).toEqual({
        status: 200,
        json: { body: { name: 'Jörg' } },
      });
    }
  });

  it('in UTF-16, `+` is the UTF-16 space (two bytes), not one 0x20 byte', async () => {
    // querystring turns `+` into `%20` before decoding escapes: one byte, half a UTF-16 code
    // unit, which came out U+FFFD (`Jörg\uFFFDSmith`) or merged with the escapes after it.
    const le = Buffer.from('name=Jörg+Smith&q=%41%00+%42%00&r=a+%42%00', 'utf16le');
    expect(await post('application/x-www-form-urlencoded; charset=utf-16le', le)).toEqual({
      status: 200,
      json: { body: { name: 'Jörg Smith', q: 'A B', r: 'a B' } },
    });
    const be = Buffer.from('name=Jörg+Smith&q=%00%41+%00%42', 'utf16le').swap16();
    expect(await post('application/x-www-form-urlencoded; charset=UTF-16BE', be)).toEqual({
      status: 200,
      json: { body: { name: 'Jörg Smith', q: 'A B' } },
    });
  });

  it('a charset keel cannot decode is a 415', async () => {
    const res = await post('application/x-www-form-urlencoded; charset=klingon', 'a=1');
    expect(res.status).toBe(415);
    expect(res.json.message).toBe('Unsupported charset "klingon" in Content-Type');
  });
});

describe('JSON bodies', () => {
  it('are UTF-8: a UTF-8 label is fine, another charset is a 415 naming it', async () => {
    for (const type of [
      'application/json; charset=utf-8',
      'application/json; charset=UTF8',
      'application/vnd.api+json; charset="utf-8"',
    ]) {
      expect(await post(type, '{"a":"é"}'), type).toEqual({
        status: 200,
        json: { body: { a: 'é' } },
      });
    }
    const before = ran;
    for (const [type, name] of [
      ['application/json; charset=latin1', 'latin1'],
      ['application/json; charset=utf-16le', 'utf-16le'],
      ['application/ld+json; charset=klingon', 'klingon'],
    ] as const) {
      const res = await post(type, '{"a":1}');
      expect(res.status, type).toBe(415);
      expect(res.json.message, type).toBe(
        `Unsupported charset "${name}": JSON bodies are UTF-8 (RFC 8259)`,
      );
    }
    expect(ran).toBe(before);
  });
});

describe('raw bodies', () => {
  it('are bytes whatever the charset says', async () => {
    const res = await post('application/octet-stream; charset=klingon', Buffer.from([1, 2]));
    expect(res).toEqual({ status: 200, json: { body: '0102' } });
  });
});
