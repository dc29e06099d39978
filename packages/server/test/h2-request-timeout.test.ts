// `requestTimeout` on an HTTP/2 server given to `app.attach()`: Node's `requestTimeout` and
// `headersTimeout` apply to HTTP/1 only, so a client that sent its headers and then its body
// slowly, or never ended it, held the stream, the handler and the buffered body for ever. The
// app's `requestTimeout` bounds each stream's request: 408 when nothing was sent yet, else the
// stream is reset (RST_STREAM CANCEL); the session serves on. Real `node:http2` clients on
// loopback, the injected clock for time.

import { createServer as createHttp1Server, request as h1request } from 'node:http';
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
import { type App, type AppOptions, type Context, createApp } from '../src/index';
import { collect, fetchText, h2Fixture, type Reply } from './h2-helpers';
import { ManualClock, until } from './helpers';

const { apps, listen, connect } = h2Fixture();

interface Seen {
  ctx: Context | null;
  aborted: boolean;
  /** What the handler reading ctx.req itself saw: 'end' (the body looked whole) or 'close'. */
  read: string[];
  over: { status: number; finished: boolean }[];
  errors: unknown[];
}

async function serve(
  options: AppOptions = {},
): Promise<{ app: App; clock: ManualClock; port: number; seen: Seen; server: Http2Server }> {
  const clock = new ManualClock();
  // sendTimeout and the idle-session timeout off: the only timers left are the request's.
  const app = createApp({
    clock,
    sendTimeout: 0,
    keepAliveTimeout: 0,
    requestTimeout: 1000,
    headersTimeout: 1000,
    ...options,
  });
  apps.push(app);
  const seen: Seen = { ctx: null, aborted: false, read: [], over: [], errors: [] };
  app.onResponse((_ctx, info) => {
    seen.over.push({ status: info.status, finished: info.finished });
  });
  app.onError((err) => {
    seen.errors.push(err);
  });
  app.post('/json', (ctx) => ctx.json({ got: ctx.body }));
  // Reads the body itself (no parser takes octet-stream); answers once it is read.
  app.post('/stream', async (ctx) => {
    seen.ctx = ctx;
    ctx.signal.addEventListener('abort', () => {
      seen.aborted = true;
    });
    const size = await new Promise<number>((resolve) => {
      let n = 0;
      ctx.req.on('data', (c: Buffer) => {
        n += c.length;
      });
      ctx.req.on('end', () => {
        seen.read.push('end');
        resolve(n);
      });
      ctx.req.on('close', () => {
        seen.read.push('close');
        resolve(-1);
      });
    });
    return ctx.json({ size });
  });
  // Sends its head at once, then reads the body.
  app.post('/early', async (ctx) => {
    seen.ctx = ctx;
    ctx.signal.addEventListener('abort', () => {
      seen.aborted = true;
    });
    ctx.res.writeHead(200, { 'content-type': 'text/plain' });
    ctx.res.write('started ');
    for await (const _ of ctx.req) {
      // read and dropped
    }
    ctx.res.end('done');
  });
  // Answers after its body, once the test lets it.
  let release: () => void = () => {};
  app.post('/slow', async (ctx) => {
    seen.ctx = ctx;
    await new Promise<void>((resolve) => {
      release = resolve;
    });
    return ctx.json({ got: ctx.body });
  });
  // Reads a first piece of its body, stops reading, answers, and its chain goes on until the test
  // lets it (Node closes a stream nobody read once its answer finished: this one was read).
  app.post('/answered', async (ctx) => {
    seen.ctx = ctx;
    await new Promise<void>((resolve) => {
      const first = (): void => {
        ctx.req.off('data', first);
        ctx.req.pause();
        resolve();
      };
      ctx.req.on('data', first);
    });
    ctx.send('early');
    await new Promise<void>((resolve) => {
      release = resolve;
    });
  });
  app.get('/small', (ctx) => ctx.send('ok'));
  app.get('/wait', async (ctx) => {
    seen.ctx = ctx;
    await new Promise<void>((resolve) => {
      release = resolve;
    });
    return ctx.send('late');
  });
  const server: Http2Server = createHttp2Server(app.handler);
  const port = await listen(app, server);
  Object.defineProperty(seen, 'release', { get: () => release });
  return { app, clock, port, seen, server };
}

