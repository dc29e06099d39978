// Parity: response compression. Attacker angle: Accept-Encoding that refuses codings, a second
// response while the first is compressed, streams that must never be buffered for compression.
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { type CompressionOptions, createApp, createEventHub } from '../../src/index';
import { raw, socketBytes, sse, start, until } from '../helpers';
import { guardProcess } from './harness';

guardProcess();

const big = { items: Array.from({ length: 200 }, (_, i) => ({ id: i, name: `item ${i}` })) };

function make(compression: boolean | CompressionOptions = true) {
  const app = createApp({ compression });
  app.get('/big', (ctx) => ctx.json(big));
  app.get('/small', (ctx) => ctx.json({ a: 1 }));
  app.get('/png', (ctx) => ctx.setHeader('content-type', 'image/png').send(Buffer.alloc(5000)));
  app.get('/no-transform', (ctx) =>
    ctx.cacheControl({ maxAge: 1 }).setHeader('cache-control', 'no-transform').json(big),
  );
  return app;
}

describe('compression', () => {
  it('negotiates brotli or gzip by Accept-Encoding and sets Vary', async () => {
    const app = make();
    const br = await app.inject({ url: '/big', headers: { 'accept-encoding': 'gzip, br' } });
    expect(br.headers['content-encoding']).toBe('br');
    expect(br.headers.vary).toBe('Accept-Encoding');
    const rawBody = (br as unknown as { body: string }).body;
    expect(rawBody.length).toBeGreaterThan(0);
    const gz = await app.inject({
      url: '/big',
      headers: { 'accept-encoding': 'gzip;q=1, br;q=0.5' },
    });
    expect(gz.headers['content-encoding']).toBe('gzip');
    const none = await app.inject({ url: '/big', headers: { 'accept-encoding': 'identity' } });
    expect(none.headers['content-encoding']).toBeUndefined();
    expect(none.json()).toEqual(big);
    expect(none.headers.vary).toBe('Accept-Encoding');
  });

  it('sends bytes the client can decode, with the right Content-Length, over a socket', async () => {
    const app = make({ encodings: ['gzip', 'br'] });
    const { port } = await start(app);
    for (const [accept, decode] of [
      ['gzip', gunzipSync],
      ['br', brotliDecompressSync],
    ] as const) {
      const res = await raw(port, { path: '/big', headers: { 'accept-encoding': accept } });
      expect(res.headers['content-encoding']).toBe(accept);
      expect(Number(res.headers['content-length'])).toBe(res.raw.length);
      expect(JSON.parse(decode(res.raw).toString())).toEqual(big);
      expect(res.raw.length).toBeLessThan(JSON.stringify(big).length / 2);
    }
    await app.close();
  });

  it('skips small bodies, incompressible types, no-transform and streams', async () => {
    const app = make();
    const accept = { 'accept-encoding': 'br, gzip' };
    expect(
      (await app.inject({ url: '/small', headers: accept })).headers['content-encoding'],
    ).toBeUndefined();
    expect(
      (await app.inject({ url: '/png', headers: accept })).headers['content-encoding'],
    ).toBeUndefined();
    expect((await app.inject({ url: '/png', headers: accept })).headers.vary).toBeUndefined();
    expect(
      (await app.inject({ url: '/no-transform', headers: accept })).headers['content-encoding'],
    ).toBeUndefined();
    // HEAD is no longer skipped: it gets the Content-Encoding GET would get (RFC 9110 §9.3.2),
    // not the uncompressed length of a body GET never sends. The next test checks it on a socket.
    const head = await app.inject({ method: 'HEAD', url: '/big', headers: accept });
    expect(head.headers['content-encoding']).toBe('br');
    expect(head.headers['content-length']).toBeUndefined();
    const hub = createEventHub();
    app.get('/events', (ctx) => hub.connect(ctx));
    const { port } = await start(app);
    const client = await sse(port, '/events', accept);
    expect(client.headers['content-encoding']).toBeUndefined();
    hub.publish('x', big);
    await client.waitFor(1);
    expect(JSON.parse(client.events[0]!.data)).toEqual(big);
    client.close();
    await app.close();
  });

  it('HEAD sends the header fields GET sends, without a Content-Length it cannot know', async () => {
    const app = make({ encodings: ['gzip'] });
    const { port } = await start(app);
    const accept = { 'accept-encoding': 'gzip' };
    const get = await raw(port, { path: '/big', headers: accept });
    expect(get.headers['content-encoding']).toBe('gzip');
    // Two requests on one keep-alive socket: the HEAD answer must carry no body bytes and no
    // length the client could frame a body with, so the GET after it is read intact.
    const out = await socketBytes(
      port,
      'HEAD /big HTTP/1.1\r\nHost: x\r\nAccept-Encoding: gzip\r\n\r\n' +
        'GET /small HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n',
      2000,
    );
    const blockEnd = out.indexOf('\r\n\r\n');
    const headHead = out.slice(0, blockEnd);
    const rest = out.slice(blockEnd + 4);
    const headers = new Map(
      headHead
        .split('\r\n')
        .slice(1)
        .map((line) => line.split(': ', 2).map((s) => s.toLowerCase()) as [string, string]),
    );
    expect(headHead).toMatch(/^HTTP\/1\.1 200 /);
    expect(headers.get('content-encoding')).toBe('gzip');
    expect(headers.get('vary')).toBe('accept-encoding');
    expect(headers.get('content-type')).toBe(get.headers['content-type']);
    expect(headers.has('content-length')).toBe(false);
    expect(headers.has('transfer-encoding')).toBe(false);
    // The next response starts right after the HEAD's header block.
    expect(rest).toMatch(/^HTTP\/1\.1 200 /);
    expect(rest.endsWith('{"a":1}')).toBe(true);
    await app.close();
  });

  it('refuses a second response while compressing, and bad options', async () => {
    const app = createApp({ compression: { threshold: 10 } });
    const errors: unknown[] = [];
    app.onError((err) => {
      errors.push(err);
    });
    app.get('/twice', (ctx) => {
      ctx.json(big);
      ctx.json({ second: true });
    });
    const res = await app.inject({ url: '/twice', headers: { 'accept-encoding': 'gzip' } });
    expect(res.headers['content-encoding']).toBe('gzip');
    expect(String(errors[0])).toMatch(/already sent/);
    expect(() => createApp({ compression: { encodings: ['deflate' as never] } })).toThrow(
      RangeError,
    );
    expect(() => createApp({ compression: { brotliQuality: 12 } })).toThrow(RangeError);
  });

  it('a GraphQL answer being compressed keeps its request open until it is written', async () => {
    const app = createApp({ compression: { threshold: 10 } });
    const seen: { status: number; finished: boolean }[] = [];
    app.onResponse((_ctx, response) => {
      seen.push(response);
    });
    app.post('/graphql', (ctx) =>
      ctx.graphql('type Query { items: [String!]! }', {
        Query: { items: () => Array.from({ length: 500 }, (_, i) => `item ${i}`) },
      }),
    );
    const res = await app.inject({
      method: 'POST',
      url: '/graphql',
      headers: { 'content-type': 'application/json', 'accept-encoding': 'gzip' },
      body: JSON.stringify({ query: '{ items }' }),
    });
    expect(res.headers['content-encoding']).toBe('gzip');
    // The hook runs when the response is over: by then it was written.
    expect(seen).toEqual([{ status: 200, finished: true }]);
  });

  it('a client that leaves while its answer is compressed gets nothing written: status 0', async () => {
    const app = createApp({ compression: { threshold: 10 } });
    const seen: { status: number; finished: boolean }[] = [];
    app.onResponse((_ctx, response) => {
      seen.push(response);
    });
    app.get('/big', (ctx) => {
      const answer = ctx.json(big);
      // Gone while zlib works on the body (off the event loop): the answer comes back too late.
      ctx.req.socket.destroy();
      return answer;
    });
    const { port } = await start(app);
    await socketBytes(port, 'GET /big HTTP/1.1\r\nHost: x\r\nAccept-Encoding: gzip\r\n\r\n', 200);
    await until(() => seen.length === 1);
    expect(seen).toEqual([{ status: 0, finished: false }]);
    await app.close();
  });
});
