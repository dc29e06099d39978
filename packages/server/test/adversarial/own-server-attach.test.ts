// `http.createServer(app.handler)` gets Node's defaults for what happens off the request path:
// a CONNECT is dropped without an answer, bytes after a `Connection: close` request replace its
// response with a 400, and `Expect: 100-continue` is answered before keel can refuse the body.
// `app.attach(server)` gives an own server what servers `listen()` start get (their timeouts
// aside). Each case runs on a real own server, with the contrast of one without it.
import { createServer, type Server } from 'node:http';
import {
  createServer as createHttp2Server,
  type Http2Server,
  connect as h2connect,
} from 'node:http2';
import { type AddressInfo, connect } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { appStats } from '../../src/app';
import { type App, createApp } from '../../src/index';
import { ManualClock, openRaw, settle, socketBytes, until } from '../helpers';
import { guardProcess } from './harness';

guardProcess();

const apps: App[] = [];
const servers: Server[] = [];
const h2servers: Http2Server[] = [];
afterEach(async () => {
  await Promise.all(
    servers.splice(0).map(
      (s) =>
        new Promise((resolve) => {
          s.closeAllConnections();
          s.close(resolve);
        }),
    ),
  );
  await Promise.all(apps.splice(0).map((a) => a.close({ timeoutMs: 100 })));
  for (const s of h2servers.splice(0)) s.close();
});

function makeApp(): App {
  const app = createApp({ bodyLimit: 8 });
  apps.push(app);
  app.get('/a', (ctx) => ctx.send('a'));
  app.get('/slow', async (ctx) => {
    for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
    ctx.send('slow');
  });
  app.post('/p', (ctx) => ctx.json(ctx.body));
  return app;
}

async function own(attach: boolean): Promise<{ app: App; server: Server; port: number }> {
  const app = makeApp();
  const server = createServer(app.handler);
  if (attach) expect(app.attach(server)).toBe(server);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { app, server, port: (server.address() as AddressInfo).port };
}

/** A raw keep-alive connection and what came back on it. */
const CONNECT = 'CONNECT evil.test:443 HTTP/1.1\r\nHost: evil.test:443\r\n\r\n';
const CLOSE_THEN_MORE =
  'GET /slow HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\nGET /a HTTP/1.1\r\nHost: x\r\n\r\n';
const EXPECTING =
  'POST /p HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n' +
  'Content-Length: 100\r\nExpect: 100-continue\r\n\r\n';

