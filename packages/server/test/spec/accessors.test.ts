// Spec 001 "Resources and their fields": the request accessors as the spec's table words them,
// on what test/blackbox/accessors.test.ts leaves open: a server listening on every interface
// (`app.listen(0)`, Node's dual-stack `::`), params as a plain map, the request id on the wire.
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { type App, createApp } from '../../src/index';
import { call, serve } from '../blackbox/helpers';

const opened: App[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((a) => a.close({ timeoutMs: 1000 })));
});

/** `app.listen(0)` with no host: Node binds `::`, and an IPv4 client arrives as `::ffff:a.b.c.d`. */
async function serveAnyHost(app: App): Promise<number> {
  const server = await app.listen(0);
  opened.push(app);
  return (server.address() as AddressInfo).port;
}

describe('spec 001 ctx.ip / ctx.req.remoteAddress on a dual-stack listener', () => {
  it('an IPv4 client is its IPv4 address, not the IPv4-mapped IPv6 form', async () => {
    const app = createApp();
    app.get('/ip', (ctx) => ctx.json({ ip: ctx.ip, ips: ctx.ips, peer: ctx.req.remoteAddress }));
    const port = await serveAnyHost(app);
    const r = await call(port, { path: '/ip' });
    expect(r.json()).toEqual({ ip: '127.0.0.1', ips: [], peer: '127.0.0.1' });
  });

  it('trust proxy on: a trusted loopback peer hands over to X-Forwarded-For; ctx.req.remoteAddress stays the peer', async () => {
    const app = createApp();
    app.setTrustProxy(true);
    app.get('/ip', (ctx) => ctx.json({ ip: ctx.ip, ips: ctx.ips, peer: ctx.req.remoteAddress }));
    const port = await serveAnyHost(app);
    const r = await call(port, {
      path: '/ip',
      headers: { 'x-forwarded-for': '203.0.113.195, 70.41.3.18, 150.172.238.178' },
    });
    expect(r.json()).toEqual({
      ip: '203.0.113.195',
      ips: ['203.0.113.195', '70.41.3.18', '150.172.238.178'],
      peer: '127.0.0.1',
    });
  });

  it('trust proxy on without an X-Forwarded-For header: ctx.ip is the peer, ctx.ips empty', async () => {
    const app = createApp({ trustProxy: true });
    app.get('/ip', (ctx) => ctx.json({ ip: ctx.ip, ips: ctx.ips }));
    const port = await serveAnyHost(app);
    expect((await call(port, { path: '/ip' })).json()).toEqual({ ip: '127.0.0.1', ips: [] });
  });

  it('a trust list of IPv4 addresses matches the IPv4 client of a dual-stack listener', async () => {
    const app = createApp({ trustProxy: ['127.0.0.1'] });
    app.get('/ip', (ctx) => ctx.json({ ip: ctx.ip }));
    const port = await serveAnyHost(app);
    const r = await call(port, { path: '/ip', headers: { 'x-forwarded-for': '198.51.100.7' } });
    expect(r.json()).toEqual({ ip: '198.51.100.7' });
  });
});

describe('spec 001 ctx.params / ctx.query / ctx.path', () => {
  it('ctx.params is a map of string to string: equal to a plain object, {} for a route without one', async () => {
    const app = createApp();
    let withId: unknown;
    let without: unknown;
    app.get('/users/:id', (ctx) => {
      withId = ctx.params;
      expect(typeof ctx.params.id).toBe('string');
      return ctx.json(ctx.params);
    });
    app.get('/static', (ctx) => {
      without = ctx.params;
      return ctx.json(ctx.params);
    });
    const port = await serve(app);
    expect((await call(port, { path: '/users/42' })).json()).toEqual({ id: '42' });
    expect(withId).toEqual({ id: '42' });
    expect((await call(port, { path: '/static' })).json()).toEqual({});
    expect(without).toEqual({});
    expect(Object.keys(without as object)).toEqual([]);
  });

  it('ctx.query(key) returns a string for every present key, numbers included; ctx.path has no query', async () => {
    const app = createApp();
    app.get('/s', (ctx) =>
      ctx.json({ page: ctx.query('page'), type: typeof ctx.query('page'), path: ctx.path }),
    );
    const port = await serve(app);
    expect((await call(port, { path: '/s?page=2' })).json()).toEqual({
      page: '2',
      type: 'string',
      path: '/s',
    });
  });
});

describe('spec 001 ctx.requestId (header X-Request-ID)', () => {
  it('the id a handler sees is the X-Request-ID header of its response, and differs per request', async () => {
    const app = createApp();
    const ids: string[] = [];
    app.get('/id', (ctx) => {
      ids.push(ctx.requestId);
      return ctx.send('ok');
    });
    const port = await serve(app);
    const a = await call(port, { path: '/id' });
    const b = await call(port, { path: '/id' });
    expect(typeof ids[0]).toBe('string');
    expect(ids[0]?.length).toBeGreaterThan(0);
    expect(a.headers['x-request-id']).toBe(ids[0]);
    expect(b.headers['x-request-id']).toBe(ids[1]);
    expect(ids[0]).not.toBe(ids[1]);
  });

  it('a UUID sent as X-Request-ID is the correlation id (any header case)', async () => {
    const app = createApp();
    app.get('/id', (ctx) => ctx.json({ id: ctx.requestId }));
    const port = await serve(app);
    const uuid = '3f2c1a9e-7b4d-4e2a-9c1f-0a1b2c3d4e5f';
    const r = await call(port, { path: '/id', headers: { 'X-Request-ID': uuid } });
    expect(r.json()).toEqual({ id: uuid });
    expect(r.headers['x-request-id']).toBe(uuid);
  });
});
