import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { connect, type Socket } from 'node:net';
import { Readable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { appStats } from '../src/app';
import { watchSend, whenDone } from '../src/send-watch';
import { ManualClock, pausedGet, start, trackApps, until } from './helpers';

// `sendTimeout` must cut a client that stopped, never one that keeps reading, however its body
// is written: one huge chunk of a stream, the tail left queued after the end, or a response
// queued behind an earlier one on the same keep-alive connection.

const app = trackApps();
// More than loopback's kernel buffers hold, so a client that reads nothing leaves most queued.
const BIG = 32 * 1024 * 1024;
/** What the client reads between two clock steps: far less than BIG, more than one slice. */
const STEP = 256 * 1024;

const closers: { destroy(): void }[] = [];
afterEach(() => {
  for (const c of closers.splice(0)) c.destroy();
});

/**
 * Reads `from` in steps: each step reads at least STEP bytes and goes on until the server saw its
 * body move (`moved` grew: a socket write completed), then the clock goes on 600 ms
 * (sendTimeout is 1000) and `check` runs. A client that keeps reading, slowly, for many
 * periods. Resolves with the bytes read when `done`.
 */
async function readSlowly(
  from: Readable,
  clock: ManualClock,
  moved: () => number,
  done: () => boolean,
  check: () => void,
): Promise<number> {
  let got = 0;
  let target = 0;
  let before = 0;
  const enough = (): boolean => got >= target && moved() > before;
  from.on('data', (chunk: Buffer) => {
    got += chunk.byteLength;
    if (enough()) from.pause();
  });
  let steps = 0;
  while (!done()) {
    before = moved();
    target = got + STEP;
    from.resume();
    await until(() => done() || enough());
    from.pause();
    clock.tick(600);
    check();
    steps++;
  }
  // The clock went on past 1.25 sendTimeout (the latest a stalled client is cut) while the
  // client read. With one write of a huge chunk no write completes until the client took all of
  // it: one step. (A step reads what the kernel buffers hold, a few MiB on loopback.)
  expect(steps).toBeGreaterThanOrEqual(3);
  return got;
}

describe('sendTimeout: a stream whose source yields one huge chunk', () => {
  function setup() {
    const clock = new ManualClock();
    const a = app({ clock, sendTimeout: 1000 });
    const seen: { res: ServerResponse | null; drains: number } = { res: null, drains: 0 };
    const watch = (res: ServerResponse): void => {
      seen.res = res;
      res.on('drain', () => seen.drains++);
    };
    a.get('/node', (ctx) => {
      watch(ctx.res);
      return ctx.send(Readable.from([Buffer.alloc(BIG, 5)]));
    });
    a.get('/web', (ctx) => {
      watch(ctx.res);
      return ctx.send(
        new ReadableStream<Uint8Array>({
          start(controller) {
            controller.enqueue(new Uint8Array(BIG).fill(5));
            controller.close();
          },
        }),
      );
    });
    return { a, clock, seen };
  }

  for (const path of ['/node', '/web']) {
    it(`${path}: a client that keeps reading slowly gets all of it, never cut`, async () => {
      const { a, clock, seen } = setup();
      const { port } = await start(a);
      const res = await pausedGet(port, path, closers);
      await until(() => seen.res?.writableNeedDrain === true);
      let ended = false;
      let cut = false;
      res.on('end', () => {
        ended = true;
      });
      // The connection closed before the end (sendTimeout).
      res.on('error', () => {
        cut = true;
      });
      const got = await readSlowly(
        res,
        clock,
        () => seen.drains,
        () => ended || cut,
        () => expect(seen.res!.destroyed && !seen.res!.writableEnded).toBe(false),
      );
      expect(cut).toBe(false);
      expect(got).toBe(BIG);
      await until(() => appStats(a).inflight === 0);
      expect(clock.active).toBe(0);
    }, 60_000);
  }

  it('a client that reads none of it is cut off', async () => {
    const { a, clock, seen } = setup();
    const { port } = await start(a);
    await pausedGet(port, '/node', closers);
    await until(() => seen.res !== null && seen.res.writableLength > 0);
    // With one write of the whole chunk, the response was ended at once with it all queued.
    clock.tick(900);
    expect(seen.res!.destroyed).toBe(false);
    clock.tick(1000);
    expect(seen.res!.destroyed).toBe(true);
    await until(() => appStats(a).inflight === 0);
    expect(clock.active).toBe(0);
  });
});

describe('sendTimeout: the tail of an ended body', () => {
  it('a response ended with bytes still queued is cut when its client stops reading', async () => {
    const clock = new ManualClock();
    const a = app({ clock });
    let res: ServerResponse | null = null;
    let stop = (): void => {};
    a.get('/raw', (ctx) => {
      res = ctx.res;
      ctx.res.writeHead(200, { 'content-length': String(BIG) });
      ctx.res.end(Buffer.alloc(BIG, 9));
      stop = watchSend(ctx.res, { clock, ms: 1000 });
    });
    // Mounted on the app's handler in a server of its own: one that listen() starts slices a
    // large ctx.res.end() (and watches it itself), so the tail would never be queued whole.
    const server = createServer(a.handler);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    closers.push({ destroy: () => server.close() });
    const { port } = server.address() as AddressInfo;
    await pausedGet(port, '/raw', closers);
    await until(() => res?.writableEnded === true && res.socket !== null);
    expect(res!.writableNeedDrain).toBe(false);
    clock.tick(900);
    expect(res!.socket!.destroyed).toBe(false);
    clock.tick(1000);
    expect(res!.destroyed).toBe(true);
    await until(() => appStats(a).inflight === 0);
    // The connection's own watch (the tail was queued) ends with its 'close', which a server of
    // one's own may emit after the request was released.
    await until(() => clock.active === 0);
    stop();
  });
});

describe('whenDone: whether the response finished', () => {
  // Node emits 'finish' also when the connection is destroyed with the tail still queued (the
  // last write's callback gets the error): that must not count as finished.
  for (const who of ['sendTimeout', 'the client'] as const) {
    it(`false when ${who} cut the queued tail of an ended body`, async () => {
      const clock = new ManualClock();
      const a = app({ clock });
      let done: Promise<boolean> | null = null;
      let res: ServerResponse | null = null;
      a.get('/raw', (ctx) => {
        res = ctx.res;
        ctx.res.writeHead(200, { 'content-length': String(BIG) });
        ctx.res.end(Buffer.alloc(BIG, 9));
        if (who === 'sendTimeout') watchSend(ctx.res, { clock, ms: 1000 });
        done = whenDone(ctx.res);
      });
      const { port } = await start(a);
      const client = await pausedGet(port, '/raw', closers);
      await until(() => done !== null && res!.socket !== null);
      expect(res!.writableFinished).toBe(false);
      if (who === 'sendTimeout') clock.tick(2000);
      else client.destroy();
      expect(await done).toBe(false);
      await until(() => appStats(a).inflight === 0);
    });
  }

  it('true when the body was taken', async () => {
    const a = app();
    let done: Promise<boolean> | null = null;
    a.get('/raw', (ctx) => {
      ctx.res.writeHead(200, { 'content-length': String(BIG) });
      ctx.res.end(Buffer.alloc(BIG, 9));
      done = whenDone(ctx.res);
    });
    const { port } = await start(a);
    const client = await pausedGet(port, '/raw', closers);
    client.resume();
    await new Promise((resolve) => client.on('end', resolve));
    expect(await done).toBe(true);
  });
});

describe('sendTimeout: pipelined responses on one keep-alive connection', () => {
  const BODY = 16 * 1024 * 1024;
  const CHUNK = Buffer.alloc(64 * 1024, 1);

  it('a response queued behind one still moving is not cut while the connection moves', async () => {
    const clock = new ManualClock();
    const a = app({ clock, sendTimeout: 1000 });
    const responses: ServerResponse[] = [];
    let drains = 0;
    a.get('/body/:n', (ctx) => {
      responses.push(ctx.res);
      ctx.res.on('drain', () => drains++);
      let left = BODY / CHUNK.byteLength;
      return ctx.send(
        new Readable({
          read() {
            this.push(left-- > 0 ? CHUNK : null);
          },
        }),
      );
    });
    const { port } = await start(a);
    const socket: Socket = connect(port, '127.0.0.1');
    closers.push(socket);
    socket.pause();
    socket.write('GET /body/1 HTTP/1.1\r\nHost: x\r\n\r\nGET /body/2 HTTP/1.1\r\nHost: x\r\n\r\n');
    // Both requests are running: the second one's body is queued behind the first's.
    await until(() => responses.length === 2 && responses[1]!.writableNeedDrain);
    expect(responses[1]!.socket).toBe(null);
    // Each chunked body ends with a zero-size chunk; the 1-filled bodies hold no other `0\r\n`.
    let tail = '';
    let ends = 0;
    socket.on('data', (chunk: Buffer) => {
      const text = tail + chunk.toString('latin1');
      ends += text.split('\r\n0\r\n\r\n').length - 1;
      tail = text.slice(-6);
    });
    const got = await readSlowly(
      socket,
      clock,
      () => drains,
      () => ends === 2,
      // The connection is never closed (the first response is destroyed once it finished).
      () => expect(responses[0]!.req.socket.destroyed).toBe(false),
    );
    expect(got).toBeGreaterThan(2 * BODY);
    expect(socket.destroyed).toBe(false);
    await until(() => appStats(a).inflight === 0);
    expect(clock.active).toBe(0);
  }, 60_000);
});

describe('sendTimeout: a response ended while queued behind a stalled one', () => {
  // The second response of a pipelined pair is ended while all of it is still queued behind the
  // first, which the client never reads: `res.end()` was called, 'finish' never comes, and the
  // watcher cuts the connection. It was not completed; and Node emits no 'close' on a response
  // that never got its socket, so the request must still end.
  const BODY = 16 * 1024 * 1024;

  it('is over (inflight 0) and onResponse reports finished: false', async () => {
    const clock = new ManualClock();
    const a = app({ clock, sendTimeout: 1000 });
    const responses: ServerResponse[] = [];
    const infos: { path: string; status: number; finished: boolean }[] = [];
    a.onResponse((ctx, info) => {
      infos.push({ path: ctx.path, status: info.status, finished: info.finished });
    });
    a.get('/big', (ctx) => {
      responses.push(ctx.res);
      return ctx.send(Buffer.alloc(BODY, 1));
    });
    a.get('/small', (ctx) => {
      responses.push(ctx.res);
      return ctx.send(Readable.from([Buffer.alloc(1000, 2)]));
    });
    const { port } = await start(a);
    const socket: Socket = connect(port, '127.0.0.1');
    closers.push(socket);
    socket.pause();
    socket.on('error', () => {});
    socket.write('GET /big HTTP/1.1\r\nHost: x\r\n\r\nGET /small HTTP/1.1\r\nHost: x\r\n\r\n');
    await until(() => responses.length === 2 && responses[1]!.writableEnded);
    expect(responses[1]!.socket).toBe(null);
    expect(responses[1]!.writableFinished).toBe(false);
    clock.tick(2000);
    await until(() => appStats(a).inflight === 0);
    // Both were cut by the same check; the order they close in is Node's. Nothing of /small was
    // written (it never got the socket): status 0, as for any response its client left before.
    expect(infos.sort((x, y) => x.path.localeCompare(y.path))).toEqual([
      { path: '/big', status: 200, finished: false },
      { path: '/small', status: 0, finished: false },
    ]);
    expect(clock.active).toBe(0);
  });
});

describe('a response queued behind another when its client leaves', () => {
  // Node emits 'close' only on a response that got its socket: one still queued behind an
  // earlier response of a pipelined pair gets none when the connection closes, so a streamed
  // body waiting on it held its request in flight for ever.
  const BODY = 16 * 1024 * 1024;

  for (const sendTimeout of [0, 1000]) {
    it(`is over, not finished (sendTimeout ${sendTimeout})`, async () => {
      const clock = new ManualClock();
      const a = app({ clock, sendTimeout });
      const responses: ServerResponse[] = [];
      const infos: { path: string; finished: boolean }[] = [];
      a.onResponse((ctx, info) => {
        infos.push({ path: ctx.path, finished: info.finished });
      });
      a.get('/big', (ctx) => {
        responses.push(ctx.res);
        return ctx.send(Buffer.alloc(BODY, 1));
      });
      a.get('/small', (ctx) => {
        responses.push(ctx.res);
        return ctx.send(Readable.from([Buffer.alloc(1000, 2)]));
      });
      const { port } = await start(a);
      const socket: Socket = connect(port, '127.0.0.1');
      closers.push(socket);
      socket.pause();
      socket.on('error', () => {});
      socket.write('GET /big HTTP/1.1\r\nHost: x\r\n\r\nGET /small HTTP/1.1\r\nHost: x\r\n\r\n');
      await until(() => responses.length === 2 && responses[1]!.writableEnded);
      expect(responses[1]!.socket).toBe(null);
      socket.destroy();
      await until(() => appStats(a).inflight === 0);
      expect(infos.sort((x, y) => x.path.localeCompare(y.path))).toEqual([
        { path: '/big', finished: false },
        { path: '/small', finished: false },
      ]);
      expect(clock.active).toBe(0);
    });
  }
});

describe('a response the handler writes itself (ctx.res)', () => {
  it('ended after the chain returned, its tail cut by the client: finished: false', async () => {
    const a = app();
    const infos: boolean[] = [];
    a.onResponse((_ctx, info) => {
      infos.push(info.finished);
    });
    let res: ServerResponse | null = null;
    a.get('/raw', (ctx) => {
      res = ctx.res;
      ctx.res.writeHead(200, { 'content-length': String(BIG) });
      ctx.res.flushHeaders();
    });
    const { port } = await start(a);
    const client = await pausedGet(port, '/raw', closers);
    res!.end(Buffer.alloc(BIG, 3));
    expect(res!.writableFinished).toBe(false);
    client.destroy();
    await until(() => appStats(a).inflight === 0);
    expect(infos).toEqual([false]);
  });

  it('queued behind another when its client leaves: the request is over', async () => {
    const a = app({ sendTimeout: 0 });
    const infos: { path: string; finished: boolean }[] = [];
    a.onResponse((ctx, info) => {
      infos.push({ path: ctx.path, finished: info.finished });
    });
    const responses: ServerResponse[] = [];
    a.get('/big', (ctx) => {
      responses.push(ctx.res);
      return ctx.send(Buffer.alloc(16 * 1024 * 1024, 1));
    });
    a.get('/raw', (ctx) => {
      responses.push(ctx.res);
      ctx.res.writeHead(200, { 'content-type': 'text/plain' });
      ctx.res.write('part of it');
    });
    const { port } = await start(a);
    const socket: Socket = connect(port, '127.0.0.1');
    closers.push(socket);
    socket.pause();
    socket.on('error', () => {});
    socket.write('GET /big HTTP/1.1\r\nHost: x\r\n\r\nGET /raw HTTP/1.1\r\nHost: x\r\n\r\n');
    await until(() => responses.length === 2 && appStats(a).inflight === 2);
    expect(responses[1]!.socket).toBe(null);
    socket.destroy();
    await until(() => appStats(a).inflight === 0);
    expect(infos.sort((x, y) => x.path.localeCompare(y.path))).toEqual([
      { path: '/big', finished: false },
      { path: '/raw', finished: false },
    ]);
  });

  it('a long keep-alive connection of raw responses gathers no listeners', async () => {
    const a = app();
    let socket: Socket | null = null;
    a.get('/raw', (ctx) => {
      socket = ctx.req.socket;
      ctx.res.writeHead(200, { 'content-length': '2' });
      ctx.res.write('o');
      setImmediate(() => ctx.res.end('k'));
    });
    const { port } = await start(a);
    const client: Socket = connect(port, '127.0.0.1');
    closers.push(client);
    let got = '';
    client.on('data', (chunk: Buffer) => {
      got += chunk.toString('latin1');
    });
    // Pipelined, so all but the first are queued when their handler returns.
    client.write('GET /raw HTTP/1.1\r\nHost: x\r\n\r\n'.repeat(20));
    await until(() => got.split('\r\n\r\nok').length === 21);
    await until(() => appStats(a).inflight === 0);
    expect(socket!.listenerCount('close')).toBeLessThan(5);
  });
});
