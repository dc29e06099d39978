// A request body nobody reads on an HTTP/2 server given to `app.attach()` (a 404, a 413, a
// handler answering without reading it). keel drained it as on HTTP/1 (read and dropped, up to
// 16 MiB), which on HTTP/2 only made the client upload it for nothing, and kept Node from closing
// the stream itself (it does so only for streams nobody read). RFC 9113 §8.1: a server that
// answered before the body asks the client to stop with RST_STREAM NO_ERROR after the complete
// response. Real `node:http2` clients on loopback; bytes counted on the server's side of the
// session; the injected clock for time (no timer fires here).

import {
  type ClientHttp2Stream,
  constants,
  createServer as createHttp2Server,
  type Http2Server,
  type Http2Session,
} from 'node:http2';
import { describe, expect, it } from 'vitest';
import { appStats } from '../src/app';
import { type App, createApp } from '../src/index';
import { h2Fixture } from './h2-helpers';
import { ManualClock, until } from './helpers';

const { apps, listen, connect } = h2Fixture();

/** What the client offers: 8 MiB, far more than a stream's window (64 KiB) and the limit. */
const OFFERED = 8 * 1024 * 1024;
const CHUNK = Buffer.alloc(64 * 1024, 1);

interface Server {
  app: App;
  port: number;
  /** The server's side of each session, in order. */
  served: Http2Session[];
  /** Bytes a handler reading ctx.req whole took. */
  raw: number[];
}

async function serve(): Promise<Server> {
  const app = createApp({
    clock: new ManualClock(),
    bodyLimit: 1024,
    sendTimeout: 0,
    keepAliveTimeout: 0,
    requestTimeout: 1000,
    headersTimeout: 1000,
  });
  apps.push(app);
  const raw: number[] = [];
  app.post('/json', (ctx) => ctx.json({ got: ctx.body }));
  // No parser takes octet-stream: the body is left on ctx.req, and this handler never reads it.
  app.post('/ignore', (ctx) => ctx.send('ignored'));
  // Pauses ctx.req without reading it, then answers.
  app.post('/paused', (ctx) => {
    ctx.req.pause();
    return ctx.send('paused');
  });
  // Reads the first piece, stops reading (Node leaves a stream once read to the app), answers.
  app.post('/partial', async (ctx) => {
    await new Promise<void>((resolve) => {
      const first = (): void => {
        ctx.req.off('data', first);
        ctx.req.pause();
        resolve();
      };
      ctx.req.on('data', first);
    });
    return ctx.status(400).send('enough');
  });
  // Leaves a `data` listener on ctx.req, pauses it, answers (test/adversarial/paused-listener
  // on HTTP/1): Node neither reads on nor closes the stream, which stayed open until its timeout.
  app.post('/listener-paused', (ctx) => {
    ctx.req.on('data', () => {});
    ctx.req.pause();
    return ctx.send('paused');
  });
  // A reader with backpressure of its own (pause per chunk, resume once handled) that answers
  // from its listener while paused: it keeps its whole body, as on HTTP/1.
  app.post(
    '/reader',
    (ctx) =>
      new Promise<void>((resolve) => {
        let n = 0;
        const req = ctx.req;
        req.on('data', (chunk: Buffer) => {
          n += chunk.length;
          req.pause();
          if (n === chunk.length) {
            void ctx.send('reading');
            resolve();
          }
          setImmediate(() => req.resume());
        });
        req.on('end', () => raw.push(n));
      }),
  );
  app.post('/raw', async (ctx) => {
    let n = 0;
    for await (const chunk of ctx.req) n += (chunk as Buffer).length;
    raw.push(n);
    return ctx.json({ size: n });
  });
  const server: Http2Server = createHttp2Server(app.handler);
  const served: Http2Session[] = [];
  server.on('session', (session: Http2Session) => served.push(session));
  const port = await listen(app, server);
  return { app, port, served, raw };
}

interface Upload {
  stream: ClientHttp2Stream;
  status: number;
  body: string;
  ended: boolean;
  errors: unknown[];
  /** Bytes of the body whose writes completed before the stream closed. */
  sent: number;
}

