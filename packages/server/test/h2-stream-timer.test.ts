// One timer per stream of an attached HTTP/2 server with both `sendTimeout` and `requestTimeout`
// on: a stream with a body to come had two (the stream's sendTimeout watch, checking every quarter
// period, and the request's own timer, kept until the stream closed). The request's deadline now
// rides on the watch's timer: the timer fires at the next check or at the deadline, whichever
// comes first, so the 408 comes exactly at `requestTimeout` and a stall is still cut within 1.25
// periods. Real `node:http2` clients on loopback, the injected clock for time.

import {
  type ClientHttp2Session,
  type ClientHttp2Stream,
  constants,
  createServer as createHttp2Server,
  type Http2Server,
  type Http2ServerResponse,
} from 'node:http2';
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { appStats } from '../src/app';
import { type App, createApp } from '../src/index';
import { fetchText, h2Fixture } from './h2-helpers';
import { ManualClock, until } from './helpers';

const { apps, listen, connect } = h2Fixture();

interface Seen {
  res: Http2ServerResponse | null;
  source: Readable | null;
  over: { status: number; finished: boolean }[];
}

async function serve(): Promise<{ app: App; clock: ManualClock; port: number; seen: Seen }> {
  const clock = new ManualClock();
  // Checks every 250 ms; the request's deadline (900) falls between two of them.
  const app = createApp({
    clock,
    sendTimeout: 1000,
    requestTimeout: 900,
    headersTimeout: 900,
    keepAliveTimeout: 0,
    // No heartbeat timer: the timers counted are the streams'.
    sse: { heartbeatMs: 0 },
  });
  apps.push(app);
  const seen: Seen = { res: null, source: null, over: [] };
  app.onResponse((_ctx, info) => {
    seen.over.push({ status: info.status, finished: info.finished });
  });
  app.post('/json', (ctx) => ctx.json({ got: ctx.body }));
  // 60 KiB in one piece: more than a stalled stream's window takes.
  app.post('/reply', (ctx) => {
    seen.res = ctx.res as unknown as Http2ServerResponse;
    return ctx.send('r'.repeat(60 * 1024));
  });
  app.get('/small', (ctx) => ctx.send('ok'));
  app.get('/events', (ctx) => {
    ctx.sseStream().send('tick', 'one');
  });
  // A streamed body that stays open: one chunk, then nothing until the source ends.
  app.get('/streamed', (ctx) => {
    seen.source = new Readable({ read() {} });
    seen.source.push('s');
    return ctx.send(seen.source);
  });
  const server: Http2Server = createHttp2Server(app.handler);
  const port = await listen(app, server);
  return { app, clock, port, seen };
}

/** A session whose streams get a small window: one that is not read stalls at once. */
function session(port: number): ClientHttp2Session {
  return connect(`http://127.0.0.1:${port}`, { settings: { initialWindowSize: 4096 } });
}

function upload(
  s: ClientHttp2Session,
  path: string,
  length: number,
): { stream: ClientHttp2Stream; status: () => number } {
  const stream = s.request({
    ':method': 'POST',
    ':path': path,
    'content-type': 'application/json',
    'content-length': String(length),
  });
  let status = 0;
  stream.on('error', () => {});
  stream.on('response', (h) => {
    status = Number(h[':status']);
  });
  return { stream, status: () => status };
}

describe('sendTimeout and requestTimeout on one HTTP/2 stream', () => {
  it('a body to come: one timer, and the 408 comes at requestTimeout, not at the next check', async () => {
    const { app, clock, port, seen } = await serve();
    const s = session(port);
    const { stream, status } = upload(s, '/json', 100);
    stream.write('{"a":');
    await until(() => appStats(app).inflight === 1);
    expect(clock.active).toBe(1);
    clock.tick(899);
    await new Promise((r) => setTimeout(r, 20));
    expect(stream.closed).toBe(false);
    expect(clock.active).toBe(1);
    clock.tick(1);
    await until(() => stream.closed);
    expect(status()).toBe(408);
    expect(stream.rstCode).toBe(constants.NGHTTP2_NO_ERROR);
    await until(() => appStats(app).inflight === 0);
    expect(seen.over).toEqual([{ status: 0, finished: false }]);
    await until(() => clock.active === 0);
    expect(await fetchText(s, '/small')).toBe('ok');
  });

  it('a body trickled in is cut at requestTimeout however it moves (its progress is no send progress)', async () => {
    const { app, clock, port } = await serve();
    const s = session(port);
    const { stream, status } = upload(s, '/json', 100);
    stream.write('[');
    await until(() => appStats(app).inflight === 1);
    for (let i = 0; i < 3; i++) {
      clock.tick(300);
      stream.write('1,');
      await new Promise((r) => setTimeout(r, 5));
    }
    await until(() => stream.closed);
    expect(status()).toBe(408);
    await until(() => appStats(app).inflight === 0 && clock.active === 0);
  });

  it('a body that came whole: the same one timer cuts a reply its client does not read (CANCEL)', async () => {
    const { app, clock, port, seen } = await serve();
    const s = session(port);
    const { stream } = upload(s, '/reply', 7);
    stream.pause();
    stream.end('{"a":1}');
    await until(() => seen.res !== null && seen.res.stream.writableLength > 0);
    // The request's deadline no longer holds a timer of its own until the stream closes.
    expect(clock.active).toBe(1);
    clock.tick(2000);
    await until(() => stream.closed);
    expect(stream.rstCode).toBe(constants.NGHTTP2_CANCEL);
    await until(() => seen.over.length === 1 && appStats(app).inflight === 0);
    expect(seen.over).toEqual([{ status: 200, finished: false }]);
    await until(() => clock.active === 0);
  });

  it('a streamed body: one timer, its own send watch (the watch of the stream waits)', async () => {
    const { app, clock, port, seen } = await serve();
    const s = session(port);
    const reply = s.request({ ':path': '/streamed' });
    reply.on('error', () => {});
    let body = '';
    reply.setEncoding('utf8');
    reply.on('data', (c: string) => {
      body += c;
    });
    await until(() => body === 's');
    // The body's watch checks every quarter period; the stream's own watch ticked beside it.
    expect(clock.active).toBe(1);
    clock.tick(300);
    expect(clock.active).toBe(1);
    // Over: the stream's watch takes it back (the tail of a reply it watches as before).
    seen.source!.push(null);
    await until(() => reply.closed);
    expect(body).toBe('s');
    await until(() => appStats(app).inflight === 0 && clock.active === 0);
  });

  it('an event stream: its queue has its own watch, the stream watch arms nothing meanwhile', async () => {
    const { app, clock, port } = await serve();
    const s = session(port);
    const events = s.request({ ':path': '/events' });
    events.on('error', () => {});
    let text = '';
    events.setEncoding('utf8');
    events.on('data', (c: string) => {
      text += c;
    });
    await until(() => text.includes('one'));
    // A GET has no request deadline; its queue is taken, so nothing waits and nothing is armed.
    expect(clock.active).toBe(0);
    events.close();
    await until(() => appStats(app).inflight === 0 && clock.active === 0);
  });
});
