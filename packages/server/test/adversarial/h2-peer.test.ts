// `app.attach(http2Server)`: an HTTP/2 request's `ctx.ip` and `ctx.req.remoteAddress` must be the
// TCP peer, unmapped from `::ffff:` as for `listen()`, and the same for every stream of a session
// (each is a new request object on one socket). Checked with a real `node:http2` client.

import type { Server } from 'node:http';
import {
  createServer as createHttp2Server,
  type Http2Server,
  connect as h2connect,
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
  const server = createHttp2Server(app.handler as never);
  app.attach(server as unknown as Server);
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  return { server, port: (server.address() as AddressInfo).port };
}

async function peers(port: number, times: number): Promise<unknown[]> {
  const session = h2connect(`http://127.0.0.1:${port}`);
  session.on('error', () => {});
  try {
    const out: unknown[] = [];
    for (let i = 0; i < times; i++) {
      const stream = session.request({ ':path': '/peer' });
      let body = '';
      stream.setEncoding('utf8');
      stream.on('data', (c: string) => {
        body += c;
      });
      await new Promise((resolve, reject) => {
        stream.on('end', resolve);
        stream.on('error', reject);
      });
      out.push(JSON.parse(body));
    }
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
});
