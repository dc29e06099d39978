// `ctx.send(Readable.from([{ id: 1 }]))`, an object-mode Node stream, ended the process: its
// 'data' handed the object to the response's write, which threw inside the stream's emit
// (`bytes.subarray is not a function`), past pipeline and onError. A chunk that is no string or
// bytes now fails the send as a web stream's does: the connection is closed, onError told, the
// next request served. And a handler's own `res.write(42)` (caught) left keel's write queue
// holding the bad chunk: every later write and the end waited behind it for ever.
import { Readable, Stream } from 'node:stream';
import { runInNewContext } from 'node:vm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type App, createApp } from '../../src/index';
import { raw, start, until } from '../helpers';
import { guardProcess } from './harness';

guardProcess();

let app: App;
let port: number;
const errors: unknown[] = [];
const caught: unknown[] = [];

const sources: Record<string, () => Readable | ReadableStream> = {
  object: () => Readable.from([{ id: 1 }]),
  number: () => Readable.from(['ok', 42]),
  'object with a Content-Length': () => Readable.from([{ id: 1 }]),
  // An old-style stream (Stream, the base of pre-streams2 sources) emits from wherever its
  // producer runs: a timer here, where a throw out of its emit ended the process.
  'old-style object': () => {
    const legacy = new Stream() as Stream & Readable;
    setTimeout(() => {
      legacy.emit('data', { id: 1 });
      legacy.emit('end');
    }, 5);
    return legacy;
  },
  'web object': () =>
    new ReadableStream({
      start(c) {
        c.enqueue({ id: 1 });
        c.close();
      },
    }),
};

beforeAll(async () => {
  app = createApp();
  app.onError((err) => {
    errors.push(err);
  });
  app.get('/s/:which', async (ctx) => {
    const which = ctx.params.which!;
    if (which === 'object with a Content-Length') ctx.setHeader('content-length', '10');
    try {
      await ctx.send(sources[which]!());
    } catch (err) {
      caught.push(err);
      throw err;
    }
  });
  app.get('/write-number', (ctx) => {
    ctx.res.writeHead(200, { 'content-type': 'text/plain' });
    ctx.res.write('a');
    try {
      ctx.res.write(42 as unknown as string);
    } catch (err) {
      caught.push(err);
    }
    ctx.res.end('b');
  });
  // A view that is no Uint8Array, larger than a slice: refused as a whole, never sliced.
  app.get('/write-view', (ctx) => {
    ctx.res.writeHead(200, { 'content-type': 'text/plain' });
    try {
      ctx.res.write(new DataView(new ArrayBuffer(1 << 20)) as unknown as string);
    } catch (err) {
      caught.push(err);
    }
    ctx.res.end('b');
  });
  // Bytes of another realm (a vm context: jsdom, Jest) are bytes, in order behind a sliced
  // write and through an object-mode stream (an `instanceof Uint8Array` check took them for
  // objects: written ahead of the slices, or refused).
  const foreign = (text: string) =>
    runInNewContext('new Uint8Array(Array.from(t, (c) => c.charCodeAt(0)))', {
      t: text,
    }) as Uint8Array;
  app.get('/realm-order', (ctx) => {
    ctx.res.writeHead(200, { 'content-type': 'application/octet-stream' });
    ctx.res.write(Buffer.alloc(4 * 1024 * 1024, 0x61));
    ctx.res.write(foreign('MARK'));
    ctx.res.end();
  });
  app.get('/realm-stream', (ctx) => ctx.send(Readable.from([foreign('hi')])));
  app.get('/ok', (ctx) => ctx.send('still here'));
  ({ port } = await start(app));
});

afterAll(() => app.close());

describe('ctx.send of a stream whose chunks are no bytes', () => {
  it.each(Object.keys(sources))(
    '%s: the connection is closed, onError told, the process serves on',
    async (which) => {
      errors.length = 0;
      caught.length = 0;
      const outcome = await raw(port, { path: `/s/${encodeURIComponent(which)}` }).then(
        (res) => `${res.status} ${res.body}`,
        (err: NodeJS.ErrnoException) => err.code ?? err.message,
      );
      // Never a body made of the object: cut off (the head may have gone out first).
      expect(outcome).not.toContain('id');
      await until(() => errors.length > 0);
      expect(errors).toHaveLength(1);
      expect(errors[0]).toBeInstanceOf(TypeError);
      expect(caught).toHaveLength(1);
      const next = await raw(port, { path: '/ok' });
      expect(next.body).toBe('still here');
    },
  );
});

describe("a handler's own res.write of a value that is no bytes", () => {
  it("throws Node's own error and leaves the response to finish", async () => {
    caught.length = 0;
    const res = await raw(port, { path: '/write-number' });
    expect(res.status).toBe(200);
    expect(res.body).toBe('ab');
    expect((caught[0] as NodeJS.ErrnoException).code).toBe('ERR_INVALID_ARG_TYPE');
    caught.length = 0;
    const view = await raw(port, { path: '/write-view' });
    expect(view.body).toBe('b');
    expect((caught[0] as NodeJS.ErrnoException).code).toBe('ERR_INVALID_ARG_TYPE');
  });
});

describe("another realm's Uint8Array", () => {
  it('is written in order behind a sliced write, and streams through an object-mode source', async () => {
    const ordered = await raw(port, { path: '/realm-order' });
    expect(ordered.raw.indexOf('MARK')).toBe(4 * 1024 * 1024);
    expect(ordered.raw.length).toBe(4 * 1024 * 1024 + 4);
    const streamed = await raw(port, { path: '/realm-stream' });
    expect(streamed.body).toBe('hi');
  });
});
