// A stream's onClose listener is app code run from the response's 'close' event: one that threw
// escaped into Node's emitter (an uncaughtException, the process ended) and skipped the listeners
// after it. Each listener now runs on its own; what one throws goes to onError with the ctx.
import { connect } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appStats } from '../../src/app';
import { type App, type Context, createApp } from '../../src/index';
import { raw, start } from '../helpers';
import { guardProcess } from './harness';

guardProcess();

let app: App;
let port: number;
const reported: { err: unknown; path: string }[] = [];
let later = 0;

beforeAll(async () => {
  app = createApp();
  app.onError((err, ctx: Context) => {
    reported.push({ err, path: ctx.path });
  });
  app.get('/events', (ctx) => {
    const stream = ctx.sseStream();
    stream.onClose(() => {
      throw new Error('listener failed');
    });
    stream.onClose(() => {
      later++;
    });
    stream.send('hello', 1);
  });
  app.get('/closes', (ctx) => {
    const stream = ctx.sseStream();
    stream.onClose(() => {
      throw new Error('listener failed on close()');
    });
    stream.close(); // the server's own close: no throw out of close()
  });
  app.get('/ok', (ctx) => ctx.json({ ok: true }));
  ({ port } = await start(app));
});

afterAll(() => app.close());

function openThenLeave(path: string): Promise<void> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.on('data', () => {
      socket.destroy();
      resolve();
    });
    socket.write(`GET ${path} HTTP/1.1\r\nHost: a\r\n\r\n`);
  });
}

describe('an SSE onClose listener that throws', () => {
  it('when the client leaves: reported to onError, the next listener still runs, no crash', async () => {
    reported.length = 0;
    later = 0;
    await openThenLeave('/events');
    for (let i = 0; i < 50 && (later === 0 || appStats(app).inflight > 0); i++) await sleep(5);
    expect(later).toBe(1);
    expect(reported.map((r) => [(r.err as Error).message, r.path])).toEqual([
      ['listener failed', '/events'],
    ]);
    expect(appStats(app).inflight).toBe(0);
    expect((await raw(port, { path: '/ok' })).body).toBe('{"ok":true}');
  });

  it('when the server closes the stream: close() does not throw, the error is reported', async () => {
    reported.length = 0;
    const res = await raw(port, { path: '/closes' });
    expect(res.status).toBe(200);
    expect(reported.map((r) => (r.err as Error).message)).toEqual(['listener failed on close()']);
    expect(appStats(app).inflight).toBe(0);
  });
});
