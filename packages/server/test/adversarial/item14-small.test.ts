// Item 14: smaller holes: a forced X-Request-ID, ctx.ip that is not an IP, a JSON __proto__
// key, an undocumented parameter length limit, and an upload over the limit that got a reset.
import { type ClientRequest, request } from 'node:http';
import { describe, expect, it } from 'vitest';
import { createApp } from '../../src/index';
import { start } from '../helpers';
import { guardProcess } from './harness';

guardProcess();

describe('item 14: smaller holes', () => {
  it('requestIdHeader: false ignores an incoming X-Request-ID', async () => {
    const app = createApp({ requestIdHeader: false });
    app.get('/', (ctx) => ctx.json(ctx.requestId));
    const res = await app.inject({ url: '/', headers: { 'x-request-id': 'forged-by-client' } });
    expect(res.json()).not.toBe('forged-by-client');
    const custom = createApp({ requestIdHeader: 'X-Trace-Id' });
    custom.get('/', (ctx) => ctx.json(ctx.requestId));
    const traced = await custom.inject({ url: '/', headers: { 'x-trace-id': 'abc' } });
    expect(traced.json()).toBe('abc');
    expect(traced.headers['x-request-id']).toBe('abc');
    expect(() => createApp({ requestIdHeader: 'bad header' })).toThrow(RangeError);
  });

  it.each([
    ['garbage', '10.0.0.1'],
    ['[2001:db8::1]:8443', '2001:db8::1'],
    ['203.0.113.9:51000', '203.0.113.9'],
    ['203.0.113.9, not-an-ip', '10.0.0.1'],
    ['', '10.0.0.1'],
  ])('X-Forwarded-For %j from a trusted proxy gives ctx.ip %s', async (xff, ip) => {
    const app = createApp({ trustProxy: true });
    app.get('/', (ctx) => ctx.json({ ip: ctx.ip, ips: ctx.ips }));
    const res = await app.inject({
      url: '/',
      headers: { 'x-forwarded-for': xff },
      remoteAddress: '10.0.0.1',
    });
    const body = res.json<{ ip: string; ips: string[] }>();
    expect(body.ip).toBe(ip);
    for (const hop of body.ips) expect(hop).toMatch(/^[0-9a-f.:]+$/i);
  });

  it.each([
    '{"__proto__":{"admin":true}}',
    '{"a":[{"b":{"__proto__":{"admin":true}}}]}',
    '{"constructor":{"prototype":{"admin":true}}}',
    '{"\\u005f_proto__":{"admin":true}}',
  ])('a JSON body with a prototype key is refused: %s', async (body) => {
    const app = createApp();
    app.post('/', (ctx) => ctx.json({ body: ctx.body }));
    const res = await app.inject({
      method: 'POST',
      url: '/',
      headers: { 'content-type': 'application/json' },
      body,
    });
    expect(res.status).toBe(400);
    expect(res.json<{ message: string }>().message).toMatch(/__proto__|constructor\.prototype/);
  });

  it('a route parameter over maxParamLength (default 100) is 404; the option raises it', async () => {
    const app = createApp();
    app.get('/u/:id', (ctx) => ctx.json(ctx.params.id));
    expect((await app.inject({ url: `/u/${'a'.repeat(100)}` })).status).toBe(200);
    expect((await app.inject({ url: `/u/${'a'.repeat(101)}` })).status).toBe(404);
    const wide = createApp({ maxParamLength: 500 });
    wide.get('/u/:id', (ctx) => ctx.json(ctx.params.id));
    expect((await wide.inject({ url: `/u/${'a'.repeat(400)}` })).status).toBe(200);
  });

  /**
   * A POST to /upload with `headers`; `drive` sends the body (or not). Resolves with the status,
   * `continued` when the server sent 100 Continue and `onContinue` is not given, or the socket
   * error instead of a response.
   */
  function post(
    port: number,
    headers: Record<string, string>,
    drive: (req: ClientRequest) => void,
    onContinue?: (req: ClientRequest) => void,
  ): Promise<string> {
    return new Promise((resolve) => {
      const req = request({ host: '127.0.0.1', port, method: 'POST', path: '/upload', headers });
      req.on('response', (res) => {
        res.resume();
        res.on('end', () => resolve(String(res.statusCode)));
      });
      req.on('continue', () => (onContinue === undefined ? resolve('continued') : onContinue(req)));
      req.on('error', (err) => resolve(`error ${err.message}`));
      drive(req);
    });
  }

  /** Uploads `size` bytes of JSON (spaces, then `1`), streaming with backpressure. */
  function upload(port: number, size: number, chunked: boolean): Promise<string> {
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (!chunked) headers['content-length'] = String(size);
    return post(port, headers, (req) => {
      const chunk = Buffer.alloc(64 * 1024, 0x20);
      let sent = 0;
      const pump = (): void => {
        while (sent < size) {
          const n = Math.min(chunk.length, size - sent);
          sent += n;
          const part =
            sent === size ? Buffer.concat([chunk.subarray(0, n - 1), Buffer.from('1')]) : chunk;
          if (!req.write(part)) {
            req.once('drain', pump);
            return;
          }
        }
        req.end();
      };
      pump();
    });
  }

  it.each([false, true])(
    'an upload over the limit gets 413, not a reset (chunked: %s)',
    async (chunked) => {
      const app = createApp({ bodyLimit: 64 * 1024 });
      app.post('/upload', (ctx) => ctx.json(1));
      app.get('/ping', (ctx) => ctx.send('pong'));
      const { port } = await start(app);
      for (let i = 0; i < 3; i++) expect(await upload(port, 3 * 1024 * 1024, chunked)).toBe('413');
      expect(await upload(port, 1024, chunked)).toBe('200');
      await app.close();
    },
  );

  it('with Expect: 100-continue an oversize upload is refused before it is sent', async () => {
    const app = createApp({ bodyLimit: 1024 });
    app.post('/upload', (ctx) => ctx.json(1));
    const { port } = await start(app);
    const expecting = { 'content-type': 'application/json', expect: '100-continue' };
    const outcome = await post(
      port,
      { ...expecting, 'content-length': String(10 * 1024 * 1024) },
      (req) => req.flushHeaders(),
    );
    expect(outcome).toBe('413');
    // A small body is let through: the reader sends 100 Continue before reading it.
    const small = await post(
      port,
      { ...expecting, 'content-length': '7' },
      (req) => req.flushHeaders(),
      (req) => req.end('{"a":1}'),
    );
    expect(small).toBe('200');
    await app.close();
  });
});
