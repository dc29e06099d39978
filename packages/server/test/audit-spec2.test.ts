// Round 2 of the spec audit: preconditions on files, the 416 framing, the asterisk-form target and
// cookie names that cannot be encoded. Each runs against a real loopback server.
import { mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { raw, socketBytes, start, trackApps } from './helpers';

const make = trackApps();

describe('sendFile preconditions and 416', () => {
  let dir: string;
  const mtime = new Date('2024-03-01T10:00:00Z');
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'keel-audit2-'));
    writeFileSync(join(dir, 'a.txt'), 'abcdefghijklmnopqrstuvwxyz');
    utimesSync(join(dir, 'a.txt'), mtime, mtime);
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  async function fileApp(): Promise<number> {
    const app = make();
    app.get('/a', (ctx) => ctx.sendFile('a.txt', { root: dir }));
    app.post('/a', (ctx) => ctx.sendFile('a.txt', { root: dir }));
    return (await start(app)).port;
  }

  it('If-Match: 412 unless a listed tag matches strongly, or *; checked before Range', async () => {
    const port = await fileApp();
    const get = (headers: Record<string, string>) => raw(port, { path: '/a', headers });
    const etag = (await get({})).headers.etag!;
    let r = await get({ 'if-match': '"nope"' });
    expect([r.status, r.headers['content-range']]).toEqual([412, undefined]);
    r = await get({ 'if-match': `W/${etag}` }); // If-Match uses the strong comparison
    expect(r.status).toBe(412);
    r = await get({ 'if-match': `"nope", ${etag}` });
    expect([r.status, r.body]).toEqual([200, 'abcdefghijklmnopqrstuvwxyz']);
    r = await get({ 'if-match': '*' });
    expect(r.status).toBe(200);
    r = await get({ 'if-match': '"nope"', range: 'bytes=0-1' });
    expect(r.status).toBe(412);
    r = await get({ 'if-match': '"nope"', range: 'bytes=99-' });
    expect(r.status).toBe(412);
    r = await get({ 'if-match': etag, range: 'bytes=0-1' });
    expect([r.status, r.body]).toEqual([206, 'ab']);
    // If-Match comes first: a failed one is 412 even when If-None-Match would say 304.
    r = await get({ 'if-match': '"nope"', 'if-none-match': etag });
    expect(r.status).toBe(412);
    r = await get({ 'if-match': etag, 'if-none-match': etag });
    expect(r.status).toBe(304);
    const head = await raw(port, { method: 'HEAD', path: '/a', headers: { 'if-match': '"x"' } });
    expect(head.status).toBe(412);
  });

  it('If-Unmodified-Since: 412 when modified after the date; ignored with If-Match or unparsable', async () => {
    const port = await fileApp();
    const get = (headers: Record<string, string>) => raw(port, { path: '/a', headers });
    const before = new Date(mtime.getTime() - 1000).toUTCString();
    let r = await get({ 'if-unmodified-since': before });
    expect(r.status).toBe(412);
    r = await get({ 'if-unmodified-since': mtime.toUTCString() });
    expect(r.status).toBe(200);
    r = await get({ 'if-unmodified-since': new Date(mtime.getTime() + 60_000).toUTCString() });
    expect(r.status).toBe(200);
    r = await get({ 'if-unmodified-since': 'not a date' });
    expect(r.status).toBe(200);
    const etag = (await get({})).headers.etag!;
    r = await get({ 'if-unmodified-since': before, 'if-match': etag });
    expect(r.status).toBe(200);
    r = await get({ 'if-unmodified-since': before, range: 'bytes=0-1' });
    expect(r.status).toBe(412);
  });

  it('a 412 is a complete response the client can read, with Content-Length', async () => {
    const port = await fileApp();
    const out = await socketBytes(
      port,
      'GET /a HTTP/1.1\r\nHost: x\r\nIf-Match: "nope"\r\nConnection: close\r\n\r\n',
    );
    expect(out).toMatch(/^HTTP\/1\.1 412 /);
    expect(out).toMatch(/\r\ncontent-length: \d+\r\n/i);
    expect(out).not.toMatch(/transfer-encoding/i);
  });

  it('a 416 carries Content-Range: bytes */size and Content-Length: 0, not a chunked body', async () => {
    const port = await fileApp();
    const out = await socketBytes(
      port,
      'GET /a HTTP/1.1\r\nHost: x\r\nRange: bytes=26-\r\nConnection: close\r\n\r\n',
    );
    expect(out).toMatch(/^HTTP\/1\.1 416 /);
    expect(out).toMatch(/\r\ncontent-range: bytes \*\/26\r\n/i);
    expect(out).toMatch(/\r\ncontent-length: 0\r\n/i);
    expect(out).not.toMatch(/transfer-encoding/i);
    expect(out.endsWith('\r\n\r\n')).toBe(true);
  });
});

