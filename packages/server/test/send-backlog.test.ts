import { mkdtempSync, realpathSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import type { Socket as ServerSocket } from 'node:net';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { appStats } from '../src/app';
import { ManualClock, settle, start, trackApps, until } from './helpers';

// Small replies (64 KiB or less) go to the socket in one `res.end`, with no timer of their own.
// A client that pipelines many requests and never reads leaves them queued: Node stops reading
// its requests only after parsing the whole chunk it got (one 64 KiB read holds 2000 GETs), and
// nothing ever times such a busy connection out, so the socket and every reply it queued stayed
// for ever. `sendTimeout` covers them: judged per connection, as for streamed bodies.

const app = trackApps();
// A real collection, so a test sees replies released, not merely unreferenced by keel.
setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
const closers: { destroy(): void }[] = [];
afterEach(() => {
  for (const c of closers.splice(0)) c.destroy();
});

const GET = 'GET /reply HTTP/1.1\r\nHost: x\r\n\r\n';
// Big enough for a few hundred replies to fill loopback's kernel buffers, small enough to be
// written in one piece.
const REPLY = 'x'.repeat(32 * 1024);
const dir = realpathSync(mkdtempSync(join(tmpdir(), 'keel-send-backlog-')));
const file = join(dir, 'small.txt');
writeFileSync(file, REPLY);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function setup(sendTimeout?: number) {
  const clock = new ManualClock();
  const a = app({ clock, sendTimeout });
  const seen = { handled: 0, socket: null as ServerSocket | null };
  a.get('/reply', (ctx) => {
    seen.handled++;
    seen.socket = ctx.req.socket;
    return ctx.send(REPLY);
  });
  // The handler's own small reply, written through ctx.res.
  a.get('/raw', (ctx) => {
    seen.handled++;
    seen.socket = ctx.req.socket;
    ctx.res.writeHead(200, { 'content-type': 'text/plain' });
    ctx.res.end(REPLY);
  });
  a.get('/file', async (ctx) => {
    seen.socket = ctx.req.socket;
    await ctx.sendFile(file);
    // Counted once ended, as a one-piece reply is: the next batch waits for all of them.
    seen.handled++;
  });
  return { a, clock, seen };
}

type Seen = { handled: number; socket: ServerSocket | null };

/**
 * Rounds of `until` (2 ms each, and what the checks cost) for the server to settle: a loaded
 * machine (a fresh clone's whole run on 2 cores) answers 96 small files slowly enough that the
 * default 2000 rounds ran out once. A bound on waiting, not on speed.
 */
const PATIENT = 15_000;

/** A client connection that reads nothing (until the test resumes it). */
function unread(port: number): Socket {
  const socket = connect(port, '127.0.0.1');
  closers.push(socket);
  socket.pause();
  socket.on('error', () => {});
  return socket;
}

/** Until the server has answered what it will and the connection is stalled. */
async function stalled(seen: Seen): Promise<void> {
  let before = -1;
  let same = 0;
  await until(() => {
    same = seen.handled === before ? same + 1 : 0;
    before = seen.handled;
    return same >= 10 && seen.socket !== null && seen.socket.writableLength > 0;
  }, PATIENT);
}

/**
 * Pipelines GETs in batches of 96 (3 MiB of replies, under the queue cap), each once the last was
 * answered and taken, until replies are left waiting: loopback's kernel buffers are full. Returns
 * the number sent (Node answers the rest of a batch once the client reads).
 */
async function fill(socket: Socket, seen: Seen, get = GET): Promise<number> {
  for (let sent = 96; ; sent += 96) {
    socket.write(get.repeat(96));
    let before = -1;
    let same = 0;
    await until(() => {
      same = seen.handled === before ? same + 1 : 0;
      before = seen.handled;
      return same >= 10;
    }, PATIENT);
    // Not all answered (Node stopped reading), or all answered but not all taken: stalled.
    if (seen.handled < sent || seen.socket!.writableLength > 0) {
      await stalled(seen);
      return sent;
    }
  }
}

// The waits (PATIENT) may run past vitest's 5 s default on a loaded machine.
describe('sendTimeout: small replies queued for a client that reads nothing', {
  timeout: 60_000,
}, () => {
  it('pipelined GETs never read: the connection is closed after sendTimeout', async () => {
    const { a, clock, seen } = setup(1000);
    const { port } = await start(a);
    await fill(unread(port), seen);
    // Every request is over already (one-piece replies are released when ended).
    expect(appStats(a).inflight).toBe(0);
    expect(seen.handled).toBeGreaterThan(100);
    clock.tick(900);
    expect(seen.socket!.destroyed).toBe(false);
    clock.tick(1000);
    expect(seen.socket!.destroyed).toBe(true);
    expect(clock.active).toBe(0);
  });

  it('onResponse: replies left waiting when the connection is closed are not finished', async () => {
    // They were reported { status: 200, finished: true } once ended, though the connection was
    // closed with them still queued (behind another reply, or in its socket's buffer).
    const { a, clock, seen } = setup(1000);
    const reports: { status: number; finished: boolean }[] = [];
    a.onResponse((_ctx, info) => {
      reports.push(info);
    });
    const { port } = await start(a);
    await fill(unread(port), seen);
    const waiting = reports.length;
    expect(waiting).toBeLessThan(seen.handled);
    clock.tick(2000);
    await until(() => seen.socket!.destroyed && reports.length === seen.handled);
    await settle();
    expect(reports).toHaveLength(seen.handled);
    // Those reported before the close had finished; none of the others did.
    expect(reports.slice(0, waiting).every((r) => r.finished && r.status === 200)).toBe(true);
    expect(reports.slice(waiting).filter((r) => r.finished)).toEqual([]);
    expect(clock.active).toBe(0);
  });

  it('the same for a small file (sendFile), sent in one piece too', async () => {
    const { a, clock, seen } = setup(1000);
    const { port } = await start(a);
    await fill(unread(port), seen, 'GET /file HTTP/1.1\r\nHost: x\r\n\r\n');
    await until(() => appStats(a).inflight === 0);
    clock.tick(900);
    expect(seen.socket!.destroyed).toBe(false);
    clock.tick(1000);
    expect(seen.socket!.destroyed).toBe(true);
    expect(clock.active).toBe(0);
  });

  it('the same for a small reply the handler ends through ctx.res itself', async () => {
    const { a, clock, seen } = setup(1000);
    const { port } = await start(a);
    await fill(unread(port), seen, 'GET /raw HTTP/1.1\r\nHost: x\r\n\r\n');
    await until(() => appStats(a).inflight === 0);
    clock.tick(900);
    expect(seen.socket!.destroyed).toBe(false);
    clock.tick(1000);
    expect(seen.socket!.destroyed).toBe(true);
    expect(clock.active).toBe(0);
  });

  it('a client that reads slowly but keeps moving is never cut, and gets every reply', async () => {
    const { a, clock, seen } = setup(1000);
    const { port } = await start(a);
    const socket = unread(port);
    // Replies to the last batch are sent once the client took the earlier ones.
    const n = await fill(socket, seen);
    const sock = seen.socket!;
    const delivered = (): number => sock.bytesWritten - sock.writableLength;
    let got = 0;
    let tail = '';
    let target = 0;
    let before = 0;
    const enough = (): boolean => got >= target && delivered() > before;
    socket.on('data', (chunk: Buffer) => {
      const text = tail + chunk.toString('latin1');
      got += text.split('HTTP/1.1 200 OK').length - 1;
      tail = text.slice(-16);
      if (enough()) socket.pause();
    });
    let steps = 0;
    while (got < n) {
      // Read a few replies and until the server saw a write complete, then let 700 ms of a
      // 1000 ms sendTimeout pass.
      before = delivered();
      target = got + 8;
      socket.resume();
      await until(() => got === n || enough());
      socket.pause();
      clock.tick(700);
      expect(sock.destroyed).toBe(false);
      steps++;
    }
    // The clock went past 1.25 sendTimeout (the latest a stalled client is cut) while it read.
    expect(steps).toBeGreaterThanOrEqual(2);
    expect(seen.handled).toBe(n);
    // All taken: nothing is left watching, and the keep-alive connection stays open.
    await until(() => sock.writableLength === 0);
    clock.tick(1000);
    expect(clock.active).toBe(0);
    expect(sock.destroyed).toBe(false);
  });

  it('a reply queued behind a slow handler is the server waiting, not the client', async () => {
    const clock = new ManualClock();
    const a = app({ clock, sendTimeout: 1000 });
    let release!: () => void;
    const slow = new Promise<void>((r) => {
      release = r;
    });
    let sock: ServerSocket | null = null;
    a.get('/slow', async (ctx) => {
      sock = ctx.req.socket;
      await slow;
      return ctx.send('slow');
    });
    a.get('/reply', (ctx) => ctx.send('fast'));
    const { port } = await start(a);
    const socket = connect(port, '127.0.0.1');
    closers.push(socket);
    let text = '';
    socket.on('data', (c: Buffer) => {
      text += c.toString('latin1');
    });
    socket.write(`GET /slow HTTP/1.1\r\nHost: x\r\n\r\n${GET}`);
    await until(() => sock !== null && appStats(a).inflight === 1);
    clock.tick(5000);
    expect(sock!.destroyed).toBe(false);
    release();
    await until(() => text.includes('fast'));
    expect(text.indexOf('slow')).toBeLessThan(text.indexOf('fast'));
    clock.tick(2000);
    expect(clock.active).toBe(0);
  });

  it('a client that reads arms no watch: the one-piece path stays timer-free', async () => {
    const clock = new ManualClock();
    let armed = 0;
    const arm = clock.setTimeout.bind(clock);
    clock.setTimeout = (fn, ms) => {
      armed++;
      return arm(fn, ms);
    };
    const a = app({ clock, sendTimeout: 1000 });
    a.get('/hello', (ctx) => ctx.json({ hello: 'world' }));
    a.get('/p/:id', (ctx) => ctx.json({ id: ctx.params.id }));
    const { port } = await start(a);
    const agent = new Agent({ keepAlive: true, maxSockets: 2 });
    closers.push(agent);
    const get = (path: string): Promise<void> =>
      new Promise((resolve, reject) => {
        request({ host: '127.0.0.1', port, path, agent }, (res) => {
          res.resume();
          res.on('end', resolve);
        })
          .on('error', reject)
          .end();
      });
    for (let i = 0; i < 50; i++) await Promise.all([get('/hello'), get('/p/1'), get('/p/2')]);
    expect(armed).toBe(0);
  });

  it('more than 4 MiB of replies queued on one connection: closed at once, replies let go', async () => {
    // One read of pipelined GETs is all run before Node stops reading: 2000 replies of 32 KiB,
    // 62 MiB, for a client that may never read. Past the cap the connection goes, and with it
    // every reply, where they were held until sendTimeout (or for ever with no timeout).
    const clock = new ManualClock();
    const a = app({ clock, sendTimeout: 1000 });
    let handled = 0;
    let closed = false;
    let reply: WeakRef<object> | null = null;
    a.get('/reply', (ctx) => {
      // Nothing here may hold the socket: its connection state holds the queued replies.
      if (handled === 0) ctx.req.socket.once('close', () => (closed = true));
      // One that waits behind another, under the cap.
      if (handled++ === 100) reply = new WeakRef(ctx.res);
      return ctx.send(REPLY);
    });
    const { port } = await start(a);
    unread(port).write(GET.repeat(2000));
    await until(() => closed && appStats(a).inflight === 0);
    expect(clock.active).toBe(0);
    await until(() => {
      gc();
      return reply!.deref() === undefined;
    });
  });

  it('replies over 64 KiB (sliced) count toward the 4 MiB cap too', async () => {
    // Sliced bodies (json / send over 64 KiB) queued behind another response were not counted:
    // 2048 pipelined GETs of a 70 KB reply each held a copy of the body (143 MB) until
    // sendTimeout, for a client that never reads.
    const clock = new ManualClock();
    const a = app({ clock, sendTimeout: 1000 });
    const big = 'y'.repeat(70_000);
    const memory = (): number => process.memoryUsage().arrayBuffers;
    gc();
    const base = memory();
    let peak = 0;
    let closed = false;
    a.get('/big', (ctx) => {
      if (peak === 0) ctx.req.socket.once('close', () => (closed = true));
      peak = Math.max(peak, memory() - base);
      return ctx.send(big);
    });
    const { port } = await start(a);
    unread(port).write('GET /big HTTP/1.1\r\nHost: x\r\n\r\n'.repeat(2048));
    await until(() => closed && appStats(a).inflight === 0);
    peak = Math.max(peak, memory() - base);
    // What the cap lets wait (4 MiB) and loopback's buffers, far below 2048 bodies.
    expect(peak).toBeLessThan(24 * 1024 * 1024);
    expect(clock.active).toBe(0);
  });

  it('requests of a read that follow the cap closing the connection run no handler', async () => {
    // Node hands every request of a parsed read to the app, even after the connection was
    // closed under it: 2000 handlers (a query each, in an app) ran for a client that was cut.
    const clock = new ManualClock();
    const a = app({ clock, sendTimeout: 1000 });
    let handled = 0;
    const statuses: number[] = [];
    a.onResponse((_ctx, { status }) => {
      statuses.push(status);
    });
    a.get('/reply', (ctx) => {
      handled++;
      return ctx.send(REPLY);
    });
    const { port } = await start(a);
    unread(port).write(GET.repeat(2048));
    // Every request is still reported once, those never run as status 0 (the client left).
    await until(() => statuses.length === 2048 && appStats(a).inflight === 0);
    // The cap is 4 MiB of 32 KiB replies: 128 wait, and a few more went to the socket.
    expect(handled).toBeLessThan(512);
    expect(statuses.filter((s) => s === 0).length).toBeGreaterThanOrEqual(2048 - handled);
    expect(clock.active).toBe(0);
  });

  it('a one-piece reply dropped by the cap is reported as not sent, not as finished', async () => {
    // The reply whose bytes took the queue over the cap closed the connection and was never
    // written, yet onResponse got { status: 200, finished: true } for it.
    for (const path of ['/reply', '/bodiless']) {
      const clock = new ManualClock();
      const a = app({ clock, sendTimeout: 1000 });
      let handled = 0;
      let socket: ServerSocket | undefined;
      const reports: { status: number; finished: boolean }[] = [];
      a.onResponse((_ctx, info) => {
        reports.push(info);
      });
      a.get('/reply', (ctx) => {
        handled++;
        socket = ctx.req.socket;
        return ctx.send(REPLY);
      });
      // 204s are tiny: the read's 2000 of them never reach the cap, so one reply first.
      a.get('/bodiless', (ctx) => {
        handled++;
        socket = ctx.req.socket;
        return ctx.setHeader('x-pad', 'p'.repeat(8000)).status(204).send(null);
      });
      const { port } = await start(a);
      unread(port).write(`GET ${path} HTTP/1.1\r\nHost: x\r\n\r\n`.repeat(2048));
      // Closed by the cap; the requests Node parsed before it are each reported once.
      await until(() => socket?.destroyed === true && appStats(a).inflight === 0);
      await settle();
      expect(handled).toBeGreaterThan(100);
      // Only the replies that got to the socket before it closed have their status; those that
      // waited behind them, and the one that went over the cap, were never written.
      expect(reports.filter((r) => r.status !== 0).length).toBeLessThan(handled - 100);
      expect(reports.filter((r) => r.status === 0 && r.finished)).toEqual([]);
      expect(clock.active).toBe(0);
    }
  });

  it('streamed bodies and files queued behind another count toward the cap (64 KiB each)', async () => {
    // Each queued file response had its file open and a 64 KiB chunk read: 2048 pipelined GETs
    // of a 200 KB file held 2000 descriptors and 270 MB until sendTimeout.
    const big = join(dir, 'big.bin');
    writeFileSync(big, Buffer.alloc(200_000, 1));
    for (const path of ['/file', '/stream', '/raw']) {
      const clock = new ManualClock();
      const a = app({ clock, sendTimeout: 1000 });
      let handled = 0;
      let closed = false;
      const first = (ctx: { req: { socket: ServerSocket } }): void => {
        if (handled++ === 0) ctx.req.socket.once('close', () => (closed = true));
      };
      a.get('/file', (ctx) => {
        first(ctx);
        return ctx.sendFile(big);
      });
      a.get('/stream', (ctx) => {
        first(ctx);
        return ctx.send(Readable.from([Buffer.alloc(50_000), Buffer.alloc(50_000)]));
      });
      a.get('/raw', (ctx) => {
        first(ctx);
        ctx.res.writeHead(200);
        ctx.res.end(Buffer.alloc(70_000));
      });
      const { port } = await start(a);
      unread(port).write(`GET ${path} HTTP/1.1\r\nHost: x\r\n\r\n`.repeat(2048));
      await until(() => closed && appStats(a).inflight === 0);
      // 4 MiB / 64 KiB: 64 wait, and a few more went to the socket. A file's handler returns
      // before it is counted (after its lookup), so all of them run; the files not counted in
      // time are not opened.
      if (path !== '/file') expect(handled, path).toBeLessThan(256);
      expect(clock.active, path).toBe(0);
    }
  });

  it('a small range of a large file counts as its window, not as 64 KiB', async () => {
    // Each was counted at 64 KiB before its file was opened: 100 pipelined 10-byte ranges (about
    // 30 KB of replies) took the queue over its 4 MiB cap and the connection was closed.
    const big = join(dir, 'big.bin');
    writeFileSync(big, Buffer.alloc(200_000, 1));
    const clock = new ManualClock();
    const a = app({ clock, sendTimeout: 1000 });
    let sent = 0;
    let closed = false;
    a.get('/file', async (ctx) => {
      if (sent === 0) ctx.req.socket.once('close', () => (closed = true));
      await ctx.sendFile(big);
      sent++;
    });
    const { port } = await start(a);
    const client = unread(port);
    let got = '';
    client.setEncoding('latin1');
    client.on('data', (c: string) => {
      got += c;
    });
    client.write('GET /file HTTP/1.1\r\nHost: x\r\nRange: bytes=10-19\r\n\r\n'.repeat(100));
    await until(() => sent === 100 || closed);
    expect(closed).toBe(false);
    client.resume();
    await until(() => got.split('HTTP/1.1 206 ').length === 101);
    expect(got).toContain('content-range: bytes 10-19/200000');
    expect(closed).toBe(false);
  });

  it('a small range with an If-Range that holds counts as its window too', async () => {
    // The count parsed Range again, with the conditions copied from sendFile, and took any
    // If-Range for the whole file: 100 pipelined 10-byte ranges resuming a download (If-Range:
    // the ETag) went over the cap as 64 KiB each. One decision serves the count and the send.
    const big = join(dir, 'big-if-range.bin');
    writeFileSync(big, Buffer.alloc(200_000, 1));
    const { size, mtimeMs } = statSync(big);
    const etag = `"${size.toString(16)}-${Math.floor(mtimeMs).toString(16)}"`;
    const clock = new ManualClock();
    const a = app({ clock, sendTimeout: 1000 });
    let sent = 0;
    let closed = false;
    a.get('/file', async (ctx) => {
      if (sent === 0) ctx.req.socket.once('close', () => (closed = true));
      await ctx.sendFile(big);
      sent++;
    });
    const { port } = await start(a);
    const client = unread(port);
    let got = '';
    client.setEncoding('latin1');
    client.on('data', (c: string) => {
      got += c;
    });
    client.write(
      `GET /file HTTP/1.1\r\nHost: x\r\nRange: bytes=10-19\r\nIf-Range: ${etag}\r\n\r\n`.repeat(
        100,
      ),
    );
    await until(() => sent === 100 || closed);
    expect(closed).toBe(false);
    client.resume();
    await until(() => got.split('HTTP/1.1 206 ').length === 101);
    expect(got).toContain('content-range: bytes 10-19/200000');
  });

  it('responses still being prepared when their connection closed (a file looked up, a handler awaiting) are not held', async () => {
    // A response queued behind another is closed with its connection by a listener on it; one
    // whose file was still being looked up when the connection closed came after that 'close':
    // nothing ever closed it, so its request, its open file and close() waited for ever.
    const big = join(dir, 'big.bin');
    writeFileSync(big, Buffer.alloc(200_000, 1));
    const clock = new ManualClock();
    const a = app({ clock, sendTimeout: 1000 });
    let files = 0;
    let reset!: () => void;
    const gone = new Promise<void>((r) => {
      reset = r;
    });
    a.get('/file', (ctx) => {
      files++;
      return ctx.sendFile(big);
    });
    // A stream answered once the connection is gone.
    a.get('/late', async (ctx) => {
      await gone;
      await new Promise((r) => setTimeout(r, 10));
      return ctx.send(Readable.from([Buffer.alloc(50_000)]));
    });
    // The connection goes while the files before it are looked up (as when a client resets).
    a.get('/reset', (ctx) => {
      ctx.req.socket.destroy();
      reset();
      return ctx.send('x');
    });
    const { port } = await start(a);
    const get = (path: string): string => `GET ${path} HTTP/1.1\r\nHost: x\r\n\r\n`;
    unread(port).write(get('/file').repeat(20) + get('/late') + get('/reset'));
    await until(() => files === 20);
    await until(() => appStats(a).inflight === 0);
    expect(clock.active).toBe(0);
  });

  it('replies to compress count toward the cap before they are compressed', async () => {
    // Compression runs off the loop, so the cap acted only once a reply was compressed: every
    // handler of the read ran and 2048 gzip jobs of 76 KB (6 s of the thread pool, +800 MB of
    // memory) were done for a client that reads nothing.
    const clock = new ManualClock();
    const a = app({ clock, sendTimeout: 1000, compression: true });
    const body = Array.from({ length: 7000 }, (_, i) => `item-${(i * 7919) % 100_003}`).join();
    let handled = 0;
    let closed = false;
    a.get('/c', (ctx) => {
      if (handled++ === 0) ctx.req.socket.once('close', () => (closed = true));
      return ctx.send(body);
    });
    const { port } = await start(a);
    unread(port).write('GET /c HTTP/1.1\r\nHost: x\r\nAccept-Encoding: gzip\r\n\r\n'.repeat(2048));
    await until(() => closed && appStats(a).inflight === 0, 20_000);
    // Counted by their uncompressed length: 4 MiB / 76 KB.
    expect(handled).toBeLessThan(256);
    expect(clock.active).toBe(0);
  });

  it('sendTimeout: 0 leaves the connection alone, with no timer', async () => {
    const { a, clock, seen } = setup(0);
    const { port } = await start(a);
    unread(port).write(GET.repeat(2000));
    await stalled(seen);
    clock.tick(10_000);
    expect(seen.socket!.destroyed).toBe(false);
    expect(clock.active).toBe(0);
  });
});
