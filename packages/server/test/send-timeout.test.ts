import {
  mkdtempSync,
  readdirSync,
  readlinkSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { type ClientRequest, type IncomingMessage, request, type ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { appStats } from '../src/app';
import { createApp } from '../src/index';
import { ManualClock, pausedGet, raw, settle, start, trackApps, until } from './helpers';

// A client that takes a large body slowly (or never) must not hold the connection and the
// file forever: `sendTimeout` ends a response body the client has taken nothing of for that long.

const app = trackApps();
const dir = realpathSync(mkdtempSync(join(tmpdir(), 'keel-send-timeout-')));
const big = join(dir, 'big.bin');
// Large enough that loopback's kernel buffers (a few MiB) cannot hold it while the client stalls.
writeFileSync(big, Buffer.alloc(64 * 1024 * 1024, 7));

afterAll(() => rmSync(dir, { recursive: true, force: true }));

// A real collection, so a test sees a body released, not merely unreferenced by keel.
setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

const requests: ClientRequest[] = [];
afterEach(() => {
  for (const r of requests.splice(0)) r.destroy();
});

/**
 * Twice, 800 ms into a 1000 ms sendTimeout, the client reads until the server's buffer drains
 * once, then stalls again: progress in time, so the response must still be open.
 */
async function takeSomeInTime(
  client: IncomingMessage,
  res: ServerResponse,
  clock: ManualClock,
): Promise<void> {
  for (let i = 0; i < 2; i++) {
    clock.tick(800);
    const drained = new Promise((r) => res.once('drain', r));
    client.resume();
    await drained;
    client.pause();
    await until(() => res.writableNeedDrain || res.writableFinished);
    expect(res.writableFinished).toBe(false);
  }
  expect(res.destroyed).toBe(false);
}

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

function setup(sendTimeout?: number) {
  const clock = new ManualClock();
  const a = app({ clock, sendTimeout });
  const seen: { res: ServerResponse | null; source: Readable | null; settled: boolean } = {
    res: null,
    source: null,
    settled: false,
  };
  a.get('/file', async (ctx) => {
    seen.res = ctx.res;
    await ctx.sendFile(big);
    seen.settled = true;
  });
  a.get('/stream', async (ctx) => {
    seen.res = ctx.res;
    const chunk = Buffer.alloc(64 * 1024, 1);
    seen.source = new Readable({
      read() {
        this.push(chunk);
      },
    });
    await ctx.send(seen.source);
    seen.settled = true;
  });
  return { a, clock, seen };
}

describe('sendTimeout: a body the client stops taking', () => {
  it('sendFile to a client that reads nothing: the connection is closed and the file released', async () => {
    const { a, clock, seen } = setup(1000);
    const { port } = await start(a);
    await pausedGet(port, '/file', requests);
    await until(() => seen.res?.writableNeedDrain === true);
    expect(openFds(big)).toBe(1);
    clock.tick(900);
    expect(seen.res!.destroyed).toBe(false);
    clock.tick(1000);
    expect(seen.res!.destroyed).toBe(true);
    await until(() => seen.settled && openFds(big) === 0);
    await until(() => appStats(a).inflight === 0);
    expect(clock.active).toBe(0);
    expect(seen.res!.listenerCount('drain')).toBe(0);
  });

  it('ctx.send(stream) to a client that reads nothing: closed, the source destroyed', async () => {
    const { a, clock, seen } = setup(1000);
    const { port } = await start(a);
    await pausedGet(port, '/stream', requests);
    await until(() => seen.res?.writableNeedDrain === true);
    clock.tick(2000);
    expect(seen.res!.destroyed).toBe(true);
    await until(() => seen.settled && seen.source!.destroyed);
    await until(() => appStats(a).inflight === 0);
    expect(clock.active).toBe(0);
  });

  it('ctx.send(web ReadableStream) to a client that reads nothing: closed, the source cancelled', async () => {
    const clock = new ManualClock();
    const a = app({ clock, sendTimeout: 1000 });
    let cancelled = false;
    let res: ServerResponse | null = null;
    a.get('/web', (ctx) => {
      res = ctx.res;
      const chunk = new Uint8Array(64 * 1024);
      return ctx.send(
        new ReadableStream<Uint8Array>({
          pull(controller) {
            controller.enqueue(chunk);
          },
          cancel() {
            cancelled = true;
          },
        }),
      );
    });
    const { port } = await start(a);
    await pausedGet(port, '/web', requests);
    await until(() => res?.writableNeedDrain === true);
    clock.tick(2000);
    expect(res!.destroyed).toBe(true);
    await until(() => cancelled);
    await until(() => appStats(a).inflight === 0);
    expect(clock.active).toBe(0);
  });

  it('a client that takes some of the body in time is not cut off', async () => {
    const { a, clock, seen } = setup(1000);
    const { port } = await start(a);
    const res = await pausedGet(port, '/file', requests);
    await until(() => seen.res?.writableNeedDrain === true);
    await takeSomeInTime(res, seen.res!, clock);
    // Then it stops for good.
    clock.tick(2000);
    expect(seen.res!.destroyed).toBe(true);
    await until(() => openFds(big) === 0);
  });

  it('a slow source is not the client: an idle stream with nothing queued is never cut', async () => {
    const clock = new ManualClock();
    const a = app({ clock, sendTimeout: 1000 });
    const source = new Readable({ read() {} });
    let res: ServerResponse | null = null;
    a.get('/slow', (ctx) => {
      res = ctx.res;
      return ctx.send(source);
    });
    const { port } = await start(a);
    const body = new Promise<string>((resolve) => {
      const req = request({ host: '127.0.0.1', port, path: '/slow', agent: false }, (r) => {
        let text = '';
        r.setEncoding('utf8');
        r.on('data', (c: string) => {
          text += c;
        });
        r.on('end', () => resolve(text));
      });
      requests.push(req);
      req.end();
    });
    source.push('first ');
    await until(() => res !== null);
    clock.tick(10_000);
    expect(res!.destroyed).toBe(false);
    source.push('last');
    source.push(null);
    expect(await body).toBe('first last');
    await until(() => appStats(a).inflight === 0);
    expect(clock.active).toBe(0);
  });

  it('sendTimeout: 0 turns it off', async () => {
    const { a, clock, seen } = setup(0);
    const { port } = await start(a);
    await pausedGet(port, '/file', requests);
    await until(() => seen.res?.writableNeedDrain === true);
    clock.tick(10 * 60_000);
    expect(seen.res!.destroyed).toBe(false);
    expect(clock.active).toBe(0);
  });

  it('defaults to 60 s, and checks the option', async () => {
    const { a, clock, seen } = setup();
    const { port } = await start(a);
    await pausedGet(port, '/file', requests);
    await until(() => seen.res?.writableNeedDrain === true);
    clock.tick(59_000);
    expect(seen.res!.destroyed).toBe(false);
    clock.tick(30_000);
    expect(seen.res!.destroyed).toBe(true);
    expect(() => createApp({ sendTimeout: -1 })).toThrow(RangeError);
    expect(() => createApp({ sendTimeout: '5' as never })).toThrow(TypeError);
    expect(() => createApp({ sendTimeout: 2 ** 31 })).toThrow(/sendTimeout/);
  });
});

describe('sendTimeout: a large buffered reply (json, send of a string or bytes)', () => {
  // More than loopback's kernel buffers hold, so a client that reads nothing leaves most queued.
  const BIG = 32 * 1024 * 1024;

  function setupBuffered(sendTimeout?: number) {
    const clock = new ManualClock();
    const a = app({ clock, sendTimeout });
    const seen: { res: ServerResponse | null; body: WeakRef<Buffer> | null } = {
      res: null,
      body: null,
    };
    a.get('/bytes', (ctx) => {
      seen.res = ctx.res;
      const body = Buffer.alloc(BIG, 3);
      seen.body = new WeakRef(body);
      return ctx.send(body);
    });
    a.get('/json', (ctx) => {
      seen.res = ctx.res;
      // Multi-byte characters: a slice boundary must not split one.
      return ctx.json({ text: 'é😀'.repeat(BIG / 6) });
    });
    return { a, clock, seen };
  }

  it('ctx.send(bytes) to a client that reads nothing: the connection is closed, the body released', async () => {
    const { a, clock, seen } = setupBuffered(1000);
    const { port } = await start(a);
    await pausedGet(port, '/bytes', requests);
    await until(() => seen.res !== null && seen.res.writableLength > 0);
    const socket = seen.res!.socket!;
    clock.tick(900);
    expect(socket.destroyed).toBe(false);
    clock.tick(1000);
    expect(socket.destroyed).toBe(true);
    await until(() => {
      gc();
      return seen.body!.deref() === undefined;
    });
    await until(() => appStats(a).inflight === 0);
    expect(clock.active).toBe(0);
    expect(seen.res!.listenerCount('drain')).toBe(0);
  });

  it('ctx.json of a large value to a client that reads nothing: the connection is closed', async () => {
    const { a, clock, seen } = setupBuffered(1000);
    const { port } = await start(a);
    await pausedGet(port, '/json', requests);
    await until(() => seen.res !== null && seen.res.writableLength > 0);
    const socket = seen.res!.socket!;
    clock.tick(2000);
    expect(socket.destroyed).toBe(true);
    expect(clock.active).toBe(0);
  });

  it('a client that takes some of it in time is not cut off', async () => {
    const { a, clock, seen } = setupBuffered(1000);
    const { port } = await start(a);
    const res = await pausedGet(port, '/bytes', requests);
    await until(() => seen.res?.writableNeedDrain === true);
    await takeSomeInTime(res, seen.res!, clock);
    clock.tick(2000);
    expect(seen.res!.destroyed).toBe(true);
  });

  it('a client that reads it all gets it intact, and nothing is left watching', async () => {
    const { a, clock, seen } = setupBuffered(1000);
    const { port } = await start(a);
    const got = await raw(port, { path: '/json' });
    expect(got.status).toBe(200);
    expect(Number(got.headers['content-length'])).toBe(got.raw.byteLength);
    expect(JSON.parse(got.body)).toEqual({ text: 'é😀'.repeat(BIG / 6) });
    const bytes = await raw(port, { path: '/bytes' });
    expect(bytes.raw.equals(Buffer.alloc(BIG, 3))).toBe(true);
    await until(() => appStats(a).inflight === 0 && seen.res!.writableFinished);
    expect(clock.active).toBe(0);
    expect(seen.res!.listenerCount('drain')).toBe(0);
  });

  it('the request is over (onResponse) when the body is written, or when the client is cut off', async () => {
    const { a, clock, seen } = setupBuffered(1000);
    const over: { status: number; finished: boolean }[] = [];
    a.onResponse((_ctx, info) => {
      over.push(info);
    });
    const { port } = await start(a);
    const res = await pausedGet(port, '/bytes', requests);
    await until(() => seen.res?.writableNeedDrain === true);
    expect(over).toEqual([]);
    expect(appStats(a).inflight).toBe(1);
    // Reads it all.
    let got = 0;
    res.on('data', (c: Buffer) => {
      got += c.byteLength;
    });
    res.resume();
    await until(() => over.length === 1);
    expect(over).toEqual([{ status: 200, finished: true }]);
    await until(() => got === BIG);
    // A client that stops: cut off, and the request is over unfinished.
    await pausedGet(port, '/bytes', requests);
    await until(() => seen.res?.writableNeedDrain === true);
    clock.tick(2000);
    await until(() => over.length === 2);
    expect(over[1]).toEqual({ status: 200, finished: false });
    expect(appStats(a).inflight).toBe(0);
    expect(clock.active).toBe(0);
  });

  it('sendTimeout: 0 turns it off', async () => {
    const { a, clock, seen } = setupBuffered(0);
    const { port } = await start(a);
    await pausedGet(port, '/bytes', requests);
    await until(() => seen.res !== null && seen.res.writableLength > 0);
    clock.tick(10 * 60_000);
    expect(seen.res!.socket?.destroyed).toBe(false);
    expect(clock.active).toBe(0);
  });
});

describe('sendTimeout: a response the handler writes through ctx.res', () => {
  // `src.pipe(ctx.res)` and return: keel holds the request until that response closes, so a
  // client that stops reading held it (and the source) for ever.
  function setupRaw(sendTimeout: number) {
    const clock = new ManualClock();
    const a = app({ clock, sendTimeout });
    const seen: { res: ServerResponse | null; source: Readable | null } = {
      res: null,
      source: null,
    };
    a.get('/raw', (ctx) => {
      seen.res = ctx.res;
      const chunk = Buffer.alloc(64 * 1024, 1);
      seen.source = new Readable({
        read() {
          this.push(chunk);
        },
      });
      ctx.res.writeHead(200, { 'content-type': 'application/octet-stream' });
      seen.source.pipe(ctx.res);
    });
    return { a, clock, seen };
  }

  it('piped and returned, to a client that reads nothing: closed after sendTimeout, released', async () => {
    const { a, clock, seen } = setupRaw(1000);
    const { port } = await start(a);
    await pausedGet(port, '/raw', requests);
    await until(() => seen.res?.writableNeedDrain === true);
    expect(appStats(a).inflight).toBe(1);
    clock.tick(900);
    expect(seen.res!.destroyed).toBe(false);
    clock.tick(1000);
    expect(seen.res!.destroyed).toBe(true);
    await until(() => appStats(a).inflight === 0);
    expect(clock.active).toBe(0);
    seen.source!.destroy();
  });

  it('a client that takes some of it in time is not cut off', async () => {
    const { a, clock, seen } = setupRaw(1000);
    const { port } = await start(a);
    const res = await pausedGet(port, '/raw', requests);
    await until(() => seen.res?.writableNeedDrain === true);
    await takeSomeInTime(res, seen.res!, clock);
    seen.source!.destroy();
  });

  it('one large write after the handler returned is sliced: a slow client that reads is not cut', async () => {
    const clock = new ManualClock();
    const a = app({ clock, sendTimeout: 1000 });
    let res: ServerResponse | null = null;
    a.get('/raw-big', (ctx) => {
      const out = ctx.res;
      res = out;
      out.writeHead(200, { 'content-type': 'application/octet-stream' });
      // After the chain returned: one write of more than the kernel buffers hold.
      setImmediate(() => out.end(Buffer.alloc(32 * 1024 * 1024, 5)));
    });
    const { port } = await start(a);
    const client = await pausedGet(port, '/raw-big', requests);
    await until(() => res?.writableNeedDrain === true);
    await takeSomeInTime(client, res!, clock);
    // Then it stops for good.
    clock.tick(2000);
    expect(res!.destroyed).toBe(true);
    await until(() => appStats(a).inflight === 0);
    expect(clock.active).toBe(0);
  });

  it('sendTimeout: 0 leaves it alone', async () => {
    const { a, clock, seen } = setupRaw(0);
    const { port } = await start(a);
    await pausedGet(port, '/raw', requests);
    await until(() => seen.res?.writableNeedDrain === true);
    clock.tick(10 * 60_000);
    expect(seen.res!.destroyed).toBe(false);
    expect(clock.active).toBe(0);
    seen.source!.destroy();
  });
});

describe('sendTimeout: a response the handler writes through ctx.res while it still awaits', () => {
  // `await pipeline(src, ctx.res)`: the chain does not return until the body is written, so a
  // client that stopped reading held the response, the source and the handler for ever.
  function setupAwaited(sendTimeout: number) {
    const clock = new ManualClock();
    const a = app({ clock, sendTimeout });
    const seen: {
      res: ServerResponse | null;
      source: Readable | null;
      failed: unknown;
      reported: unknown[];
      infos: { status: number; finished: boolean }[];
    } = { res: null, source: null, failed: null, reported: [], infos: [] };
    a.onError((err) => {
      seen.reported.push(err);
    });
    a.onResponse((_, info) => {
      seen.infos.push(info);
    });
    a.get('/awaited', async (ctx) => {
      seen.res = ctx.res;
      const chunk = Buffer.alloc(64 * 1024, 1);
      seen.source = new Readable({
        read() {
          this.push(chunk);
        },
      });
      ctx.res.writeHead(200, { 'content-type': 'application/octet-stream' });
      try {
        await pipeline(seen.source, ctx.res);
      } catch (err) {
        seen.failed = err;
        throw err;
      }
    });
    return { a, clock, seen };
  }

  it('to a client that reads nothing: closed after sendTimeout, the source released, the request over', async () => {
    const { a, clock, seen } = setupAwaited(1000);
    const { port } = await start(a);
    await pausedGet(port, '/awaited', requests);
    await until(() => seen.res?.writableNeedDrain === true);
    clock.tick(900);
    expect(seen.res!.destroyed).toBe(false);
    clock.tick(1000);
    expect(seen.res!.destroyed).toBe(true);
    await until(() => appStats(a).inflight === 0);
    expect(seen.source!.destroyed).toBe(true);
    expect(seen.failed).not.toBeNull();
    // keel's own cut is no error of the app: a client stalling on purpose cannot fill the log.
    expect(seen.failed).toMatchObject({ code: 'ERR_STREAM_PREMATURE_CLOSE' });
    expect(seen.reported).toEqual([]);
    expect(seen.infos).toEqual([{ status: 200, finished: false }]);
    expect(clock.active).toBe(0);
  });

  it('a client that leaves mid-body: the pipeline fails, nothing is reported', async () => {
    const { a, clock, seen } = setupAwaited(1000);
    const { port } = await start(a);
    const client = await pausedGet(port, '/awaited', requests);
    await until(() => seen.res?.writableNeedDrain === true);
    client.destroy();
    await until(() => appStats(a).inflight === 0);
    expect(seen.source!.destroyed).toBe(true);
    expect(seen.failed).toMatchObject({ code: 'ERR_STREAM_PREMATURE_CLOSE' });
    expect(seen.reported).toEqual([]);
    expect(seen.infos).toEqual([{ status: 200, finished: false }]);
    expect(clock.active).toBe(0);
  });

  it("a source that fails mid-body is still reported, the client's cut or not", async () => {
    const { a, clock, seen } = setupAwaited(1000);
    const { port } = await start(a);
    await pausedGet(port, '/awaited', requests);
    await until(() => seen.res?.writableNeedDrain === true);
    const boom = new Error('disk gone');
    seen.source!.destroy(boom);
    await until(() => appStats(a).inflight === 0);
    expect(seen.failed).toBe(boom);
    expect(seen.reported).toEqual([boom]);
    expect(clock.active).toBe(0);
  });

  it('a source closed before its end (premature close of the source, not of the response) is reported', async () => {
    const { a, clock, seen } = setupAwaited(1000);
    const { port } = await start(a);
    await pausedGet(port, '/awaited', requests);
    await until(() => seen.res?.writableNeedDrain === true);
    seen.source!.destroy();
    await until(() => appStats(a).inflight === 0);
    expect(seen.failed).toMatchObject({ code: 'ERR_STREAM_PREMATURE_CLOSE' });
    expect(seen.reported).toEqual([seen.failed]);
    expect(clock.active).toBe(0);
  });

  it('a client that takes some of it in time is not cut off', async () => {
    const { a, clock, seen } = setupAwaited(1000);
    const { port } = await start(a);
    const res = await pausedGet(port, '/awaited', requests);
    await until(() => seen.res?.writableNeedDrain === true);
    await takeSomeInTime(res, seen.res!, clock);
    seen.source!.destroy();
    await until(() => appStats(a).inflight === 0);
    expect(clock.active).toBe(0);
  });

  it('one large write while it awaits is sliced: a slow client that reads is not cut', async () => {
    const clock = new ManualClock();
    const a = app({ clock, sendTimeout: 1000 });
    let res: ServerResponse | null = null;
    a.get('/awaited-big', async (ctx) => {
      const out = ctx.res;
      res = out;
      out.writeHead(200, { 'content-type': 'application/octet-stream' });
      out.write(Buffer.alloc(32 * 1024 * 1024, 5));
      // Waits for it to be written (or cut): the chain is still running meanwhile.
      await new Promise((resolve) => out.once('close', resolve));
    });
    const { port } = await start(a);
    const client = await pausedGet(port, '/awaited-big', requests);
    await until(() => res?.writableNeedDrain === true);
    await takeSomeInTime(client, res!, clock);
    clock.tick(2000);
    expect(res!.destroyed).toBe(true);
    await until(() => appStats(a).inflight === 0);
    expect(clock.active).toBe(0);
  });

  it('a large end() before the handler returns: its queued tail is watched', async () => {
    const clock = new ManualClock();
    const a = app({ clock, sendTimeout: 1000 });
    const infos: { status: number; finished: boolean }[] = [];
    a.onResponse((_, info) => {
      infos.push(info);
    });
    let res: ServerResponse | null = null;
    let returned = false;
    a.get('/ended-big', async (ctx) => {
      res = ctx.res;
      await Promise.resolve();
      ctx.res.writeHead(200, { 'content-type': 'application/octet-stream' });
      ctx.res.end(Buffer.alloc(32 * 1024 * 1024, 5));
      returned = true;
    });
    const { port } = await start(a);
    await pausedGet(port, '/ended-big', requests);
    await until(() => returned);
    await settle();
    expect(appStats(a).inflight).toBe(1);
    clock.tick(2000);
    expect(res!.destroyed).toBe(true);
    await until(() => appStats(a).inflight === 0);
    expect(infos).toEqual([{ status: 200, finished: false }]);
    expect(clock.active).toBe(0);
  });

  it('sendTimeout: 0 leaves it alone', async () => {
    const { a, clock, seen } = setupAwaited(0);
    const { port } = await start(a);
    await pausedGet(port, '/awaited', requests);
    await until(() => seen.res?.writableNeedDrain === true);
    clock.tick(10 * 60_000);
    expect(seen.res!.destroyed).toBe(false);
    expect(clock.active).toBe(0);
    seen.source!.destroy();
  });
});

describe('ctx.send(stream): whose fault a premature close is', () => {
  function setupSent() {
    const clock = new ManualClock();
    const a = app({ clock, sendTimeout: 1000 });
    const seen: { res: ServerResponse | null; source: Readable | null; reported: unknown[] } = {
      res: null,
      source: null,
      reported: [],
    };
    a.onError((err) => {
      seen.reported.push(err);
    });
    a.get('/sent', (ctx) => {
      seen.res = ctx.res;
      const chunk = Buffer.alloc(64 * 1024, 1);
      seen.source = new Readable({
        read() {
          this.push(chunk);
        },
      });
      return ctx.send(seen.source);
    });
    return { a, clock, seen };
  }

  it('a source closed before its end is reported (the client got a cut body)', async () => {
    const { a, clock, seen } = setupSent();
    const { port } = await start(a);
    await pausedGet(port, '/sent', requests);
    await until(() => seen.res?.writableNeedDrain === true);
    seen.source!.destroy();
    await until(() => appStats(a).inflight === 0);
    expect(seen.reported).toHaveLength(1);
    expect(seen.reported[0]).toMatchObject({ code: 'ERR_STREAM_PREMATURE_CLOSE' });
    expect(clock.active).toBe(0);
  });

  it('a client that leaves, or sendTimeout cutting it, is not reported', async () => {
    const { a, clock, seen } = setupSent();
    const { port } = await start(a);
    const client = await pausedGet(port, '/sent', requests);
    await until(() => seen.res?.writableNeedDrain === true);
    client.destroy();
    await until(() => appStats(a).inflight === 0);
    const second = setupSent();
    const other = await start(second.a);
    await pausedGet(other.port, '/sent', requests);
    await until(() => second.seen.res?.writableNeedDrain === true);
    second.clock.tick(2000);
    await until(() => appStats(second.a).inflight === 0);
    expect(seen.reported).toEqual([]);
    expect(second.seen.reported).toEqual([]);
    expect(clock.active).toBe(0);
    expect(second.clock.active).toBe(0);
  });
});
