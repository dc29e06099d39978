// A request asking to upgrade (`Connection: Upgrade`, `Upgrade: websocket`) to an app with no
// upgrade handler is served as a plain request (RFC 9110 §7.8: a server may ignore Upgrade).
// But Node's parser stops at the end of such a request, and with no 'upgrade' listener on the
// server the bytes it read past it are dropped (_http_server's onParserExecuteCommon): a second
// request pipelined in the same write was never answered, its client waiting for ever on a
// keep-alive connection. Its first request is answered whole, then the connection closes (the
// client knows the second went unanswered and may send it again, RFC 9112 §9.3.2). No hang, no
// crash; a keep-alive timeout far past the wait, so it is not what ends the connection.
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

function makeApp(): App {
  const app = createApp({ keepAliveTimeout: 60_000 });
  apps.push(app);
  app.get('/a', (ctx) => ctx.send('a'));
  app.get('/b', (ctx) => ctx.send('b'));
  return app;
}

async function served(own: boolean): Promise<number> {
  const app = makeApp();
  if (!own) return ((await app.listen(0, '127.0.0.1')).address() as AddressInfo).port;
  const server: Server = app.attach(createServer(app.serverOptions, app.handler));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

/** Responses in `text`, each with its status and body (all here have a Content-Length). */
function responses(text: string): { status: number; body: string; close: boolean }[] {
  const out: { status: number; body: string; close: boolean }[] = [];
  let rest = text;
  while (rest.length > 0) {
    const end = rest.indexOf('\r\n\r\n');
    if (end === -1) throw new Error(`a partial head: ${JSON.stringify(rest)}`);
    const head = rest.slice(0, end);
    const length = Number(/\r\ncontent-length: (\d+)/i.exec(head)?.[1]);
    expect(length).toBeGreaterThanOrEqual(0);
    out.push({
      status: Number(/^HTTP\/1\.1 (\d{3}) /.exec(head)?.[1]),
      body: rest.slice(end + 4, end + 4 + length),
      close: /\r\nconnection: close/i.test(head),
    });
    rest = rest.slice(end + 4 + length);
  }
  return out;
}

describe.each([
  ['listen()', false],
  ['an own server given to attach()', true],
])('Upgrade with no upgrade handler, a request pipelined after it (%s)', (_name, own) => {
  it('in one write: the first answered, then the second answered or the connection closed', async () => {
    const c = await openRaw(await served(own), sockets);
    c.s.write(UPGRADE + SECOND);
    // Answered both, or the first and a close: the second never waits unanswered.
    await until(() => c.closed() || responses(c.text()).length === 2);
    const got = responses(c.text());
    expect(got[0]).toMatchObject({ status: 200, body: 'a' });
    if (got.length === 1) {
      expect(c.closed()).toBe(true);
      expect(got[0]!.close).toBe(true);
    } else expect(got[1]).toMatchObject({ status: 200, body: 'b' });
  });

  it('in two writes, the second after the first response: no hang, no crash', async () => {
    const c = await openRaw(await served(own), sockets);
    c.s.write(UPGRADE);
    await until(() => responses(c.text()).length === 1);
    expect(responses(c.text())[0]).toMatchObject({ status: 200, body: 'a' });
    if (!c.closed()) c.s.write(SECOND);
    await until(() => c.closed() || responses(c.text()).length === 2);
    const got = responses(c.text());
    if (got.length === 2) expect(got[1]).toMatchObject({ status: 200, body: 'b' });
    else expect(got[0]!.close).toBe(true);
  });

  it('an Upgrade header without Connection: upgrade (Node reads on): both answered, kept alive', async () => {
    const c = await openRaw(await served(own), sockets);
    c.s.write('GET /a HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\n\r\n' + SECOND);
    await until(() => responses(c.text()).length === 2);
    const got = responses(c.text());
    expect(got).toMatchObject([
      { status: 200, body: 'a', close: false },
      { status: 200, body: 'b', close: false },
    ]);
    expect(c.closed()).toBe(false);
  });
});
