// Event streams pipelined behind an open one (2000 `GET /live` in one write): each ran, buffered
// its events and ticked its interval for ever, though none could ever reach its client (the one
// in front never ends). The 4 MiB cap on replies queued on a connection skipped event streams,
// so three such connections grew the heap by 70 MB a second. A queued stream now counts what it
// may buffer (`sse.maxBufferedBytes`) toward that cap.
import { connect } from 'node:net';
import { describe, expect, it } from 'vitest';
import { appStats } from '../../src/app';
import { start, trackApps, until } from '../helpers';
import { guardProcess } from './harness';

guardProcess();
const make = trackApps();

describe('event streams pipelined behind an open event stream', () => {
  it('past the cap the connection is closed and every queued stream ends', async () => {
    const app = make();
    let opened = 0;
    app.get('/live', (ctx) => {
      opened++;
      ctx.sseEvent('hello', { n: opened });
    });
    const { port } = await start(app);
    const socket = connect(port, '127.0.0.1');
    let closed = false;
    socket.on('close', () => {
      closed = true;
    });
    socket.on('error', () => {});
    socket.resume(); // a client that reads everything it is sent
    socket.write('GET /live HTTP/1.1\r\nHost: x\r\n\r\n'.repeat(200));
    await until(() => closed);
    // 1 MiB each (the default maxBufferedBytes) against 4 MiB: a handful ran, not 200.
    expect(opened).toBeLessThanOrEqual(8);
    await until(() => appStats(app).inflight === 0);
  });

  // The first form of the cap charged each queued stream its whole maxBufferedBytes: with 8 MiB
  // (over the 4 MiB cap) a stream behind a short reply closed the connection, and so did a
  // handful of HEADs to a stream route, which end at once and hold nothing.
  it.each([
    ['the default maxBufferedBytes', undefined],
    ['maxBufferedBytes of 8 MiB', 8 * 1024 * 1024],
  ])(
    'with %s: a stream, and HEADs, pipelined behind a reply that finishes are served',
    async (_, maxBufferedBytes) => {
      const app = make({ sse: { maxBufferedBytes } });
      app.get('/a', (ctx) => ctx.json({ a: 1 }));
      app.get('/live', (ctx) => {
        ctx.sseEvent('hello', 1);
      });
      const { port } = await start(app);
      const socket = connect(port, '127.0.0.1');
      let text = '';
      socket.setEncoding('latin1');
      socket.on('data', (chunk: string) => {
        text += chunk;
      });
      const get = (path: string) => `GET ${path} HTTP/1.1\r\nHost: x\r\n\r\n`;
      const head = 'HEAD /live HTTP/1.1\r\nHost: x\r\n\r\n';
      socket.write(get('/a') + head.repeat(6) + get('/a') + get('/live'));
      await until(() => text.includes('event: hello'));
      expect(text.split('HTTP/1.1 200').length - 1).toBe(9);
      expect(text).toContain('{"a":1}');
      socket.destroy();
      await until(() => appStats(app).inflight === 0);
    },
  );
});
