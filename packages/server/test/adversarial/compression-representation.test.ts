// Compression changes the representation; two things still described the uncompressed one:
// - a handler's 206 (its own Content-Range over the identity bytes) was gzipped, so the range
//   named bytes of one representation and carried another (nginx compresses no 206);
// - a handler's strong ETag went out unchanged on the gzip and br bodies, though a strong tag
//   promises identical bytes (RFC 9110 §8.8.3): nginx makes it weak, as keel does now.
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type App, createApp } from '../../src/index';
import { raw, start } from '../helpers';
import { guardProcess } from './harness';

guardProcess();

const text = 'a'.repeat(5000);
let app: App;
let port: number;

beforeAll(async () => {
  app = createApp({ compression: true });
  app.get('/partial', (ctx) =>
    ctx.status(206).setHeader('content-range', `bytes 0-4999/10000`).send(text),
  );
  app.get('/ranged-200', (ctx) => ctx.setHeader('content-range', 'bytes 0-4999/10000').send(text));
  app.get('/strong', (ctx) => ctx.setHeader('etag', '"v1"').send(text));
  app.get('/weak', (ctx) => ctx.setHeader('etag', 'W/"v1"').send(text));
  app.get('/small', (ctx) => ctx.setHeader('etag', '"v1"').send('tiny'));
  app.get('/no-transform-lines', (ctx) =>
    ctx.setHeader('cache-control', ['public', 'no-transform']).send(text),
  );
  app.get('/own-length', (ctx) => ctx.setHeader('content-length', 5000).send(text));
  ({ port } = await start(app));
});

afterAll(() => app.close());

describe('compression and the representation', () => {
  // Cache-Control given as lines (an array, as setHeader allows) was not read: compressed anyway.
  it('Cache-Control: no-transform given as lines is sent as is', async () => {
    const res = await raw(port, {
      path: '/no-transform-lines',
      headers: { 'accept-encoding': 'gzip' },
    });
    expect(res.headers['content-encoding']).toBeUndefined();
    expect(res.body).toBe(text);
  });

  // A compressed HEAD kept the Content-Length the handler set for the identity body, where GET
  // sends the compressed one's (RFC 9110 §8.6: HEAD's must equal GET's, or be left out).
  it("a compressed HEAD carries no Content-Length, not the handler's for the identity body", async () => {
    const head = await raw(port, {
      method: 'HEAD',
      path: '/own-length',
      headers: { 'accept-encoding': 'gzip' },
    });
    expect(head.headers['content-encoding']).toBe('gzip');
    expect(head.headers['content-length']).toBeUndefined();
    const get = await raw(port, { path: '/own-length', headers: { 'accept-encoding': 'gzip' } });
    expect(gunzipSync(get.raw).toString()).toBe(text);
  });

  it.each(['/partial', '/ranged-200'])('%s (Content-Range) is sent as is', async (path) => {
    const res = await raw(port, { path, headers: { 'accept-encoding': 'gzip, br' } });
    expect(res.headers['content-encoding']).toBeUndefined();
    expect(res.headers['content-range']).toBe('bytes 0-4999/10000');
    expect(res.body).toBe(text);
    expect(res.headers['content-length']).toBe('5000');
  });

  it.each(['GET', 'HEAD'])(
    '%s: a strong ETag becomes weak on a compressed body',
    async (method) => {
      const res = await raw(port, {
        method,
        path: '/strong',
        headers: { 'accept-encoding': 'gzip' },
      });
      expect(res.headers['content-encoding']).toBe('gzip');
      expect(res.headers.etag).toBe('W/"v1"');
      if (method === 'GET') expect(gunzipSync(res.raw).toString()).toBe(text);
    },
  );

  it('the same ETag stays strong when the body is sent as is', async () => {
    const identity = await raw(port, {
      path: '/strong',
      headers: { 'accept-encoding': 'identity' },
    });
    expect(identity.headers['content-encoding']).toBeUndefined();
    expect(identity.headers.etag).toBe('"v1"');
    const small = await raw(port, { path: '/small', headers: { 'accept-encoding': 'gzip' } });
    expect(small.headers.etag).toBe('"v1"');
  });

  it('a weak ETag stays as it was', async () => {
    const res = await raw(port, { path: '/weak', headers: { 'accept-encoding': 'gzip' } });
    expect(res.headers['content-encoding']).toBe('gzip');
    expect(res.headers.etag).toBe('W/"v1"');
  });
});
