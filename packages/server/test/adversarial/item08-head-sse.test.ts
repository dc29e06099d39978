// Item 8: HEAD on an SSE or hub route opened a stream that never ended, so the next request on
// that keep-alive socket was never answered.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appStats } from '../../src/app';
import { type App, createApp, createEventHub, type EventHub } from '../../src/index';
import { start, until } from '../helpers';
import { guardProcess, rawSocket } from './harness';

guardProcess();

let app: App;
let hub: EventHub;
let port: number;

beforeAll(async () => {
  app = createApp();
  hub = createEventHub();
  app.get('/hub', (ctx) => hub.connect(ctx));
  app.get('/ticks', (ctx) => ctx.sseInterval(() => ({ t: 1 }), 10));
  app.get('/event', (ctx) => {
    ctx.sseEvent('hello', { a: 1 });
  });
  app.get('/ping', (ctx) => ctx.send('pong'));
  ({ port } = await start(app));
});

afterAll(() => app.close());

describe('item 8: HEAD on a stream route', () => {
  it.each(['/hub', '/ticks', '/event'])(
    'HEAD %s gets the headers, the response ends, the socket serves the next request',
    async (path) => {
      const socket = await rawSocket(port);
      socket.send(`HEAD ${path} HTTP/1.1\r\nHost: x\r\n\r\n`);
      const head = await socket.until('\r\n\r\n');
      expect(head).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
      expect(head).toContain('content-type: text/event-stream\r\n');
      // The same keep-alive connection must answer the next request.
      socket.send('GET /ping HTTP/1.1\r\nHost: x\r\n\r\n');
      await socket.until('pong');
      expect(socket.received).not.toContain('data:');
      socket.end();
      await until(() => appStats(app).inflight === 0);
      expect(hub.size).toBe(0);
    },
  );
});
