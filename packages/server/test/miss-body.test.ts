import type { Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { type App, createApp } from '../src/index';
import { openRaw, start, until } from './helpers';

const apps: App[] = [];
const sockets: Socket[] = [];
afterEach(async () => {
  for (const s of sockets.splice(0)) s.destroy();
  await Promise.all(apps.splice(0).map((a) => a.close()));
});

/** A raw connection; `text()` is everything received so far, `closed()` whether it ended. */
async function app404(): Promise<{ port: number; seen: unknown[] }> {
  const app = createApp();
  apps.push(app);
  const seen: unknown[] = [];
  app.use((ctx, next) => {
    if (ctx.method === 'POST') seen.push(ctx.body);
    return next();
  });
  app.get('/here', (ctx) => ctx.send('here'));
  app.post('/here', (ctx) => ctx.json(ctx.body));
  return { port: (await start(app)).port, seen };
}

const post = (path: string, length: number, extra = ''): string =>
  `POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n` +
  `Content-Length: ${length}\r\n${extra}\r\n`;

describe('a request no route takes is answered without reading its body', () => {
  it('a 404 / 405 comes before the body is sent; the body is then drained, the connection reused', async () => {
    // The body was read (and parsed) first: the answer waited for bytes it never needed.
    const { port, seen } = await app404();
    for (const [path, status] of [
      ['/nowhere', '404 Not Found'],
      ['/here/', '404 Not Found'],
    ] as const) {
      const c = await openRaw(port, sockets);
      c.s.write(post(path, 9));
      await until(() => c.text().includes('\r\n\r\n{'));
      expect(c.text()).toContain(`HTTP/1.1 ${status}`);
      expect(c.text()).not.toContain('onnection: close');
      c.s.write('{"a":[1]}GET /here HTTP/1.1\r\nHost: x\r\n\r\n');
      await until(() => c.text().endsWith('here'));
    }
    const app = createApp();
    apps.push(app);
    app.put('/only-put', (ctx) => ctx.send('put'));
    const { port: port2 } = await start(app);
    const c = await openRaw(port2, sockets);
    c.s.write(post('/only-put', 9));
    await until(() => c.text().includes('\r\n\r\n{'));
    expect(c.text()).toMatch(/^HTTP\/1\.1 405 Method Not Allowed\r\n/);
    expect(c.text().toLowerCase()).toContain('allow: put');
    expect(seen).toEqual([undefined, undefined]);
  });

  it('sends no 100 Continue, and closes the connection when the client waits for one', async () => {
    const { port } = await app404();
    const c = await openRaw(port, sockets);
    c.s.write(post('/nowhere', 10, 'Expect: 100-continue\r\n'));
    await until(c.closed);
    expect(c.text()).not.toContain('100 Continue');
    expect(c.text()).toMatch(/^HTTP\/1\.1 404 Not Found\r\n/);
    expect(c.text().toLowerCase()).toContain('connection: close');
    // A routed request still gets its 100 Continue.
    const d = await openRaw(port, sockets);
    d.s.write(post('/here', 9, 'Expect: 100-continue\r\n'));
    await until(() => d.text().includes('100 Continue'));
    d.s.write('{"a":[1]}');
    await until(() => d.text().endsWith('{"a":[1]}'));
  });

  it('a body declared too large to drain (over 16 MiB) closes the connection with the 404', async () => {
    const { port } = await app404();
    const c = await openRaw(port, sockets);
    c.s.write(post('/nowhere', 100 * 1024 * 1024));
    await until(() => c.text().includes('\r\n\r\n{'));
    expect(c.text()).toMatch(/^HTTP\/1\.1 404 Not Found\r\n/);
    expect(c.text().toLowerCase()).toContain('connection: close');
    await until(c.closed);
  });
});
