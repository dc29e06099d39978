// A handler that fails after its response's head went out on an attached HTTP/2 server: the
// body is cut short, and the client must be able to tell. keel ended the connection's socket
// (`socket.end()`), which on HTTP/2 is the stream's proxy: it ended the stream with END_STREAM,
// so a truncated body without a length read as a complete one. Real `node:http2` client.

import { constants, createServer as createHttp2Server } from 'node:http2';
import { describe, expect, it } from 'vitest';
import { createApp } from '../src/index';
import { h2Fixture } from './h2-helpers';
import { until } from './helpers';

const { apps, listen, connect } = h2Fixture();

describe('an HTTP/2 response cut by its handler failing', () => {
  it('is reset (INTERNAL_ERROR), never ended as if complete; the session serves on', async () => {
    const app = createApp();
    apps.push(app);
    const errors: unknown[] = [];
    app.onError((err) => {
      errors.push(err);
    });
    app.get('/fail', async (ctx) => {
      ctx.res.writeHead(200, { 'content-type': 'text/plain' });
      ctx.res.write('partial');
      await new Promise((r) => setImmediate(r));
      throw new Error('boom');
    });
    app.get('/ok', (ctx) => ctx.send('ok'));
    const server = createHttp2Server(app.handler as never);
    const port = await listen(app, server);
    const s = connect(`http://127.0.0.1:${port}`);
    const stream = s.request({ ':path': '/fail' });
    stream.on('error', () => {});
    let body = '';
    let ended = false;
    stream.setEncoding('utf8');
    stream.on('data', (c: string) => {
      body += c;
    });
    stream.on('end', () => {
      ended = true;
    });
    await until(() => stream.closed);
    expect(body).toBe('partial');
    expect(stream.rstCode).toBe(constants.NGHTTP2_INTERNAL_ERROR);
    expect(ended).toBe(false);
    expect(errors).toHaveLength(1);
    const next = s.request({ ':path': '/ok' });
    let text = '';
    next.setEncoding('utf8');
    next.on('data', (c: string) => {
      text += c;
    });
    await new Promise((r) => next.on('end', r));
    expect(text).toBe('ok');
  });
});

describe('a compressed HTTP/2 response whose head Node refuses', () => {
  // `keep-alive` (and upgrade, te, ...) pass ctx.setHeader but throw in Node's HTTP/2 respond.
  // Compressed, the write ran off the loop and its catch destroyed the stream bare: RST_STREAM
  // NO_ERROR with no head, which a client reads as a clean end with nothing.
  it('is the bare 500, as uncompressed, reported', async () => {
    const app = createApp({ compression: true });
    apps.push(app);
    const errors: unknown[] = [];
    app.onError((err) => {
      errors.push(err);
    });
    app.get('/big', (ctx) =>
      ctx.setHeader('keep-alive', 'timeout=5').json({ a: 'x'.repeat(5000) }),
    );
    const port = await listen(app, createHttp2Server(app.handler));
    const session = connect(`http://127.0.0.1:${port}`);
    for (const encoding of ['gzip', 'identity']) {
      const reply = await new Promise<{ status: number; body: string; rst: number }>((resolve) => {
        const stream = session.request({ ':path': '/big', 'accept-encoding': encoding });
        let status = 0;
        let body = '';
        stream.on('response', (h) => {
          status = Number(h[':status']);
        });
        stream.setEncoding('utf8');
        stream.on('data', (c: string) => {
          body += c;
        });
        stream.on('error', () => {});
        stream.on('close', () => resolve({ status, body, rst: stream.rstCode ?? 0 }));
      });
      expect(reply.status, encoding).toBe(500);
      expect(JSON.parse(reply.body), encoding).toEqual({
        status: 500,
        error: 'Internal Server Error',
      });
    }
    // One report a request: the error response failing on the same refused header (identity)
    // was reported a second time.
    await until(() => errors.length >= 2);
    await new Promise((r) => setTimeout(r, 20));
    expect(errors).toHaveLength(2);
  });
});
