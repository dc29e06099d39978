import { Agent } from 'node:http';
import { describe, expect, it, vi } from 'vitest';
import { appStats } from '../src/app';
import { createApp, HttpException } from '../src/index';
import { raw, socketBytes, start, trackApps, until } from './helpers';

const make = trackApps();

describe('routing', () => {
  it('matches params and a trailing wildcard among many routes', async () => {
    const app = make();
    for (let i = 0; i < 50; i++) app.get(`/r${i}/:a`, (ctx) => ctx.json({ i, a: ctx.params.a }));
    app.get('/users/:id/posts/:postId', (ctx) => ctx.json(ctx.params));
    app.get('/static/*', (ctx) => ctx.json({ rest: ctx.params['*'] }));
    expect((await app.inject({ url: '/users/7/posts/9' })).json()).toEqual({
      id: '7',
      postId: '9',
    });
    expect((await app.inject({ url: '/r42/x' })).json()).toEqual({ i: 42, a: 'x' });
    expect((await app.inject({ url: '/static/a/b/c.txt' })).json()).toEqual({ rest: 'a/b/c.txt' });
    expect((await app.inject({ url: '/users/a%20b/posts/1' })).json()).toEqual({
      id: 'a b',
      postId: '1',
    });
  });

  it('registers every verb and all()', async () => {
    const app = make();
    app
      .put('/x', (ctx) => ctx.send('put'))
      .patch('/x', (ctx) => ctx.send('patch'))
      .delete('/x', (ctx) => ctx.send('delete'))
      .options('/x', (ctx) => ctx.send('options'))
      .head('/h', (ctx) => ctx.setHeader('x-head', '1').send('ignored'))
      .all('/any', (ctx) => ctx.send(ctx.method));
    for (const m of ['PUT', 'PATCH', 'DELETE', 'OPTIONS']) {
      expect((await app.inject({ method: m, url: '/x' })).body).toBe(m.toLowerCase());
    }
    for (const m of ['GET', 'POST', 'DELETE']) {
      expect((await app.inject({ method: m, url: '/any' })).body).toBe(m);
    }
    const head = await app.inject({ method: 'HEAD', url: '/h' });
    expect(head.headers['x-head']).toBe('1');
    expect(head.body).toBe('');
  });

  it('answers 404, 405 with Allow, HEAD via GET without a body, OPTIONS with Allow', async () => {
    const app = make();
    app.get('/item', (ctx) => ctx.json({ ok: true }));
    app.post('/item', (ctx) => ctx.json({ ok: true }));
    const { port } = await start(app);
    const missing = await raw(port, { path: '/nope' });
    expect(missing.status).toBe(404);
    expect(JSON.parse(missing.body)).toEqual({
      status: 404,
      error: 'Not Found',
      message: 'Not Found',
    });
    const wrong = await raw(port, { method: 'DELETE', path: '/item' });
    expect(wrong.status).toBe(405);
    expect(wrong.headers.allow?.split(', ').sort()).toEqual(['GET', 'HEAD', 'OPTIONS', 'POST']);
    const head = await raw(port, { method: 'HEAD', path: '/item' });
    expect(head.status).toBe(200);
    expect(head.body).toBe('');
    expect(head.headers['content-length']).toBe(String('{"ok":true}'.length));
    const options = await raw(port, { method: 'OPTIONS', path: '/item' });
    expect(options.status).toBe(204);
    expect(options.headers.allow).toContain('OPTIONS');
    for (const path of ['/item%zz', '/item/%E0%A4%A']) {
      const bad = await raw(port, { path });
      expect(bad.status).toBe(400);
      expect(JSON.parse(bad.body)).toMatchObject({ message: 'Malformed URL' });
    }
  });
});