describe('app.attach(server): an own server handled as those listen() starts', () => {
  it('CONNECT is answered 405 with Allow and the connection closed', async () => {
    const { port } = await own(true);
    expect(await socketBytes(port, CONNECT, 2_000)).toBe(
      'HTTP/1.1 405 Method Not Allowed\r\nAllow: GET, POST, HEAD, OPTIONS\r\n' +
        'Content-Length: 0\r\nConnection: close\r\n\r\n',
    );
    // A client that resets at once: the socket's error is handled (no uncaught exception).
    const reset = connect(port, '127.0.0.1');
    await new Promise<void>((resolve) => {
      reset.write(CONNECT, () => {
        reset.resetAndDestroy();
        resolve();
      });
    });
    await new Promise((resolve) => setTimeout(resolve, 50));
  });

  // A server with a tunnel of its own (a proxy that also serves an app) had keel's 405 written
  // into its live tunnel (listener added before attach), or instead of it (after).
  it.each(['before', 'after'])(
    "CONNECT is left to the server's own listener, added %s attach",
    async (when) => {
      const app = makeApp();
      const server = createServer(app.handler);
      const tunnel = (_req: unknown, socket: import('node:net').Socket) => {
        socket.end('HTTP/1.1 200 Connection Established\r\n\r\n');
      };
      if (when === 'before') server.on('connect', tunnel);
      app.attach(server);
      if (when === 'after') server.on('connect', tunnel);
      servers.push(server);
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      const { port } = server.address() as AddressInfo;
      expect(await socketBytes(port, CONNECT, 2_000)).toBe(
        'HTTP/1.1 200 Connection Established\r\n\r\n',
      );
    },
  );

  it('bytes after a Connection: close request leave its response whole (RFC 9112 §9.6)', async () => {
    const { port } = await own(true);
    const out = await socketBytes(port, CLOSE_THEN_MORE, 2_000);
    expect(out).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    expect(out.endsWith('slow')).toBe(true);
  });

  it('Expect: 100-continue with an oversize body is refused before it is sent', async () => {
    const { port } = await own(true);
    const out = await socketBytes(port, EXPECTING, 2_000);
    expect(out).not.toContain('100 Continue');
    expect(out).toMatch(/^HTTP\/1\.1 413 /);
  });

  it('is idempotent, and gives the server the listeners listen() adds', async () => {
    const { app, server } = await own(true);
    const counts = (): number[] =>
      ['clientError', 'connect', 'checkContinue', 'connection'].map((e) => server.listenerCount(e));
    const before = counts();
    app.attach(server);
    expect(counts()).toEqual(before);
    expect(server.maxHeadersCount).toBe(0);
    // Another app's listeners would answer CONNECT and Expect a second time.
    expect(() => makeApp().attach(server)).toThrow('keel: this server is attached to another app');
  });

  it('app.close() closes it as a listen() server: in flight answered, keep-alive ended', async () => {
    const { app, server, port } = await own(true);
    let open!: () => void;
    const gate = new Promise<void>((r) => {
      open = r;
    });
    app.get('/gate', async (ctx) => {
      await gate;
      ctx.send('late');
    });
    const idle = await openRaw(port);
    idle.s.write('GET /a HTTP/1.1\r\nHost: x\r\n\r\n');
    await until(() => idle.text().endsWith('a'));
    const busy = await openRaw(port);
    busy.s.write('GET /gate HTTP/1.1\r\nHost: x\r\n\r\n');
    await until(() => appStats(app).inflight === 1);
    let closed = false;
    const closing = app.close().then(() => {
      closed = true;
    });
    // No new connection is taken, the idle keep-alive one ends, the request in flight goes on.
    await until(() => !server.listening && idle.closed());
    await settle();
    expect(closed).toBe(false);
    open();
    await closing;
    await until(busy.closed);
    expect(busy.text()).toMatch(/^HTTP\/1\.1 200 OK\r\n[\s\S]*late$/);
    // Told, so a keep-alive client does not send another request on it.
    expect(busy.text()).toContain('\r\nConnection: close\r\n');
  });

  it('attached again after it closed and listened again, app.close() closes it', async () => {
    // Its 'close' took it off the app's servers, and attaching again returned early (same app):
    // app.close() left it listening.
    const { app, server } = await own(true);
    await new Promise((resolve) => server.close(resolve));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    expect(app.attach(server)).toBe(server);
    await app.close({ timeoutMs: 100 });
    expect(server.listening).toBe(false);
  });

  it('app.close() also closes an attached server that never listened', async () => {
    const app = makeApp();
    const server = app.attach(createServer(app.handler));
    let closeEvents = 0;
    server.on('close', () => closeEvents++);
    await app.close();
    expect(closeEvents).toBe(1);
  });

  it('app.close() closes an attached HTTP/2 server too, and its idle session at once (GOAWAY)', async () => {
    // An HTTP/2 server has no closeIdleConnections / closeAllConnections: close() threw a
    // TypeError (a rejected shutdown), and nothing would have ended its sessions; then it waited
    // for them until timeoutMs (Node's server.close() does). keel sends each GOAWAY now.
    const clock = new ManualClock();
    const app = createApp({ clock });
    apps.push(app);
    app.get('/h', (ctx) => ctx.send('h2'));
    const server = createHttp2Server(app.handler as never);
    app.attach(server as unknown as Server);
    h2servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const session = h2connect(`http://127.0.0.1:${port}`);
    session.on('error', () => {});
    const stream = session.request({ ':path': '/h' });
    let body = '';
    stream.setEncoding('utf8');
    stream.on('data', (c: string) => {
      body += c;
    });
    await new Promise((resolve) => stream.on('end', resolve));
    expect(body).toBe('h2');
    let closed = false;
    const closing = app.close({ timeoutMs: 1000 }).then(() => {
      closed = true;
    });
    // No new session is taken; the idle one is told to go away, and the close needs no timeout.
    await until(() => !server.listening);
    await until(() => closed);
    await closing;
    expect(clock.active).toBe(0);
    session.destroy();
  });

  it('an HTTP/2 CONNECT on an attached HTTP/2 server is answered 405 with Allow, no crash', async () => {
    // Node's http2 compat emits 'connect' with (request, response), not a socket: treating the
    // response as one threw inside Node's session 'stream' handler (an uncaught exception).
    const app = makeApp();
    const server = createHttp2Server(app.handler as never);
    app.attach(server as unknown as Server);
    h2servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const session = h2connect(`http://127.0.0.1:${port}`);
    session.on('error', () => {});
    try {
      const stream = session.request({ ':method': 'CONNECT', ':authority': 'example.com:443' });
      stream.on('error', () => {});
      const headers = await new Promise<Record<string, unknown>>((resolve) =>
        stream.on('response', (h) => resolve(h as Record<string, unknown>)),
      );
      expect(headers[':status']).toBe(405);
      expect(headers.allow).toBe('GET, POST, HEAD, OPTIONS');
      // The session still serves.
      const next = session.request({ ':path': '/a' });
      let body = '';
      next.setEncoding('utf8');
      next.on('data', (c: string) => {
        body += c;
      });
      await new Promise((resolve) => next.on('end', resolve));
      expect(body).toBe('a');
    } finally {
      session.destroy();
    }
  });

  it('a CONNECT answered after app.close() started does not hold the close past timeoutMs', async () => {
    // close() destroyed the tunnels only at its start, and closeAllConnections() does not know a
    // socket Node handed over on 'connect': one whose client kept it open held the close.
    const clock = new ManualClock();
    const app = createApp({ clock });
    apps.push(app);
    const server = app.attach(createServer(app.handler));
    // No keep-alive timeout: nothing but app.close() would end the tunnel.
    server.keepAliveTimeout = 0;
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    // Half-open allowed: the client keeps its side open after the server's FIN.
    const s = connect({ port, host: '127.0.0.1', allowHalfOpen: true });
    s.on('error', () => {});
    let out = '';
    s.setEncoding('latin1');
    s.on('data', (c: string) => {
      out += c;
    });
    await new Promise((r) => s.once('connect', r));
    // Headers begun: not an idle connection, so close() leaves it to finish its request.
    s.write('CONNECT evil.test:443 HTTP/1.1\r\nHost: evil.test:443\r\n');
    await settle();
    let closed = false;
    const closing = app.close({ timeoutMs: 1000 }).then(() => {
      closed = true;
    });
    await until(() => !server.listening);
    s.write('\r\n');
    await until(() => out.startsWith('HTTP/1.1 405 '));
    await settle();
    expect(closed).toBe(false);
    clock.tick(1000);
    try {
      // The server's end of it is gone (the client, having had the FIN already, cannot tell).
      await until(() => closed);
    } finally {
      s.destroy();
    }
    await closing;
  });

  it('throws a TypeError naming what it got for something not a server', () => {
    const app = makeApp();
    expect(() => app.attach({} as Server)).toThrow(TypeError);
    expect(() => app.attach({} as Server)).toThrow(/server/);
  });

  it('without it, Node drops CONNECT, answers 400 over the response, sends 100 Continue', async () => {
    const { port } = await own(false);
    expect(await socketBytes(port, CONNECT, 2_000)).toBe('');
    expect(await socketBytes(port, CLOSE_THEN_MORE, 2_000)).toMatch(/^HTTP\/1\.1 400 /);
    expect(await socketBytes(port, EXPECTING, 300)).toContain('100 Continue');
  });
});
