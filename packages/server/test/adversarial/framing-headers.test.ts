// A handler's setHeader of the headers that frame the response. keel frames a body itself
// (Content-Length for one piece, chunked for a stream of unknown length): a Transfer-Encoding set
// beside it was sent with keel's Content-Length (RFC 9112 §6.2: never both; a proxy and the
// client may each pick another, and read the next response where the other reads this body),
// and a Content-Length that is no length (`abc`, two values) was sent as it was, the body
// unframed after it.
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import type { Context as Ctx } from '../../src/context';
import { createApp } from '../../src/index';
import { closedAfterEach, openRaw, start, until } from '../helpers';
import { guardProcess } from './harness';

guardProcess();

const { apps, sockets } = closedAfterEach();

async function served(route: (ctx: Ctx) => unknown) {
  const app = createApp();
  apps.push(app);
  const errors: unknown[] = [];
  app.onError((err) => {
    errors.push(err);
  });
  app.get('/r', route);
  app.get('/next', (ctx) => ctx.json({ next: true }));
  const { port } = await start(app);
  const c = await openRaw(port, sockets);
  c.s.write('GET /r HTTP/1.1\r\nHost: a\r\n\r\nGET /next HTTP/1.1\r\nHost: a\r\n\r\n');
  await until(() => c.text().includes('{"next":true}'));
  return { text: c.text(), errors };
}

describe('ctx.setHeader of a framing header', () => {
  it.each([
    ['Transfer-Encoding', 'chunked'],
    ['transfer-encoding', 'gzip, chunked'],
  ])(
    '%s is a RangeError naming it; the reply goes out framed by keel alone',
    async (name, value) => {
      let thrown: unknown;
      const { text } = await served((ctx) => {
        try {
          ctx.setHeader(name, value);
        } catch (err) {
          thrown = err;
        }
        return ctx.send('hello');
      });
      expect(thrown).toBeInstanceOf(RangeError);
      expect(String((thrown as Error).message)).toMatch(/Transfer-Encoding/i);
      expect(text).not.toMatch(/transfer-encoding/i);
      expect(text).toMatch(/content-length: 5\r\n[\s\S]*\r\n\r\nhelloHTTP\/1\.1 200 OK/);
    },
  );

  it.each([
    ['a word', 'abc'],
    ['a negative number', -1],
    ['a fraction', 1.5],
    ['two values', ['3', '6']],
    ['a list in one value', '3, 6'],
  ])('Content-Length of %s is a RangeError', async (_n, value) => {
    let thrown: unknown;
    const { text } = await served((ctx) => {
      try {
        ctx.setHeader('Content-Length', value as string);
      } catch (err) {
        thrown = err;
      }
      return ctx.send(Readable.from(['abcdef']));
    });
    expect(thrown).toBeInstanceOf(RangeError);
    expect(String((thrown as Error).message)).toMatch(/Content-Length/i);
    // Not sent: the stream goes out chunked.
    expect(text).not.toMatch(/content-length: (abc|-1|1\.5|3)/i);
    expect(text).toMatch(
      /transfer-encoding: chunked\r\n[\s\S]*?\r\n6\r\nabcdef\r\n0\r\n\r\nHTTP\/1\.1 200 OK/i,
    );
  });

  it('a Content-Length that is a length (a number or its digits) is taken', async () => {
    for (const value of [6, '6', ['6']]) {
      const { text } = await served((ctx) =>
        ctx.setHeader('content-length', value as string).send(Readable.from(['abcdef'])),
      );
      expect(text).toMatch(/content-length: 6\r\n[\s\S]*\r\n\r\nabcdefHTTP\/1\.1 200 OK/);
    }
  });
});

describe('a Content-Length a handler set on a bodiless status', () => {
  it.each([
    [
      'a 204 with send(text)',
      (ctx: Ctx) => ctx.status(204).setHeader('content-length', '5').send('hello'),
      'HTTP/1.1 204 No Content\r\n',
      null,
    ],
    [
      'a 204 with send(stream)',
      (ctx: Ctx) =>
        ctx
          .status(204)
          .setHeader('content-length', '5')
          .send(Readable.from(['hello'])),
      'HTTP/1.1 204 No Content\r\n',
      null,
    ],
    [
      'a 205',
      (ctx: Ctx) => ctx.status(205).setHeader('content-length', '5').send('hello'),
      'HTTP/1.1 205 Reset Content\r\n',
      '0',
    ],
    [
      "a 304 (the representation's length: kept)",
      (ctx: Ctx) => ctx.status(304).setHeader('content-length', '5').send('hello'),
      'HTTP/1.1 304 Not Modified\r\n',
      '5',
    ],
  ] as const)('%s', async (_n, route, head, length) => {
    const { text } = await served(route);
    expect(text.startsWith(head)).toBe(true);
    const first = text.slice(0, text.indexOf('\r\n\r\n'));
    expect([...first.matchAll(/content-length: (\S+)/gi)].map((m) => m[1])).toEqual(
      length === null ? [] : [length],
    );
    expect(text).toMatch(/\r\n\r\nHTTP\/1\.1 200 OK/);
  });
});

describe('ctx.setHeader of Connection', () => {
  it('"close" is taken: the connection closes after the answer', async () => {
    const app = createApp();
    apps.push(app);
    app.get('/r', (ctx) => ctx.setHeader('Connection', 'close').json({ r: 1 }));
    const { port } = await start(app);
    const c = await openRaw(port, sockets);
    c.s.write('GET /r HTTP/1.1\r\nHost: a\r\n\r\n');
    await until(() => c.closed());
    expect(c.text()).toMatch(/connection: close/i);
  });

  it.each(['keep-alive', 'upgrade', 'close, x'])('%s is a RangeError', (value) => {
    const app = createApp();
    apps.push(app);
    let thrown: unknown;
    app.get('/r', (ctx) => {
      try {
        ctx.setHeader('connection', value);
      } catch (err) {
        thrown = err;
      }
      return ctx.json({});
    });
    return app.inject({ method: 'GET', url: '/r' }).then(() => {
      expect(thrown).toBeInstanceOf(RangeError);
      expect(String((thrown as Error).message)).toMatch(/Connection/);
    });
  });

  it('a request whose framing keel does not trust (HTTP/1.0 with Transfer-Encoding) still closes when its handler tried keep-alive', async () => {
    const app = createApp();
    apps.push(app);
    app.post('/a', (ctx) => {
      try {
        ctx.setHeader('connection', 'keep-alive');
      } catch {
        // refused: keel closes this one
      }
      return ctx.json({ a: 1 });
    });
    const { port } = await start(app);
    const c = await openRaw(port, sockets);
    c.s.write(
      'POST /a HTTP/1.0\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\nGET /a HTTP/1.1\r\nHost: a\r\n\r\n',
    );
    await until(() => c.closed());
    expect(c.text().match(/HTTP\/1\.1 \d{3}/g)).toEqual(['HTTP/1.1 200']);
  });
});