describe('middleware', () => {
  it('runs onion order, for 404s too, and can short-circuit', async () => {
    const app = make();
    const log: string[] = [];
    app.use(async (ctx, next) => {
      log.push(`a-in ${ctx.path}`);
      await next();
      log.push('a-out');
    });
    app.use(async (ctx, next) => {
      if (ctx.header('x-block')) return ctx.status(401).json({ blocked: true });
      log.push('b-in');
      await next();
      log.push('b-out');
    });
    app.get('/', (ctx) => {
      log.push('handler');
      return ctx.json({ ok: true });
    });
    expect((await app.inject({ url: '/' })).status).toBe(200);
    expect(log).toEqual(['a-in /', 'b-in', 'handler', 'b-out', 'a-out']);
    log.length = 0;
    expect((await app.inject({ url: '/', headers: { 'x-block': '1' } })).status).toBe(401);
    expect(log).toEqual(['a-in /', 'a-out']);
    log.length = 0;
    expect((await app.inject({ url: '/missing' })).status).toBe(404);
    // The 404 is thrown by the final handler, so it unwinds through the middleware.
    expect(log).toEqual(['a-in /missing', 'b-in']);
  });

  it('lets middleware catch handler errors and report next() twice', async () => {
    const app = make();
    app.use(async (ctx, next) => {
      try {
        await next();
      } catch (err) {
        ctx.status(418).json({ caught: (err as Error).message });
      }
    });
    app.get('/boom', () => {
      throw new Error('inner');
    });
    expect((await app.inject({ url: '/boom' })).json()).toEqual({ caught: 'inner' });
    const twice = make();
    const errors: unknown[] = [];
    twice.onError((err) => {
      errors.push(err);
    });
    twice.use(async (_ctx, next) => {
      await next();
      await next();
    });
    twice.get('/', (ctx) => ctx.json(1));
    await twice.inject({ url: '/' });
    expect(String(errors[0])).toMatch(/next\(\) was called more than once/);
  });
});

describe('errors', () => {
  it('maps HttpException to its status with headers, others to a generic 500 and onError', async () => {
    const app = make();
    const seen: unknown[] = [];
    app.onError((err, ctx) => {
      seen.push([err, ctx.path]);
    });
    app.get('/teapot', () => {
      throw new HttpException(429, 'Slow down', { headers: { 'retry-after': '5' } });
    });
    app.get('/secret', async () => {
      await Promise.resolve();
      throw new Error('db password is hunter2');
    });
    app.get('/nothing', () => {});
    const teapot = await app.inject({ url: '/teapot' });
    expect(teapot.status).toBe(429);
    expect(teapot.headers['retry-after']).toBe('5');
    expect(teapot.json()).toEqual({
      status: 429,
      error: 'Too Many Requests',
      message: 'Slow down',
    });
    expect(seen).toHaveLength(0);
    const secret = await app.inject({ url: '/secret' });
    expect(secret.status).toBe(500);
    expect(secret.json()).toEqual({ status: 500, error: 'Internal Server Error' });
    expect(secret.body).not.toContain('hunter2');
    expect(secret.body).not.toContain('at ');
    expect(seen).toHaveLength(1);
    const nothing = await app.inject({ url: '/nothing' });
    expect(nothing.status).toBe(500);
    expect(String((seen[1] as unknown[])[0])).toMatch(/sent no response/);
  });

  it('lets onError send its own response, also asynchronously', async () => {
    const app = make();
    app.onError(async (_err, ctx) => {
      await Promise.resolve();
      ctx.status(503).json({ custom: true });
    });
    app.get('/', () => {
      throw new Error('x');
    });
    const res = await app.inject({ url: '/' });
    expect(res.status).toBe(503);
    expect(res.json()).toEqual({ custom: true });
  });

  it('closes the connection, body truncated, when headers were already sent', async () => {
    const app = make();
    const seen: unknown[] = [];
    app.onError((err) => {
      seen.push(err);
    });
    app.get('/partial', async (ctx) => {
      ctx.res.writeHead(200, { 'content-type': 'text/plain' });
      ctx.res.write('partial');
      await Promise.resolve();
      throw new Error('late');
    });
    const { port } = await start(app);
    // Keep-alive, with a second request behind: it must not be answered on this connection.
    const got = await socketBytes(
      port,
      'GET /partial HTTP/1.1\r\nHost: x\r\n\r\nGET /partial HTTP/1.1\r\nHost: x\r\n\r\n',
      2000,
    );
    expect(got).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    expect(got).toContain('Transfer-Encoding: chunked');
    // What was written arrives, but not the zero-size chunk that would make it look complete.
    expect(got.endsWith('7\r\npartial\r\n')).toBe(true);
    expect(got.match(/HTTP\/1\.1/g)).toHaveLength(1);
    // The second request ran too (both were parsed at once) and failed the same way, unsent.
    expect(seen.length).toBeGreaterThanOrEqual(1);
    await until(() => appStats(app).inflight === 0);
  });

  it('validates options and handlers', () => {
    expect(() => createApp({ bodyLimit: -1 })).toThrow(RangeError);
    expect(() => createApp().get('/', 'x' as never)).toThrow(TypeError);
    expect(() => new HttpException(200)).toThrow(RangeError);
  });
});

