// Item 13: slow clients held a connection (and a ctx) for Node's default 300 s.
import { describe, expect, it } from 'vitest';
import { appStats } from '../../src/app';
import { createApp } from '../../src/index';
import { start, until } from '../helpers';
import { guardProcess, rawSocket, within } from './harness';

guardProcess();

describe('item 13: request, headers and keep-alive timeouts', () => {
  it('headers that never finish: the connection is closed after headersTimeout', async () => {
    const app = createApp({ headersTimeout: 200, requestTimeout: 1000 });
    app.get('/ping', (ctx) => ctx.send('pong'));
    const { port } = await start(app);
    const socket = await rawSocket(port);
    socket.send('GET /ping HTTP/1.1\r\nHost: x\r\nX-Slow: '); // and nothing more
    await within(
      until(() => socket.closed, 5000),
      4000,
      'the server closing the connection',
    );
    expect(socket.received).toMatch(/^(HTTP\/1\.1 408|$)/);
    const next = await rawSocket(port);
    next.send('GET /ping HTTP/1.1\r\nHost: x\r\n\r\n');
    await next.until('pong');
    next.end();
    await app.close();
  });

  it('a body that stops arriving: 408 after requestTimeout, and the ctx is released', async () => {
    const app = createApp({ headersTimeout: 200, requestTimeout: 300 });
    app.post('/upload', (ctx) => ctx.json({ got: ctx.body }));
    const { port } = await start(app);
    const socket = await rawSocket(port);
    socket.send(
      'POST /upload HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"a":',
    );
    await until(() => appStats(app).inflight === 1);
    await within(
      until(() => socket.closed, 5000),
      4000,
      'the server closing the connection',
    );
    await until(() => appStats(app).inflight === 0);
    await app.close();
  });

  it('applies defaults, listen() options override them, and bad values throw', async () => {
    const app = createApp();
    const server = await app.listen(0, '127.0.0.1');
    expect(server.requestTimeout).toBe(30_000);
    expect(server.headersTimeout).toBe(10_000);
    expect(server.keepAliveTimeout).toBe(5_000);
    const other = await app.listen(0, '127.0.0.1', { keepAliveTimeout: 65_000 });
    expect(other.keepAliveTimeout).toBe(65_000);
    expect(other.requestTimeout).toBe(30_000);
    await app.close();
    expect(() => createApp({ requestTimeout: -1 })).toThrow(RangeError);
    expect(() => createApp({ headersTimeout: 5000, requestTimeout: 1000 })).toThrow(RangeError);
  });
});
