// ctx.send with binary bodies other than a Buffer (ArrayBuffer, typed arrays, DataView) and with
// streams (a Node Readable, a web ReadableStream): the bytes as sent, over a real socket.
import { connect, type Socket } from 'node:net';
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { appStats } from '../src/app';
import { raw, socketBytes, start, trackApps, until } from './helpers';

const make = trackApps();

/** A Readable that makes 16 KiB chunks for ever, counting what it made. */
function endless(): Readable & { made: number } {
  const chunk = Buffer.alloc(16 * 1024, 97);
  const stream = new Readable({
    read() {
      stream.made += chunk.length;
      this.push(chunk);
    },
  }) as Readable & { made: number };
  stream.made = 0;
  return stream;
}

/** Waits until `made()` stops growing: the producer is held back by backpressure. */
async function stalled(made: () => number): Promise<number> {
  let last = -1;
  let still = 0;
  await until(() => {
    const now = made();
    still = now === last ? still + 1 : 0;
    last = now;
    return still >= 25;
  }, 20_000);
  return last;
}

/** Opens a socket, sends a GET and never reads: the response backs up to the server. */
function stuckClient(port: number, path: string): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => {
      socket.pause();
      socket.write(`GET ${path} HTTP/1.1\r\nHost: x\r\n\r\n`);
      resolve(socket);
    });
    socket.on('error', reject);
  });
}

describe('ctx.send with binary bodies', () => {
  it('sends ArrayBuffer, typed arrays and DataView as their bytes, like a Buffer', async () => {
    const app = make();
    const bytes = Uint8Array.from([0, 1, 2, 250, 255]);
    const backing = new ArrayBuffer(16);
    new Uint8Array(backing).set([9, 9, 1, 0, 2, 0, 9, 9]);
    app.get('/array-buffer', (ctx) => ctx.send(bytes.slice().buffer));
    // A view is its window of the buffer, not the whole buffer and not JSON.
    app.get('/uint16', (ctx) => ctx.send(new Uint16Array(backing, 2, 2)));
    app.get('/data-view', (ctx) => ctx.send(new DataView(backing, 2, 4)));
    app.get('/float', (ctx) => ctx.send(new Float32Array([1.5])));
    app.get('/typed', (ctx) => ctx.setHeader('content-type', 'image/png').send(bytes.buffer));
    app.get('/shared', (ctx) => {
      const shared = new SharedArrayBuffer(3);
      new Uint8Array(shared).set([7, 8, 9]);
      return ctx.send(shared);
    });
    const { port } = await start(app);
    const ab = await raw(port, { path: '/array-buffer' });
    expect(ab.status).toBe(200);
    expect([...ab.raw]).toEqual([0, 1, 2, 250, 255]);
    expect(ab.headers['content-type']).toBe('application/octet-stream');
    expect(ab.headers['content-length']).toBe('5');
    for (const path of ['/uint16', '/data-view']) {
      const res = await raw(port, { path });
      expect([...res.raw], path).toEqual([1, 0, 2, 0]);
      expect(res.headers['content-type']).toBe('application/octet-stream');
      expect(res.headers['content-length']).toBe('4');
    }
    const float = await raw(port, { path: '/float' });
    expect(float.raw.readFloatLE(0)).toBe(1.5);
    expect(float.raw.length).toBe(4);
    expect((await raw(port, { path: '/typed' })).headers['content-type']).toBe('image/png');
    expect([...(await raw(port, { path: '/shared' })).raw]).toEqual([7, 8, 9]);
  });
});