describe('listen, handler and close', () => {
  it('serves through app.handler on a plain node server', async () => {
    const { createServer } = await import('node:http');
    const app = make();
    app.get('/', (ctx) => ctx.json({ ip: ctx.req.remoteAddress }));
    const server = createServer(app.handler);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const { port } = server.address() as { port: number };
    const res = await raw(port, { path: '/' });
    expect(JSON.parse(res.body)).toEqual({ ip: '127.0.0.1' });
    await new Promise((r) => server.close(r));
  });

  it('app.handler on a server whose request class has its own read-only remoteAddress', async () => {
    // Another framework's request class may define remoteAddress as a getter: assigning to it
    // would throw in the request listener and end the process.
    const { createServer, IncomingMessage } = await import('node:http');
    class Foreign extends IncomingMessage {
      get remoteAddress(): string {
        return 'from the getter';
      }
    }
    const app = make();
    app.get('/', (ctx) => ctx.json({ ip: ctx.req.remoteAddress, ctxIp: ctx.ip }));
    const server = createServer({ IncomingMessage: Foreign }, app.handler);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const { port } = server.address() as { port: number };
    const res = await raw(port, { path: '/' });
    expect(JSON.parse(res.body)).toEqual({ ip: '127.0.0.1', ctxIp: '127.0.0.1' });
    await new Promise((r) => server.close(r));
  });

  it('close() stops accepting, waits for in-flight requests and ends keep-alive sockets', async () => {
    const app = make();
    let release!: () => void;
    const gate = new Promise<void>((r) => {
      release = r;
    });
    app.get('/slow', async (ctx) => {
      await gate;
      return ctx.json({ done: true });
    });
    app.get('/fast', (ctx) => ctx.json({ ok: true }));
    const { port } = await start(app);
    const agent = new Agent({ keepAlive: true, maxSockets: 2 });
    expect((await raw(port, { path: '/fast', agent })).status).toBe(200);
    const slow = raw(port, { path: '/slow', agent });
    await until(() => appStats(app).inflight === 1);
    let closed = false;
    const closing = app.close().then(() => {
      closed = true;
    });
    await new Promise((r) => setTimeout(r, 20));
    expect(closed).toBe(false);
    await expect(raw(port, { path: '/fast' })).rejects.toThrow();
    release();
    const res = await slow;
    expect(res.status).toBe(200);
    expect(res.headers.connection).toBe('close');
    await closing;
    expect(closed).toBe(true);
    agent.destroy();
  });

  it('listen() refuses a bad port or host at once, with the message template', async () => {
    const app = make();
    // Before, each reached Node: its ERR_SOCKET_BAD_PORT (options.port should be >= 0 ...) as
    // a rejection, and `host: 7` listened on every interface.
    for (const port of [Number.NaN, -1, 65_536, 3.5]) {
      expect(() => app.listen(port)).toThrow(
        new RangeError(`keel: \`port\` must be an integer in 0-65535, got ${port}`),
      );
    }
    expect(() => app.listen('3000' as never)).toThrow(
      new TypeError('keel: `port` must be an integer in 0-65535, got "3000"'),
    );
    expect(() => app.listen(0, 7 as never)).toThrow(
      new TypeError('keel: `host` must be a string, got 7'),
    );
    await app.close();
  });

  it('inject returns status, headers, text body and json()', async () => {
    const app = make();
    app.post('/p', (ctx) => ctx.status(202).json({ got: ctx.body, ip: ctx.ip }));
    const res = await app.inject({
      method: 'POST',
      url: '/p',
      body: { a: [1, 2] },
      remoteAddress: '10.1.2.3',
    });
    expect(res.status).toBe(202);
    expect(res.headers['content-type']).toBe('application/json');
    expect(res.json()).toEqual({ got: { a: [1, 2] }, ip: '10.1.2.3' });
    expect(typeof res.body).toBe('string');
  });

  it('logs unexpected errors to stderr when no onError is registered', async () => {
    const app = make();
    const spy = vi.spyOn(console, 'error').mockImplementation(() => {});
    app.get('/', () => {
      throw new Error('unhandled');
    });
    expect((await app.inject({ url: '/' })).status).toBe(500);
    expect(spy).toHaveBeenCalledOnce();
    spy.mockRestore();
  });
});
