// A middleware guard on `ctx.path` under `caseSensitive: false` / `ignoreTrailingSlash: true`:
// the router sends `/Admin`, `/admin/` and `/ADMIN/5/` to the `/admin` routes, while `ctx.path`
// keeps the spelling sent, so `ctx.path === '/admin'` lets them through. These pin the README's
// two safe ways (Routing, "Guards"): compare as the router matches, or guard the routes.
import { describe, expect, it } from 'vitest';
import { createApp, type Handler, HttpException } from '../../src/index';
import { guardProcess } from './harness';

guardProcess();

const OPTIONS = { caseSensitive: false, ignoreTrailingSlash: true } as const;
const ADMIN = [
  '/admin',
  '/Admin',
  '/ADMIN',
  '/admin/',
  '/Admin/',
  '/%41dmin',
  '/admin/5',
  '/Admin/5/',
];

function routes(app: ReturnType<typeof createApp>, wrap: (h: Handler) => Handler = (h) => h) {
  app.get(
    '/admin',
    wrap((ctx) => ctx.json('admin')),
  );
  app.get(
    '/admin/:id',
    wrap((ctx) => ctx.json(ctx.params.id)),
  );
  app.get('/public', (ctx) => ctx.json('public'));
  app.get('/administrators', (ctx) => ctx.json('list'));
}

async function statuses(app: ReturnType<typeof createApp>, urls: string[]): Promise<number[]> {
  return Promise.all(urls.map(async (url) => (await app.inject({ url })).status));
}

describe('guarding routes with caseSensitive: false and ignoreTrailingSlash: true', () => {
  it('the router sends every spelling to the admin routes, and ctx.path keeps it as sent', async () => {
    const app = createApp(OPTIONS);
    const paths: string[] = [];
    app.use((ctx, next) => {
      paths.push(ctx.path);
      return next();
    });
    routes(app);
    expect(await statuses(app, ADMIN)).toEqual(ADMIN.map(() => 200));
    expect(paths).toEqual([
      '/admin',
      '/Admin',
      '/ADMIN',
      '/admin/',
      '/Admin/',
      '/Admin',
      '/admin/5',
      '/Admin/5/',
    ]);
  });

  it('a middleware guard comparing as the router matches refuses them all', async () => {
    const app = createApp(OPTIONS);
    app.use((ctx, next) => {
      const path = ctx.path.toLowerCase(); // caseSensitive: false
      // A segment prefix: `/admin/` (ignoreTrailingSlash) and `/admin/5` fall under it.
      if (path === '/admin' || path.startsWith('/admin/')) throw new HttpException(403);
      return next();
    });
    routes(app);
    expect(await statuses(app, ADMIN)).toEqual(ADMIN.map(() => 403));
    expect(await statuses(app, ['/public', '/PUBLIC/', '/administrators'])).toEqual([
      200, 200, 200,
    ]);
  });

  it('a guard wrapped around the route handlers needs no path compare at all', async () => {
    const app = createApp(OPTIONS);
    const adminOnly =
      (handler: Handler): Handler =>
      (ctx) => {
        if (ctx.header('x-role') !== 'admin') throw new HttpException(403);
        return handler(ctx);
      };
    routes(app, adminOnly);
    expect(await statuses(app, ADMIN)).toEqual(ADMIN.map(() => 403));
    const allowed = await app.inject({ url: '/Admin/5/', headers: { 'x-role': 'admin' } });
    expect(allowed.json()).toBe('5');
    expect(await statuses(app, ['/public', '/administrators'])).toEqual([200, 200]);
  });
});
