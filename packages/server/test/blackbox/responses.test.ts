// Spec 001 "Endpoints": ctx.status, ctx.json, ctx.send, ctx.cacheControl, ctx.setCookie; issue #14
// items 3-4 (error names, guards, message template). Units the spec leaves "not shown" follow
// the README: cache-control durations and cookie maxAge are in seconds.
import { describe, expect, it } from 'vitest';
import {
  BadRequestError,
  createApp,
  HttpException,
  isBadRequestError,
  isHttpException,
} from '../../src/index';
import { call, serve } from './helpers';

describe('spec 001 response helpers', () => {
  it('spec ctx.status: sets the status code and chains to a response operation', async () => {
    const app = createApp();
    app.post('/s', (ctx) => ctx.status(201).json({ ok: true }));
    const port = await serve(app);
    const r = await call(port, { method: 'POST', path: '/s' });
    expect(r.status).toBe(201);
    expect(r.json()).toEqual({ ok: true });
  });

  it('spec ctx.json: sends the value as JSON with Content-Type application/json', async () => {
    const app = createApp();
    app.get('/j', (ctx) => ctx.json({ a: [1, 'two', null], b: { c: true } }));
    const port = await serve(app);
    const r = await call(port, { path: '/j' });
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toMatch(/^application\/json/);
    expect(r.json()).toEqual({ a: [1, 'two', null], b: { c: true } });
    expect(Number(r.headers['content-length'])).toBe(r.body.length);
  });

  it('spec ctx.send: a text body is sent raw', async () => {
    const app = createApp();
    app.get('/t', (ctx) => ctx.send('plain words'));
    const port = await serve(app);
    const r = await call(port, { path: '/t' });
    expect(r.text).toBe('plain words');
    expect(r.headers['content-type']).toMatch(/^text\/plain/);
  });

  it('spec ctx.send: a Buffer body is sent byte for byte', async () => {
    const bytes = Buffer.from([0, 255, 1, 254, 0x80, 0x7f]);
    const app = createApp();
    app.get('/b', (ctx) => ctx.send(bytes));
    const port = await serve(app);
    const r = await call(port, { path: '/b' });
    expect(r.body.equals(bytes)).toBe(true);
    expect(r.headers['content-type']).toBe('application/octet-stream');
  });

  it('spec ctx.send: an object body is sent (as JSON, README)', async () => {
    const app = createApp();
    app.get('/o', (ctx) => ctx.send({ x: 1 }));
    const port = await serve(app);
    const r = await call(port, { path: '/o' });
    expect(r.json()).toEqual({ x: 1 });
    expect(r.headers['content-type']).toMatch(/^application\/json/);
  });

  it('spec ctx.cacheControl {maxAge, public, staleWhileRevalidate}: sets Cache-Control (seconds, README)', async () => {
    const app = createApp();
    app.get('/c', (ctx) =>
      ctx.cacheControl({ public: true, maxAge: 60, staleWhileRevalidate: 30 }).json({}),
    );
    app.get('/p', (ctx) => ctx.cacheControl({ public: false, maxAge: 5 }).json({}));
    const port = await serve(app);
    const r = await call(port, { path: '/c' });
    expect(r.headers['cache-control']).toBe('public, max-age=60, stale-while-revalidate=30');
    const p = await call(port, { path: '/p' });
    expect(p.headers['cache-control']).toBe('private, max-age=5');
  });

  it('README cacheControl: a negative duration throws a RangeError naming the option (issue #14 item 4 template)', async () => {
    const app = createApp();
    let caught: unknown;
    app.get('/c', (ctx) => {
      try {
        ctx.cacheControl({ maxAge: -1 });
      } catch (e) {
        caught = e;
      }
      return ctx.send('x');
    });
    const port = await serve(app);
    await call(port, { path: '/c' });
    expect(caught).toBeInstanceOf(RangeError);
    expect((caught as Error).message).toMatch(/^keel: `[^`]*maxAge`/);
  });

  it('spec ctx.setCookie: adds a Set-Cookie header with defaults Path=/ and SameSite=Lax', async () => {
    const app = createApp();
    app.get('/k', (ctx) => ctx.setCookie('sid', 'abc').send('ok'));
    const port = await serve(app);
    const r = await call(port, { path: '/k' });
    const [cookie] = r.headers['set-cookie'] ?? [];
    expect(cookie).toMatch(/^sid=abc(;|$)/);
    expect(cookie).toMatch(/; Path=\/(;|$)/);
    expect(cookie).toMatch(/; SameSite=Lax(;|$)/);
  });

  it('spec ctx.setCookie: options httpOnly, secure, maxAge (seconds, README)', async () => {
    const app = createApp();
    app.get('/k', (ctx) =>
      ctx.setCookie('sid', 'abc', { httpOnly: true, secure: true, maxAge: 3600 }).send('ok'),
    );
    const port = await serve(app);
    const [cookie] = (await call(port, { path: '/k' })).headers['set-cookie'] ?? [];
    expect(cookie).toMatch(/; HttpOnly(;|$)/);
    expect(cookie).toMatch(/; Secure(;|$)/);
    expect(cookie).toMatch(/; Max-Age=3600(;|$)/);
  });

  it('spec ctx.setCookie: name and value are URL-encoded and CR/LF stripped (no header injection)', async () => {
    const app = createApp();
    app.get('/k', (ctx) =>
      ctx.setCookie('n a;me', 'v\r\nSet-Cookie: evil=1; x=y').setCookie('b', 'é').send('ok'),
    );
    const port = await serve(app);
    const r = await call(port, { path: '/k' });
    const cookies = r.headers['set-cookie'] ?? [];
    expect(cookies).toHaveLength(2);
    expect(cookies[0]).toMatch(/^n%20a%3Bme=vSet-Cookie%3A%20evil%3D1%3B%20x%3Dy;/);
    expect(cookies.some((c) => c.startsWith('evil='))).toBe(false);
    expect(cookies[1]).toMatch(/^b=%C3%A9;/);
    expect(r.headers.evil).toBeUndefined();
  });
});

describe('issue #14 item 3: one error vocabulary on the server', () => {
  it('HttpException / BadRequestError have literal names and their own guards', () => {
    const e = new HttpException(404, 'No such user');
    const b = new BadRequestError('nope');
    expect(e.name).toBe('HttpException');
    expect(b.name).toBe('BadRequestError');
    expect(isHttpException(e)).toBe(true);
    expect(isHttpException(b)).toBe(true);
    expect(isBadRequestError(b)).toBe(true);
    expect(isBadRequestError(e)).toBe(false);
    expect(isHttpException({ name: 'HttpException', status: 404 })).toBe(false);
  });

  it('a thrown HttpException becomes its status and the documented body', async () => {
    const app = createApp();
    app.get('/x', () => {
      throw new HttpException(404, 'No such user');
    });
    const port = await serve(app);
    const r = await call(port, { path: '/x' });
    expect(r.status).toBe(404);
    expect(r.json()).toEqual({ status: 404, error: 'Not Found', message: 'No such user' });
  });

  it('issue #14 item 4: bad app options throw TypeError (wrong type) / RangeError (wrong value) with the keel: template', () => {
    expect(() => createApp({ bodyLimit: -1 })).toThrow(RangeError);
    expect(() => createApp({ bodyLimit: -1 })).toThrow(/^keel: `bodyLimit` must be/);
    expect(() => createApp({ bodyLimit: '1' as unknown as number })).toThrow(TypeError);
    expect(() => createApp({ bodyLimit: '1' as unknown as number })).toThrow(/^keel: `bodyLimit`/);
  });
});
