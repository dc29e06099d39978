// `app.attach()` on `http2.createSecureServer`: HTTP/2 over TLS, what browsers speak, with
// `allowHTTP1: true` so a client that does not offer h2 in ALPN is served HTTP/1.1 by the same
// app. Requests, bodies, an event stream, `sendTimeout` and `requestTimeout` over h2, the
// fallback. A self-signed test certificate (test/fixtures/README.md), read from disk: nothing
// runs openssl. Real clients on loopback, the injected clock for time.

import { readFileSync } from 'node:fs';
import {
  type ClientHttp2Session,
  type ClientHttp2Stream,
  constants,
  createSecureServer,
  type Http2SecureServer,
} from 'node:http2';
import { request as httpsRequest } from 'node:https';
import { join } from 'node:path';
import { connect as tlsConnect } from 'node:tls';
import { describe, expect, it } from 'vitest';
import { appStats } from '../src/app';
import { type App, type AppOptions, createApp } from '../src/index';
import { h2Fixture } from './h2-helpers';
import { ManualClock, until } from './helpers';

const fixtures = join(__dirname, 'fixtures');
const cert = readFileSync(join(fixtures, 'tls-cert.pem'));
const key = readFileSync(join(fixtures, 'tls-key.pem'));

const { apps, listen, connect } = h2Fixture();

interface Seen {
  versions: string[];
  protocols: string[];
  over: { status: number; finished: boolean }[];
}

async function serve(
  options: AppOptions = {},
): Promise<{ app: App; clock: ManualClock; port: number; seen: Seen }> {
  const clock = new ManualClock();
  // The idle-session timeout off: the timers counted are the streams' (h2-idle-session.test.ts).
  const app = createApp({
    clock,
    sendTimeout: 1000,
    requestTimeout: 1000,
    headersTimeout: 1000,
    keepAliveTimeout: 0,
    ...options,
  });
  apps.push(app);
  const seen: Seen = { versions: [], protocols: [], over: [] };
  app.onResponse((_ctx, info) => {
    seen.over.push({ status: info.status, finished: info.finished });
  });
  app.use(async (ctx, next) => {
    seen.versions.push(ctx.req.httpVersion);
    seen.protocols.push(ctx.protocol);
    await next();
  });
  app.get('/hello', (ctx) => ctx.json({ hello: 'world' }));
  app.post('/echo', (ctx) => ctx.json({ got: ctx.body }));
  app.get('/events', (ctx) => {
    const stream = ctx.sseStream();
    stream.send('tick', 'one');
    stream.send('tick', 'two');
  });
  // 4 MiB: far over a stream's window, so a client that reads nothing stalls it.
  app.get('/big', (ctx) => ctx.send('b'.repeat(4 * 1024 * 1024)));
  const server: Http2SecureServer = createSecureServer(
    { key, cert, allowHTTP1: true },
    app.handler,
  );
  const port = await listen(app, server);
  return { app, clock, port, seen };
}

function session(port: number): ClientHttp2Session {
  return connect(`https://127.0.0.1:${port}`, { ca: cert });
}

interface Reply {
  status: number;
  headers: Record<string, unknown>;
  body: string;
}

function fetchH2(
  s: ClientHttp2Session,
  headers: Record<string, string>,
  body?: string,
): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const stream = s.request(headers, { endStream: body === undefined });
    const reply: Reply = { status: 0, headers: {}, body: '' };
    stream.on('response', (h) => {
      reply.status = Number(h[':status']);
      reply.headers = h;
    });
    stream.setEncoding('utf8');
    stream.on('data', (c: string) => {
      reply.body += c;
    });
    stream.on('end', () => resolve(reply));
    stream.on('error', reject);
    if (body !== undefined) stream.end(body);
  });
}

/** An HTTP/1.1 request over TLS: Node's https client offers no h2 in ALPN. */
function fetchHttp1(port: number, method: string, path: string, body?: string): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      {
        host: '127.0.0.1',
        port,
        method,
        path,
        ca: cert,
        agent: false,
        headers: body === undefined ? {} : { 'content-type': 'application/json' },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => {
          text += c;
        });
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

