// Spec 001 ctx.sendFile row and "Errors" table (416, 304, 206); issue #10 items 5, 10, 11.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../src/index';
import { call, serve } from './helpers';

let dir: string;
let root: string;
const content = Buffer.from(Array.from({ length: 1000 }, (_, i) => i % 251));

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'bb-files-'));
  root = join(dir, 'public');
  mkdirSync(root);
  writeFileSync(join(root, 'data.bin'), content);
  writeFileSync(join(root, 'page.html'), '<p>hi</p>');
  writeFileSync(join(root, '.env'), 'SECRET=1');
  mkdirSync(join(root, '.git'));
  writeFileSync(join(root, '.git', 'config'), '[core]');
  writeFileSync(join(dir, 'outside.txt'), 'private');
  symlinkSync(join(dir, 'outside.txt'), join(root, 'link.txt'));
  execFileSync('mkfifo', [join(root, 'pipe')]);
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

async function filesApp() {
  const app = createApp();
  app.get('/files/*', (ctx) => ctx.sendFile(ctx.params['*'] ?? '', { root }));
  app.get('/abs', (ctx) => ctx.sendFile(join(root, 'page.html')));
  app.get('/ping', (ctx) => ctx.send('pong'));
  return serve(app);
}

describe('spec 001 ctx.sendFile', () => {
  it('serves a file with an ETag (and a Content-Type from the extension)', async () => {
    const port = await filesApp();
    const r = await call(port, { path: '/files/page.html' });
    expect(r.status).toBe(200);
    expect(r.text).toBe('<p>hi</p>');
    expect(r.headers.etag).toMatch(/^"/);
    expect(r.headers['content-type']).toMatch(/^text\/html/);
    const abs = await call(port, { path: '/abs' });
    expect(abs.text).toBe('<p>hi</p>');
  });

  it('Errors table: a conditional request matching the ETag gets 304', async () => {
    const port = await filesApp();
    const { headers } = await call(port, { path: '/files/data.bin' });
    const r = await call(port, {
      path: '/files/data.bin',
      headers: { 'if-none-match': String(headers.etag) },
    });
    expect(r.status).toBe(304);
    expect(r.body.length).toBe(0);
  });

  it('Errors table: a valid range gets 206 with only the requested window', async () => {
    const port = await filesApp();
    const r = await call(port, { path: '/files/data.bin', headers: { range: 'bytes=100-199' } });
    expect(r.status).toBe(206);
    expect(r.headers['content-range']).toBe('bytes 100-199/1000');
    expect(r.body.equals(content.subarray(100, 200))).toBe(true);
    const suffix = await call(port, { path: '/files/data.bin', headers: { range: 'bytes=-10' } });
    expect(suffix.status).toBe(206);
    expect(suffix.body.equals(content.subarray(990))).toBe(true);
  });

  it('ranges are bounds-checked: an end past EOF is clamped, an unsatisfiable range gets 416', async () => {
    const port = await filesApp();
    const clamp = await call(port, {
      path: '/files/data.bin',
      headers: { range: 'bytes=990-5000' },
    });
    expect(clamp.status).toBe(206);
    expect(clamp.body.equals(content.subarray(990))).toBe(true);
    const r = await call(port, { path: '/files/data.bin', headers: { range: 'bytes=5000-6000' } });
    expect(r.status).toBe(416);
    expect(r.headers['content-range']).toBe('bytes */1000');
  });

  it('with root, a path escaping the directory is refused (403), by .. or by a symlink', async () => {
    const port = await filesApp();
    const dots = await call(port, { path: '/files/..%2Foutside.txt' });
    expect([403, 404]).toContain(dots.status);
    expect(dots.text).not.toContain('private');
    const link = await call(port, { path: '/files/link.txt' });
    expect(link.status).toBe(403);
    expect(link.text).not.toContain('private');
  });

  it('issue #10 item 10: dotfiles under root are not served (404 by default)', async () => {
    const port = await filesApp();
    expect((await call(port, { path: '/files/.env' })).status).toBe(404);
    expect((await call(port, { path: '/files/.git/config' })).status).toBe(404);
  });

  it('issue #10 item 5: a FIFO under root is refused without a blocking open; later sendFile still works', async () => {
    const port = await filesApp();
    const fifo = await Promise.all([1, 2, 3, 4, 5].map(() => call(port, { path: '/files/pipe' })));
    expect(fifo.map((r) => r.status)).toEqual([404, 404, 404, 404, 404]);
    expect((await call(port, { path: '/files/page.html' })).text).toBe('<p>hi</p>');
  });

  it('issue #10 item 11: If-Range with a weak ETag or a non-matching date gets the whole file (200)', async () => {
    const port = await filesApp();
    const { headers } = await call(port, { path: '/files/data.bin' });
    const weak = await call(port, {
      path: '/files/data.bin',
      headers: { range: 'bytes=0-9', 'if-range': `W/${headers.etag}` },
    });
    expect(weak.status).toBe(200);
    expect(weak.body.length).toBe(1000);
    const date = await call(port, {
      path: '/files/data.bin',
      headers: { range: 'bytes=0-9', 'if-range': 'Wed, 21 Oct 2015 07:28:00 GMT' },
    });
    expect(date.status).toBe(200);
    const strong = await call(port, {
      path: '/files/data.bin',
      headers: { range: 'bytes=0-9', 'if-range': String(headers.etag) },
    });
    expect(strong.status).toBe(206);
  });

  it('a missing file is 404', async () => {
    const port = await filesApp();
    expect((await call(port, { path: '/files/none.txt' })).status).toBe(404);
  });
});