/** Opens a POST on a session of its own and offers OFFERED bytes, chunk by chunk, then ends. */
async function upload(
  port: number,
  path: string,
  headers: Record<string, string>,
): Promise<Upload> {
  const s = connect(`http://127.0.0.1:${port}`);
  const stream = s.request({ ':method': 'POST', ':path': path, ...headers }, { endStream: false });
  const up: Upload = { stream, status: 0, body: '', ended: false, errors: [], sent: 0 };
  stream.on('error', (err) => up.errors.push(err));
  stream.on('response', (h) => {
    up.status = Number(h[':status']);
  });
  stream.setEncoding('utf8');
  stream.on('data', (c: string) => {
    up.body += c;
  });
  stream.on('end', () => {
    up.ended = true;
  });
  // Closed by the server while the client still uploads, a Node client's stream emits 'aborted'
  // (and keeps its stuck write pending: no 'close' until its session goes).
  const closed = new Promise<false>((resolve) => {
    stream.once('aborted', () => resolve(false));
    stream.once('close', () => resolve(false));
  });
  while (up.sent < OFFERED && !stream.closed && !stream.destroyed) {
    const written = new Promise<boolean>((resolve) => stream.write(CHUNK, (err) => resolve(!err)));
    if (!(await Promise.race([written, closed]))) break;
    up.sent += CHUNK.length;
  }
  if (!stream.closed && !stream.destroyed) stream.end();
  await until(() => stream.closed);
  return up;
}

const octets = { 'content-type': 'application/octet-stream' };
const json = { 'content-type': 'application/json' };
const declared = { 'content-length': String(OFFERED) };

describe('an HTTP/2 request body nobody reads', () => {
  const cases: [string, string, Record<string, string>, number, (body: string) => void][] = [
    ['404, with Content-Length', '/nowhere', { ...octets, ...declared }, 404, notFound],
    ['404, without Content-Length', '/nowhere', octets, 404, notFound],
    ['413 (declared), with Content-Length', '/json', { ...json, ...declared }, 413, tooLarge],
    ['413 (counted as it streams in), without Content-Length', '/json', json, 413, tooLarge],
    [
      '200 from a handler that never reads it, with Content-Length',
      '/ignore',
      { ...octets, ...declared },
      200,
      text('ignored'),
    ],
    [
      '200 from a handler that never reads it, without Content-Length',
      '/ignore',
      octets,
      200,
      text('ignored'),
    ],
    ['200 from a handler that paused ctx.req unread', '/paused', octets, 200, text('paused')],
    [
      '200 from a handler that paused ctx.req with its data listener left on',
      '/listener-paused',
      octets,
      200,
      text('paused'),
    ],
    [
      '400 from a handler that read a piece, then paused ctx.req',
      '/partial',
      octets,
      400,
      text('enough'),
    ],
  ];
  for (const [name, path, headers, status, check] of cases) {
    it(`${name}: the complete answer, then the stream closed (NO_ERROR); the upload stops`, async () => {
      const { app, port, served } = await serve();
      const up = await upload(port, path, headers);
      expect(up.status).toBe(status);
      // The whole answer reached the client, ended, and without an error: RST_STREAM NO_ERROR.
      expect(up.ended).toBe(true);
      check(up.body);
      expect(up.stream.rstCode).toBe(constants.NGHTTP2_NO_ERROR);
      expect(up.errors).toEqual([]);
      // The client was told to stop: it never got to hand over its whole body...
      expect(up.sent).toBeLessThan(OFFERED);
      // ...and the server took a fraction of it (a stream's window or so), not 8 MiB.
      const server = served[0]!;
      expect(server.socket.bytesRead).toBeLessThan(OFFERED / 8);
      await until(() => appStats(app).inflight === 0);
    });
  }

  it('a reader pausing per chunk that answered from its listener keeps its whole body', async () => {
    const { app, port, raw } = await serve();
    const up = await upload(port, '/reader', { ...octets, ...declared });
    expect(up.status).toBe(200);
    expect(up.body).toBe('reading');
    expect(up.sent).toBe(OFFERED);
    await until(() => raw.length === 1);
    expect(raw).toEqual([OFFERED]);
    expect(up.stream.rstCode).toBe(constants.NGHTTP2_NO_ERROR);
    await until(() => appStats(app).inflight === 0);
  });

  it('a handler reading ctx.req whole is unaffected: all of it arrives, the stream ends as usual', async () => {
    const { app, port, raw, served } = await serve();
    const up = await upload(port, '/raw', { ...octets, ...declared });
    expect(up.status).toBe(200);
    expect(JSON.parse(up.body)).toEqual({ size: OFFERED });
    expect(raw).toEqual([OFFERED]);
    expect(up.sent).toBe(OFFERED);
    expect(up.stream.rstCode).toBe(constants.NGHTTP2_NO_ERROR);
    expect(served[0]!.socket.bytesRead).toBeGreaterThan(OFFERED);
    await until(() => appStats(app).inflight === 0);
  });
});

function notFound(body: string): void {
  expect(JSON.parse(body)).toMatchObject({ status: 404 });
}

function tooLarge(body: string): void {
  expect(JSON.parse(body)).toMatchObject({ status: 413 });
}

function text(expected: string): (body: string) => void {
  return (body) => expect(body).toBe(expected);
}
