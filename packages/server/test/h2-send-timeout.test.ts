// `sendTimeout` on an HTTP/2 server given to `app.attach()`: an Http2ServerResponse has no
// `writableNeedDrain`, so a stream whose client stopped reading (flow control holds its bytes)
// was never judged waiting, and held its file, source or buffers for ever. Progress is judged per
// stream (other streams of the session may move), and a stall resets that stream only
// (RST_STREAM CANCEL): the session goes on serving. Real `node:http2` clients on loopback, the
// injected clock for time.

import {
  mkdtempSync,
  readdirSync,
  readlinkSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import type { ServerResponse } from 'node:http';
import {
  type ClientHttp2Session,
  type ClientHttp2Stream,
  constants,
  createServer as createHttp2Server,
  type Http2Server,
  type Http2ServerResponse,
} from 'node:http2';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { appStats } from '../src/app';
import { type App, createApp } from '../src/index';
import { fetchText, h2Fixture } from './h2-helpers';
import { ManualClock, until } from './helpers';

const dir = realpathSync(mkdtempSync(join(tmpdir(), 'keel-h2-send-timeout-')));
const big = join(dir, 'big.bin');
writeFileSync(big, Buffer.alloc(8 * 1024 * 1024, 7));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const { apps, listen, connect } = h2Fixture();

/** File descriptors of this process open on `path` (Linux /proc). */
function openFds(path: string): number {
  let n = 0;
  for (const fd of readdirSync('/proc/self/fd')) {
    try {
      if (readlinkSync(`/proc/self/fd/${fd}`) === path) n++;
    } catch {
      // closed meanwhile
    }
  }
  return n;
}

interface Seen {
  res: Http2ServerResponse | null;
  source: Readable | null;
  settled: boolean;
  over: { status: number; finished: boolean }[];
}

async function serve(
  sendTimeout: number,
): Promise<{ app: App; clock: ManualClock; port: number; seen: Seen }> {
  const clock = new ManualClock();
  // keepAliveTimeout off: no idle-session timer (h2-idle-session.test.ts) among those counted.
  const app = createApp({ clock, sendTimeout, keepAliveTimeout: 0 });
  apps.push(app);
  const seen: Seen = { res: null, source: null, settled: false, over: [] };
  const note = (res: ServerResponse): void => {
    seen.res = res as unknown as Http2ServerResponse;
  };
  app.onResponse((_ctx, info) => {
    seen.over.push({ status: info.status, finished: info.finished });
  });
  app.get('/file', async (ctx) => {
    note(ctx.res);
    await ctx.sendFile(big);
    seen.settled = true;
  });
  app.get('/json', (ctx) => {
    note(ctx.res);
    return ctx.json({ text: 'x'.repeat(4 * 1024 * 1024) });
  });
  app.get('/stream', async (ctx) => {
    note(ctx.res);
    const chunk = Buffer.alloc(64 * 1024, 1);
    seen.source = new Readable({
      read() {
        this.push(chunk);
      },
    });
    await ctx.send(seen.source);
    seen.settled = true;
  });
  app.get('/events', (ctx) => {
    note(ctx.res);
    const stream = ctx.sseStream();
    // 1 MiB of events in 1 KiB frames: far over the stream's window and its high-water mark.
    const data = 'e'.repeat(1000);
    for (let i = 0; i < 1024; i++) stream.send('tick', data);
  });
  app.get('/small', (ctx) => ctx.send('ok'));
  // 60 KiB: written in one piece (no slices), more than a stalled stream's window takes.
  app.get('/reply', (ctx) => {
    note(ctx.res);
    return ctx.send('r'.repeat(60 * 1024));
  });
  // The handler writes through ctx.res itself, and leaves it open.
  app.get('/raw', (ctx) => {
    note(ctx.res);
    ctx.res.writeHead(200, { 'content-type': 'text/plain' });
    const chunk = Buffer.alloc(16 * 1024, 2);
    for (let i = 0; i < 8; i++) ctx.res.write(chunk);
  });
  const server: Http2Server = createHttp2Server(app.handler as never);
  const port = await listen(app, server);
  return { app, clock, port, seen };
}

/** A session whose streams get a small window: one that is not read stalls at once. */
function session(port: number): ClientHttp2Session {
  return connect(`http://127.0.0.1:${port}`, { settings: { initialWindowSize: 4096 } });
}

/** A request whose response the client never reads. */
function stalled(s: ClientHttp2Session, path: string): ClientHttp2Stream {
  const stream = s.request({ ':path': path });
  stream.on('error', () => {});
  stream.pause();
  return stream;
}

/** The server stream behind the response: its own queue is what waits for the client. */
function streamOf(seen: Seen) {
  return seen.res!.stream;
}

describe('sendTimeout on an attached HTTP/2 server', () => {
  it('sendFile to a stream that reads nothing: that stream is reset, the file released, the session serves on', async () => {
    const { app, clock, port, seen } = await serve(1000);
    const s = session(port);
    const client = stalled(s, '/file');
    await until(() => seen.res !== null && streamOf(seen).writableNeedDrain);
    expect(openFds(big)).toBe(1);
    clock.tick(900);
    expect(streamOf(seen).destroyed).toBe(false);
    clock.tick(1000);
    expect(streamOf(seen).destroyed).toBe(true);
    await until(() => client.closed);
    expect(client.rstCode).toBe(constants.NGHTTP2_CANCEL);
    await until(() => seen.settled && openFds(big) === 0);
    await until(() => appStats(app).inflight === 0);
    expect(seen.over).toEqual([{ status: 200, finished: false }]);
    // Only the stream: the session still answers.
    expect(s.destroyed).toBe(false);
    expect(await fetchText(s, '/small')).toBe('ok');
    expect(clock.active).toBe(0);
  });

  it('a big JSON reply to a stream that reads nothing: reset, its buffers let go', async () => {
    const { app, clock, port, seen } = await serve(1000);
    const s = session(port);
    const client = stalled(s, '/json');
    await until(() => seen.res !== null && streamOf(seen).writableNeedDrain);
    clock.tick(2000);
    await until(() => client.closed);
    expect(client.rstCode).toBe(constants.NGHTTP2_CANCEL);
    await until(() => appStats(app).inflight === 0);
    expect(seen.over).toEqual([{ status: 200, finished: false }]);
    expect(await fetchText(s, '/small')).toBe('ok');
    expect(clock.active).toBe(0);
  });

  it('ctx.send(stream) to a stream that reads nothing: reset, the source destroyed', async () => {
    const { app, clock, port, seen } = await serve(1000);
    const s = session(port);
    const client = stalled(s, '/stream');
    await until(() => seen.res !== null && streamOf(seen).writableNeedDrain);
    clock.tick(2000);
    await until(() => client.closed && seen.settled && seen.source!.destroyed);
    expect(client.rstCode).toBe(constants.NGHTTP2_CANCEL);
    await until(() => appStats(app).inflight === 0);
    expect(await fetchText(s, '/small')).toBe('ok');
    expect(clock.active).toBe(0);
  });

  it('an event stream that reads nothing: reset as too slow', async () => {
    const { app, clock, port, seen } = await serve(1000);
    const s = session(port);
    const client = stalled(s, '/events');
    await until(() => seen.res !== null && streamOf(seen).writableNeedDrain);
    clock.tick(2000);
    await until(() => client.closed);
    expect(client.rstCode).toBe(constants.NGHTTP2_CANCEL);
    await until(() => appStats(app).inflight === 0);
    expect(await fetchText(s, '/small')).toBe('ok');
    expect(clock.active).toBe(0);
  });

  it('is judged per stream: a stalled stream is reset while another of its session keeps moving', async () => {
    const { app, clock, port, seen } = await serve(1000);
    const s = session(port);
    const client = stalled(s, '/file');
    await until(() => seen.res !== null && streamOf(seen).writableNeedDrain);
    const first = seen.res;
    // The session delivers another response each period: the stalled stream is still cut.
    for (let i = 0; i < 4 && !client.closed; i++) {
      expect(await fetchText(s, '/small')).toBe('ok');
      clock.tick(500);
    }
    await until(() => client.closed);
    expect(first!.stream.destroyed).toBe(true);
    expect(client.rstCode).toBe(constants.NGHTTP2_CANCEL);
    await until(() => appStats(app).inflight === 0);
    expect(clock.active).toBe(0);
  });

  it('a stream that keeps taking the body, however slowly, is not cut', async () => {
    const { app, clock, port, seen } = await serve(1000);
    const s = session(port);
    const client = stalled(s, '/file');
    await until(() => seen.res !== null && streamOf(seen).writableNeedDrain);
    const res = seen.res!;
    // Three times, 800 ms into the period, the client takes something, then stalls again.
    for (let i = 0; i < 3; i++) {
      clock.tick(800);
      const before = (res.stream as unknown as { writableLength: number }).writableLength;
      let took = 0;
      const onData = (c: Buffer): void => {
        took += c.byteLength;
        if (took >= 128 * 1024) client.pause();
      };
      client.on('data', onData);
      client.resume();
      await until(() => took >= 128 * 1024);
      client.off('data', onData);
      client.pause();
      await until(() => streamOf(seen).writableNeedDrain);
      expect(before).toBeGreaterThan(0);
    }
    expect(res.stream.destroyed).toBe(false);
    expect(client.closed).toBe(false);
    // Then it stops for good: cut.
    clock.tick(2000);
    await until(() => client.closed);
    expect(client.rstCode).toBe(constants.NGHTTP2_CANCEL);
    await until(() => appStats(app).inflight === 0);
    expect(clock.active).toBe(0);
  });

  it('a body the client reads whole is reported finished (HTTP/2 finishes a response once its stream closed)', async () => {
    const { app, port, seen } = await serve(1000);
    const s = session(port);
    const file = await fetchText(s, '/file');
    expect(file.length).toBe(8 * 1024 * 1024);
    const json = await fetchText(s, '/json');
    expect(json.length).toBe(4 * 1024 * 1024 + '{"text":""}'.length);
    await until(() => appStats(app).inflight === 0 && seen.over.length === 2);
    expect(seen.over).toEqual([
      { status: 200, finished: true },
      { status: 200, finished: true },
    ]);
  });

  it('a client that resets its stream mid-body: reported unfinished, nothing thrown', async () => {
    const { app, port, seen } = await serve(1000);
    const s = session(port);
    for (const path of ['/file', '/json', '/stream']) {
      const client = stalled(s, path);
      await until(() => seen.res !== null && streamOf(seen).writableNeedDrain);
      client.close(constants.NGHTTP2_CANCEL);
      await until(() => appStats(app).inflight === 0);
      seen.res = null;
    }
    await until(() => seen.over.length === 3);
    expect(seen.over).toEqual(Array(3).fill({ status: 200, finished: false }));
    expect(await fetchText(s, '/small')).toBe('ok');
  });

  it('one-piece replies left on streams that read nothing are cut too: a session cannot pin them', async () => {
    const { app, clock, port, seen } = await serve(1000);
    const s = session(port);
    const clients: ClientHttp2Stream[] = [];
    for (let i = 0; i < 20; i++) clients.push(stalled(s, '/reply'));
    await until(() => seen.over.length === 20 || appStats(app).inflight === 0);
    await until(() => seen.res !== null && seen.res.stream.writableLength > 0);
    clock.tick(2000);
    await until(() => clients.every((c) => c.closed));
    for (const c of clients) expect(c.rstCode).toBe(constants.NGHTTP2_CANCEL);
    await until(() => seen.over.length === 20);
    expect(seen.over).toEqual(Array(20).fill({ status: 200, finished: false }));
    expect(await fetchText(s, '/small')).toBe('ok');
    expect(clock.active).toBe(0);
  });

  it('a response the handler writes through ctx.res, to a stream that reads nothing: cut', async () => {
    const { app, clock, port, seen } = await serve(1000);
    const s = session(port);
    const client = stalled(s, '/raw');
    await until(() => seen.res !== null && streamOf(seen).writableNeedDrain);
    clock.tick(2000);
    await until(() => client.closed);
    expect(client.rstCode).toBe(constants.NGHTTP2_CANCEL);
    await until(() => appStats(app).inflight === 0);
    expect(clock.active).toBe(0);
  });

  it('a one-piece reply its client reads is reported finished, and leaves no timer', async () => {
    const { app, clock, port, seen } = await serve(1000);
    const s = session(port);
    expect((await fetchText(s, '/reply')).length).toBe(60 * 1024);
    await until(() => seen.over.length === 1 && appStats(app).inflight === 0);
    expect(seen.over).toEqual([{ status: 200, finished: true }]);
    await until(() => clock.active === 0);
  });
});