function releaseOf(seen: Seen): () => void {
  return (seen as unknown as { release: () => void }).release;
}

function session(port: number): ClientHttp2Session {
  return connect(`http://127.0.0.1:${port}`);
}

/** A POST whose body the client writes itself (and may never end); the reply is collected. */
function upload(
  s: ClientHttp2Session,
  path: string,
  headers: Record<string, string> = {},
): { stream: ClientHttp2Stream; reply: Reply } {
  const stream = s.request({
    ':method': 'POST',
    ':path': path,
    'content-type': 'application/json',
    'content-length': '100',
    ...headers,
  });
  return { stream, reply: collect(stream) };
}

describe('requestTimeout on an attached HTTP/2 server', () => {
  it('a body that never ends: 408 once requestTimeout passed, the stream closed, the session serves on', async () => {
    const { app, clock, port, seen } = await serve();
    const s = session(port);
    const { stream, reply } = upload(s, '/json');
    stream.write('{"a":');
    await until(() => appStats(app).inflight === 1);
    // One timer for the request, none other.
    expect(clock.active).toBe(1);
    clock.tick(999);
    await new Promise((r) => setTimeout(r, 20));
    expect(stream.closed).toBe(false);
    clock.tick(1);
    await until(() => stream.closed);
    expect(reply.status).toBe(408);
    // The client is told to stop sending, without an error: the answer is complete.
    expect(stream.rstCode).toBe(constants.NGHTTP2_NO_ERROR);
    await until(() => appStats(app).inflight === 0);
    // As HTTP/1's 408 (Node's, past the response): nothing of the app's response was sent.
    expect(seen.over).toEqual([{ status: 0, finished: false }]);
    expect(clock.active).toBe(0);
    expect(await fetchText(s, '/small')).toBe('ok');
    expect(s.destroyed).toBe(false);
    expect(seen.errors).toEqual([]);
  });

  it('a body trickled in: cut at requestTimeout from the request, however it keeps moving', async () => {
    const { app, clock, port } = await serve();
    const s = session(port);
    const { stream, reply } = upload(s, '/json');
    stream.write('[');
    await until(() => appStats(app).inflight === 1);
    for (let i = 0; i < 4; i++) {
      clock.tick(300);
      stream.write('1,');
      await new Promise((r) => setTimeout(r, 5));
    }
    await until(() => stream.closed);
    expect(reply.status).toBe(408);
    await until(() => appStats(app).inflight === 0);
    expect(clock.active).toBe(0);
  });

  it('a handler reading ctx.req itself: the client gets 408, the handler sees the abort (ctx.signal, no end)', async () => {
    const { app, clock, port, seen } = await serve();
    const s = session(port);
    const { stream, reply } = upload(s, '/stream', { 'content-type': 'application/octet-stream' });
    stream.write('partial');
    await until(() => seen.ctx !== null);
    clock.tick(1000);
    await until(() => stream.closed && appStats(app).inflight === 0);
    expect(reply.status).toBe(408);
    expect(seen.aborted).toBe(true);
    // Never a truncated body that looks whole.
    expect(seen.read).not.toContain('end');
    expect(seen.read).toContain('close');
    expect(seen.over).toEqual([{ status: 0, finished: false }]);
    expect(seen.errors).toEqual([]);
    expect(clock.active).toBe(0);
  });

  it('a response already started: the stream is reset (CANCEL), the handler sees the abort', async () => {
    const { app, clock, port, seen } = await serve();
    const s = session(port);
    const { stream, reply } = upload(s, '/early', { 'content-type': 'application/octet-stream' });
    stream.write('partial');
    await until(() => reply.body === 'started ');
    clock.tick(1000);
    await until(() => stream.closed && appStats(app).inflight === 0);
    expect(reply.status).toBe(200);
    expect(stream.rstCode).toBe(constants.NGHTTP2_CANCEL);
    expect(reply.body).toBe('started ');
    expect(seen.aborted).toBe(true);
    expect(seen.over).toEqual([{ status: 200, finished: false }]);
    expect(seen.errors).toEqual([]);
    expect(clock.active).toBe(0);
    expect(await fetchText(s, '/small')).toBe('ok');
  });

  it('an answer complete before its body (404): the stream the client keeps sending on is closed (NO_ERROR) at once, no timer left', async () => {
    const { app, clock, port, seen } = await serve();
    const s = session(port);
    const { stream, reply } = upload(s, '/nowhere');
    stream.write('{"a":');
    await until(() => reply.ended);
    expect(reply.status).toBe(404);
    // Nobody reads its body: the client is asked to stop sending once the answer is out, without
    // an error (RFC 9113 §8.1), not held until requestTimeout (see h2-unread-body.test.ts).
    await until(() => stream.closed && appStats(app).inflight === 0);
    expect(stream.rstCode).toBe(constants.NGHTTP2_NO_ERROR);
    expect(seen.over).toEqual([{ status: 404, finished: true }]);
    expect(clock.active).toBe(0);
  });

  it('an answer complete before its body, its handler still running: the stream is closed (NO_ERROR) at requestTimeout', async () => {
    const { app, clock, port, seen } = await serve();
    const s = session(port);
    const { stream, reply } = upload(s, '/answered', {
      'content-type': 'application/octet-stream',
    });
    stream.write('partial');
    await until(() => reply.ended);
    expect(reply.body).toBe('early');
    // The client has its answer but has not ended its body, and the request is not over: the
    // stream stays open until the request's deadline.
    await new Promise((r) => setTimeout(r, 20));
    expect(stream.closed).toBe(false);
    expect(clock.active).toBe(1);
    clock.tick(1000);
    await until(() => stream.closed);
    // The answer was whole: the client is asked to stop sending, without an error (RFC 9113 §8.1).
    expect(stream.rstCode).toBe(constants.NGHTTP2_NO_ERROR);
    releaseOf(seen)();
    await until(() => appStats(app).inflight === 0);
    expect(seen.over).toEqual([{ status: 200, finished: true }]);
    expect(clock.active).toBe(0);
  });

  it('a body received in time: the handler may take longer, nothing is cut, no timer is left', async () => {
    const { app, clock, port, seen } = await serve();
    const s = session(port);
    const { stream, reply } = upload(s, '/slow', { 'content-length': '7' });
    stream.end('{"a":1}');
    await until(() => seen.ctx !== null);
    clock.tick(5000);
    await new Promise((r) => setTimeout(r, 20));
    expect(stream.closed).toBe(false);
    releaseOf(seen)();
    await until(() => reply.ended);
    expect(reply.status).toBe(200);
    expect(reply.body).toBe('{"got":{"a":1}}');
    await until(() => stream.closed && appStats(app).inflight === 0);
    expect(clock.active).toBe(0);
  });

  it('a body that ends in time leaves no timer once its stream closed', async () => {
    const { app, clock, port } = await serve();
    const s = session(port);
    const { stream, reply } = upload(s, '/json', { 'content-length': '7' });
    stream.write('{"a":');
    await until(() => appStats(app).inflight === 1);
    expect(clock.active).toBe(1);
    stream.end('1}');
    await until(() => reply.ended && stream.closed);
    expect(reply.body).toBe('{"got":{"a":1}}');
    await until(() => appStats(app).inflight === 0 && clock.active === 0);
  });

  it('a request without a body (END_STREAM on its headers) gets no timer', async () => {
    const { app, clock, port, seen } = await serve();
    const s = session(port);
    const stream = s.request({ ':path': '/wait' });
    stream.on('error', () => {});
    await until(() => seen.ctx !== null);
    expect(clock.active).toBe(0);
    releaseOf(seen)();
    await until(() => stream.closed && appStats(app).inflight === 0);
  });

  it('Expect: 100-continue does not escape it', async () => {
    const { app, clock, port } = await serve();
    const s = session(port);
    const { stream, reply } = upload(s, '/json', { expect: '100-continue' });
    stream.write('{"a":');
    await until(() => appStats(app).inflight === 1);
    clock.tick(1000);
    await until(() => stream.closed);
    expect(reply.status).toBe(408);
    await until(() => appStats(app).inflight === 0);
    expect(clock.active).toBe(0);
  });

  it('a session of open-but-silent streams pins none of them: each is answered, the session goes on', async () => {
    const { app, clock, port } = await serve();
    const s = session(port);
    const uploads: { stream: ClientHttp2Stream; reply: Reply }[] = [];
    for (let i = 0; i < 20; i++) {
      const u = upload(s, i % 2 === 0 ? '/json' : '/stream', {
        'content-type': i % 2 === 0 ? 'application/json' : 'application/octet-stream',
      });
      u.stream.write('x'.repeat(50));
      uploads.push(u);
    }
    await until(() => appStats(app).inflight === 20);
    expect(clock.active).toBe(20);
    clock.tick(1000);
    await until(() => uploads.every((u) => u.stream.closed));
    for (const u of uploads) expect(u.reply.status).toBe(408);
    await until(() => appStats(app).inflight === 0);
    expect(clock.active).toBe(0);
    expect(await fetchText(s, '/small')).toBe('ok');
  });

  it('requestTimeout: 0 turns it off (no timer)', async () => {
    const { app, clock, port } = await serve({ requestTimeout: 0 });
    const s = session(port);
    const { stream } = upload(s, '/json');
    stream.write('{"a":');
    await until(() => appStats(app).inflight === 1);
    expect(clock.active).toBe(0);
    stream.close(constants.NGHTTP2_CANCEL);
    await until(() => appStats(app).inflight === 0);
  });
});

