// A client pipelining many requests to a streaming route queues one response behind another on
// one connection. Each queued response must be closed with the connection (Node gives it no
// 'close'), but by one listener per connection: one per response warned MaxListenersExceeded
// past ten pipelined requests and grew with what the client sent.
import { connect } from 'node:net';
import { Readable } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { appStats } from '../../src/app';
import { start, trackApps, until } from '../helpers';

const make = trackApps();
const warnings: Error[] = [];
const onWarning = (w: Error): void => {
  warnings.push(w);
};
process.on('warning', onWarning);
afterAll(() => {
  process.off('warning', onWarning);
});

describe('many pipelined streamed responses on one connection', () => {
  it('hold one close listener on the connection, and all end when it closes', async () => {
    const app = make();
    const sockets = new Set<import('node:net').Socket>();
    app.get('/s', (ctx) => {
      sockets.add(ctx.req.socket);
      // A stream that never ends: each response stays queued behind the first.
      ctx.send(new Readable({ read() {} }));
    });
    const { port } = await start(app);
    const socket = connect(port, '127.0.0.1');
    await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
    socket.write('GET /s HTTP/1.1\r\nhost: x\r\n\r\n'.repeat(30));
    await until(() => appStats(app).inflight === 30);
    const [server] = [...sockets];
    expect(sockets.size).toBe(1);
    expect(server!.listenerCount('close')).toBeLessThan(10);
    await new Promise((r) => setImmediate(r));
    expect(warnings.filter((w) => w.name === 'MaxListenersExceededWarning')).toEqual([]);
    socket.destroy();
    await until(() => appStats(app).inflight === 0);
  });
});