describe('ctx.send with a stream', () => {
  it('streams a Node Readable and a web ReadableStream', async () => {
    const app = make();
    app.get('/node', (ctx) => ctx.send(Readable.from(['a', 'b', 'c'])));
    app.get('/web', (ctx) =>
      ctx.setHeader('content-type', 'text/plain').send(
        new ReadableStream<Uint8Array>({
          start(controller) {
            controller.enqueue(new TextEncoder().encode('x'));
            controller.enqueue(new TextEncoder().encode('yz'));
            controller.close();
          },
        }),
      ),
    );
    // Not returned: the request stays open until the stream has been written.
    app.get('/unreturned', (ctx) => {
      void ctx.send(Readable.from([Buffer.from('late')]));
    });
    const { port } = await start(app);
    const node = await raw(port, { path: '/node' });
    expect(node.status).toBe(200);
    expect(node.body).toBe('abc');
    expect(node.headers['content-type']).toBe('application/octet-stream');
    expect(node.headers['transfer-encoding']).toBe('chunked');
    expect(node.headers['x-request-id']).toBeTruthy();
    const web = await raw(port, { path: '/web' });
    expect(web.body).toBe('xyz');
    expect(web.headers['content-type']).toBe('text/plain');
    expect((await raw(port, { path: '/unreturned' })).body).toBe('late');
    await until(() => appStats(app).inflight === 0);
  });

  it('HEAD and a 204 send the head and release the stream unread', async () => {
    const app = make();
    const sources: Readable[] = [];
    let cancelled = 0;
    app.get('/node', (ctx) => {
      const source = endless();
      sources.push(source);
      return ctx.send(source);
    });
    app.get('/web-204', (ctx) =>
      ctx.status(204).send(
        new ReadableStream({
          pull(controller) {
            controller.enqueue(new Uint8Array(8));
          },
          cancel() {
            cancelled++;
          },
        }),
      ),
    );
    const { port } = await start(app);
    const out = await socketBytes(
      port,
      'HEAD /node HTTP/1.1\r\nHost: x\r\n\r\n' +
        'GET /web-204 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n',
      2000,
    );
    const [head, second] = out.split(/(?=HTTP\/1\.1 )/) as [string, string];
    expect(head).toMatch(/^HTTP\/1\.1 200 /);
    expect(head.endsWith('\r\n\r\n')).toBe(true);
    expect(head).toMatch(/\r\ncontent-type: application\/octet-stream\r\n/);
    expect(head).not.toMatch(/transfer-encoding|content-length/i);
    expect(second).toMatch(/^HTTP\/1\.1 204 /);
    expect(second.endsWith('\r\n\r\n')).toBe(true);
    expect(second).not.toMatch(/transfer-encoding|content-length/i);
    await until(() => sources[0]?.destroyed === true && cancelled === 1);
    await until(() => appStats(app).inflight === 0);
  });

  it('holds a Node Readable back while the client does not read, and destroys it when the client leaves', async () => {
    const app = make();
    const errors: unknown[] = [];
    app.onError((err) => {
      errors.push(err);
    });
    let source: (Readable & { made: number }) | undefined;
    app.get('/endless', (ctx) => {
      source = endless();
      return ctx.send(source);
    });
    const { port } = await start(app);
    const client = await stuckClient(port, '/endless');
    await until(() => source !== undefined);
    const made = await stalled(() => source!.made);
    // Whatever the socket buffers hold, an unbounded producer would not stop at all.
    expect(made).toBeLessThan(64 * 1024 * 1024);
    client.destroy();
    await until(() => source!.destroyed);
    await until(() => appStats(app).inflight === 0);
    expect(errors).toEqual([]); // a client leaving is no error of the app's
  });

  it('holds a web ReadableStream back the same way, and cancels it when the client leaves', async () => {
    const app = make();
    const errors: unknown[] = [];
    app.onError((err) => {
      errors.push(err);
    });
    let made = 0;
    let cancelled = false;
    app.get('/endless', (ctx) =>
      ctx.send(
        new ReadableStream<Uint8Array>({
          pull(controller) {
            made += 16 * 1024;
            controller.enqueue(new Uint8Array(16 * 1024));
          },
          cancel() {
            cancelled = true;
          },
        }),
      ),
    );
    const { port } = await start(app);
    const client = await stuckClient(port, '/endless');
    await until(() => made > 0);
    expect(await stalled(() => made)).toBeLessThan(64 * 1024 * 1024);
    client.destroy();
    await until(() => cancelled);
    await until(() => appStats(app).inflight === 0);
    expect(errors).toEqual([]);
  });

  it('a stream send() refuses (response already sent, or a stale ctx) is released, not leaked', async () => {
    // The stream was handed over: a refused send must still destroy / cancel it, or a file
    // handle (createReadStream) stays open for as long as the process runs.
    const app = make();
    const errors: unknown[] = [];
    app.onError((err) => {
      errors.push(err);
    });
    const twice = endless();
    let kept: { send(body: unknown): unknown } | undefined;
    app.get('/twice', (ctx) => {
      ctx.json({ ok: true });
      return ctx.send(twice);
    });
    app.get('/keep', (ctx) => {
      kept = ctx;
      return ctx.json({ ok: true });
    });
    expect((await app.inject({ url: '/twice' })).status).toBe(200);
    expect(twice.destroyed).toBe(true);
    expect((await app.inject({ url: '/keep' })).status).toBe(200);
    let cancelled = 0;
    const late = new ReadableStream({
      cancel() {
        cancelled++;
      },
    });
    await kept!.send(late);
    await until(() => cancelled === 1);
    const stale = endless();
    await kept!.send(stale);
    expect(stale.destroyed).toBe(true);
    expect(errors.map((e) => (e as Error).name)).toEqual(['Error', 'ReleasedContextError']);
  });

  it('a locked web stream is a TypeError before anything is sent', async () => {
    const app = make();
    const errors: unknown[] = [];
    app.onError((err) => {
      errors.push(err);
    });
    app.get('/locked', (ctx) => {
      const stream = new ReadableStream();
      stream.getReader();
      return ctx.send(stream);
    });
    const res = await app.inject({ url: '/locked' });
    expect(res.status).toBe(500);
    expect(errors[0]).toBeInstanceOf(TypeError);
    expect(String(errors[0])).toMatch(/keel: `send body` must be a ReadableStream that no reader/);
  });

  it('a source that fails mid-body ends the connection and is reported; the app serves on', async () => {
    const app = make();
    const errors: unknown[] = [];
    app.onError((err) => {
      errors.push(err);
    });
    const boom = new Error('source broke');
    app.get('/broken', (ctx) => {
      const source = new Readable({ read() {} });
      source.push('partial');
      setImmediate(() => source.destroy(boom));
      return ctx.send(source);
    });
    app.get('/ok', (ctx) => ctx.send('fine'));
    const { port } = await start(app);
    // Keep-alive: the client must not read the next answer as the rest of this body.
    const out = await socketBytes(
      port,
      'GET /broken HTTP/1.1\r\nHost: x\r\n\r\nGET /ok HTTP/1.1\r\nHost: x\r\n\r\n',
      2000,
    );
    expect(out).toMatch(/^HTTP\/1\.1 200 /);
    expect(out).toContain('partial');
    // No terminating chunk: the client sees a truncated body, not a complete one.
    expect(out).not.toMatch(/\r\n0\r\n\r\n/);
    expect(out).not.toContain('fine');
    await until(() => errors.length === 1);
    expect(errors[0]).toBe(boom);
    expect((await raw(port, { path: '/ok' })).body).toBe('fine');
    await until(() => appStats(app).inflight === 0);
  });
});
