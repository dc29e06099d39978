import { mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import type { Socket as ServerSocket } from 'node:net';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { appStats } from '../src/app';
import type { Context } from '../src/context';
import { ManualClock, settle, start, trackApps, until } from './helpers';

// A one-piece reply queued behind an earlier response of its connection (pipelining) was
// reported to onResponse as { status, finished: true } when it was ended, and never corrected
// when its connection closed before it was written: by the queued-replies cap, sendTimeout, or a
// client that left. It is reported once it finished, or as { status: 0, finished: false }.

const app = trackApps();
const closers: { destroy(): void }[] = [];
afterEach(() => {
  for (const c of closers.splice(0)) c.destroy();
});
const dir = realpathSync(mkdtempSync(join(tmpdir(), 'keel-report-queued-')));
const file = join(dir, 'small.txt');
writeFileSync(file, 'hello');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const REPLY = 'x'.repeat(32 * 1024);
const PAD = 'p'.repeat(8000);

interface Report {
  path: string;
  status: number;
  finished: boolean;
}

/**
 * An app whose `/hold` answers with an event stream that stays open (every later response of its
 * connection waits behind it), and small replies of each kind.
 */
function setup() {
  const clock = new ManualClock();
  const a = app({ clock, sendTimeout: 1000 });
  const reports: Report[] = [];
  const state = { handled: 0, socket: null as ServerSocket | null };
  a.onResponse((ctx: Context, { status, finished }) => {
    reports.push({ path: ctx.path, status, finished });
  });
  a.get('/hold', (ctx) => {
    state.socket = ctx.req.socket;
    ctx.sseStream().send(undefined, 'open');
  });
  const ran = (ctx: Context): void => {
    state.handled++;
    state.socket = ctx.req.socket;
  };
  a.get('/reply', (ctx) => {
    ran(ctx);
    return ctx.send(REPLY);
  });
  a.get('/small', (ctx) => {
    ran(ctx);
    return ctx.send('ok');
  });
  a.get('/bodiless', (ctx) => {
    ran(ctx);
    return ctx.setHeader('x-pad', PAD).status(204).send(null);
  });
  a.get('/file304', (ctx) => {
    ran(ctx);
    return ctx.setHeader('x-pad', PAD).status(304).sendFile(file);
  });
  a.get('/stream204', (ctx) => {
    ran(ctx);
    return ctx
      .setHeader('x-pad', PAD)
      .status(204)
      .send(Readable.from(['unused']));
  });
  a.get('/fileHead', (ctx) => {
    ran(ctx);
    return ctx.setHeader('x-pad', PAD).sendFile(file);
  });
  return { a, clock, reports, state };
}

function client(port: number): Socket {
  const socket = connect(port, '127.0.0.1');
  closers.push(socket);
  socket.on('error', () => {});
  return socket;
}

const get = (path: string, method = 'GET'): string =>
  `${method} ${path} HTTP/1.1\r\nHost: x\r\n\r\n`;

describe('onResponse for replies queued behind an earlier response', () => {
  it('dropped with their connection by the queued-replies cap: status 0, not finished', async () => {
    for (const [path, method] of [
      ['/reply', 'GET'],
      ['/bodiless', 'GET'],
      ['/file304', 'GET'],
      ['/stream204', 'GET'],
      ['/fileHead', 'HEAD'],
    ] as const) {
      const { a, reports, state } = setup();
      const { port } = await start(a);
      const socket = client(port);
      socket.pause();
      // Each reply waits behind the open stream; 4 MiB of them close the connection.
      socket.write(get('/hold') + get(path, method).repeat(1000));
      await until(() => state.socket?.destroyed === true && appStats(a).inflight === 0);
      await settle();
      expect(state.handled, path).toBeGreaterThan(100);
      const queued = reports.filter((r) => r.path === path);
      // Every request reported once; none of them was written.
      expect(queued.length, path).toBe(1000);
      expect(
        queued.filter((r) => r.status !== 0 || r.finished),
        path,
      ).toEqual([]);
      await a.close();
    }
  });

  it('its client leaves before it was written: status 0, not finished', async () => {
    const { a, reports, state } = setup();
    const { port } = await start(a);
    const socket = client(port);
    // Small replies: Node keeps reading the connection (it stops once 16 KiB of replies wait), so
    // it sees the client leave.
    socket.write(get('/hold') + get('/small').repeat(3));
    await until(() => state.handled === 3);
    socket.destroy();
    await until(() => reports.length === 4);
    await settle();
    expect(reports.filter((r) => r.path === '/small')).toEqual([
      { path: '/small', status: 0, finished: false },
      { path: '/small', status: 0, finished: false },
      { path: '/small', status: 0, finished: false },
    ]);
    expect(reports).toHaveLength(4);
  });

  it('a streamed body or a raw response still queued, not ended, when its client leaves: status 0', async () => {
    const { a, reports, state } = setup();
    const sources: Readable[] = [];
    a.get('/stream', (ctx) => {
      state.handled++;
      // A source that has not ended: the body is still being written into the queued response.
      const source = new Readable({ read() {} });
      source.push('first');
      sources.push(source);
      return ctx.send(source);
    });
    a.get('/raw', (ctx) => {
      state.handled++;
      ctx.res.writeHead(200, { 'content-type': 'text/plain' });
      ctx.res.write('first');
    });
    const { port } = await start(a);
    const socket = client(port);
    socket.write(get('/hold') + get('/stream') + get('/raw'));
    await until(() => state.handled === 2);
    await settle();
    socket.destroy();
    await until(() => reports.length === 3);
    await settle();
    // The order they close in is Node's.
    expect(
      reports.filter((r) => r.path !== '/hold').sort((x, y) => x.path.localeCompare(y.path)),
    ).toEqual([
      { path: '/raw', status: 0, finished: false },
      { path: '/stream', status: 0, finished: false },
    ]);
    expect(sources[0]!.destroyed).toBe(true);
  });

  for (const sendTimeout of [0, 1000]) {
    it(`an event stream queued behind another ends when its client leaves (sendTimeout ${sendTimeout})`, async () => {
      // Node emits no 'close' on a response queued behind another: with sendTimeout 0 nothing
      // ended such a stream, and its request stayed in flight (no onResponse) until app.close().
      const a = app({ clock: new ManualClock(), sendTimeout });
      const reports: Report[] = [];
      a.onResponse((ctx, { status, finished }) => {
        reports.push({ path: ctx.path, status, finished });
      });
      let opened = 0;
      a.get('/sse', (ctx) => {
        opened++;
        ctx.sseStream().send(undefined, 'x');
      });
      const { port } = await start(a);
      const socket = client(port);
      socket.write(get('/sse').repeat(2));
      await until(() => opened === 2);
      await settle();
      socket.destroy();
      await until(() => appStats(a).inflight === 0);
      expect(reports).toEqual([
        { path: '/sse', status: 200, finished: false },
        { path: '/sse', status: 0, finished: false },
      ]);
    });
  }

  it('an event stream queued behind another, ended by the server, then its client leaves', async () => {
    // Its ended tail waits behind the first stream; the connection closing must still end it.
    const a = app({ clock: new ManualClock(), sendTimeout: 1000 });
    const reports: Report[] = [];
    a.onResponse((ctx, { status, finished }) => {
      reports.push({ path: ctx.path, status, finished });
    });
    const streams: { close(): void }[] = [];
    a.get('/sse', (ctx) => {
      const stream = ctx.sseStream();
      stream.send(undefined, 'x');
      streams.push(stream);
    });
    const { port } = await start(a);
    const socket = client(port);
    socket.write(get('/sse').repeat(2));
    await until(() => streams.length === 2);
    await settle();
    streams[1]!.close();
    await settle();
    expect(appStats(a).inflight).toBe(2);
    socket.destroy();
    await until(() => appStats(a).inflight === 0);
    expect(reports).toEqual([
      { path: '/sse', status: 200, finished: false },
      { path: '/sse', status: 0, finished: false },
    ]);
  });

  it('ctx.signal of a request queued behind another aborts when its client leaves', async () => {
    // Node emits no 'close' on a response queued behind another: the signal never aborted, and a
    // handler waiting on it held its request until app.close().
    const { a, reports, state } = setup();
    let aborted = 0;
    a.get('/wait', async (ctx) => {
      state.handled++;
      const signal = ctx.signal;
      await new Promise((resolve) => signal.addEventListener('abort', resolve));
      aborted++;
    });
    const { port } = await start(a);
    const socket = client(port);
    socket.write(get('/hold') + get('/wait'));
    await until(() => state.handled === 1);
    await settle();
    socket.destroy();
    await until(() => aborted === 1 && appStats(a).inflight === 0);
    expect(reports.filter((r) => r.path === '/wait')).toEqual([
      { path: '/wait', status: 0, finished: false },
    ]);
  });

  it('written once the response before it ended: reported finished, once each', async () => {
    const clock = new ManualClock();
    const a = app({ clock, sendTimeout: 1000 });
    const reports: Report[] = [];
    a.onResponse((ctx, { status, finished }) => {
      reports.push({ path: ctx.path, status, finished });
    });
    let release: () => void = () => {};
    const first = new Promise<void>((resolve) => {
      release = resolve;
    });
    let handled = 0;
    a.get('/slow', async (ctx) => {
      ctx.res.writeHead(200, { 'content-type': 'text/plain' });
      ctx.res.write('a');
      await first;
      ctx.res.end('b');
    });
    a.get('/reply', (ctx) => {
      handled++;
      return ctx.send('ok');
    });
    const { port } = await start(a);
    const socket = client(port);
    let got = '';
    socket.setEncoding('latin1');
    socket.on('data', (c: string) => {
      got += c;
    });
    socket.write(get('/slow') + get('/reply').repeat(3));
    await until(() => handled === 3);
    await settle();
    // The replies wait behind /slow: not over yet.
    expect(reports.filter((r) => r.path === '/reply')).toEqual([]);
    release();
    await until(() => reports.length === 4);
    expect(reports).toEqual([
      { path: '/slow', status: 200, finished: true },
      { path: '/reply', status: 200, finished: true },
      { path: '/reply', status: 200, finished: true },
      { path: '/reply', status: 200, finished: true },
    ]);
    await until(() => got.split('HTTP/1.1 200').length === 5);
    // The connection's backlog watch ends at its next check.
    clock.tick(1000);
    expect(clock.active).toBe(0);
  });
});
