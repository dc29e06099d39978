// A `__Host-` / `__Secure-` cookie that breaks its prefix's rules is dropped by the browser in
// silence (RFC 6265bis §4.1.3): `setCookie('__Host-sid', id)` answered 200 with a Set-Cookie no
// browser keeps, so the session just never stuck. Secure is now forced for both prefixes (as for
// `sameSite: 'none'`); what cannot be fixed is a RangeError naming the option.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type App, type CookieOptions, createApp } from '../../src/index';
import { raw, start } from '../helpers';
import { guardProcess } from './harness';

guardProcess();

let app: App;
let port: number;
const errors: unknown[] = [];
let name = '';
let options: CookieOptions | undefined;

beforeAll(async () => {
  app = createApp();
  app.onError((err) => {
    errors.push(err);
  });
  app.get('/c', (ctx) => ctx.setCookie(name, 'v', options).send('ok'));
  ({ port } = await start(app));
});

afterAll(() => app.close());

async function setCookie(n: string, o?: CookieOptions) {
  name = n;
  options = o;
  errors.length = 0;
  return raw(port, { path: '/c' });
}

describe('cookie name prefixes', () => {
  it.each(['__Host-sid', '__Secure-sid', '__host-sid', '__SECURE-sid'])(
    '%s gets Secure without being asked',
    async (n) => {
      const res = await setCookie(n);
      expect(res.status).toBe(200);
      expect(res.headers['set-cookie']).toEqual([`${n}=v; Path=/; Secure; SameSite=Lax`]);
    },
  );

  it('a __Host- cookie keeps Path=/ and no Domain', async () => {
    const res = await setCookie('__Host-sid', { httpOnly: true, path: '/' });
    expect(res.headers['set-cookie']).toEqual([
      '__Host-sid=v; Path=/; HttpOnly; Secure; SameSite=Lax',
    ]);
  });

  it.each([
    ['__Host-sid', { domain: 'example.com' }, 'setCookie domain'],
    ['__Host-sid', { path: '/app' }, 'setCookie path'],
    ['__Host-sid', { secure: false }, 'setCookie secure'],
    ['__Secure-sid', { secure: false }, 'setCookie secure'],
  ] as const)('%s with %j is a RangeError naming %s', async (n, o, what) => {
    const res = await setCookie(n, o);
    expect(res.status).toBe(500);
    expect(res.headers['set-cookie']).toBeUndefined();
    expect(errors).toHaveLength(1);
    expect(errors[0]).toBeInstanceOf(RangeError);
    expect((errors[0] as Error).message).toContain(`\`${what}\``);
    expect((errors[0] as Error).message).toMatch(/__Host-|__Secure-/);
  });

  it('an ordinary name is untouched (no Secure added)', async () => {
    const res = await setCookie('sid', { domain: 'example.com', path: '/app' });
    expect(res.headers['set-cookie']).toEqual([
      'sid=v; Domain=example.com; Path=/app; SameSite=Lax',
    ]);
  });

  it('a prefix that only appears after CR/LF stripping counts too', async () => {
    const res = await setCookie('__Host-\r\nsid', { domain: 'example.com' });
    expect(res.status).toBe(500);
    expect(errors[0]).toBeInstanceOf(RangeError);
  });
});
