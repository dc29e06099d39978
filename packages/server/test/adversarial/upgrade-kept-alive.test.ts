// A request asking to upgrade to an app with no upgrade handler was always answered with
// `Connection: close`, as Node's parser drops what it read past such a request. When the read
// that held the request ended with it (the usual case: a client sends its upgrade request and
// waits), nothing was dropped, and the connection is kept for the next request. One with a body
// is drained as any body is, and kept alive too.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { type App, createApp } from '../../src/index';
import { closedAfterEach, openRaw, until } from '../helpers';
import { guardProcess } from './harness';

guardProcess();

const { apps, sockets } = closedAfterEach();

const UPGRADE = 'GET /a HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n';
const SECOND = 'GET /b HTTP/1.1\r\nHost: x\r\n\r\n';

let headSeen = false;

async function served(own: boolean, noCurrentBuffer = false): Promise<number> {
  const app: App = createApp({ keepAliveTimeout: 60_000 });
  apps.push(app);
  app.get('/a', (ctx) => ctx.send('a'));
  app.post('/a', (ctx) => ctx.send('a'));
  app.post('/unread', (ctx) => ctx.send('u'));
  app.get('/b', (ctx) => ctx.send('b'));
  // No Content-Type: run at once, before the body comes, which it reads itself.
  app.post('/late', async (ctx) => {
    headSeen = true;
    for await (const _ of ctx.req);
    ctx.send('l');
  });
  if (!own) return ((await app.listen(0, '127.0.0.1')).address() as AddressInfo).port;
  const server: Server = app.attach(createServer(app.serverOptions, app.handler));
  if (noCurrentBuffer) {
    // After Node's own listener, which gave the socket its parser: a Node without the method.
    server.on('connection', (socket: { parser?: Record<string, unknown> }) => {
      if (socket.parser) socket.parser.getCurrentBuffer = undefined;
    });
  }
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

/** The heads of the responses in `text` (each has a Content-Length of 1 here). */
function heads(text: string): string[] {
  return text.split(/\r\n\r\n./s).filter((h) => h.startsWith('HTTP/1.1'));
}

describe.each([
  ['listen()', false],
  ['an own server given to attach()', true],
])('Upgrade with no upgrade handler, alone in its read (%s)', (_name, own) => {
  it('is answered without Connection: close, and the next request is served', async () => {
    const c = await openRaw(await served(own), sockets);
    c.s.write(UPGRADE);
    await until(() => heads(c.text()).length === 1);
    expect(heads(c.text())[0]).not.toMatch(/\r\nconnection: close/i);
    c.s.write(SECOND);
    await until(() => heads(c.text()).length === 2);
    expect(c.text()).toMatch(/\r\n\r\nb$/);
    expect(c.closed()).toBe(false);
  });

  it.each(['/a', '/unread'])('with a body (%s): drained, kept alive', async (path) => {
    const c = await openRaw(await served(own), sockets);
    c.s.write(
      `POST ${path} HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n` +
        'Content-Type: application/json\r\nContent-Length: 7\r\n\r\n{"a":1}',
    );
    await until(() => heads(c.text()).length === 1);
    expect(heads(c.text())[0]).toMatch(/^HTTP\/1\.1 200 /);
    expect(heads(c.text())[0]).not.toMatch(/\r\nconnection: close/i);
    c.s.write(SECOND);
    await until(() => heads(c.text()).length === 2);
    expect(c.text()).toMatch(/\r\n\r\nb$/);
    expect(c.closed()).toBe(false);
  });

  it('pipelined behind it in the same read: still closed (that request was dropped)', async () => {
    const c = await openRaw(await served(own), sockets);
    c.s.write(UPGRADE + SECOND);
    await until(() => c.closed());
    expect(heads(c.text())).toHaveLength(1);
    expect(heads(c.text())[0]).toMatch(/\r\nconnection: close/i);
  });
});

describe('Upgrade with no upgrade handler, when nothing proves the read ended with it', () => {
  it('a parser without getCurrentBuffer: closed, as before', async () => {
    const c = await openRaw(await served(true, true), sockets);
    c.s.write(UPGRADE);
    await until(() => c.closed());
    expect(heads(c.text())).toHaveLength(1);
    expect(heads(c.text())[0]).toMatch(/\r\nconnection: close/i);
  });

  it('a body in a later read (where a request may follow it): closed, the body read first', async () => {
    const c = await openRaw(await served(false), sockets);
    headSeen = false;
    c.s.write(
      'POST /late HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n' +
        'Content-Length: 7\r\n\r\n',
    );
    await until(() => headSeen);
    c.s.write('{"a":1}');
    await until(() => c.closed());
    expect(heads(c.text())).toHaveLength(1);
    expect(heads(c.text())[0]).toMatch(/^HTTP\/1\.1 200 [\s\S]*\r\nconnection: close/i);
  });
});
