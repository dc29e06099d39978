// A client streams a body nobody reads into a route: a chunked GET body, a type no parser takes
// on a route that never reads it, a body refused for its headers (415, 400, 501). Node drains
// such a body after the answer with no bound (until `requestTimeout`, or for ever with it off),
// so one connection could push gigabytes. keel drains it up to 16 MiB, as a 404's, then closes.
import { Readable, Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { type App, createApp } from '../../src/index';
import { closedAfterEach, openRaw, type RawConnection, start, until } from '../helpers';
import { guardProcess } from './harness';

guardProcess();

const { apps, sockets } = closedAfterEach();

const MiB = 1024 * 1024;
const CHUNK = Buffer.alloc(64 * 1024, 97);
/** One chunk of a chunked body: 64 KiB of `a`. */
const FRAME = Buffer.concat([Buffer.from('10000\r\n'), CHUNK, Buffer.from('\r\n')]);

/**
 * Writes up to `total` bytes of chunk frames, each once the last was taken; stops when the
 * connection closed. Resolves with the body bytes written.
 */
async function pour(c: RawConnection, total: number): Promise<number> {
  let sent = 0;
  while (sent < total && !c.closed()) {
    const ok = await new Promise<boolean>((resolve) => c.s.write(FRAME, (err) => resolve(!err)));
    if (!ok) break;
    sent += CHUNK.length;
  }
  return sent;
}

async function serve(setup: (app: App) => void): Promise<number> {
  const app = createApp({ requestTimeout: 0 });
  apps.push(app);
  setup(app);
  return (await start(app)).port;
}

/** Sends `head`, waits for the answer, pours 24 MiB of body: the server must close within it. */
async function cutAfterCap(port: number, head: string, status: string): Promise<void> {
  const c = await openRaw(port, sockets);
  c.s.write(head);
  await until(() => c.text().includes('\r\n\r\n'));
  expect(c.text().slice(9, 12)).toBe(status);
  await pour(c, 24 * MiB);
  await until(c.closed);
}

const chunked = (line: string, extra = ''): string =>
  `${line}\r\nHost: x\r\n${extra}Transfer-Encoding: chunked\r\n\r\n`;

describe('a body nobody reads is drained up to 16 MiB, then the connection closes', () => {
  it('a chunked GET body on a route answering at once', async () => {
    const port = await serve((app) => app.get('/h', (ctx) => ctx.send('h')));
    await cutAfterCap(port, chunked('GET /h HTTP/1.1'), '200');
  });

  it('a chunked GET body on a route answering with a stream (Node drains it first)', async () => {
    const port = await serve((app) => app.get('/s', (ctx) => ctx.send(Readable.from(['s']))));
    await cutAfterCap(port, chunked('GET /s HTTP/1.1'), '200');
  });

  // Chunk extensions (Node takes up to 16 KiB of them per chunk) carry no body bytes: counted by
  // what the body decoded to, 1 byte per 16 KiB, 10 GB went in over 15 s and the connection
  // stayed open. The bound counts what came over the wire.
  it('a body of 1-byte chunks with long chunk extensions: bytes on the wire count', async () => {
    const port = await serve((app) => app.get('/h', (ctx) => ctx.send('h')));
    const c = await openRaw(port, sockets);
    c.s.write(chunked('GET /h HTTP/1.1'));
    await until(() => c.text().includes('\r\n\r\n'));
    const frame = Buffer.from(`1;x=${'e'.repeat(16_000)}\r\na\r\n`);
    let sent = 0;
    while (sent < 24 * MiB && !c.closed()) {
      const ok = await new Promise<boolean>((resolve) => c.s.write(frame, (err) => resolve(!err)));
      if (!ok) break;
      sent += frame.length;
    }
    await until(c.closed);
    expect(sent).toBeLessThan(24 * MiB);
  });

  it('a POST of a type no parser takes, on a route that never reads it', async () => {
    const port = await serve((app) =>
      app.post('/p', async (ctx) => {
        await new Promise((r) => setImmediate(r));
        ctx.send('p');
      }),
    );
    await cutAfterCap(
      port,
      chunked('POST /p HTTP/1.1', 'Content-Type: application/octet-stream\r\n'),
      '200',
    );
  });

  it('a chunked body refused for its headers: 415, 400, 501', async () => {
    const port = await serve((app) => app.post('/j', (ctx) => ctx.json(ctx.body)));
    const json = 'Content-Type: application/json\r\n';
    await cutAfterCap(
      port,
      chunked('POST /j HTTP/1.1', `${json}Content-Encoding: gzip\r\n`),
      '415',
    );
    await cutAfterCap(
      port,
      chunked('POST /j HTTP/1.1', `${json}Content-Type: text/plain\r\n`),
      '400',
    );
    const c = await openRaw(port, sockets);
    c.s.write(`POST /j HTTP/1.1\r\nHost: x\r\n${json}Transfer-Encoding: gzip, chunked\r\n\r\n`);
    await until(() => c.text().includes('\r\n\r\n'));
    expect(c.text().slice(9, 12)).toBe('501');
    await pour(c, 24 * MiB);
    await until(c.closed);
  });

  it('a body refused for its headers is not asked for with 100 Continue: the connection ends', async () => {
    const port = await serve((app) => {
      // Async middleware: the refusal comes after the request event, when Node would send the 100.
      app.use(async (_ctx, next) => {
        await new Promise((r) => setImmediate(r));
        return next();
      });
      app.post('/j', (ctx) => ctx.json(ctx.body));
    });
    const c = await openRaw(port, sockets);
    c.s.write(
      'POST /j HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n' +
        'Content-Encoding: gzip\r\nContent-Length: 10\r\nExpect: 100-continue\r\n\r\n',
    );
    await until(c.closed);
    expect(c.text()).not.toContain('100 Continue');
    expect(c.text()).toMatch(/^HTTP\/1\.1 415 /);
  });

  it('a body the handler paused and never read (released before its response finished)', async () => {
    const port = await serve((app) =>
      app.get('/p', (ctx) => {
        ctx.req.pause();
        ctx.send('p');
      }),
    );
    await cutAfterCap(port, chunked('GET /p HTTP/1.1'), '200');
  });

  it('a body paused after some of it was read, answered with a stream', async () => {
    const port = await serve((app) =>
      app.post('/p', async (ctx) => {
        await new Promise((resolve) => ctx.req.once('data', resolve));
        ctx.req.pause();
        ctx.req.removeAllListeners('data');
        ctx.send(Readable.from(['p']));
      }),
    );
    const c = await openRaw(port, sockets);
    c.s.write(chunked('POST /p HTTP/1.1', 'Content-Type: application/octet-stream\r\n'));
    c.s.write(FRAME);
    await until(() => c.text().includes('\r\n\r\n'));
    expect(c.text().slice(9, 12)).toBe('200');
    await pour(c, 24 * MiB);
    await until(c.closed);
  });

  it("a body left flowing with no listener (`once('data')`, then answered)", async () => {
    // The `once` listener goes after its chunk; the stream flows on with nobody listening, and
    // Node dropped the rest without a bound. Its listener pending at release (no byte yet) or
    // gone already (the first chunk came with the headers): drained up to 16 MiB either way.
    const port = await serve((app) =>
      app.post('/once', (ctx) => {
        ctx.req.once('data', () => {});
        return new Promise<void>((resolve) => setImmediate(resolve)).then(() => ctx.send('o'));
      }),
    );
    const head = chunked('POST /once HTTP/1.1', 'Content-Type: application/octet-stream\r\n');
    await cutAfterCap(port, head, '200');
    const c = await openRaw(port, sockets);
    c.s.write(Buffer.concat([Buffer.from(head), FRAME]));
    await until(() => c.text().includes('\r\n\r\n'));
    expect(c.text().slice(9, 12)).toBe('200');
    expect(await pour(c, 24 * MiB)).toBeLessThan(24 * MiB);
    await until(c.closed);
  });

  it('a body piped on after the answer (paused by backpressure at release) is left to its pipe', async () => {
    let piped = 0;
    let done = false;
    let held: (() => void) | null = null;
    const port = await serve((app) =>
      app.post('/pipe', async (ctx) => {
        const sink = new Writable({
          highWaterMark: 1024,
          write(chunk: Buffer, _enc, cb) {
            piped += chunk.length;
            // The first chunk is held until the answer was sent: the pipe pauses the request.
            if (held === null && piped === chunk.length) held = cb;
            else setImmediate(cb);
          },
        });
        sink.on('finish', () => {
          done = true;
        });
        ctx.req.pipe(sink);
        await until(() => ctx.req.readableFlowing === false);
        ctx.send('accepted');
        setImmediate(() => held?.());
      }),
    );
    const c = await openRaw(port, sockets);
    c.s.write(chunked('POST /pipe HTTP/1.1', 'Content-Type: application/octet-stream\r\n'));
    const poured = pour(c, 20 * MiB);
    await until(() => c.text().endsWith('accepted'));
    const sent = await poured;
    c.s.write('0\r\n\r\n');
    await until(() => done);
    expect(sent).toBe(20 * MiB);
    expect(piped).toBe(sent);
    expect(c.closed()).toBe(false);
  });

  it('a small unread body is drained and the connection serves the next request', async () => {
    const port = await serve((app) => {
      app.get('/h', (ctx) => ctx.send('h'));
      app.post('/j', (ctx) => ctx.json(ctx.body));
    });
    const c = await openRaw(port, sockets);
    c.s.write(chunked('GET /h HTTP/1.1'));
    await until(() => c.text().endsWith('h'));
    await pour(c, 1 * MiB);
    c.s.write('0\r\n\r\nGET /h HTTP/1.1\r\nHost: x\r\n\r\n');
    await until(() => c.text().split('HTTP/1.1 200').length === 3);
    // Refused for its headers: drained too, and the connection goes on.
    c.s.write(
      chunked('POST /j HTTP/1.1', 'Content-Type: application/json\r\nContent-Encoding: br\r\n'),
    );
    await until(() => c.text().includes('415'));
    await pour(c, 1 * MiB);
    c.s.write('0\r\n\r\nGET /h HTTP/1.1\r\nHost: x\r\n\r\n');
    await until(() => c.text().split('HTTP/1.1 200').length === 4);
    expect(c.closed()).toBe(false);
  });

  it('a handler that reads its body itself gets all of it, past 16 MiB', async () => {
    const port = await serve((app) =>
      app.post('/up', async (ctx) => {
        let n = 0;
        for await (const chunk of ctx.req) n += (chunk as Buffer).length;
        ctx.json({ n });
      }),
    );
    const c = await openRaw(port, sockets);
    c.s.write(chunked('POST /up HTTP/1.1', 'Content-Type: application/octet-stream\r\n'));
    const sent = await pour(c, 20 * MiB);
    c.s.write('0\r\n\r\n');
    await until(() => c.text().includes('{"n":'));
    expect(c.text()).toContain(`{"n":${sent}}`);
    expect(sent).toBe(20 * MiB);
  });
});
