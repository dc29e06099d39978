// A handler leaves a `data` listener on its request and pauses it (`ctx.req.on('data', fn);
// ctx.req.pause()`), then answers. Node neither drains such a body (its reader began) nor reads
// on: the rest fills the buffers, the socket stops being read, and the next request on the
// connection waited for `requestTimeout` (for ever with it off). keel drains it as an unread
// body, up to 16 MiB, then the connection ends.
import { describe, expect, it } from 'vitest';
import { type App, createApp } from '../../src/index';
import { closedAfterEach, openRaw, type RawConnection, start, until } from '../helpers';
import { guardProcess } from './harness';

guardProcess();

const { apps, sockets } = closedAfterEach();

const MiB = 1024 * 1024;
const CHUNK = Buffer.alloc(64 * 1024, 97);

async function serve(setup: (app: App) => void): Promise<number> {
  // No requestTimeout: a stalled connection stays stalled, and the test sees it.
  const app = createApp({ requestTimeout: 0 });
  apps.push(app);
  setup(app);
  app.get('/next', (ctx) => ctx.send('next'));
  return (await start(app)).port;
}

/** Writes `total` bytes of `a` (raw, no framing), each 64 KiB once the last was taken. */
async function pour(c: RawConnection, total: number): Promise<number> {
  let sent = 0;
  while (sent < total && !c.closed()) {
    const piece = CHUNK.subarray(0, Math.min(CHUNK.length, total - sent));
    const ok = await new Promise<boolean>((resolve) => c.s.write(piece, (err) => resolve(!err)));
    if (!ok) break;
    sent += piece.length;
  }
  return sent;
}

function paused(seen: { bytes: number }) {
  return (app: App): void => {
    app.post('/paused', (ctx) => {
      ctx.req.on('data', (chunk: Buffer) => {
        seen.bytes += chunk.length;
      });
      ctx.req.pause();
      ctx.send('paused');
    });
  };
}

const head = (length: number): string =>
  `POST /paused HTTP/1.1\r\nHost: x\r\nContent-Type: application/octet-stream\r\nContent-Length: ${length}\r\n\r\n`;

describe('a body paused with its data listener left on, then answered', () => {
  it('the next request on the connection is answered', async () => {
    const seen = { bytes: 0 };
    const port = await serve(paused(seen));
    const c = await openRaw(port, sockets);
    c.s.write(head(2 * MiB));
    await until(() => c.text().endsWith('paused'));
    expect(await pour(c, 2 * MiB)).toBe(2 * MiB);
    c.s.write('GET /next HTTP/1.1\r\nHost: x\r\n\r\n');
    await until(() => c.text().endsWith('next'));
    expect(c.text().split('HTTP/1.1 200').length).toBe(3);
    expect(c.closed()).toBe(false);
  });

  it('past 16 MiB the connection ends', async () => {
    const seen = { bytes: 0 };
    const port = await serve(paused(seen));
    const c = await openRaw(port, sockets);
    c.s.write(head(64 * MiB));
    await until(() => c.text().endsWith('paused'));
    expect(await pour(c, 24 * MiB)).toBeLessThan(24 * MiB);
    await until(c.closed);
  });

  it('paused and resumed by the handler after its answer: it reads the whole body', async () => {
    // `pause()` then `resume()` a moment later (a reader with backpressure of its own): the
    // body goes on to its listener, past 16 MiB, and the connection serves the next request.
    let total = 0;
    const port = await serve((app) =>
      app.post('/paused', (ctx) => {
        const req = ctx.req;
        req.on('data', (chunk: Buffer) => {
          total += chunk.length;
          req.pause();
          setImmediate(() => req.resume());
        });
        ctx.send('paused');
      }),
    );
    const c = await openRaw(port, sockets);
    c.s.write(head(20 * MiB));
    await until(() => c.text().endsWith('paused'));
    expect(await pour(c, 20 * MiB)).toBe(20 * MiB);
    c.s.write('GET /next HTTP/1.1\r\nHost: x\r\n\r\n');
    await until(() => c.text().endsWith('next'));
    expect(total).toBe(20 * MiB);
  });

  it('answered from its listener while paused, resumed after: the reader keeps its body', async () => {
    // Paused when the request is released (the answer came between `pause()` and `resume()`):
    // resumed, and its listener pausing again shows a reader; nothing is cut at 16 MiB.
    let total = 0;
    const port = await serve((app) =>
      app.post(
        '/paused',
        (ctx) =>
          new Promise<void>((resolve) => {
            const req = ctx.req;
            req.on('data', (chunk: Buffer) => {
              total += chunk.length;
              req.pause();
              if (total === chunk.length) {
                ctx.send('paused');
                resolve();
              }
              setImmediate(() => req.resume());
            });
          }),
      ),
    );
    const c = await openRaw(port, sockets);
    c.s.write(head(20 * MiB));
    const poured = pour(c, 20 * MiB);
    await until(() => c.text().endsWith('paused'));
    expect(await poured).toBe(20 * MiB);
    c.s.write('GET /next HTTP/1.1\r\nHost: x\r\n\r\n');
    await until(() => c.text().endsWith('next'));
    expect(total).toBe(20 * MiB);
  });
});
