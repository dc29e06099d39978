// An app mounted on the app's own server (`http.createServer(app.serverOptions, app.handler)`)
// gets what servers `listen()` starts get from their response class: a body the handler writes
// through ctx.res while it awaits is watched by `sendTimeout`, and a head made after the client
// left is reported as not sent. Without `app.serverOptions` neither happens (the contrast cases).
import { type ClientRequest, createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { connect } from 'node:net';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { type App, appStats } from '../src/app';
import { ManualClock, pausedGet, trackApps, until } from './helpers';

const make = trackApps();
const requests: ClientRequest[] = [];
const servers: Server[] = [];
afterEach(async () => {
  for (const r of requests.splice(0)) r.destroy();
  await Promise.all(
    servers.splice(0).map(
      (s) =>
        new Promise((resolve) => {
          s.closeAllConnections();
          s.close(resolve);
        }),
    ),
  );
});

async function serve(app: App, own: boolean): Promise<number> {
  const server = own
    ? createServer({ ...app.serverOptions, requestTimeout: 30_000 }, app.handler)
    : createServer(app.handler);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

function awaitedPipe(clock: ManualClock) {
  const app = make({ clock, sendTimeout: 1000 });
  const seen: { res: ServerResponse | null; source: Readable | null; reported: unknown[] } = {
    res: null,
    source: null,
    reported: [],
  };
  app.onError((err) => {
    seen.reported.push(err);
  });
  app.get('/awaited', async (ctx) => {
    seen.res = ctx.res;
    const chunk = Buffer.alloc(64 * 1024, 1);
    seen.source = new Readable({
      read() {
        this.push(chunk);
      },
    });
    ctx.res.writeHead(200, { 'content-type': 'application/octet-stream' });
    await pipeline(seen.source, ctx.res);
  });
  return { app, seen };
}

describe('app.serverOptions on an own server', () => {
  it('is one frozen object naming the response class (nothing made per read)', () => {
    const app = make();
    expect(app.serverOptions).toBe(app.serverOptions);
    expect(app.serverOptions).toBe(make().serverOptions);
    expect(Object.isFrozen(app.serverOptions)).toBe(true);
    expect(Object.keys(app.serverOptions)).toEqual(['ServerResponse']);
  });

  it('`await pipeline(src, ctx.res)` to a client that reads nothing is cut after sendTimeout', async () => {
    const clock = new ManualClock();
    const { app, seen } = awaitedPipe(clock);
    const port = await serve(app, true);
    await pausedGet(port, '/awaited', requests);
    await until(() => seen.res?.writableNeedDrain === true);
    clock.tick(900);
    expect(seen.res!.destroyed).toBe(false);
    clock.tick(1000);
    expect(seen.res!.destroyed).toBe(true);
    await until(() => appStats(app).inflight === 0);
    expect(seen.source!.destroyed).toBe(true);
    expect(seen.reported).toEqual([]);
    expect(clock.active).toBe(0);
  });

  it('without it (`createServer(app.handler)`), the same response is not watched', async () => {
    const clock = new ManualClock();
    const { app, seen } = awaitedPipe(clock);
    const port = await serve(app, false);
    await pausedGet(port, '/awaited', requests);
    await until(() => seen.res?.writableNeedDrain === true);
    clock.tick(10_000);
    expect(seen.res!.destroyed).toBe(false);
    expect(appStats(app).inflight).toBe(1);
    seen.source!.destroy();
    await until(() => appStats(app).inflight === 0);
  });

  it.each([
    [true, { status: 0, finished: false }],
    [false, { status: 200, finished: true }],
  ])(
    'a head made through ctx.res after the client left (own options: %s) is reported %j',
    async (own, expected) => {
      const app = make();
      const infos: { status: number; finished: boolean }[] = [];
      app.onResponse((_ctx, info) => {
        infos.push(info);
      });
      app.get('/late', async (ctx) => {
        await new Promise<void>((resolve) => ctx.res.once('close', () => resolve()));
        ctx.res.writeHead(200, { 'content-type': 'text/plain' });
        ctx.res.end('late');
      });
      const port = await serve(app, own);
      const socket = connect(port, '127.0.0.1');
      socket.on('error', () => {});
      socket.write('GET /late HTTP/1.1\r\nHost: x\r\n\r\n');
      await until(() => appStats(app).inflight === 1);
      socket.destroy();
      await until(() => infos.length === 1 && appStats(app).inflight === 0);
      expect(infos).toEqual([expected]);
    },
  );
});
