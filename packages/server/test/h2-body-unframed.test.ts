// A request body without Content-Length on an HTTP/2 server given to `app.attach()`: valid on h2
// (the END_STREAM flag of its last DATA frame frames it; browsers' streaming fetch uploads and
// many h2 clients send one so). It was taken for no body: `ctx.body` undefined, and the body
// neither read nor drained under keel's limits. Read as on HTTP/1: parsed by its type, refused
// (413) once past the limit while it streams in, left on `ctx.req` for a handler reading it raw;
// when nobody reads it, its stream is closed (NO_ERROR) after the answer rather than drained (see
// h2-unread-body.test.ts). Real `node:http2` clients on loopback, the injected clock for time (no
// timer fires here).

import { request as h1request } from 'node:http';
import {
  type ClientHttp2Session,
  type ClientHttp2Stream,
  constants,
  createServer as createHttp2Server,
  type Http2Server,
} from 'node:http2';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { appStats } from '../src/app';
import { type App, createApp } from '../src/index';
import { collect, h2Fixture, type Reply } from './h2-helpers';
import { ManualClock, until } from './helpers';

const { apps, listen, connect } = h2Fixture();

interface Seen {
  /** Bytes a raw reader took of ctx.req, once it ended. */
  raw: number[];
  errors: unknown[];
}

async function serve(): Promise<{ app: App; port: number; seen: Seen }> {
  const clock = new ManualClock();
  const app = createApp({
    clock,
    bodyLimit: 1024,
    parsers: { text: ['text/plain'] },
    sendTimeout: 0,
    keepAliveTimeout: 0,
    requestTimeout: 1000,
    headersTimeout: 1000,
  });
  apps.push(app);
  const seen: Seen = { raw: [], errors: [] };
  app.onError((err) => {
    seen.errors.push(err);
  });
  app.post('/echo', (ctx) => ctx.json({ got: ctx.body ?? null }));
  app.put('/echo', (ctx) => ctx.json({ got: ctx.body ?? null }));
  // No parser takes octet-stream: the handler reads ctx.req itself, past bodyLimit too.
  app.post('/raw', async (ctx) => {
    let n = 0;
    for await (const chunk of ctx.req) n += (chunk as Buffer).length;
    seen.raw.push(n);
    return ctx.json({ size: n, body: ctx.body ?? null });
  });
  // Answers at once, never reads its body.
  app.post('/ignore', (ctx) => ctx.send('ignored'));
  app.get('/ignore', (ctx) => ctx.send('ignored'));
  const server: Http2Server = createHttp2Server(app.handler);
  const port = await listen(app, server);
  return { app, port, seen };
}

function session(port: number): ClientHttp2Session {
  return connect(`http://127.0.0.1:${port}`);
}

/** A request whose body the client writes itself, without Content-Length. */
function upload(
  s: ClientHttp2Session,
  path: string,
  headers: Record<string, string> = {},
  method = 'POST',
): Reply {
  const stream = s.request({ ':method': method, ':path': path, ...headers }, { endStream: false });
  return collect(stream);
}

/** Writes `chunks` one by one, each once the last was handed on, then ends the body. */
async function send(stream: ClientHttp2Stream, chunks: (string | Buffer)[]): Promise<void> {
  for (const chunk of chunks) {
    await new Promise<void>((resolve) => stream.write(chunk, () => resolve()));
  }
  stream.end();
}

