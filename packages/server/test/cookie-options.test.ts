// ctx.setCookie: an option asked for is sent or refused, never dropped. `partitioned` and
// `priority` were dropped in silence, `domain: ''` gave a host-only cookie, and a non-ASCII path
// was refused as "a value a cookie can carry" though a browser matches it percent-encoded.
import { describe, expect, it } from 'vitest';
import type { CookieOptions } from '../src/index';
import { raw, start, trackApps } from './helpers';

const createApp = trackApps();

/** The Set-Cookie a real request gets for `options`, or the error the handler threw. */
async function sent(
  options: CookieOptions,
  name = 'sid',
  value = 'v',
): Promise<string | Error | undefined> {
  const app = createApp();
  let thrown: Error | undefined;
  app.onError((err) => {
    thrown = err as Error;
  });
  app.get('/c', (ctx) => ctx.setCookie(name, value, options).json({}));
  const { port } = await start(app);
  const res = await raw(port, { path: '/c' });
  if (thrown !== undefined) {
    expect(res.status).toBe(500);
    expect(res.headers['set-cookie']).toBeUndefined();
    return thrown;
  }
  expect(res.status).toBe(200);
  return (res.headers['set-cookie'] as string[] | undefined)?.[0];
}

describe('setCookie partitioned and priority', () => {
  it('partitioned: true sends Partitioned and forces Secure (CHIPS needs it)', async () => {
    expect(await sent({ partitioned: true, sameSite: 'none' })).toBe(
      'sid=v; Path=/; Secure; Partitioned; SameSite=None',
    );
    expect(await sent({ partitioned: true })).toBe(
      'sid=v; Path=/; Secure; Partitioned; SameSite=Lax',
    );
    expect(await sent({ partitioned: false })).toBe('sid=v; Path=/; SameSite=Lax');
  });

  it('partitioned with secure: false is a RangeError (a browser drops the cookie)', async () => {
    const err = await sent({ partitioned: true, secure: false });
    expect(err).toBeInstanceOf(RangeError);
    expect((err as Error).message).toContain('`setCookie secure`');
    expect((err as Error).message).toContain('partitioned: true');
  });

  it('partitioned that is no boolean is a TypeError naming it', async () => {
    const err = await sent({ partitioned: 'true' as never });
    expect(err).toBeInstanceOf(TypeError);
    expect((err as Error).message).toContain('`setCookie partitioned` must be true or false');
  });

  it('priority low / medium / high in any case', async () => {
    expect(await sent({ priority: 'high' })).toBe('sid=v; Path=/; Priority=High; SameSite=Lax');
    expect(await sent({ priority: 'Low' as never })).toBe(
      'sid=v; Path=/; Priority=Low; SameSite=Lax',
    );
    expect(await sent({ priority: 'MEDIUM' as never })).toBe(
      'sid=v; Path=/; Priority=Medium; SameSite=Lax',
    );
  });

  it('another priority is a RangeError, a non-string a TypeError', async () => {
    const bad = await sent({ priority: 'urgent' as never });
    expect(bad).toBeInstanceOf(RangeError);
    expect((bad as Error).message).toContain("`setCookie priority` must be one of 'low'");
    expect(await sent({ priority: 1 as never })).toBeInstanceOf(TypeError);
  });

  it('an unknown key is a RangeError naming it, not a cookie without it', async () => {
    for (const key of ['httponly', 'secured', 'signed', 'sameSite ', 'maxage']) {
      const err = await sent({ [key]: true } as CookieOptions);
      expect(err).toBeInstanceOf(RangeError);
      expect((err as Error).message).toContain('`setCookie options` must be');
      expect((err as Error).message).toContain(`got ${JSON.stringify(key)}`);
    }
  });
});

describe('setCookie domain and path', () => {
  it("domain: '' (or only CR/LF) is a RangeError, not a host-only cookie", async () => {
    for (const domain of ['', '\r\n']) {
      const err = await sent({ domain });
      expect(err).toBeInstanceOf(RangeError);
      expect((err as Error).message).toContain('`setCookie domain` must be a domain name');
    }
  });

  it('a non-ASCII path is sent percent-encoded as UTF-8, as the browser sends the request path', async () => {
    expect(await sent({ path: '/café' })).toBe('sid=v; Path=/caf%C3%A9; SameSite=Lax');
    expect(await sent({ path: '/日本/x' })).toBe('sid=v; Path=/%E6%97%A5%E6%9C%AC/x; SameSite=Lax');
    // ASCII, and an escape already there, are left as they are.
    expect(await sent({ path: '/a%20b/c' })).toBe('sid=v; Path=/a%20b/c; SameSite=Lax');
  });

  it('the path browser and server agree on: the cookie comes back on /café', async () => {
    const app = createApp();
    app.get('/set', (ctx) => ctx.setCookie('k', '1', { path: '/café' }).json({}));
    const { port } = await start(app);
    const res = await raw(port, { path: '/set' });
    const attr = /Path=([^;]*)/.exec((res.headers['set-cookie'] as string[])[0]!)![1]!;
    // What a browser sends for fetch('/café') is the path it compares Path against.
    expect(new URL('http://h/café').pathname.startsWith(attr)).toBe(true);
  });

  it('a path over 1024 bytes once encoded is a RangeError; a lone surrogate too', async () => {
    const long = await sent({ path: `/${'é'.repeat(200)}` });
    expect(long).toBeInstanceOf(RangeError);
    expect((long as Error).message).toContain('at most 1024 bytes');
    const lone = await sent({ path: '/\ud800' });
    expect(lone).toBeInstanceOf(RangeError);
    expect((lone as Error).message).toContain('`setCookie path` must be well-formed Unicode');
  });
});
