import { execFileSync } from 'node:child_process';
import {
  closeSync,
  constants,
  createReadStream,
  mkdtempSync,
  open,
  openSync,
  readdirSync,
  readlinkSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import type { Socket as ServerSocket } from 'node:net';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { Context } from '../src/context';
import { trackApps, until } from './helpers';

// onResponse's `finished` says whether the client got the response whole (every byte of it handed
// to the kernel), also when the connection ends right after: a client that closes as soon as it
// read its last response, or one that sent bytes that are no request after it (Node cuts the
// connection on the parse error, in the same tick as it ran the request before them).

const app = trackApps();
const closers: { destroy(): void }[] = [];
afterEach(() => {
  for (const c of closers.splice(0)) c.destroy();
});

const dir = mkdtempSync(join(tmpdir(), 'keel-finished-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const FILE_BYTES = 300_000;
writeFileSync(join(dir, 'data.bin'), Buffer.alloc(FILE_BYTES, 0x63));

interface Report {
  status: number;
  finished: boolean;
}

function recorder(a: ReturnType<typeof app>): Map<string, Report> {
  const reports = new Map<string, Report>();
  a.onResponse((ctx: Context, info) => {
    reports.set(ctx.requestId, { status: info.status, finished: info.finished });
  });
  return reports;
}

function rawClient(port: number): Socket {
  const socket = connect(port, '127.0.0.1');
  closers.push(socket);
  socket.on('error', () => {});
  return socket;
}

/** The length of the body once the head is in (`-1` before). */
function bodyLength(text: string): number {
  const end = text.indexOf('\r\n\r\n');
  if (end === -1) return -1;
  return Number(/content-length: (\d+)/i.exec(text.slice(0, end))?.[1] ?? 0);
}

/** Descriptors of this process open on `path` (Linux /proc). */
function opened(path: string): number {
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

/**
 * Holds every thread of libuv's pool (file operations run there) on the open of a FIFO nobody
 * writes to: what is queued behind (a file's close) waits until `release()`. Real congestion of
 * the pool, as a loaded server or a slow filesystem has, at a moment the test picks.
 */
function holdPool(): { release(): Promise<void> } {
  const fifo = join(dir, `fifo-${Math.random().toString(36).slice(2)}`);
  execFileSync('mkfifo', [fifo]);
  // More opens than threads: the extra ones queue ahead of what comes next, too.
  const count = (Number(process.env.UV_THREADPOOL_SIZE) || 4) + 4;
  const fds: number[] = [];
  const opened = new Promise<void>((resolve) => {
    for (let i = 0; i < count; i++) {
      open(fifo, 'r', (err, fd) => {
        if (err === null) fds.push(fd);
        if (fds.length === count) resolve();
      });
    }
  });
  return {
    async release() {
      // A writer lets every reader's open return (the queued ones open at once while it stays).
      const writer = openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK);
      await opened;
      closeSync(writer);
      for (const fd of fds) closeSync(fd);
      rmSync(fifo);
    },
  };
}

describe('onResponse: finished, when the connection ends right after the response', () => {
  /**
   * A GET of `path` whose client closes in the tick the body's last byte arrived, while the
   * server's file (a sendFile's, a stream's) is still being closed; what onResponse said.
   */
  async function leaveOnLastByte(path: string, send: (ctx: Context) => unknown): Promise<Report> {
    const a = app();
    const reports = recorder(a);
    let pool: { release(): Promise<void> } | null = null;
    const serverSockets: ServerSocket[] = [];
    a.get(path, (ctx) => {
      serverSockets.push(ctx.req.socket);
      // The file's last byte is in the response ('unpipe' comes with the file stream's end):
      // its descriptor's close, which comes next, waits on a congested pool.
      ctx.res.once('unpipe', () => {
        pool = holdPool();
      });
      return send(ctx);
    });
    const server = await a.listen(0, '127.0.0.1');
    const { port } = server.address() as { port: number };
    const socket = rawClient(port);
    let text = '';
    socket.setEncoding('latin1');
    const whole = new Promise<void>((resolve) => {
      socket.on('data', (chunk: string) => {
        text += chunk;
        const length = bodyLength(text);
        if (length >= 0 && text.length - text.indexOf('\r\n\r\n') - 4 >= length) {
          socket.destroy();
          resolve();
        }
      });
    });
    socket.write(`GET ${path} HTTP/1.1\r\nHost: x\r\nX-Request-Id: r1\r\n\r\n`);
    try {
      await whole;
      expect(text.startsWith('HTTP/1.1 200')).toBe(true);
      expect(bodyLength(text)).toBe(FILE_BYTES);
      // The server saw the client leave before the file's descriptor was closed.
      await until(() => serverSockets[0]?.destroyed === true);
      expect(pool).not.toBeNull();
      expect(opened(join(dir, 'data.bin'))).toBe(1);
    } finally {
      // Never left held: every file operation of the process would wait on it.
      await (pool as { release(): Promise<void> } | null)?.release();
    }
    await until(() => reports.has('r1') && opened(join(dir, 'data.bin')) === 0);
    return reports.get('r1')!;
  }

  it('a streamed file its client read whole, then closed, while the file was being closed', async () => {
    const report = await leaveOnLastByte('/file', (ctx) => ctx.sendFile('data.bin', { root: dir }));
    expect(report).toEqual({ status: 200, finished: true });
  });

  it('a file stream sent with ctx.send, read whole, then closed, while it was being closed', async () => {
    const report = await leaveOnLastByte('/stream', (ctx) =>
      ctx
        .setHeader('content-length', String(FILE_BYTES))
        .send(createReadStream(join(dir, 'data.bin'))),
    );
    expect(report).toEqual({ status: 200, finished: true });
  });
});

/** A 200's head with no body (what HEAD answers), then the 400 that ends the connection. */
const HEAD_THEN_400 =
  /^HTTP\/1\.1 200 OK\r\n(?:(?!\r\n\r\n)[\s\S])*\r\n\r\nHTTP\/1\.1 400 Bad Request\r\nConnection: close\r\n\r\n$/;

describe('onResponse: finished, when bytes that are no request follow the response', () => {
  /**
   * `request` and garbage after it in one write: Node runs the request, then meets the parse
   * error in the same tick; the answer goes out whole, the garbage's 400 after it, then the close. Resolves with what the client read, once the
   * connection closed, and what onResponse said.
   */
  async function thenGarbage(
    route: (a: ReturnType<typeof app>) => void,
    request: string,
  ): Promise<{ text: string; report: Report | undefined }> {
    const a = app({ sse: { heartbeatMs: 1000 } });
    const reports = recorder(a);
    route(a);
    const server = await a.listen(0, '127.0.0.1');
    const { port } = server.address() as { port: number };
    const socket = rawClient(port);
    let text = '';
    socket.setEncoding('latin1');
    const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    socket.on('data', (chunk: string) => {
      text += chunk;
    });
    socket.write(`${request}\x00\x01garbage\r\n\r\n`);
    await closed;
    await until(() => reports.has('g1'));
    return { text, report: reports.get('g1') };
  }

  it('HEAD of an event stream', async () => {
    const { text, report } = await thenGarbage(
      (a) => a.get('/sse', (ctx) => ctx.sseInterval(() => ({ n: 1 }), 50)),
      'HEAD /sse HTTP/1.1\r\nHost: x\r\nX-Request-Id: g1\r\n\r\n',
    );
    // The head whole, no body, then the garbage's 400 (not a 400 in place of it).
    expect(text).toMatch(HEAD_THEN_400);
    expect(text).toContain('text/event-stream');
    expect(report).toEqual({ status: 200, finished: true });
  });

  it('HEAD of a streamed body', async () => {
    const { text, report } = await thenGarbage(
      (a) => a.get('/big', (ctx) => ctx.send(Readable.from([Buffer.alloc(70_000, 0x61)]))),
      'HEAD /big HTTP/1.1\r\nHost: x\r\nX-Request-Id: g1\r\n\r\n',
    );
    expect(text).toMatch(HEAD_THEN_400);
    expect(report).toEqual({ status: 200, finished: true });
  });

  it('a reply in one piece (was right already: judged when ended)', async () => {
    const { text, report } = await thenGarbage(
      (a) => a.get('/json', (ctx) => ctx.json({ ok: true })),
      'GET /json HTTP/1.1\r\nHost: x\r\nX-Request-Id: g1\r\n\r\n',
    );
    expect(text).toMatch(
      /^HTTP\/1\.1 200 OK\r\n[\s\S]*?\r\n\r\n\{"ok":true\}HTTP\/1\.1 400 Bad Request\r\nConnection: close\r\n\r\n$/,
    );
    expect(report).toEqual({ status: 200, finished: true });
  });
});
