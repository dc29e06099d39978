// HTTP/1.1 framing the attacker's bytes can reach: what goes on the wire must stay one answer per
// request, in order, with nothing after a final response that the client would read as the next.
import { mkdtempSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type App, createApp } from '../../src/index';
import { start, until } from '../helpers';
import { guardProcess, rawSocket, within } from './harness';

guardProcess();

const apps: App[] = [];
afterEach(async () => {
  await Promise.all(apps.splice(0).map((a) => a.close({ timeoutMs: 100 })));
});
function make(): App {
  const app = createApp();
  apps.push(app);
  return app;
}

describe('Expect: 100-continue', () => {
  it('a handler that answers before the body is needed: no 100 Continue after its response', async () => {
    const app = make();
    // text/plain is not parsed: the handler answers at once, without the body.
    app.post('/early', (ctx) => ctx.status(202).json({ early: true }));
    app.get('/ping', (ctx) => ctx.send('pong'));
    const { port } = await start(app);
    const socket = await rawSocket(port);
    socket.send(
      'POST /early HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\nContent-Length: 5\r\n' +
        'Expect: 100-continue\r\n\r\n',
    );
    await socket.until('{"early":true}');
    // Whatever the server sends next is read by the client as the start of the next response.
    socket.send('hello');
    socket.send('GET /ping HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    await socket.until('pong').catch(() => {}); // the server may close after an unread body
    const after = socket.received.slice(socket.received.indexOf('{"early":true}'));
    expect(after).not.toContain('100 Continue');
    expect(socket.received.startsWith('HTTP/1.1 202 ')).toBe(true);
    socket.end();
  });
});

describe('statuses that carry no response of their own', () => {
  it('ctx.status(1xx) is refused: an interim status as the answer desyncs a pipelined socket', async () => {
    const app = make();
    const errors: unknown[] = [];
    app.onError((err) => {
      errors.push(err);
    });
    app.get('/interim/:code', (ctx) => ctx.status(Number(ctx.params.code)).json({ first: true }));
    app.get('/second', (ctx) => ctx.send('second'));
    const { port } = await start(app);
    for (const code of [100, 101, 103, 199]) {
      const socket = await rawSocket(port);
      socket.send(
        `GET /interim/${code} HTTP/1.1\r\nHost: x\r\n\r\n` +
          'GET /second HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n',
      );
      await socket.until('second');
      // A client skips 1xx heads: the first final head it reads answers the first request.
      expect(socket.received).not.toMatch(/^HTTP\/1\.1 1\d\d /);
      expect(socket.received.startsWith('HTTP/1.1 500 ')).toBe(true);
      socket.end();
    }
    expect(errors).toHaveLength(4);
    for (const err of errors) expect(err).toBeInstanceOf(RangeError);
  });

  it('205 Reset Content is sent without content, whatever the handler passed', async () => {
    const app = make();
    app.post('/form', (ctx) => ctx.status(205).json({ reset: true }));
    app.get('/second', (ctx) => ctx.send('second'));
    const { port } = await start(app);
    const socket = await rawSocket(port);
    socket.send(
      'POST /form HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n' +
        'GET /second HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n',
    );
    await socket.until('second');
    const [first] = socket.received.split(/(?=HTTP\/1\.1 )/);
    expect(first).toMatch(/^HTTP\/1\.1 205 /);
    // RFC 9110 §15.3.6: no content; a client may read anything after the head as the next answer.
    expect(first).not.toContain('reset');
    expect(first!.endsWith('\r\n\r\n')).toBe(true);
    socket.end();
  });
});

describe('a file that shrinks while it is sent', () => {
  it('ends the connection: no next response inside the body its Content-Length promised', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'keel-shrink-'));
    try {
      // Larger than the socket buffers a paused client leaves room for, so the read is mid-file.
      const size = 32 * 1024 * 1024;
      writeFileSync(join(dir, 'big.bin'), Buffer.alloc(size, 97));
      const app = make();
      let res: ServerResponse | undefined;
      app.get('/big', (ctx) => {
        res = ctx.res;
        return ctx.sendFile('big.bin', { root: dir });
      });
      app.get('/ping', (ctx) => ctx.send('pong'));
      const { port } = await start(app);
      const socket = connect(port, '127.0.0.1');
      socket.pause();
      let received = 0;
      let tail = '';
      // Settles when the connection ends, or when a next response shows up inside the body.
      let desynced: () => void = () => {};
      const over = new Promise<void>((resolve) => {
        socket.on('close', () => resolve());
        desynced = resolve;
      });
      socket.on('error', () => {});
      socket.write('GET /big HTTP/1.1\r\nHost: x\r\n\r\n');
      // The response is under way (the server waits on the paused client), then the file shrinks.
      await until(() => (res?.socket?.writableLength ?? 0) > 0);
      truncateSync(join(dir, 'big.bin'), 1024);
      socket.write('GET /ping HTTP/1.1\r\nHost: x\r\n\r\n');
      socket.on('data', (chunk: Buffer) => {
        received += chunk.length;
        tail = (tail + chunk.toString('latin1')).slice(-200);
        if (tail.includes('pong')) desynced();
      });
      socket.resume();
      await within(over, 20_000, 'the connection end');
      socket.destroy();
      expect(received).toBeLessThan(size);
      expect(tail).not.toContain('pong');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