describe('asterisk-form request target (RFC 9112 §3.2.4)', () => {
  function asteriskApp() {
    const app = make();
    const seen: string[] = [];
    app.get('/', (ctx) => {
      seen.push(ctx.path);
      ctx.json({ root: true });
    });
    app.put('/items/:id', (ctx) => ctx.send(null));
    app.all('*', (ctx) => {
      seen.push(ctx.path);
      ctx.json({ any: true });
    });
    return { app, seen };
  }

  it('GET, HEAD, POST, DELETE * are 400 and reach no route', async () => {
    const { app, seen } = asteriskApp();
    const { port } = await start(app);
    for (const method of ['GET', 'POST', 'DELETE']) {
      const out = await socketBytes(
        port,
        `${method} * HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`,
      );
      expect(out, method).toMatch(/^HTTP\/1\.1 400 /);
    }
    const head = await socketBytes(port, 'HEAD * HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    expect(head).toMatch(/^HTTP\/1\.1 400 /);
    expect(seen).toEqual([]);
  });

  it('OPTIONS * answers 204 with every method the server has routes for, without routing', async () => {
    const { app, seen } = asteriskApp();
    app.options('/only', (ctx) => ctx.send(null));
    const { port } = await start(app);
    const out = await socketBytes(
      port,
      'OPTIONS * HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n',
    );
    expect(out).toMatch(/^HTTP\/1\.1 204 /);
    const allow = /\r\nallow: ([^\r]*)\r\n/i.exec(out)?.[1]?.split(', ');
    expect(allow?.sort()).toEqual(['DELETE', 'GET', 'HEAD', 'OPTIONS', 'PATCH', 'POST', 'PUT']);
    expect(seen).toEqual([]);
  });

  it('OPTIONS * on an app with only GET routes lists GET, HEAD, OPTIONS', async () => {
    const app = make();
    app.get('/', (ctx) => ctx.json({ ok: true }));
    const { port } = await start(app);
    const out = await socketBytes(
      port,
      'OPTIONS * HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n',
    );
    expect(out).toMatch(/^HTTP\/1\.1 204 /);
    expect(/\r\nallow: ([^\r]*)\r\n/i.exec(out)?.[1]).toBe('GET, HEAD, OPTIONS');
  });
});

describe('ctx.cookie name that cannot be encoded', () => {
  it('a lone surrogate in the name is a RangeError naming `cookie name`, not a URIError', async () => {
    const app = make();
    app.get('/c', (ctx) => {
      try {
        ctx.cookie('a\ud800');
        ctx.json({ threw: null });
      } catch (err) {
        ctx.json({ threw: (err as Error).name, message: (err as Error).message });
      }
    });
    app.get('/ok', (ctx) => ctx.json({ v: ctx.cookie('a b') ?? null }));
    const { port } = await start(app);
    const r = await raw(port, { path: '/c', headers: { cookie: 'a=1' } });
    const body = JSON.parse(r.body) as { threw: string; message: string };
    expect(body.threw).toBe('RangeError');
    expect(body.message).toMatch(/^keel: `cookie name` must be /);
    const ok = await raw(port, { path: '/ok', headers: { cookie: 'a%20b=2' } });
    expect(JSON.parse(ok.body)).toEqual({ v: '2' });
  });

  it('a name that is not a string is a TypeError naming `cookie name`, not a lookup of "123"', async () => {
    const app = make();
    app.get('/n', (ctx) => {
      try {
        ctx.cookie(123 as unknown as string);
        ctx.json({ threw: null });
      } catch (err) {
        ctx.json({ threw: (err as Error).name, message: (err as Error).message });
      }
    });
    const { port } = await start(app);
    const r = await raw(port, { path: '/n', headers: { cookie: '123=leak' } });
    const body = JSON.parse(r.body) as { threw: string; message: string };
    expect(body.threw).toBe('TypeError');
    expect(body.message).toMatch(/^keel: `cookie name` must be a string, got 123/);
  });
});
