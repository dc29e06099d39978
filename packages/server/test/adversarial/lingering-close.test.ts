// A body refused while its client waits for `100 Continue` (a 404, a 413 declared over the limit)
// is answered with `Connection: close`. The socket was destroyed at once, but a client that
// stops waiting sends the body anyway (curl after 1 s): arriving at a closed socket it draws a
// reset, the client's write fails (EPIPE / ECONNRESET) and it drops the connection with the
// answer it had not read yet, so it saw an error instead of the 404 / 413. The close now lingers: the server stops writing, reads
// and drops what still comes (up to 16 MiB or 2 s), then closes.
import { readFileSync } from 'node:fs';
import { createServer, type Server, type ServerResponse } from 'node:http';
import { createSecureServer } from 'node:http2';
import { type AddressInfo, connect, type Server as NetServer, type Socket } from 'node:net';
import { dirname, join } from 'node:path';
import { connect as tlsConnect } from 'node:tls';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { type App, createApp } from '../../src/index';
import { closedAfterEach, ManualClock, openRaw, until } from '../helpers';
import { guardProcess } from './harness';

guardProcess();

const { apps, sockets } = closedAfterEach();

/** More than the loopback buffers hold: the client is still writing when the server closes. */
const BODY = 8 * 1024 * 1024;

const post = (path: string, version = '1.1'): string =>
  `POST ${path} HTTP/${version}\r\nHost: x\r\nContent-Type: application/json\r\n` +
  `Content-Length: ${BODY}\r\nExpect: 100-continue\r\n\r\n`;

interface Served {
  port: number;
  /** The server's side of each connection, as accepted. */
  conns: Socket[];
  /** Responses finished so far. */
  finished: () => number;
  clock: ManualClock;
}

async function served(): Promise<Served> {
  const clock = new ManualClock();
  const app: App = createApp({ clock, bodyLimit: 1024 });
  apps.push(app);
  app.post('/json', (ctx) => ctx.json(ctx.body));
  const server: Server = app.attach(createServer(app.serverOptions, app.handler));
  const conns: Socket[] = [];
  server.on('connection', (s: Socket) => conns.push(s));
  const { port, finished } = await listening(server);
  return { port, conns, finished, clock };
}

/** Listens on 127.0.0.1 port 0; `finished` counts the responses finished so far. */
async function listening(server: NetServer): Promise<{ port: number; finished: () => number }> {
  let finished = 0;
  // With `Expect`, Node emits checkContinue instead of request.
  const count = (_req: unknown, res: ServerResponse): void => {
    res.on('finish', () => finished++);
  };
  server.on('request', count);
  server.on('checkContinue', count);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { port: (server.address() as AddressInfo).port, finished: () => finished };
}

/**
 * Writes `head`, waits for the answer, then the client sends BODY bytes more while reading
 * nothing: its write must not fail on a reset, and it reads `status` with `Connection: close`.
 */
async function answeredWhileSending(head: string, status: RegExp): Promise<void> {
  const { port, conns, finished } = await served();
  const c = await openRaw(port, sockets);
  let error: unknown = null;
  c.s.on('error', (err) => {
    error = err;
  });
  // The client reads nothing yet: once its write fails on the reset, it drops the answer.
  c.s.pause();
  c.s.write(head);
  await until(() => finished() === 1);
  await new Promise<void>((resolve) => c.s.write(Buffer.alloc(BODY, 0x20), () => resolve()));
  const server = conns[0]!;
  // The server read the whole body (lingering), or closed under it (the reset is on its way).
  await until(() => server.destroyed || server.bytesRead >= head.length + BODY);
  c.s.resume();
  await until(() => c.closed() || error !== null);
  expect(error).toBe(null);
  expect(c.text()).toMatch(status);
  expect(c.text().toLowerCase()).toContain('connection: close');
  await until(() => server.destroyed);
}

describe.each([
  ['a 404 (no route takes it)', post('/nowhere'), /^HTTP\/1\.1 404 /],
  ['a 413 (declared over bodyLimit)', post('/json'), /^HTTP\/1\.1 413 /],
  // Closed at once when the request had `Expect` (the body may never come): reset likewise.
  ['a 505 (an HTTP/2.0 request line)', post('/json', '2.0'), /^HTTP\/1\.1 505 /],
])(
  '%s to a client waiting for 100 Continue, which then sends its body anyway',
  (_n, head, status) => {
    it('reaches the client: no reset, the server drops the body, then closes', () =>
      answeredWhileSending(head, status));
  },
);