describe('app.attach(http2.createSecureServer(...))', () => {
  it('serves GET over h2 (ALPN), as https', async () => {
    const { port, seen } = await serve();
    const s = session(port);
    const reply = await fetchH2(s, { ':path': '/hello' });
    expect(s.alpnProtocol).toBe('h2');
    expect(reply.status).toBe(200);
    expect(reply.headers['content-type']).toMatch(/^application\/json/);
    expect(JSON.parse(reply.body)).toEqual({ hello: 'world' });
    expect(seen.versions).toEqual(['2.0']);
    expect(seen.protocols).toEqual(['https']);
  });

  it('reads a POST body over h2', async () => {
    const { app, port } = await serve();
    const s = session(port);
    const body = JSON.stringify({ n: 1, text: 'é'.repeat(1000) });
    const reply = await fetchH2(
      s,
      {
        ':method': 'POST',
        ':path': '/echo',
        'content-type': 'application/json',
        'content-length': String(Buffer.byteLength(body)),
      },
      body,
    );
    expect(reply.status).toBe(200);
    expect(JSON.parse(reply.body)).toEqual({ got: JSON.parse(body) });
    await until(() => appStats(app).inflight === 0);
  });

  it('streams server-sent events over h2; a client closing its stream ends the request', async () => {
    const { app, port } = await serve();
    const s = session(port);
    const stream = s.request({ ':path': '/events' });
    stream.on('error', () => {});
    let status = 0;
    let type: unknown;
    let text = '';
    stream.on('response', (h) => {
      status = Number(h[':status']);
      type = h['content-type'];
    });
    stream.setEncoding('utf8');
    stream.on('data', (c: string) => {
      text += c;
    });
    await until(() => text.includes('data: two\n\n'));
    expect(status).toBe(200);
    expect(type).toMatch(/^text\/event-stream/);
    expect(text).toContain('event: tick\ndata: one\n\n');
    // The stream stays open; the session serves other streams meanwhile.
    expect(stream.closed).toBe(false);
    expect((await fetchH2(s, { ':path': '/hello' })).status).toBe(200);
    stream.close(constants.NGHTTP2_CANCEL);
    await until(() => appStats(app).inflight === 0);
  });

  it('sendTimeout: a stream that reads nothing is reset (CANCEL), the session serves on', async () => {
    const { app, clock, port, seen } = await serve();
    const s = session(port);
    const stalled: ClientHttp2Stream = s.request({ ':path': '/big' });
    stalled.on('error', () => {});
    stalled.pause();
    await until(() => appStats(app).inflight === 0 || seen.versions.length === 1);
    // Each check finds it stalled (4 checks a period): cut within two periods.
    for (let i = 0; i < 8 && !stalled.closed; i++) {
      clock.tick(500);
      await new Promise((r) => setTimeout(r, 5));
    }
    await until(() => stalled.closed);
    expect(stalled.rstCode).toBe(constants.NGHTTP2_CANCEL);
    await until(() => seen.over.length === 1);
    expect(seen.over).toEqual([{ status: 200, finished: false }]);
    expect((await fetchH2(s, { ':path': '/hello' })).status).toBe(200);
    await until(() => clock.active === 0);
  });

  it('requestTimeout: a body that never ends gets 408, the session serves on', async () => {
    const { app, clock, port } = await serve();
    const s = session(port);
    const stream = s.request({
      ':method': 'POST',
      ':path': '/echo',
      'content-type': 'application/json',
      'content-length': '100',
    });
    stream.on('error', () => {});
    let status = 0;
    stream.on('response', (h) => {
      status = Number(h[':status']);
    });
    stream.write('{"n":');
    await until(() => appStats(app).inflight === 1);
    clock.tick(1000);
    await until(() => stream.closed);
    expect(status).toBe(408);
    await until(() => appStats(app).inflight === 0);
    expect((await fetchH2(s, { ':path': '/hello' })).status).toBe(200);
    await until(() => clock.active === 0);
  });

  it('allowHTTP1: a client without h2 in ALPN is served HTTP/1.1 by the same app', async () => {
    const { app, port, seen } = await serve();
    const got = await fetchHttp1(port, 'GET', '/hello');
    expect(got.status).toBe(200);
    expect(JSON.parse(got.body)).toEqual({ hello: 'world' });
    const posted = await fetchHttp1(port, 'POST', '/echo', '{"n":2}');
    expect(JSON.parse(posted.body)).toEqual({ got: { n: 2 } });
    expect(seen.versions).toEqual(['1.1', '1.1']);
    expect(seen.protocols).toEqual(['https', 'https']);
    await until(() => appStats(app).inflight === 0);
  });

  it('allowHTTP1: an idle keep-alive connection of the fallback is closed after keepAliveTimeout', async () => {
    // Node's own socket timer (an HTTP/1 connection of Node's): a short real timeout, waited for.
    const { port } = await serve({ keepAliveTimeout: 50 });
    const socket = tlsConnect({ host: '127.0.0.1', port, ca: cert, ALPNProtocols: ['http/1.1'] });
    socket.on('error', () => {});
    let text = '';
    let closedByServer = false;
    socket.setEncoding('utf8');
    socket.on('data', (c: string) => {
      text += c;
    });
    socket.on('end', () => {
      closedByServer = true;
    });
    try {
      await new Promise<void>((resolve) => socket.once('secureConnect', () => resolve()));
      expect(socket.alpnProtocol).toBe('http/1.1');
      socket.write('GET /hello HTTP/1.1\r\nHost: localhost\r\nConnection: keep-alive\r\n\r\n');
      await until(() => text.includes('{"hello":"world"}'));
      expect(text).toMatch(/^HTTP\/1\.1 200/);
      await until(() => closedByServer);
    } finally {
      socket.destroy();
    }
  });
});

