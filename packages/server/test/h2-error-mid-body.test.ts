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
