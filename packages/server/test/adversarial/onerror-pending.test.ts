// An async onError is awaited before the 500 (it may answer through ctx). One that never settles
// (a log shipper down, no timeout of its own) held its request for ever, also after the client
// left: the slot, the ctx and `appStats(app).inflight` never came back, not even after app.close().
import { connect } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appStats } from '../../src/app';
import { type App, createApp } from '../../src/index';
import { raw, start } from '../helpers';
import { guardProcess } from './harness';

guardProcess();

let app: App;
let port: number;
let settle: (() => void) | null = null;
const answered: string[] = [];

beforeAll(async () => {
  app = createApp();
  app.onError(async (_err, ctx) => {
    if (ctx.path === '/hangs' || ctx.path === '/hangs-after-leave') {
      await new Promise(() => {});
    }
    if (ctx.path === '/late') {
      await new Promise<void>((resolve) => {
        settle = resolve;
      });
      ctx.status(503).json({ late: true }); // the client is gone: a stale no-op, reported
      answered.push('late');
    }
    if (ctx.path === '/answers') {
      await sleep(5);
      ctx.status(503).json({ own: true });
    }
  });
  app.get('/hangs', () => {
    throw new Error('boom');
  });
  app.get('/late', () => {
    throw new Error('boom');
  });
  app.get('/answers', () => {
    throw new Error('boom');
  });
  app.get('/ok', (ctx) => ctx.json({ ok: true }));
  // Throws only after its client left: the response is destroyed before onError starts.
  app.get('/hangs-after-leave', async (ctx) => {
    await new Promise<void>((resolve) => ctx.signal.addEventListener('abort', () => resolve()));
    throw new Error('boom after the client left');
  });
  ({ port } = await start(app));
});

afterAll(() => app.close({ timeoutMs: 100 }));

describe('app.close() with such a request', () => {
  it('resolves once the client left, without its timeout (the request is over)', async () => {
    const own = createApp();
    own.onError(() => new Promise(() => {}));
    own.get('/hangs-after-leave', async (ctx) => {
      await new Promise<void>((resolve) => ctx.signal.addEventListener('abort', () => resolve()));
      throw new Error('boom after the client left');
    });
    const { port: p } = await start(own);
    await new Promise<void>((resolve) => {
      const socket = connect(p, '127.0.0.1', () => {
        socket.write('GET /hangs-after-leave HTTP/1.1\r\nHost: a\r\n\r\n');
        setTimeout(() => {
          socket.destroy();
          resolve();
        }, 30);
      });
    });
    for (let i = 0; i < 100 && appStats(own).inflight > 0; i++) await sleep(5);
    expect(appStats(own).inflight).toBe(0);
    // No timeout given: close() waits for inflight requests as long as they take.
    await own.close();
    expect(appStats(own).inflight).toBe(0);
  });
});

function requestThenLeave(path: string): Promise<void> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1', () => {
      socket.write(`GET ${path} HTTP/1.1\r\nHost: a\r\n\r\n`);
      setTimeout(() => {
        socket.destroy();
        resolve();
      }, 30);
    });
  });
}

async function drained(): Promise<void> {
  for (let i = 0; i < 100 && appStats(app).inflight > 0; i++) await sleep(5);
  expect(appStats(app).inflight).toBe(0);
}

describe('an async onError still running when its client leaves', () => {
  it('one that never settles: the request is released once the client left', async () => {
    await requestThenLeave('/hangs');
    await drained();
    expect((await raw(port, { path: '/ok' })).body).toBe('{"ok":true}');
  });

  it('one that never settles, started after the client left: released at once', async () => {
    await requestThenLeave('/hangs-after-leave');
    await drained();
    expect((await raw(port, { path: '/ok' })).body).toBe('{"ok":true}');
  });

  it('one that settles later: released at the leave, its late answer a no-op', async () => {
    await requestThenLeave('/late');
    await drained();
    settle?.();
    await sleep(10);
    expect(answered).toEqual(['late']);
    expect(appStats(app).inflight).toBe(0);
  });

  it('one that answers through ctx still answers (the client stayed)', async () => {
    const res = await raw(port, { path: '/answers' });
    expect(res.status).toBe(503);
    expect(res.body).toBe('{"own":true}');
    await drained();
  });
});