/**
 * HTTP/1.0 with Transfer-Encoding (faulty framing: the connection closes), one chunk of BODY
 * whose first `sent` bytes come with the head.
 */
const chunked10 = (path: string, sent = 0): string =>
  `POST ${path} HTTP/1.0\r\nHost: x\r\nContent-Type: application/json\r\n` +
  `Transfer-Encoding: chunked\r\n\r\n${BODY.toString(16)}\r\n${' '.repeat(sent)}`;

describe.each([
  ['a 404 (no route takes it)', chunked10('/nowhere'), /^HTTP\/1\.1 404 /],
  ['a 413 (over bodyLimit)', chunked10('/json', 2048), /^HTTP\/1\.1 413 /],
])('%s to HTTP/1.0 with Transfer-Encoding, whose client sends on', (_n, head, status) => {
  it('reaches the client: no reset, the server drops the body, then closes', () =>
    answeredWhileSending(head, status));
});

describe('the lingering close is bounded', () => {
  it('a client that keeps the connection open without sending: closed after 2 s', async () => {
    const { port, conns, finished, clock } = await served();
    // Half-open allowed: the client's side stays open when the server's ends.
    const c = connect({ port, host: '127.0.0.1', allowHalfOpen: true });
    sockets.push(c);
    let ended = false;
    c.on('end', () => {
      ended = true;
    });
    c.resume();
    c.write(post('/nowhere'));
    await until(() => finished() === 1 && ended);
    // The server stopped writing, and waits for the client to end or send its body.
    const server = conns[0]!;
    expect(server.destroyed).toBe(false);
    clock.tick(1999);
    expect(server.destroyed).toBe(false);
    clock.tick(1);
    expect(server.destroyed).toBe(true);
    expect(clock.active).toBe(0);
  });

  it('a client that sends on past 16 MiB: closed there', async () => {
    const { port, conns, finished } = await served();
    const c = await openRaw(port, sockets);
    c.s.on('error', () => {});
    c.s.write(post('/nowhere'));
    await until(() => finished() === 1);
    const server = conns[0]!;
    const chunk = Buffer.alloc(1024 * 1024, 0x20);
    for (let i = 0; i < 18 && !server.destroyed; i++) {
      await new Promise<void>((resolve) => c.s.write(chunk, () => resolve()));
    }
    await until(() => server.destroyed);
    expect(server.bytesRead).toBeLessThan(18 * 1024 * 1024 + post('/nowhere').length);
  });
});

describe('over TLS (the HTTP/1.1 fallback of an allowHTTP1 server: its parser is fed from JS)', () => {
  it('a 404 to a client waiting for 100 Continue, which then sends its body anyway: read whole', async () => {
    const fixtures = join(dirname(fileURLToPath(import.meta.url)), '../fixtures');
    const app: App = createApp({ clock: new ManualClock() });
    apps.push(app);
    const server = app.attach(
      createSecureServer({
        key: readFileSync(join(fixtures, 'tls-key.pem')),
        cert: readFileSync(join(fixtures, 'tls-cert.pem')),
        allowHTTP1: true,
      }),
    );
    const { port, finished } = await listening(server);
    const c = tlsConnect({
      port,
      host: '127.0.0.1',
      rejectUnauthorized: false,
      ALPNProtocols: ['http/1.1'],
    });
    sockets.push(c);
    let out = '';
    let error: unknown = null;
    let closed = false;
    c.setEncoding('latin1');
    c.on('data', (d: string) => {
      out += d;
    });
    c.on('error', (err) => {
      error = err;
    });
    c.on('close', () => {
      closed = true;
    });
    await new Promise((r) => c.once('secureConnect', r));
    c.pause();
    c.write(post('/nowhere'));
    await until(() => finished() === 1);
    await new Promise<void>((resolve) => c.write(Buffer.alloc(BODY, 0x20), () => resolve()));
    c.resume();
    await until(() => closed || error !== null);
    expect(error).toBe(null);
    expect(out).toMatch(/^HTTP\/1\.1 404 /);
    expect(out.toLowerCase()).toContain('connection: close');
  });
});
