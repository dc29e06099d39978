/**
 * A named parameter takes a non-empty value. The router (find-my-way) filled `:id` with '' for an
 * empty segment: `GET /users/` ran `/users/:id` with `ctx.params.id === ''`, `GET /` ran a
 * catch-all `/:slug`, and `/users//posts` ran `/users/:id/posts`: handlers that expect an id (as
 * every README example does) got none. The wildcard `*` may still be empty (`/static/`).
 */
import { describe, expect, it } from 'vitest';
import { trackApps } from './helpers';

const makeApp = trackApps();

function app() {
  const a = makeApp();
  a.get('/:slug', (ctx) => ctx.json({ route: '/:slug', params: ctx.params }));
  a.get('/users/:id', (ctx) => ctx.json({ route: '/users/:id', params: ctx.params }));
  a.post('/users/:id/posts', (ctx) => ctx.json({ route: 'posts', params: ctx.params }));
  a.get('/f/file-:name.txt', (ctx) => ctx.json({ route: 'file', params: ctx.params }));
  a.get('/static/*', (ctx) => ctx.json({ route: 'static', params: ctx.params }));
  return a;
}

describe('an empty segment fills no named parameter', () => {
  it.each([
    ['GET', '/'],
    ['GET', '/users/'],
    ['GET', '/users/?q=1'],
    ['POST', '/users//posts'],
    ['GET', '/f/file-.txt'],
  ])('%s %s is a 404, its route not run', async (method, url) => {
    const res = await app().inject({ method, url });
    expect(res.status).toBe(404);
    expect(res.json()).toMatchObject({ status: 404 });
  });

  it('nor makes a 405: the path exists for no method', async () => {
    const a = app();
    expect((await a.inject({ method: 'GET', url: '/users//posts' })).status).toBe(404);
    expect((await a.inject({ method: 'DELETE', url: '/users/' })).status).toBe(404);
    expect((await a.inject({ method: 'HEAD', url: '/users/' })).status).toBe(404);
    const options = await a.inject({ method: 'OPTIONS', url: '/users/' });
    expect(options.status).toBe(404);
    // A value still routes, and gets the 405 of its path.
    const put = await a.inject({ method: 'PUT', url: '/users/7' });
    expect(put.status).toBe(405);
    expect(put.headers.allow).toBe('GET, HEAD, OPTIONS');
  });

  it('values route as before; the wildcard may be empty', async () => {
    const a = app();
    expect((await a.inject({ url: '/users/7' })).json()).toEqual({
      route: '/users/:id',
      params: { id: '7' },
    });
    expect((await a.inject({ method: 'POST', url: '/users/7/posts' })).json()).toEqual({
      route: 'posts',
      params: { id: '7' },
    });
    expect((await a.inject({ url: '/home' })).json()).toEqual({
      route: '/:slug',
      params: { slug: 'home' },
    });
    expect((await a.inject({ url: '/f/file-a.txt' })).json()).toEqual({
      route: 'file',
      params: { name: 'a' },
    });
    expect((await a.inject({ url: '/static/' })).json()).toEqual({
      route: 'static',
      params: { '*': '' },
    });
  });

  it('a registered route for the bare path still answers it', async () => {
    const a = app();
    a.get('/', (ctx) => ctx.json({ route: '/' }));
    a.get('/users/', (ctx) => ctx.json({ route: '/users/' }));
    expect((await a.inject({ url: '/' })).json()).toEqual({ route: '/' });
    expect((await a.inject({ url: '/users/' })).json()).toEqual({ route: '/users/' });
  });
});
