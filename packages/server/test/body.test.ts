import { request } from 'node:http';
import { connect } from 'node:net';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterEach, describe, expect, it } from 'vitest';
import { appStats } from '../src/app';
import { type App, createApp } from '../src/index';
import { raw, start, until } from './helpers';

const apps: App[] = [];
function make(options?: Parameters<typeof createApp>[0]): App {
  const app = createApp(options);
  app.post('/echo', (ctx) => ctx.json({ body: ctx.body ?? null }));
  apps.push(app);
  return app;
}
afterEach(async () => {
  await Promise.all(apps.splice(0).map((a) => a.close()));
});
// A real collection, so a test measures what is held, not garbage not yet collected.
setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

describe('body parsing', () => {
  it('a body sent in 1-byte chunks holds about its size, not 200 times it', async () => {
    // Each chunk was kept as its own Buffer (a view holding its whole socket read, and ~100
    // bytes of heap): a 1 MB body under the 1 MiB limit, chunked 1 byte at a time, held 197 MB
    // until it was parsed; ten such uploads at once, 2 GB.
    const app = make({ parsers: { raw: ['application/octet-stream'] } });
    let held = -1;
    let body = '';
    const before = (): number => {
      gc();
      const m = process.memoryUsage();
      return m.heapUsed + m.arrayBuffers;
    };
    let base = 0;
    app.post('/raw', (ctx) => {
      // The reader's chunks are still referenced here (the parse called the handler).
      held = before() - base;
      body = (ctx.body as Buffer).toString('latin1');
      return ctx.send('ok');
    });
    const { port } = await start(app);
    const socket = connect(port, '127.0.0.1');
    socket.on('error', () => {});
    socket.on('data', () => {});
    // Letters in turn, so bytes out of order would show.
    const letters = Array.from({ length: 10_000 }, (_, i) => String.fromCharCode(97 + (i % 26)));
    const piece = letters.map((c) => `1\r\n${c}\r\n`).join('');
    base = before();
    socket.write(
      'POST /raw HTTP/1.1\r\nHost: x\r\nContent-Type: application/octet-stream\r\n' +
        'Transfer-Encoding: chunked\r\n\r\n',
    );
    for (let i = 0; i < 100; i++) {
      if (!socket.write(piece)) await new Promise((r) => socket.once('drain', r));
    }
    socket.write('0\r\n\r\n');
    await until(() => held !== -1, 100_000);
    socket.destroy();
    expect(body).toBe(letters.join('').repeat(100));
    expect(held).toBeLessThan(32 * 1024 * 1024);
  });

  it('a urlencoded body of more than 1000 fields is a 413, not cut to its first 1000', async () => {
    // querystring's maxKeys dropped every field after the 1000th in silence (a form's trailing
    // `confirm=yes` or token lost, and `&&&...` before the fields left none), as body-parser
    // refuses it (413 "too many parameters").
    const app = make({ bodyLimit: 4 * 1024 * 1024 });
    const form = (n: number, lead = ''): Promise<{ status: number; json: () => unknown }> =>
      app.inject({
        method: 'POST',
        url: '/echo',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: lead + Array.from({ length: n }, (_, i) => `k${i}=${i}`).join('&'),
      });
    const ok = await form(1000);
    expect(ok.status).toBe(200);
    expect(Object.keys((ok.json() as { body: object }).body)).toHaveLength(1000);
    for (const res of [await form(1001), await form(100_000), await form(1, '&'.repeat(1000))]) {
      expect(res.status).toBe(413);
      expect(res.json()).toMatchObject({ message: 'Form body has more than 1000 fields' });
    }
  });

  it('parses JSON, +json and urlencoded bodies before the handler', async () => {
    const app = make();
    const json = await app.inject({ method: 'POST', url: '/echo', body: { a: 1, b: [true] } });
    expect(json.json()).toEqual({ body: { a: 1, b: [true] } });
    const vendor = await app.inject({
      method: 'POST',
      url: '/echo',
      headers: { 'content-type': 'application/vnd.api+json; charset=utf-8' },
      body: '{"x":"y"}',
    });
    expect(vendor.json()).toEqual({ body: { x: 'y' } });
    const form = await app.inject({
      method: 'POST',
      url: '/echo',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'name=J%C3%B6rg&tag=a&tag=b',
    });
    expect(form.json()).toEqual({ body: { name: 'Jörg', tag: ['a', 'b'] } });
    const other = await app.inject({
      method: 'POST',
      url: '/echo',
      headers: { 'content-type': 'text/plain' },
      body: 'hello',
    });
    expect(other.json()).toEqual({ body: null });
  });

  it('answers malformed JSON with 400, and a __proto__ key too', async () => {
    const app = make();
    for (const bad of ['{"a":', '{a:1}', 'nul', '\u0000']) {
      const res = await app.inject({
        method: 'POST',
        url: '/echo',
        headers: { 'content-type': 'application/json' },
        body: bad,
      });
      expect(res.status).toBe(400);
      expect(res.json()).toMatchObject({ status: 400, message: 'Malformed JSON body' });
    }
    const app2 = createApp();
    apps.push(app2);
    app2.post('/p', (ctx) => ctx.json({ polluted: ({} as Record<string, unknown>).evil ?? null }));
    const res = await app2.inject({
      method: 'POST',
      url: '/p',
      headers: { 'content-type': 'application/json' },
      body: '{"__proto__":{"evil":1},"constructor":{"prototype":{"evil":1}}}',
    });
    expect(res.status).toBe(400);
    expect(({} as Record<string, unknown>).evil).toBeUndefined();
  });

  it('rejects bodies over the limit with 413, by Content-Length and while streaming', async () => {
    const app = make({ bodyLimit: 1024 });
    const { port } = await start(app);
    const declared = await raw(port, {
      method: 'POST',
      path: '/echo',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ s: 'x'.repeat(2000) }),
    });
    expect(declared.status).toBe(413);
    // Chunked: no Content-Length, so the limit is enforced while reading.
    const chunked = await new Promise<number>((resolve, reject) => {
      const req = request(
        {
          host: '127.0.0.1',
          port,
          method: 'POST',
          path: '/echo',
          headers: { 'content-type': 'application/json', 'transfer-encoding': 'chunked' },
        },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        },
      );
      req.on('error', reject);
      req.write('{"s":"');
      for (let i = 0; i < 10; i++) req.write('y'.repeat(500));
      req.end('"}');
    });
    expect(chunked).toBe(413);
    const ok = await raw(port, {
      method: 'POST',
      path: '/echo',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ s: 'x'.repeat(900) }),
    });
    expect(ok.status).toBe(200);
    await until(() => appStats(app).inflight === 0);
  });

  it('defaults to a 1 MiB limit', async () => {
    const app = make();
    const big = JSON.stringify({ s: 'x'.repeat(1024 * 1024) });
    const res = await app.inject({
      method: 'POST',
      url: '/echo',
      headers: { 'content-type': 'application/json' },
      body: big,
    });
    expect(res.status).toBe(413);
  });

  it('releases the ctx when the client aborts mid-body', async () => {
    const app = make();
    let handled = 0;
    app.post('/slow', (ctx) => {
      handled++;
      return ctx.json(1);
    });
    const { port } = await start(app);
    const req = request({
      host: '127.0.0.1',
      port,
      method: 'POST',
      path: '/slow',
      headers: { 'content-type': 'application/json', 'content-length': '100' },
    });
    req.on('error', () => {});
    req.write('{"a":');
    await until(() => appStats(app).inflight === 1);
    req.destroy();
    await until(() => appStats(app).inflight === 0);
    expect(handled).toBe(0);
  });
});
