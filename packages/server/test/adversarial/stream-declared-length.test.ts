// A streamed body (ctx.send of a Node or web stream) under a Content-Length the handler set: the
// declared length frames the response on a keep-alive connection, so a source longer than it
// would put its surplus where the client reads the next response, and a shorter one would leave
// the client waiting for bytes that never come (and read the next response as this body).
import { constants, createServer as createHttp2Server } from 'node:http2';
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createApp } from '../../src/index';
import { h2Fixture } from '../h2-helpers';
import { closedAfterEach, openRaw, start, until } from '../helpers';
import { guardProcess } from './harness';

guardProcess();

const { apps, sockets } = closedAfterEach();

/** One handler streaming `chunks` under `Content-Length: declared`, then GET /next pipelined. */
async function pipelined(declared: number, chunks: string[], web = false) {
  const app = createApp();
  apps.push(app);
  const finished: boolean[] = [];
  const errors: unknown[] = [];
  app.onResponse((_ctx, info) => {
    finished.push(info.finished);
  });
  app.onError((err) => {
    errors.push(err);
  });
  app.get('/body', (ctx) =>
    ctx
      .setHeader('content-length', String(declared))
      .send(
        web ? (Readable.toWeb(Readable.from(chunks)) as ReadableStream) : Readable.from(chunks),
      ),
  );
  app.get('/next', (ctx) => ctx.json({ next: true }));
  const { port } = await start(app);
  const c = await openRaw(port, sockets);
  c.s.write('GET /body HTTP/1.1\r\nHost: a\r\n\r\nGET /next HTTP/1.1\r\nHost: a\r\n\r\n');
  return { c, finished, errors };
}

describe('ctx.send(stream) with a Content-Length set', () => {
  it('a source of exactly the declared length: the body, then the next response', async () => {
    const { c, finished } = await pipelined(6, ['abc', 'def']);
    await until(() => c.text().includes('{"next":true}'));
    expect(c.text()).toMatch(/\r\n\r\nabcdefHTTP\/1\.1 200 OK\r\n/);
    await until(() => finished.length === 2);
    expect(finished).toEqual([true, true]);
  });

  it('a source longer than declared: no byte past the length is sent; the connection closes', async () => {
    const { c, finished, errors } = await pipelined(4, ['abc', 'defgh', 'XYZ']);
    await until(() => c.closed());
    // What went out of the body is a part of its first 4 bytes: a surplus byte would be read as
    // the start of the next response.
    const body = c.text().slice(c.text().indexOf('\r\n\r\n') + 4);
    expect('abcd'.startsWith(body)).toBe(true);
    expect(c.text()).not.toContain('{"next":true}');
    await until(() => errors.length === 1);
    expect(String((errors[0] as Error).message)).toMatch(
      /`ctx.send stream length` must be 4 bytes, its Content-Length .*, got "at least 8 bytes"/,
    );
    await until(() => finished.length >= 1);
    expect(finished[0]).toBe(false);
  });

  it('a source shorter than declared: the connection closes (the client sees a short body)', async () => {
    const { c, finished, errors } = await pipelined(10, ['abc']);
    await until(() => c.closed());
    expect(c.text()).toMatch(/\r\n\r\nabc$/);
    expect(c.text()).not.toContain('{"next":true}');
    await until(() => errors.length === 1);
    expect(String((errors[0] as Error).message)).toMatch(
      /must be 10 bytes, its Content-Length .*, got "3 bytes"/,
    );
    await until(() => finished.length >= 1);
    expect(finished[0]).toBe(false);
  });

  it('a web stream longer than declared: the same', async () => {
    const { c, errors } = await pipelined(2, ['abc'], true);
    await until(() => c.closed());
    expect(c.text()).not.toContain('abc');
    expect(c.text()).not.toContain('{"next":true}');
    await until(() => errors.length === 1);
    expect(String((errors[0] as Error).message)).toMatch(/must be 2 bytes.*got "at least 3 bytes"/);
  });

  it('Content-Length: 0 and an empty source: an empty body, then the next response', async () => {
    const { c, finished, errors } = await pipelined(0, []);
    await until(() => c.text().includes('{"next":true}'));
    expect(c.text()).toMatch(/content-length: 0\r\n[\s\S]*?\r\n\r\nHTTP\/1\.1 200 OK\r\n/i);
    await until(() => finished.length === 2);
    expect(finished).toEqual([true, true]);
    expect(errors).toEqual([]);
  });
});

describe('ctx.send(stream) with a Content-Length set, over HTTP/2', () => {
  const h2 = h2Fixture();

  it.each([
    ['longer', 3, ['abc', 'def']],
    ['shorter', 10, ['abc']],
  ] as const)(
    'a source %s than declared: the stream is reset, the session serves on',
    async (_n, declared, chunks) => {
      const app = createApp();
      h2.apps.push(app);
      const errors: unknown[] = [];
      app.onError((err) => {
        errors.push(err);
      });
      app.get('/body', (ctx) =>
        ctx.setHeader('content-length', String(declared)).send(Readable.from([...chunks])),
      );
      app.get('/ok', (ctx) => ctx.send('ok'));
      const port = await h2.listen(app, createHttp2Server(app.handler as never));
      const s = h2.connect(`http://127.0.0.1:${port}`);
      const stream = s.request({ ':path': '/body' });
      stream.on('error', () => {});
      let ended = false;
      stream.on('data', () => {});
      stream.on('end', () => {
        ended = true;
      });
      await until(() => stream.closed);
      expect(ended).toBe(false);
      expect(stream.rstCode).not.toBe(constants.NGHTTP2_NO_ERROR);
      await until(() => errors.length === 1);
      expect(errors[0]).toBeInstanceOf(RangeError);
      const next = s.request({ ':path': '/ok' });
      let text = '';
      next.setEncoding('utf8');
      next.on('data', (c: string) => {
        text += c;
      });
      await new Promise((r) => next.on('end', r));
      expect(text).toBe('ok');
    },
  );
});
