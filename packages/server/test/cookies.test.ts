import { describe, expect, it } from 'vitest';
import { createApp } from '../src/index';

describe('cookies', () => {
  it('sets several cookies with defaults and options', async () => {
    const app = createApp();
    app.get('/', (ctx) =>
      ctx
        .setCookie('session', 'abc', { httpOnly: true, secure: true, maxAge: 3600 })
        .setCookie('theme', 'dark mode', {
          sameSite: 'strict',
          path: '/app',
          domain: 'example.com',
        })
        .setCookie('x', 'y', { sameSite: 'none', expires: new Date(Date.UTC(2030, 0, 1)) })
        .json(1),
    );
    const res = await app.inject({ url: '/' });
    const cookies = res.headers['set-cookie'] as string[];
    expect(cookies).toHaveLength(3);
    expect(cookies[0]).toBe('session=abc; Max-Age=3600; Path=/; HttpOnly; Secure; SameSite=Lax');
    expect(cookies[1]).toBe('theme=dark%20mode; Domain=example.com; Path=/app; SameSite=Strict');
    expect(cookies[2]).toBe(
      'x=y; Path=/; Expires=Tue, 01 Jan 2030 00:00:00 GMT; Secure; SameSite=None',
    );
  });

  it('neutralizes header and attribute injection in names and values', async () => {
    const app = createApp();
    app.get('/', (ctx) =>
      ctx
        .setCookie('a\r\nSet-Cookie: evil=1', 'v\r\nX-Injected: 1')
        .setCookie('b; Domain=evil.com', 'v; HttpOnly=false; Path=/admin')
        .setCookie('c=d', '=x,y"')
        .json(1),
    );
    const res = await app.inject({ url: '/' });
    expect(res.headers['x-injected']).toBeUndefined();
    const cookies = res.headers['set-cookie'] as string[];
    expect(cookies).toHaveLength(3);
    for (const c of cookies) {
      expect(c).not.toMatch(/[\r\n]/);
      // Only our own attributes follow the first `;`.
      const [pair, ...attrs] = c.split('; ');
      expect(pair).toMatch(/^[^;=\s]+=[^;\s]*$/);
      expect(attrs).toEqual(['Path=/', 'SameSite=Lax']);
    }
    expect(cookies[0]).toBe('aSet-Cookie%3A%20evil%3D1=vX-Injected%3A%201; Path=/; SameSite=Lax');
    expect(cookies[1]).toContain(
      'b%3B%20Domain%3Devil.com=v%3B%20HttpOnly%3Dfalse%3B%20Path%3D%2Fadmin',
    );
  });

  it('rejects injection through path or domain with a RangeError naming it (500)', async () => {
    const app = createApp();
    const errors: unknown[] = [];
    app.onError((e) => {
      errors.push(e);
    });
    app.get('/', (ctx) => ctx.setCookie('a', 'b', { path: '/; Domain=evil.com' }).json(1));
    expect((await app.inject({ url: '/' })).status).toBe(500);
    expect(errors[0]).toBeInstanceOf(RangeError);
    expect((errors[0] as Error).message).toBe(
      'keel: `setCookie path` must be a value a cookie can carry, got "/; Domain=evil.com"',
    );
  });

  it('reads request cookies, URL-decoded, by the name given to setCookie', async () => {
    const app = createApp();
    app.get('/', (ctx) =>
      ctx.json({
        a: ctx.cookie('a') ?? null,
        spaced: ctx.cookie('my name') ?? null,
        missing: ctx.cookie('zzz') ?? null,
        proto: ctx.cookie('__proto__') ?? null,
        toString: ctx.cookie('toString') ?? null,
      }),
    );
    const res = await app.inject({
      url: '/',
      headers: { cookie: 'a=hello%20world; my%20name=x' },
    });
    expect(res.json()).toEqual({
      a: 'hello world',
      spaced: 'x',
      missing: null,
      proto: null,
      toString: null,
    });
  });

  it('takes sameSite in any case, as cookie, Express and @fastify/cookie do', async () => {
    const app = createApp();
    app.get('/', (ctx) =>
      ctx
        .setCookie('a', '1', { sameSite: 'None' as never })
        .setCookie('b', '2', { sameSite: 'Strict' as never })
        .setCookie('c', '3', { sameSite: 'LAX' as never })
        .json(1),
    );
    const res = await app.inject({ url: '/' });
    expect(res.status).toBe(200);
    expect(res.headers['set-cookie']).toEqual([
      'a=1; Path=/; Secure; SameSite=None',
      'b=2; Path=/; SameSite=Strict',
      'c=3; Path=/; SameSite=Lax',
    ]);
  });

  it('an empty name (also once CR/LF are stripped) is a RangeError naming the name', async () => {
    const app = createApp();
    const errors: Error[] = [];
    app.onError((e) => {
      errors.push(e as Error);
    });
    app.get('/empty', (ctx) => ctx.setCookie('', 'v').json(1));
    app.get('/crlf', (ctx) => ctx.setCookie('\r\n', 'v').json(1));
    expect((await app.inject({ url: '/empty' })).status).toBe(500);
    expect((await app.inject({ url: '/crlf' })).status).toBe(500);
    expect(errors.map((e) => [e.constructor.name, e.message])).toEqual([
      ['RangeError', 'keel: `setCookie name` must be a non-empty cookie name, got ""'],
      ['RangeError', 'keel: `setCookie name` must be a non-empty cookie name, got "\\r\\n"'],
    ]);
  });

  it('an expires outside the years a cookie-date can write (1970..9999) is sent at the nearest end', async () => {
    const app = createApp();
    const at = (ms: number) => ({ expires: new Date(ms) });
    app.get('/', (ctx) =>
      ctx
        .setCookie('far', '1', at(Date.UTC(10_000, 0, 1)))
        .setCookie('farther', '1', at(8.64e15))
        .setCookie('last', '1', at(Date.UTC(9999, 11, 31, 23, 59, 59)))
        .setCookie('old', '1', at(Date.parse('0050-01-01T00:00:00Z')))
        .setCookie('bc', '1', at(-8.64e15))
        .setCookie('epoch', '1', at(0))
        .json(1),
    );
    const res = await app.inject({ url: '/' });
    const expires = (res.headers['set-cookie'] as string[]).map(
      (c) => /Expires=([^;]*)/.exec(c)?.[1],
    );
    const last = 'Fri, 31 Dec 9999 23:59:59 GMT';
    const epoch = 'Thu, 01 Jan 1970 00:00:00 GMT';
    expect(expires).toEqual([last, last, last, epoch, epoch, epoch]);
  });
});