describe('ctx.signal on an attached HTTP/2 server', () => {
  it('aborts when the client resets a stream mid-response (Node ends the stream, so it looked finished)', async () => {
    const { app, port, seen } = await serve({ requestTimeout: 0 });
    const s = session(port);
    const { stream, reply } = upload(s, '/early', { 'content-type': 'application/octet-stream' });
    stream.write('partial');
    await until(() => reply.body === 'started ');
    stream.close(constants.NGHTTP2_CANCEL);
    await until(() => appStats(app).inflight === 0);
    expect(seen.aborted).toBe(true);
    expect(seen.over).toEqual([{ status: 200, finished: false }]);
  });
});

describe('requestTimeout on an attached HTTP/1 server', () => {
  it('adds nothing per request (Node times HTTP/1 itself)', async () => {
    const clock = new ManualClock();
    const app = createApp({ clock, sendTimeout: 0, requestTimeout: 1000, headersTimeout: 1000 });
    apps.push(app);
    app.post('/json', (ctx) => ctx.json({ got: ctx.body }));
    const server = app.attach(createHttp1Server(app.serverOptions, app.handler));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const req = h1request({
      host: '127.0.0.1',
      port: (server.address() as AddressInfo).port,
      method: 'POST',
      path: '/json',
      headers: { 'content-type': 'application/json', 'content-length': '7' },
    });
    req.on('error', () => {});
    req.write('{"a":');
    await until(() => appStats(app).inflight === 1);
    expect(clock.active).toBe(0);
    const body = await new Promise<string>((resolve) => {
      req.on('response', (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => {
          text += c;
        });
        res.on('end', () => resolve(text));
      });
      req.end('1}');
    });
    expect(body).toBe('{"got":{"a":1}}');
    expect(clock.active).toBe(0);
  });
});
