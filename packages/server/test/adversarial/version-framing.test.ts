// RFC 9112 §6.1: Transfer-Encoding in a message of a version below HTTP/1.1 is faulty framing
// (a proxy in front may frame it by Content-Length, or not at all). keel answered such an
// HTTP/1.0 request and closed its connection, but Node's parser also takes `HTTP/0.9` and
// `HTTP/2.0` request lines with headers, and those kept the connection: the bytes after the
// chunked body were run as a second request (smuggled past a proxy that framed it otherwise).
// Those two are now no request keel runs at all: 505 HTTP Version Not Supported (below).
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type App, createApp } from '../../src/index';
import { socketBytes, start } from '../helpers';
import { guardProcess, within } from './harness';

guardProcess();

let app: App;
let port: number;
const ran: string[] = [];

beforeAll(async () => {
  app = createApp();
  app.post('/echo', (ctx) => {
    ran.push('echo');
    return ctx.json({ body: ctx.body ?? null });
  });
  app.get('/admin', (ctx) => {
    ran.push('admin');
    return ctx.json({ admin: true });
  });
  ({ port } = await start(app));
});

afterAll(() => app.close());

describe('Transfer-Encoding in a request line of a version other than HTTP/1.1', () => {
  it.each(['HTTP/1.0'])(
    '%s: answered, then the connection closed; what follows is never run',
    async (version) => {
      ran.length = 0;
      const out = await socketBytes(
        port,
        `POST /echo ${version}\r\nHost: a\r\nConnection: keep-alive\r\n` +
          'Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n' +
          '7\r\n{"a":1}\r\n0\r\n\r\nGET /admin HTTP/1.1\r\nHost: a\r\n\r\n',
        1_000,
      );
      expect(out.match(/HTTP\/1\.1 200/g)).toHaveLength(1);
      expect(out).toContain('\r\nConnection: close\r\n');
      expect(ran).toEqual(['echo']);
    },
  );

  it('HTTP/1.1 with chunked keeps its connection (the pipelined request is answered)', async () => {
    ran.length = 0;
    const out = await socketBytes(
      port,
      'POST /echo HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\n' +
        'Transfer-Encoding: chunked\r\n\r\n7\r\n{"a":1}\r\n0\r\n\r\nGET /admin HTTP/1.1\r\nHost: a\r\n\r\n',
      300,
    );
    expect(out.match(/HTTP\/1\.1 200/g)).toHaveLength(2);
    expect(ran.sort()).toEqual(['admin', 'echo']);
  });
});

// RFC 9110 §6.2, RFC 9112 §2.3: a server answers a major version it does not take with 505.
// Node's parser hands on a bare HTTP/0.9 request line (`GET /admin`, no version, no headers) and
// a text `HTTP/2.0` one (HTTP/2 is a binary framing, never such a line); both were served an
// HTTP/1.1 response and, with `Connection: keep-alive`, kept their connection.
describe('a request line of a version other than HTTP/1.x', () => {
  it.each([
    ['bare HTTP/0.9', 'GET /admin\r\n\r\n'],
    ['HTTP/0.9', 'GET /admin HTTP/0.9\r\nHost: a\r\nConnection: keep-alive\r\n\r\n'],
    ['HTTP/2.0', 'GET /admin HTTP/2.0\r\nHost: a\r\nConnection: keep-alive\r\n\r\n'],
    [
      'HTTP/2.0 with a chunked body',
      'POST /echo HTTP/2.0\r\nHost: a\r\nConnection: keep-alive\r\nContent-Type: application/json\r\n' +
        'Transfer-Encoding: chunked\r\n\r\n7\r\n{"a":1}\r\n0\r\n\r\n',
    ],
  ])('%s: 505 and the connection closed; no handler runs', async (_, request) => {
    ran.length = 0;
    const out = await socketBytes(port, `${request}GET /admin HTTP/1.1\r\nHost: a\r\n\r\n`, 1_000);
    expect(out).toMatch(/^HTTP\/1\.1 505 HTTP Version Not Supported\r\n/);
    expect(out).toContain('\r\nConnection: close\r\n');
    expect(out.match(/^HTTP\/1\.1 \d{3} /gm)).toHaveLength(1);
    expect(ran).toEqual([]);
  });

  // A Content-Length body on an `HTTP/2.0` line was left unread when the connection closed: the
  // kernel then resets the connection (unread bytes at close), and a client still sending may
  // lose the 505 it had not read yet. Drained as any refused body is, then closed.
  it('HTTP/2.0 with a 1 MiB Content-Length body: the client reads the whole 505', async () => {
    ran.length = 0;
    const body = Buffer.alloc(1024 * 1024, 0x61);
    const socket = connect(port, '127.0.0.1');
    let out = '';
    socket.setEncoding('latin1');
    socket.on('data', (c: string) => {
      out += c;
    });
    const closed = new Promise<string | null>((resolve) => {
      let error: string | null = null;
      socket.on('error', (e: NodeJS.ErrnoException) => {
        error = e.code ?? e.message;
      });
      socket.on('close', () => resolve(error));
    });
    socket.write(
      'POST /echo HTTP/2.0\r\nHost: a\r\nContent-Type: application/json\r\n' +
        `Content-Length: ${body.length}\r\n\r\n`,
    );
    // Sent in slices over several turns, as a real upload arrives after its headers.
    for (let at = 0; at < body.length; at += 64 * 1024) {
      if (socket.destroyed) break;
      socket.write(body.subarray(at, at + 64 * 1024));
      await new Promise((r) => setImmediate(r));
    }
    const error = await within(closed, 10_000, 'the connection');
    expect(out).toMatch(/^HTTP\/1\.1 505 HTTP Version Not Supported\r\n/);
    expect(out).toContain('\r\nConnection: close\r\n');
    const json = out.slice(out.indexOf('\r\n\r\n') + 4);
    expect(JSON.parse(json)).toMatchObject({ status: 505 });
    expect(error).toBeNull();
    expect(ran).toEqual([]);
  }, 20_000);

  it('HTTP/2.0 with Expect and a body never sent: the 505, then the connection closes', async () => {
    ran.length = 0;
    const socket = connect(port, '127.0.0.1');
    let out = '';
    socket.setEncoding('latin1');
    socket.on('data', (c: string) => {
      out += c;
    });
    const closed = new Promise((resolve) => socket.on('close', resolve));
    socket.write(
      'POST /echo HTTP/2.0\r\nHost: a\r\nContent-Type: application/json\r\n' +
        'Expect: 100-continue\r\nContent-Length: 7\r\n\r\n',
    );
    // Not held waiting for a body the client may never send (it waits for a 100 not coming).
    await within(closed, 4_000, 'the close').finally(() => socket.destroy());
    expect(out).toMatch(/^HTTP\/1\.1 505 HTTP Version Not Supported\r\n/);
    expect(out.endsWith('"}')).toBe(true);
    expect(ran).toEqual([]);
  });

  it('HTTP/1.0 is still served, and keeps a keep-alive connection', async () => {
    ran.length = 0;
    const out = await socketBytes(
      port,
      'GET /admin HTTP/1.0\r\nConnection: keep-alive\r\n\r\nGET /admin HTTP/1.1\r\nHost: a\r\n\r\n',
      300,
    );
    expect(out.match(/HTTP\/1\.1 200/g)).toHaveLength(2);
    expect(ran).toEqual(['admin', 'admin']);
  });
});