describe('allowHTTP1: the fallback connections are timed by the app (requestTimeout, headersTimeout)', () => {
  it('a body that never ends on HTTP/1.1 is answered 408 after the app requestTimeout, not the 300 s of Node', async () => {
    // Node's own connection checks (HTTP/1 of Node's): short real timeouts, waited for.
    const { port } = await serve({ requestTimeout: 300, headersTimeout: 300 });
    const socket = tlsConnect({ host: '127.0.0.1', port, ca: cert, ALPNProtocols: ['http/1.1'] });
    socket.on('error', () => {});
    let text = '';
    let closedByServer = false;
    socket.setEncoding('utf8');
    socket.on('data', (c: string) => {
      text += c;
    });
    socket.on('end', () => {
      closedByServer = true;
    });
    try {
      await new Promise<void>((resolve) => socket.once('secureConnect', () => resolve()));
      expect(socket.alpnProtocol).toBe('http/1.1');
      socket.write(
        'POST /echo HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n' +
          'Content-Length: 100\r\n\r\n{"n":',
      );
      await until(() => closedByServer);
      expect(text).toMatch(/^HTTP\/1\.1 408/);
    } finally {
      socket.destroy();
    }
  });

  it('values set on the server (not the defaults of Node) are left as they are', async () => {
    const app = createApp({ requestTimeout: 1000, headersTimeout: 1000 });
    apps.push(app);
    // Node sets them on an allowHTTP1 server, but its types do not declare them there.
    type Timed = {
      requestTimeout?: number;
      headersTimeout?: number;
      connectionsCheckingInterval?: number;
    };
    const secure = (allowHTTP1: boolean) => {
      const server = createSecureServer({ key, cert, allowHTTP1 }, app.handler);
      return { server, timed: server as unknown as Timed };
    };
    const own = secure(true);
    own.timed.requestTimeout = 120_000;
    app.attach(own.server);
    expect(own.timed.requestTimeout).toBe(120_000);
    expect(own.timed.headersTimeout).toBe(60_000);
    const untouched = secure(true);
    expect(untouched.timed.requestTimeout).toBe(300_000);
    expect(untouched.timed.headersTimeout).toBe(60_000);
    app.attach(untouched.server);
    expect(untouched.timed.requestTimeout).toBe(1000);
    expect(untouched.timed.headersTimeout).toBe(1000);
    // Checked often enough for them (as listen() sets it), the server not listening yet.
    expect(untouched.timed.connectionsCheckingInterval).toBe(250);
    // No HTTP/1 fallback: nothing of Node's HTTP/1 timing to set.
    const plain = secure(false);
    app.attach(plain.server);
    expect(plain.timed.requestTimeout).toBeUndefined();
  });
});

describe('app.close() and the HTTP/1.1 connections of allowHTTP1', () => {
  // An Http2SecureServer has no closeAllConnections: close({ timeoutMs }) resolved, but an
  // HTTP/1.1 request still in flight (a handler that never settles) kept its socket, and the
  // server, open for ever: the process could not exit.
  it('ends them once the time is up, as a listen() server', async () => {
    const app = createApp({ keepAliveTimeout: 0 });
    apps.push(app);
    app.get('/never', () => new Promise(() => {}));
    app.get('/hello', (ctx) => ctx.json({ ok: true }));
    const server: Http2SecureServer = createSecureServer(
      { key, cert, allowHTTP1: true },
      app.handler,
    );
    const port = await listen(app, server);
    // An idle keep-alive HTTP/1.1 connection, and one with a request in flight.
    const socket = tlsConnect({ host: '127.0.0.1', port, ca: cert, servername: 'localhost' });
    await new Promise((r) => socket.once('secureConnect', r));
    socket.write('GET /never HTTP/1.1\r\nHost: localhost\r\n\r\n');
    await until(() => appStats(app).inflight === 1);
    let socketClosed = false;
    socket.on('error', () => {});
    socket.once('close', () => {
      socketClosed = true;
    });
    let serverClosed = false;
    server.once('close', () => {
      serverClosed = true;
    });
    await app.close({ timeoutMs: 50 });
    await until(() => socketClosed && serverClosed);
  });
});
