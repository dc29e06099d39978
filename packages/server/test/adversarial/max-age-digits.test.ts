// `setCookie(..., { maxAge: 1e21 })` sent `Max-Age=1e+21` and `cacheControl({ maxAge: 1e21 })`
// `max-age=1e+21`: both grammars are digits only (RFC 6265 §5.2.2, RFC 9111 §1.2.2), so a browser
// ignored the attribute (a session cookie instead of a lasting one) and a cache the directive. A
// "forever" is now capped where each RFC caps it: 400 days for a cookie, 2^31 s for a cache.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type App, createApp } from '../../src/index';
import { raw, start } from '../helpers';
import { guardProcess } from './harness';

guardProcess();

let app: App;
let port: number;

beforeAll(async () => {
  app = createApp();
  app.get('/cookie', (ctx) =>
    ctx.setCookie('a', 'v', { maxAge: Number(ctx.query('s')) }).send('ok'),
  );
  app.get('/cache', (ctx) =>
    ctx
      .cacheControl({ maxAge: Number(ctx.query('s')), sMaxAge: Number(ctx.query('s')) })
      .send('ok'),
  );
  ({ port } = await start(app));
});

afterAll(() => app.close());

const DAYS_400 = 400 * 24 * 3600;

describe('max-age is always written in digits', () => {
  it.each([
    ['1e21', DAYS_400],
    ['1e300', DAYS_400],
    [String(Number.MAX_VALUE), DAYS_400],
    [String(DAYS_400 + 1), DAYS_400],
    [String(DAYS_400), DAYS_400],
    ['3600', 3600],
    ['0', 0],
    ['-5', -5],
    // A large negative age deletes the cookie as -5 does; `-1e+21` was no delta-seconds, and a
    // browser ignoring the attribute kept the cookie for the session instead.
    ['-1e21', -DAYS_400],
    [String(-DAYS_400 - 1), -DAYS_400],
  ])('setCookie maxAge %s -> Max-Age=%i', async (s, expected) => {
    const res = await raw(port, { path: `/cookie?s=${encodeURIComponent(s)}` });
    expect(res.status).toBe(200);
    const cookie = (res.headers['set-cookie'] ?? [])[0] ?? '';
    expect(cookie).toMatch(/Max-Age=-?\d+;/);
    expect(cookie).toContain(`Max-Age=${expected};`);
  });

  it.each([
    ['1e21', 2147483648],
    ['1e300', 2147483648],
    ['2147483649', 2147483648],
    ['2147483648', 2147483648],
    ['60', 60],
  ])('cacheControl maxAge %s -> max-age=%i', async (s, expected) => {
    const res = await raw(port, { path: `/cache?s=${encodeURIComponent(s)}` });
    expect(res.status).toBe(200);
    expect(res.headers['cache-control']).toBe(`max-age=${expected}, s-maxage=${expected}`);
  });
});
