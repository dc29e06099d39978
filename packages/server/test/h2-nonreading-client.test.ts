// A client of an attached HTTP/2 server that sends its preface and never reads: keel closed its
// idle session gracefully (GOAWAY), and Node's graceful close only ends the socket and waits for
// the peer to close it: one that never reads never does, so 50 such clients held 50 sessions
// and sockets for good, and app.close() resolved with them still open (session.destroy() does
// nothing on a session already closing). Nor did app.close() end the connections of an HTTP/2
// server that are no session (a TCP connection that sent nothing yet). Raw sockets on
// loopback, the injected clock.
import { createServer as createHttp2Server, type Http2Server } from 'node:http2';
import {
  type AddressInfo,
  createServer as createNetServer,
  connect as netConnect,
  type Socket,
} from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createApp } from '../src/index';
import { h2Fixture } from './h2-helpers';
import { ManualClock, until } from './helpers';

const { apps } = h2Fixture();
const clients: Socket[] = [];
afterEach(() => {
  for (const socket of clients.splice(0)) socket.destroy();
});

const PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n');
/** An empty SETTINGS frame. */
const SETTINGS = Buffer.from([0, 0, 0, 4, 0, 0, 0, 0, 0]);

async function serve(): Promise<{ clock: ManualClock; server: Http2Server; port: number }> {
  const clock = new ManualClock();
  const app = createApp({ clock, keepAliveTimeout: 1000, sendTimeout: 0, requestTimeout: 0 });
  apps.push(app);
  const server = createHttp2Server(app.handler);
  app.attach(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { clock, server, port: (server.address() as AddressInfo).port };
}

/** A client that connects, sends `bytes`, and never reads a byte. */
function silent(port: number, bytes: Buffer | null): Socket {
  const socket = netConnect(port, '127.0.0.1');
  socket.on('error', () => {});
  socket.pause();
  if (bytes) socket.write(bytes);
  clients.push(socket);
  return socket;
}

const connections = (server: Http2Server): Promise<number> =>
  new Promise((resolve, reject) =>
    server.getConnections((err, n) => (err ? reject(err) : resolve(n))),
  );

async function countIs(server: Http2Server, n: number): Promise<void> {
  let now = -1;
  await until(() => {
    void connections(server).then((count) => {
      now = count;
    });
    return now === n;
  });
}

describe('HTTP/2: clients that never read', () => {
  it('an idle session is closed (GOAWAY), and its connection destroyed a keepAliveTimeout later', async () => {
    const { clock, server, port } = await serve();
    for (let i = 0; i < 5; i++) silent(port, Buffer.concat([PREFACE, SETTINGS]));
    await countIs(server, 5);
    clock.tick(1000); // idle: GOAWAY, the graceful close
    clock.tick(1000); // still not closed by the client: destroyed
    await countIs(server, 0);
  });

  it('app.close(): past timeoutMs, sessions closing and connections that are no session are destroyed', async () => {
    const { clock, server, port } = await serve();
    for (let i = 0; i < 3; i++) silent(port, Buffer.concat([PREFACE, SETTINGS]));
    silent(port, null); // connected, sent nothing
    await countIs(server, 4);
    let closed = false;
    server.once('close', () => {
      closed = true;
    });
    const done = apps[0]!.close({ timeoutMs: 500 });
    clock.tick(500);
    await done;
    await countIs(server, 0);
    await until(() => closed);
    expect(closed).toBe(true);
  });

  // Keyed by the peer alone, a second connection from the same client port to another server
  // of the app (Linux reuses an ephemeral port for another destination) replaced the first, and
  // close() never destroyed it.
  it('app.close(): two servers reached from one client port: both connections end', async () => {
    const clock = new ManualClock();
    const app = createApp({ clock, keepAliveTimeout: 0, sendTimeout: 0, requestTimeout: 0 });
    apps.push(app);
    const servers = [createHttp2Server(app.handler), createHttp2Server(app.handler)];
    const ports: number[] = [];
    for (const server of servers) {
      app.attach(server);
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      ports.push((server.address() as AddressInfo).port);
    }
    // A free local port (a listener's, closed: no connection left in TIME_WAIT on it), then
    // both connections from it.
    const free = createNetServer();
    await new Promise<void>((resolve) => free.listen(0, '127.0.0.1', resolve));
    const localPort = (free.address() as AddressInfo).port;
    await new Promise((r) => free.close(r));
    const sockets = ports.map((port) => {
      const socket = netConnect({ port, host: '127.0.0.1', localPort });
      socket.on('error', () => {});
      socket.pause();
      clients.push(socket);
      return socket;
    });
    await countIs(servers[0]!, 1);
    await countIs(servers[1]!, 1);
    const done = app.close({ timeoutMs: 500 });
    clock.tick(500);
    await done;
    await countIs(servers[0]!, 0);
    await countIs(servers[1]!, 0);
    expect(sockets).toHaveLength(2);
  });
});