describe('an HTTP/2 request body without Content-Length', () => {
  it('JSON is read and parsed, also sent in pieces after the headers', async () => {
    const { app, port, seen } = await serve();
    const s = session(port);
    const reply = upload(s, '/echo', { 'content-type': 'application/json' });
    expect(reply.stream.sentHeaders['content-length']).toBeUndefined();
    await send(reply.stream, ['{"a":', '[1,2', ']}']);
    await until(() => reply.ended);
    expect(reply.status).toBe(200);
    expect(JSON.parse(reply.body)).toEqual({ got: { a: [1, 2] } });
    await until(() => appStats(app).inflight === 0);
    expect(seen.errors).toEqual([]);
  });

  it('forms and text are parsed as on HTTP/1 (PUT too)', async () => {
    const { port } = await serve();
    const s = session(port);
    const form = upload(s, '/echo', { 'content-type': 'application/x-www-form-urlencoded' });
    await send(form.stream, ['a=1&b=', 'two']);
    const text = upload(s, '/echo', { 'content-type': 'text/plain' }, 'PUT');
    await send(text.stream, ['hello ', 'world']);
    await until(() => form.ended && text.ended);
    expect(JSON.parse(form.body)).toEqual({ got: { a: '1', b: 'two' } });
    expect(JSON.parse(text.body)).toEqual({ got: 'hello world' });
  });

  it('malformed JSON is a 400, as on HTTP/1', async () => {
    const { port } = await serve();
    const s = session(port);
    const reply = upload(s, '/echo', { 'content-type': 'application/json' });
    await send(reply.stream, ['{"a":']);
    await until(() => reply.ended);
    expect(reply.status).toBe(400);
  });

  it('past bodyLimit: 413 while the body still streams in (not once it ended), the session serves on', async () => {
    const { app, port } = await serve();
    const s = session(port);
    const reply = upload(s, '/echo', { 'content-type': 'application/json' });
    // 2 KiB of a 1 KiB limit, and the body not ended.
    await send(reply.stream, ['[', '1,'.repeat(1024)]).catch(() => {});
    // send() ended it: a body past the limit is refused whether it ends or not; check the one
    // that never ends below.
    await until(() => reply.ended);
    expect(reply.status).toBe(413);
    const open = upload(s, '/echo', { 'content-type': 'application/json' });
    open.stream.write(`[${'1,'.repeat(1024)}`);
    await until(() => open.ended && open.stream.closed);
    expect(open.status).toBe(413);
    // Closed by the server while the client still sent (it never ended its body): asked to stop
    // without an error (RFC 9113 §8.1), not drained (see h2-unread-body.test.ts).
    expect(open.stream.aborted).toBe(true);
    expect(open.stream.rstCode).toBe(constants.NGHTTP2_NO_ERROR);
    await until(() => appStats(app).inflight === 0);
    const after = upload(s, '/echo', { 'content-type': 'application/json' });
    await send(after.stream, ['{"ok":true}']);
    await until(() => after.ended);
    expect(JSON.parse(after.body)).toEqual({ got: { ok: true } });
  });

  it('a raw reader streams ctx.req whole, ctx.body stays undefined', async () => {
    const { port, seen } = await serve();
    const s = session(port);
    const reply = upload(s, '/raw', { 'content-type': 'application/octet-stream' });
    const chunk = Buffer.alloc(64 * 1024, 7);
    await send(reply.stream, [chunk, chunk, chunk]);
    await until(() => reply.ended);
    expect(JSON.parse(reply.body)).toEqual({ size: 3 * 64 * 1024, body: null });
    expect(seen.raw).toEqual([3 * 64 * 1024]);
  });

  // Passes without the fix too (Node closes a stream nobody read once its answer finished):
  // guards that a body now taken for one is never left stalled on its window.
  it('a body nobody reads (POST or GET) does not stall its stream: sent far past its window, the stream closes', async () => {
    const { app, port } = await serve();
    const s = session(port);
    for (const method of ['POST', 'GET']) {
      const reply = upload(s, '/ignore', { 'content-type': 'application/octet-stream' }, method);
      await until(() => reply.status === 200 && appStats(app).inflight === 0);
      // 1 MiB: sixteen times a stream's default window. Undrained, the client stalls for ever.
      const chunk = Buffer.alloc(64 * 1024, 1);
      await send(
        reply.stream,
        Array.from({ length: 16 }, () => chunk),
      );
      await until(() => reply.ended && reply.stream.closed);
      expect(reply.body).toBe('ignored');
    }
  });
});

describe('an HTTP/1 request without Content-Length or Transfer-Encoding', () => {
  it('still has no body: answered at once, not read', async () => {
    const { app } = await serve();
    const server = await app.listen(0, '127.0.0.1');
    const port = (server.address() as AddressInfo).port;
    const body = await new Promise<string>((resolve, reject) => {
      const req = h1request({
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: '/echo',
        headers: { 'content-type': 'application/json' },
      });
      req.on('error', reject);
      req.on('response', (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => {
          text += c;
        });
        res.on('end', () => resolve(text));
      });
      req.end();
    });
    expect(JSON.parse(body)).toEqual({ got: null });
  });
});
