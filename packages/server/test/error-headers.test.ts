/**
 * An error response is no representation of the resource: the caching and content headers a
 * handler set for its success do not go out on the 500 (or the HttpException) that replaced it.
 * Found by an audit: `cacheControl({ public: true, maxAge: 31536000, immutable: true })` then a
 * thrown 404 sent an immutable, publicly cacheable 404, which a CDN would serve for a year.
 */
import { describe, expect, it } from 'vitest';
import { cors, HttpException } from '../src/index';
import { raw, start, trackApps } from './helpers';

const makeApp = trackApps();

describe('headers a handler set before it threw', () => {
  it('caching, validators and content headers go; cookies, CORS and the exception own headers stay', async () => {
    const app = makeApp();
    app.onError(() => {});
    app.use(cors({ origin: ['https://app.example'] }));
    app.get('/crash', (ctx) => {
      ctx
        .cacheControl({ public: true, maxAge: 3600 })
        .setCookie('sess', 'abc')
        .setHeader('etag', '"v1"')
        .setHeader('last-modified', 'Sun, 29 Nov 2026 10:00:00 GMT')
        .setHeader('expires', 'Mon, 30 Nov 2026 10:00:00 GMT')
        .setHeader('content-encoding', 'gzip')
        .setHeader('content-disposition', 'attachment; filename="report.csv"')
        .setHeader('content-security-policy', "default-src 'none'")
        .setHeader('x-trace', 't1');
      throw new Error('db down');
    });
    app.get('/gone', (ctx) => {
      ctx.cacheControl({ public: true, maxAge: 31536000, immutable: true });
      throw new HttpException(404, 'No such user', { headers: { 'cache-control': 'max-age=60' } });
    });
    const { port } = await start(app);

    const crash = await raw(port, { path: '/crash', headers: { origin: 'https://app.example' } });
    expect(crash.status).toBe(500);
    expect(JSON.parse(crash.body)).toEqual({ status: 500, error: 'Internal Server Error' });
    for (const name of [
      'cache-control',
      'etag',
      'last-modified',
      'expires',
      'content-encoding',
      'content-disposition',
    ]) {
      expect(crash.headers[name], name).toBeUndefined();
    }
    expect(crash.headers['content-type']).toMatch(/^application\/json/);
    expect(crash.headers['set-cookie']).toEqual(['sess=abc; Path=/; SameSite=Lax']);
    expect(crash.headers['access-control-allow-origin']).toBe('https://app.example');
    expect(crash.headers['x-trace']).toBe('t1');
    expect(crash.headers['content-security-policy']).toBe("default-src 'none'");

    // The exception's own headers are set after: a deliberately cacheable 404 stays possible.
    const gone = await raw(port, { path: '/gone' });
    expect(gone.status).toBe(404);
    expect(gone.headers['cache-control']).toBe('max-age=60');
  });
});
