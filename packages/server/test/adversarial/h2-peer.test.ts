// `app.attach(http2Server)`: an HTTP/2 request's `ctx.ip` and `ctx.req.remoteAddress` must be the
// TCP peer, unmapped from `::ffff:` as for `listen()`, and the same for every stream of a session
// (each is a new request object on one socket). Its `ctx.hostname` comes from `:authority`, as
// HTTP/2 sends no Host line. Checked with a real `node:http2` client.

import type { Server } from 'node:http';
import {
  type ClientHttp2Session,
  createServer as createHttp2Server,
  type Http2Server,
  connect as h2connect,
  type OutgoingHttpHeaders,
} from 'node:http2';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { type App, createApp } from '../../src/index';
import { guardProcess } from './harness';

guardProcess();

const apps: App[] = [];
afterEach(async () => {
  await Promise.all(apps.splice(0).map((a) => a.close({ timeoutMs: 100 })));
});

async function serve(host: string): Promise<{ server: Http2Server; port: number }> {
  const app = createApp();
  apps.push(app);
  app.get('/peer', (ctx) => ctx.json({ ip: ctx.ip, remote: ctx.req.remoteAddress }));
  app.get('/host', (ctx) => ctx.json({ hostname: ctx.hostname, host: ctx.header('host') ?? null }));
  const server = createHttp2Server(app.handler as never);
  app.attach(server as unknown as Server);
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  return { server, port: (server.address() as AddressInfo).port };
}

/** One GET on `session`: its status and JSON body. */
async function ask(
  session: ClientHttp2Session,
  headers: OutgoingHttpHeaders,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const stream = session.request({ ':path': '/peer', ...headers });
  let body = '';
  let status = 0;
  stream.on('response', (h) => {
    status = Number(h[':status']);
  });
  stream.setEncoding('utf8');
  stream.on('data', (c: string) => {
    body += c;
  });
  await new Promise((resolve, reject) => {
    stream.on('end', resolve);
    stream.on('error', reject);
  });
  return { status, body: JSON.parse(body) as Record<string, unknown> };
}

async function peers(port: number, times: number): Promise<unknown[]> {
  const session = h2connect(`http://127.0.0.1:${port}`);
  session.on('error', () => {});
  try {
    const out: unknown[] = [];
    for (let i = 0; i < times; i++) out.push((await ask(session, {})).body);
    return out;
  } finally {
    session.close();
  }
}

describe('an HTTP/2 server attached to the app', () => {
  it('gives the peer address on 127.0.0.1', async () => {
    const { port } = await serve('127.0.0.1');
    expect(await peers(port, 3)).toEqual(Array(3).fill({ ip: '127.0.0.1', remote: '127.0.0.1' }));
  });

  it('gives an IPv4 client of a dual-stack listener unmapped (no ::ffff:)', async () => {
    const { port } = await serve('::');
    expect(await peers(port, 3)).toEqual(Array(3).fill({ ip: '127.0.0.1', remote: '127.0.0.1' }));
  });

  it('gives ctx.hostname from :authority (HTTP/2 has no Host line), and refuses a Host naming another host with a 400', async () => {
    const { port } = await serve('127.0.0.1');
    const session = h2connect(`http://127.0.0.1:${port}`);
    session.on('error', () => {});
    const host = (headers: OutgoingHttpHeaders) => ask(session, { ':path': '/host', ...headers });
    try {
      // ctx.header('host') is the request's own header: HTTP/2 clients send none.
      expect(await host({})).toEqual({ status: 200, body: { hostname: '127.0.0.1', host: null } });
      expect(await host({ ':authority': 'Shop.Example:8443' })).toEqual({
        status: 200,
        body: { hostname: 'shop.example', host: null },
      });
      // A Host that agrees with :authority is allowed (RFC 9113 §8.3.1); one naming another host
      // is the doubt two Host lines are: a proxy may have routed by either.
      expect(await host({ ':authority': 'shop.example', host: 'SHOP.example' })).toEqual({
        status: 200,
        body: { hostname: 'shop.example', host: 'SHOP.example' },
      });
      expect(await host({ ':authority': 'shop.example', host: 'evil.example' })).toEqual({
        status: 400,
        body: {
          status: 400,
          error: 'Bad Request',
          message:
            'Host names another host than :authority: the request names no one host (RFC 9113, section 8.3.1)',
        },
      });
    } finally {
      session.close();
    }
  });
});
