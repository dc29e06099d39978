// `app.attach(server)` gives an own server the app's `requestTimeout` / `headersTimeout` (and
// `keepAliveTimeout`) while the server's are still Node's defaults, and has them checked as
// often as listen()'s are, also when the server listened before it was attached (Node arms its
// connection checks on 'listening', every 30 s by default). A slowloris client, its headers
// trickled past the app's short `headersTimeout`, is answered 408 and closed: Node's own checks
// run on real time, so the limits are short and the close is waited for (Node's 60 s / 30 s would
// never come within the wait).
import { readFileSync } from 'node:fs';
import { createServer, Server } from 'node:http';
import { createSecureServer, type Http2SecureServer } from 'node:http2';
import { type AddressInfo, connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { connect as tlsConnect } from 'node:tls';
import { describe, expect, it } from 'vitest';
import { type App, createApp } from '../src/index';
import { closedAfterEach } from './helpers';

const fixtures = join(__dirname, 'fixtures');
const cert = readFileSync(join(fixtures, 'tls-cert.pem'));
const key = readFileSync(join(fixtures, 'tls-key.pem'));

const { apps, sockets } = closedAfterEach();

/** Short limits: Node's checks of them run on real time. */
function makeApp(): App {
  const app = createApp({ requestTimeout: 400, headersTimeout: 200, keepAliveTimeout: 300 });
  apps.push(app);
  app.get('/', (ctx) => ctx.send('ok'));
  return app;
}

function listen(server: Server | Http2SecureServer): Promise<number> {
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)),
  );
}

/**
 * Sends a request's headers a line at a time, never their end, until the server closes the
 * connection (or 150 lines went, 3 s: Node's 60 s default is far past that); resolves with
 * what came back by then, with whether the server closed the connection.
 */
async function slowloris(socket: Socket): Promise<{ text: string; closed: boolean }> {
  let text = '';
  let closed = false;
  socket.setEncoding('latin1');
  socket.on('data', (c: string) => {
    text += c;
  });
  socket.on('error', () => {});
  socket.on('close', () => {
    closed = true;
  });
  socket.write('GET / HTTP/1.1\r\nHost: x\r\n');
  for (let i = 0; i < 150 && !closed; i++) {
    await new Promise((r) => setTimeout(r, 20));
    if (!closed && socket.writable) socket.write(`X-Trickle-${i}: a\r\n`);
  }
  // Closed by the server: what it wrote is all in ('data' comes before 'close').
  return { text, closed };
}

function plainSocket(port: number): Promise<Socket> {
  const s = connect(port, '127.0.0.1');
  sockets.push(s);
  return new Promise((resolve) => s.once('connect', () => resolve(s)));
}

function h1OverTls(port: number): Promise<Socket> {
  const s = tlsConnect({ host: '127.0.0.1', port, ca: cert, ALPNProtocols: ['http/1.1'] });
  sockets.push(s);
  return new Promise((resolve) => s.once('secureConnect', () => resolve(s)));
}

describe('attach(): an own server gets the app timeouts while its own are still Node defaults', () => {
  it('a plain http.Server attached before it listens: slowloris headers answered 408', async () => {
    const app = makeApp();
    const server = app.attach(createServer(app.handler));
    expect(server.requestTimeout).toBe(400);
    expect(server.headersTimeout).toBe(200);
    expect(server.keepAliveTimeout).toBe(300);
    const port = await listen(server);
    expect(await slowloris(await plainSocket(port))).toEqual({
      text: expect.stringMatching(/^HTTP\/1\.1 408 /),
      closed: true,
    });
  }, 10_000);

  it('a plain http.Server attached once it listens: checked as often as listen() checks', async () => {
    const app = makeApp();
    const server = createServer(app.handler);
    const port = await listen(server);
    app.attach(server);
    expect(server.headersTimeout).toBe(200);
    expect(await slowloris(await plainSocket(port))).toEqual({
      text: expect.stringMatching(/^HTTP\/1\.1 408 /),
      closed: true,
    });
  }, 10_000);

  it('an allowHTTP1 server attached once it listens: its HTTP/1.1 connections likewise', async () => {
    const app = makeApp();
    const server = createSecureServer({ key, cert, allowHTTP1: true }, app.handler);
    const port = await listen(server);
    app.attach(server);
    expect(await slowloris(await h1OverTls(port))).toEqual({
      text: expect.stringMatching(/^HTTP\/1\.1 408 /),
      closed: true,
    });
  }, 10_000);

  it('Node renaming its connection-tracking listener: it is found by what a fresh server registers', async () => {
    // keel re-arms Node's checks through Node's own 'listening' listener, looked up by its name
    // (setupConnectionsTracking, Node 18.12-24). Renamed (as a Node release may), the lookup by
    // name misses and the 30 s check would stay: the fallback must still find it.
    const tracking = new Server().listeners('listening');
    expect(tracking).toHaveLength(1);
    const fn = tracking[0] as (...args: unknown[]) => void;
    const name = Object.getOwnPropertyDescriptor(fn, 'name')!;
    Object.defineProperty(fn, 'name', { ...name, value: 'trackConnectionsRenamed' });
    try {
      const app = makeApp();
      const plain = createServer(app.handler);
      const plainPort = await listen(plain);
      app.attach(plain);
      const secure = createSecureServer({ key, cert, allowHTTP1: true }, app.handler);
      const securePort = await listen(secure);
      app.attach(secure);
      const [a, b] = await Promise.all([
        slowloris(await plainSocket(plainPort)),
        slowloris(await h1OverTls(securePort)),
      ]);
      for (const res of [a, b]) {
        expect(res).toEqual({ text: expect.stringMatching(/^HTTP\/1\.1 408 /), closed: true });
      }
    } finally {
      Object.defineProperty(fn, 'name', name);
    }
  }, 10_000);

  it('a Node with no such listener: attach() still times the server (its 30 s check stays)', async () => {
    const app = makeApp();
    const server = createServer(app.handler);
    await listen(server);
    server.removeAllListeners('listening');
    expect(() => app.attach(server)).not.toThrow();
    expect(server.headersTimeout).toBe(200);
  });

  it('values set on the server (not the defaults of Node) stay', () => {
    const app = makeApp();
    const server = app.attach(
      createServer({ requestTimeout: 120_000, headersTimeout: 30_000 }, app.handler),
    );
    expect(server.requestTimeout).toBe(120_000);
    expect(server.headersTimeout).toBe(30_000);
    const own = createServer(app.handler);
    own.keepAliveTimeout = 65_000;
    app.attach(own);
    expect(own.keepAliveTimeout).toBe(65_000);
    expect(own.headersTimeout).toBe(200);
  });
});
