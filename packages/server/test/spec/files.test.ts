// Spec 001 ctx.sendFile row and the "Errors" table (304, 206, 416), on what
// test/blackbox/files.test.ts and edges.test.ts leave open: the exact head of each status, a
// first / last byte window, an ETag list, sub-directories under root, and confinement against a
// sibling directory whose name starts with the root's (`public` / `public-secret`).
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../src/index';
import { call, serve } from '../blackbox/helpers';

let dir: string;
let root: string;
const text = 'Hello, keel! 0123456789';

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'spec-files-'));
  root = join(dir, 'public');
  mkdirSync(join(root, 'docs', 'deep'), { recursive: true });
  writeFileSync(join(root, 'hello.txt'), text);
  writeFileSync(join(root, 'docs', 'deep', 'note.md'), '# note');
  mkdirSync(join(dir, 'public-secret'));
  writeFileSync(join(dir, 'public-secret', 'key.txt'), 'SECRET');
  symlinkSync(join(dir, 'public-secret', 'key.txt'), join(root, 'sneaky.txt'));
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

async function filesApp() {
  const app = createApp();
  app.get('/static/*', (ctx) => ctx.sendFile(ctx.params['*'] ?? '', { root }));
  app.get('/by-name/:name', (ctx) => ctx.sendFile(ctx.params.name ?? '', { root }));
  app.get('/absolute', (ctx) => ctx.sendFile(join(root, 'hello.txt')));
  app.get('/sibling', (ctx) => ctx.sendFile(join(dir, 'public-secret', 'key.txt'), { root }));
  app.get('/inside-absolute', (ctx) => ctx.sendFile(join(root, 'hello.txt'), { root }));
  return serve(app);
}

describe('spec 001 ctx.sendFile: 200, 304, 206, 416', () => {
  it('200: the whole file with an ETag, for an absolute path and for a path under root', async () => {
    const port = await filesApp();
    for (const path of ['/absolute', '/static/hello.txt', '/inside-absolute']) {
      const r = await call(port, { path });
      expect(r.status, path).toBe(200);
      expect(r.text).toBe(text);
      expect(r.headers.etag).toMatch(/^(W\/)?"[^"]+"$/);
      expect(Number(r.headers['content-length'])).toBe(Buffer.byteLength(text));
    }
  });

  it('304: If-None-Match with the ETag (alone or in a list) gets no body; a different tag gets 200', async () => {
    const port = await filesApp();
    const etag = (await call(port, { path: '/static/hello.txt' })).headers.etag as string;
    for (const inm of [etag, `"other", ${etag}`]) {
      const r = await call(port, { path: '/static/hello.txt', headers: { 'if-none-match': inm } });
      expect(r.status).toBe(304);
      expect(r.body.length).toBe(0);
      expect(r.headers.etag).toBe(etag);
    }
    const miss = await call(port, {
      path: '/static/hello.txt',
      headers: { 'if-none-match': '"not-this-one"' },
    });
    expect(miss.status).toBe(200);
    expect(miss.text).toBe(text);
  });

  it('206: the first byte, the last byte, and a middle window, each with Content-Range and Content-Length', async () => {
    const port = await filesApp();
    const size = Buffer.byteLength(text);
    const cases: [string, string, string][] = [
      ['bytes=0-0', 'H', `bytes 0-0/${size}`],
      ['bytes=-1', '9', `bytes ${size - 1}-${size - 1}/${size}`],
      ['bytes=7-10', 'keel', `bytes 7-10/${size}`],
      [`bytes=13-`, '0123456789', `bytes 13-${size - 1}/${size}`],
    ];
    for (const [range, body, contentRange] of cases) {
      const r = await call(port, { path: '/static/hello.txt', headers: { range } });
      expect(r.status, range).toBe(206);
      expect(r.text, range).toBe(body);
      expect(r.headers['content-range'], range).toBe(contentRange);
      expect(Number(r.headers['content-length']), range).toBe(Buffer.byteLength(body));
    }
  });

  it('416: a range starting at or past the end; the file is not sent', async () => {
    const port = await filesApp();
    const size = Buffer.byteLength(text);
    for (const range of [`bytes=${size}-`, `bytes=${size + 100}-${size + 200}`]) {
      const r = await call(port, { path: '/static/hello.txt', headers: { range } });
      expect(r.status, range).toBe(416);
      expect(r.text).not.toContain('Hello');
      expect(r.headers['content-range']).toBe(`bytes */${size}`);
    }
  });
});

describe('spec 001 ctx.sendFile with root: the resolved file stays inside', () => {
  it('sub-directories under root are served', async () => {
    const port = await filesApp();
    const r = await call(port, { path: '/static/docs/deep/note.md' });
    expect([r.status, r.text]).toEqual([200, '# note']);
  });

  it('a sibling directory whose name starts with the root\'s is outside: by "..", by an absolute path, by a symlink', async () => {
    const port = await filesApp();
    for (const path of [
      '/static/../public-secret/key.txt',
      '/static/..%2Fpublic-secret%2Fkey.txt',
      '/by-name/..%2Fpublic-secret%2Fkey.txt',
      '/sibling',
      '/static/sneaky.txt',
    ]) {
      const r = await call(port, { path });
      expect([403, 404], path).toContain(r.status);
      expect(r.text, path).not.toContain('SECRET');
    }
  });
});
