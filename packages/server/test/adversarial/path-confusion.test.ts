// A middleware that guards by `ctx.path` must see the path the router routes: if the router
// decodes `%61` to `a` and ctx.path does not, `/%61dmin` reaches the `/admin` handler past a
// `ctx.path.startsWith('/admin')` check.
import { afterEach, describe, expect, it } from 'vitest';
import { type App, createApp } from '../../src/index';
import { socketBytes, start } from '../helpers';
import { guardProcess } from './harness';

guardProcess();

const apps: App[] = [];
afterEach(async () => {
  await Promise.all(apps.splice(0).map((a) => a.close({ timeoutMs: 100 })));
});

async function get(port: number, target: string): Promise<{ status: number; body: string }> {
  const out = await socketBytes(
    port,
    `GET ${target} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`,
    2_000,
  );
  const [head = '', body = ''] = out.split('\r\n\r\n');
  // socketBytes reads latin1: the body's UTF-8 bytes back to text.
  return { status: Number(head.split(' ')[1]), body: Buffer.from(body, 'latin1').toString('utf8') };
}

describe('ctx.path is the path the router matched', () => {
  it('a percent-encoded letter cannot slip past a path guard', async () => {
    const app = createApp();
    apps.push(app);
    app.use(async (ctx, next) => {
      if (ctx.path === '/admin' || ctx.path.startsWith('/admin/')) {
        return ctx.status(401).json({ guarded: ctx.path });
      }
      return next();
    });
    app.get('/admin', (ctx) => ctx.json({ secret: true }));
    app.get('/admin/:id', (ctx) => ctx.json({ secret: ctx.params.id }));
    app.get('/files/*', (ctx) => ctx.json({ path: ctx.path, rest: ctx.params['*'] }));
    app.get('/caf\u00e9', (ctx) => ctx.json({ path: ctx.path }));
    const { port } = await start(app);
    for (const target of ['/%61dmin', '/%61%64%6d%69%6e', '/%61dmin/1', 'http://x/%61dmin']) {
      const res = await get(port, target);
      expect(res.status, target).toBe(401);
    }
    expect(JSON.parse((await get(port, '/%61dmin/1')).body)).toEqual({ guarded: '/admin/1' });
    // Reserved characters stay encoded, as the router keeps them: %2F is no segment break and
    // %25 no escape (so `%252F` cannot turn into a slash later).
    expect(JSON.parse((await get(port, '/files/a%2Fb%20c%25d')).body)).toEqual({
      path: '/files/a%2Fb c%25d',
      rest: 'a/b c%d',
    });
    expect(JSON.parse((await get(port, '/caf%C3%A9')).body)).toEqual({ path: '/caf\u00e9' });
    // Malformed encoding: 400 from the router; a guard reading ctx.path does not throw.
    expect((await get(port, '/admin%E0%A4%A')).status).toBe(400);
  });
});
