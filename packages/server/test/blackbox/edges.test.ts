// Edges of spec 001 rows, each where the README documents the choice the spec leaves open.
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../src/index';
import { call, postJson, serve } from './helpers';

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'bb-edges-'));
  writeFileSync(join(dir, 'f.txt'), 'x'.repeat(1000));
  writeFileSync(join(dir, 'empty.txt'), '');
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function files() {
  const app = createApp();
  app.get('/f/:name', (ctx) => ctx.sendFile(ctx.params.name ?? '', { root: dir }));
  return serve(app);
}

describe('spec 001 ctx.sendFile edges (README)', () => {
  it('bytes=-0 on a non-empty file is unsatisfiable (416); so is a range with first > last (as nginx and send answer); a malformed header is ignored (200)', async () => {
    const port = await files();
    expect((await call(port, { path: '/f/f.txt', headers: { range: 'bytes=-0' } })).status).toBe(
      416,
    );
    // RFC 9110 §14.1.1 calls 500-100 an invalid range-spec without saying 416 or 200; the
    // README's "malformed" is the header's syntax (`bytes=abc`), which is ignored.
    const reversed = await call(port, { path: '/f/f.txt', headers: { range: 'bytes=500-100' } });
    expect(reversed.status).toBe(416);
    const bad = await call(port, { path: '/f/f.txt', headers: { range: 'bytes=abc' } });
    expect(bad.status).toBe(200);
    expect(bad.body.length).toBe(1000);
  });

  it('an empty file: bytes=0- is 416, a suffix range is ignored (200, empty)', async () => {
    const port = await files();
    expect(
      (await call(port, { path: '/f/empty.txt', headers: { range: 'bytes=0-' } })).status,
    ).toBe(416);
    const suffix = await call(port, { path: '/f/empty.txt', headers: { range: 'bytes=-5' } });
    expect(suffix.status).toBe(200);
    expect(suffix.body.length).toBe(0);
  });

  it('HEAD: headers only, with the GET Content-Length; If-Modified-Since gives 304', async () => {
    const port = await files();
    const head = await call(port, { method: 'HEAD', path: '/f/f.txt' });
    expect(head.status).toBe(200);
    expect(head.headers['content-length']).toBe('1000');
    expect(head.body.length).toBe(0);
    // Its Last-Modified: a date later than the server's time would be ignored (RFC 9110 §13.1.3).
    const since = new Date(statSync(join(dir, 'f.txt')).mtimeMs).toUTCString();
    const r = await call(port, { path: '/f/f.txt', headers: { 'if-modified-since': since } });
    expect(r.status).toBe(304);
  });

  it('several overlapping ranges are combined into one 206 window', async () => {
    const port = await files();
    const r = await call(port, { path: '/f/f.txt', headers: { range: 'bytes=0-9,5-19' } });
    expect(r.status).toBe(206);
    expect(r.headers['content-range']).toBe('bytes 0-19/1000');
  });
});

describe('spec 001 accessor / helper edges (README)', () => {
  it('ctx.query of a repeated key is its first value', async () => {
    const app = createApp();
    app.get('/q', (ctx) => ctx.json({ a: ctx.query('a') }));
    const port = await serve(app);
    expect((await call(port, { path: '/q?a=1&a=2' })).json()).toEqual({ a: '1' });
  });

  it('cacheControl: fractions floored, above 2^31 sent as 2147483648', async () => {
    const app = createApp();
    app.get('/c', (ctx) =>
      ctx.cacheControl({ maxAge: 59.9, staleWhileRevalidate: 2 ** 40 }).json({}),
    );
    const port = await serve(app);
    expect((await call(port, { path: '/c' })).headers['cache-control']).toBe(
      'max-age=59, stale-while-revalidate=2147483648',
    );
  });

  it('setCookie maxAge above 400 days is sent as 400 days', async () => {
    const app = createApp();
    app.get('/k', (ctx) => ctx.setCookie('a', 'b', { maxAge: 10 ** 9 }).send('ok'));
    const port = await serve(app);
    const [cookie] = (await call(port, { path: '/k' })).headers['set-cookie'] ?? [];
    expect(cookie).toMatch(`Max-Age=${400 * 24 * 3600}`);
  });
});

describe('spec 001 ctx.graphql edges (README)', () => {
  const schema = 'type Query { hello: String, boom: String }';

  it('resolvers as a graphql-js root value', async () => {
    const app = createApp();
    app.post('/g', (ctx) => ctx.graphql(schema, { hello: () => 'root' }));
    const port = await serve(app);
    expect((await postJson(port, '/g', { query: '{ hello }' })).json()).toEqual({
      data: { hello: 'root' },
    });
  });

  it('a resolver error is 200 with data and errors (message, locations, path), never a stack', async () => {
    const app = createApp();
    app.post('/g', (ctx) =>
      ctx.graphql(schema, {
        Query: {
          hello: () => 'ok',
          boom: () => {
            throw new Error('kaboom');
          },
        },
      }),
    );
    const port = await serve(app);
    const r = await postJson(port, '/g', { query: '{ hello boom }' });
    expect(r.status).toBe(200);
    const body = r.json() as { data: unknown; errors: Record<string, unknown>[] };
    expect(body.data).toEqual({ hello: 'ok', boom: null });
    expect(body.errors[0]).toMatchObject({ message: 'kaboom', path: ['boom'] });
    expect(r.text).not.toContain('at ');
  });

  it('a syntax error is 400 with errors; a subscription is refused (400)', async () => {
    const app = createApp();
    app.post('/g', (ctx) => ctx.graphql(`${schema} type Subscription { s: String }`, {}));
    const port = await serve(app);
    const syntax = await postJson(port, '/g', { query: '{ hello ' });
    expect(syntax.status).toBe(400);
    expect((syntax.json() as { errors: unknown[] }).errors.length).toBeGreaterThan(0);
    expect((await postJson(port, '/g', { query: 'subscription { s }' })).status).toBe(400);
  });
});
