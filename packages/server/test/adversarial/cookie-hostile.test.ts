// Set-Cookie values a browser drops, or reads differently, without a word: an `httpOnly` or
// `secure` given as a string (from a config file or an env var) was sent without the flag, a
// cookie over 4096 bytes (name and value, as sent: URL-encoded) is ignored whole, a Path or
// Domain over 1024 bytes is ignored (the cookie then scoped to the request's directory, or to the
// host only), and a Path not starting with `/` is replaced by the request's directory
// (RFC 6265bis §5.6, §5.6.4). Each is now an error naming the option; what is sent is checked
// on a real socket.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serializeCookie } from '../../src/cookies';
import { type App, type CookieOptions, createApp } from '../../src/index';
import { raw, start } from '../helpers';
import { guardProcess } from './harness';

guardProcess();

let app: App;
let port: number;
const errors: unknown[] = [];
let args: [string, string, CookieOptions?] = ['a', 'v'];

beforeAll(async () => {
  app = createApp();
  app.onError((err) => {
    errors.push(err);
  });
  app.get('/c', (ctx) => ctx.setCookie(...args).send('ok'));
  ({ port } = await start(app));
});

afterAll(() => app.close());

/** Sets the cookie on a real response: the status, the Set-Cookie sent, the error reported. */
async function set(...next: [string, string, CookieOptions?]) {
  args = next;
  errors.length = 0;
  const res = await raw(port, { path: '/c' });
  return { status: res.status, cookie: res.headers['set-cookie'], error: errors[0] as Error };
}

describe('setCookie values a browser would drop or misread', () => {
  it.each([
    ['httpOnly', 'true'],
    ['secure', 'true'],
    ['httpOnly', 1],
    ['secure', 'no'],
  ] as const)('%s: %j is a TypeError naming the option', async (key, value) => {
    const res = await set('a', 'v', { [key]: value } as CookieOptions);
    expect(res.status).toBe(500);
    expect(res.cookie).toBeUndefined();
    expect(res.error).toBeInstanceOf(TypeError);
    expect(res.error.message).toBe(
      `keel: \`setCookie ${key}\` must be true or false, got ${JSON.stringify(value)}`,
    );
  });

  it('a name and value over 4096 bytes as sent (URL-encoded) is a RangeError', async () => {
    // 4096 bytes exactly is kept: the limit is on name and value, not the attributes.
    const fits = await set('a', 'x'.repeat(4095));
    expect(fits.status).toBe(200);
    expect(fits.cookie?.[0]).toBe(`a=${'x'.repeat(4095)}; Path=/; SameSite=Lax`);
    for (const [name, value, bytes] of [
      ['a', 'x'.repeat(4096), 4097],
      ['n'.repeat(4000), 'x'.repeat(97), 4097],
      ['a', '€'.repeat(1400), 12601], // 1400 characters, 12600 bytes once encoded
    ] as const) {
      const res = await set(name, value);
      expect(res.status).toBe(500);
      expect(res.cookie).toBeUndefined();
      expect(res.error).toBeInstanceOf(RangeError);
      expect(res.error.message).toBe(
        'keel: `setCookie value` must be at most 4096 bytes with the name, URL-encoded ' +
          `(${bytes} here), got ${JSON.stringify(`${value.slice(0, 60)}...`)}`,
      );
    }
  });

  it('a path or domain over 1024 bytes is a RangeError naming it', async () => {
    const long = `/${'p'.repeat(1024)}`;
    const path = await set('a', 'v', { path: long });
    expect(path.status).toBe(500);
    expect(path.error).toBeInstanceOf(RangeError);
    expect(path.error.message).toMatch(/^keel: `setCookie path` must be at most 1024 bytes/);
    const domain = await set('a', 'v', { domain: `${'a.'.repeat(520)}com` });
    expect(domain.status).toBe(500);
    expect(domain.error.message).toMatch(/^keel: `setCookie domain` must be at most 1024 bytes/);
    expect((await set('a', 'v', { path: `/${'p'.repeat(1023)}` })).status).toBe(200);
  });

  it('a path not starting with / is a RangeError (the browser would use the request directory)', async () => {
    for (const p of ['admin', '', ' /x']) {
      const res = await set('a', 'v', { path: p });
      expect(res.status).toBe(500);
      expect(res.error).toBeInstanceOf(RangeError);
      expect(res.error.message).toBe(
        `keel: \`setCookie path\` must be a path starting with "/", got ${JSON.stringify(p)}`,
      );
    }
    expect((await set('a', 'v', { path: '/app' })).cookie?.[0]).toBe(
      'a=v; Path=/app; SameSite=Lax',
    );
  });

  it('booleans and left-out flags are sent as before', () => {
    expect(serializeCookie('a', 'v', { httpOnly: true, secure: false })).toBe(
      'a=v; Path=/; HttpOnly; SameSite=Lax',
    );
    expect(serializeCookie('a', 'v', { httpOnly: undefined, secure: true })).toBe(
      'a=v; Path=/; Secure; SameSite=Lax',
    );
  });
});

// `sameSite: 'none', secure: false` was sent with Secure in silence: the `false` asked for was
// not what was sent. An explicit `false` beside an option that needs Secure is a RangeError.
describe('setCookie secure contradictions', () => {
  it("sameSite: 'none' with secure: false is a RangeError naming both", async () => {
    for (const sameSite of ['none', 'None'] as const) {
      const res = await set('a', 'v', { sameSite: sameSite as 'none', secure: false });
      expect(res.status).toBe(500);
      expect(res.cookie).toBeUndefined();
      expect(res.error).toBeInstanceOf(RangeError);
      expect(res.error.message).toMatch(/`setCookie secure`/);
      expect(res.error.message).toMatch(/sameSite/);
    }
  });

  it("sameSite: 'none' with secure left out still forces Secure", async () => {
    expect((await set('a', 'v', { sameSite: 'none' })).cookie).toEqual([
      'a=v; Path=/; Secure; SameSite=None',
    ]);
    expect((await set('a', 'v', { sameSite: 'none', secure: undefined })).cookie).toEqual([
      'a=v; Path=/; Secure; SameSite=None',
    ]);
  });

  it('partitioned: true with secure: false is a RangeError naming both', async () => {
    const res = await set('a', 'v', { partitioned: true, secure: false });
    expect(res.status).toBe(500);
    expect(res.error).toBeInstanceOf(RangeError);
    expect(res.error.message).toMatch(/`setCookie secure`/);
    expect(res.error.message).toMatch(/partitioned/);
  });

  it('secure: false with lax / strict is sent without Secure', async () => {
    expect((await set('a', 'v', { sameSite: 'strict', secure: false })).cookie).toEqual([
      'a=v; Path=/; SameSite=Strict',
    ]);
  });
});

// A non-ASCII `domain` was refused as "a value a cookie can carry". The Host a browser sends,
// and matches Domain against, is the punycode form: it is sent that way.
describe('setCookie non-ASCII domain', () => {
  it('is sent as punycode (what domainToASCII gives)', async () => {
    expect((await set('a', 'v', { domain: 'café.example' })).cookie).toEqual([
      'a=v; Domain=xn--caf-dma.example; Path=/; SameSite=Lax',
    ]);
    expect((await set('a', 'v', { domain: '.Bücher.example' })).cookie).toEqual([
      'a=v; Domain=.xn--bcher-kva.example; Path=/; SameSite=Lax',
    ]);
  });

  it('that no domain name spells is a RangeError saying it must be an ASCII domain', async () => {
    for (const domain of ['caf é.example', 'ex\u00e9\u0000.com', '\ud800.com']) {
      const res = await set('a', 'v', { domain });
      expect(res.status).toBe(500);
      expect(res.cookie).toBeUndefined();
      expect(res.error).toBeInstanceOf(RangeError);
      expect(res.error.message).toMatch(/^keel: `setCookie domain` must be .*ASCII/);
    }
  });
});
