import { connect } from 'node:net';
import { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { appStats } from '../../src/app';
import type { Context } from '../../src/index';
import { start, trackApps, until } from '../helpers';

const make = trackApps();

describe('a handler that gives up because its client left', () => {
  it('is not reported as "sent no response": there is nobody to answer', async () => {
    const errors: unknown[] = [];
    const app = make();
    app.onError((err) => {
      errors.push(err);
    });
    let returned = false;
    app.get('/wait', async (ctx) => {
      // Waits for the client to leave (as a long poll or a render aborted on close does).
      await new Promise<void>((resolve) => ctx.res.once('close', () => resolve()));
      await new Promise((r) => setTimeout(r, 10));
      returned = true;
    });
    app.get('/ok', (ctx) => ctx.json({ ok: true }));
    const { port, base } = await start(app);
    const socket = connect(port, '127.0.0.1');
    socket.write('GET /wait HTTP/1.1\r\nHost: x\r\n\r\n');
    await new Promise((r) => setTimeout(r, 50));
    socket.destroy();
    await until(() => returned);
    await new Promise((r) => setTimeout(r, 20));
    expect(errors).toEqual([]);
    // The ctx went back to the pool in a usable state.
    expect(await (await fetch(`${base}/ok`)).json()).toEqual({ ok: true });
  });

  it('a handler reading the upload itself fails with the reset: not reported either', async () => {
    const errors: unknown[] = [];
    const app = make();
    app.onError((err) => {
      errors.push(err);
    });
    let failed: unknown = null;
    app.post('/upload', async (ctx) => {
      let n = 0;
      try {
        // Not a type the body reader takes: the handler streams ctx.req itself.
        for await (const chunk of ctx.req) n += (chunk as Buffer).byteLength;
      } catch (err) {
        failed = err;
        throw err;
      }
      return ctx.json({ n });
    });
    app.get('/ok', (ctx) => ctx.json({ ok: true }));
    const { port, base } = await start(app);
    const socket = connect(port, '127.0.0.1');
    socket.write(
      `POST /upload HTTP/1.1\r\nHost: x\r\nContent-Type: application/octet-stream\r\nContent-Length: 100000\r\n\r\n${'x'.repeat(1000)}`,
    );
    await new Promise((r) => setTimeout(r, 50));
    socket.resetAndDestroy();
    await until(() => failed !== null && appStats(app).inflight === 0);
    expect((failed as { code?: string }).code).toBe('ECONNRESET');
    await new Promise((r) => setTimeout(r, 20));
    expect(errors).toEqual([]);
    expect(await (await fetch(`${base}/ok`)).json()).toEqual({ ok: true });
  });

  it('an error of its own after its client left is still reported', async () => {
    const errors: unknown[] = [];
    const app = make();
    app.onError((err) => {
      errors.push(err);
    });
    const bug = new Error('a bug, not the client');
    app.post('/upload', async (ctx) => {
      await new Promise<void>((resolve) => ctx.res.once('close', () => resolve()));
      throw bug;
    });
    const { port } = await start(app);
    const socket = connect(port, '127.0.0.1');
    socket.write(
      'POST /upload HTTP/1.1\r\nHost: x\r\nContent-Type: application/octet-stream\r\nContent-Length: 10\r\n\r\nx',
    );
    await new Promise((r) => setTimeout(r, 50));
    socket.resetAndDestroy();
    await until(() => errors.length === 1 && appStats(app).inflight === 0);
    expect(errors).toEqual([bug]);
  });

  it.each([
    ['json', '/json'],
    ['a large json (sliced)', '/json-big'],
    ['a 204', '/no-content'],
    ['a stream', '/stream'],
    ['a file', '/file'],
    ['an event stream', '/events'],
    ['ctx.res.writeHead and end', '/raw-end'],
    ['ctx.res.end alone (an implicit head)', '/raw-implicit'],
    ['ctx.res written and left open', '/raw-open'],
    ['ctx.res ended with a large chunk', '/raw-big'],
  ])(
    'answering with %s once its client left: onResponse reports status 0, not finished',
    async (_what, path) => {
      const errors: unknown[] = [];
      const infos: { status: number; finished: boolean }[] = [];
      const app = make();
      app.onError((err) => {
        errors.push(err);
      });
      app.onResponse((_ctx, { status, finished }) => {
        infos.push({ status, finished });
      });
      let released = false;
      const gone = (ctx: Context): Promise<void> =>
        new Promise((resolve) => ctx.res.once('close', () => resolve()));
      app.get('/json', async (ctx) => {
        await gone(ctx);
        return ctx.json({ late: true });
      });
      app.get('/json-big', async (ctx) => {
        await gone(ctx);
        return ctx.json({ late: 'x'.repeat(200_000) });
      });
      app.get('/no-content', async (ctx) => {
        await gone(ctx);
        return ctx.status(204).send(null);
      });
      app.get('/stream', async (ctx) => {
        await gone(ctx);
        const source = Readable.from(['a', 'b']);
        source.once('close', () => (released = true));
        return ctx.send(source);
      });
      app.get('/file', async (ctx) => {
        await gone(ctx);
        return ctx.sendFile(fileURLToPath(import.meta.url));
      });
      app.get('/events', async (ctx) => {
        await gone(ctx);
        ctx.sseEvent('late', 1);
      });
      // Node takes a head and a body on a destroyed response and sends none of it.
      app.get('/raw-end', async (ctx) => {
        await gone(ctx);
        ctx.res.writeHead(200, { 'content-type': 'text/plain' });
        ctx.res.end('late');
      });
      app.get('/raw-implicit', async (ctx) => {
        await gone(ctx);
        ctx.res.end('late');
      });
      app.get('/raw-open', async (ctx) => {
        await gone(ctx);
        ctx.res.write('late');
      });
      app.get('/raw-big', async (ctx) => {
        await gone(ctx);
        ctx.res.end(Buffer.alloc(200_000));
      });
      const { port } = await start(app);
      const socket = connect(port, '127.0.0.1');
      socket.on('error', () => {});
      socket.write(`GET ${path} HTTP/1.1\r\nHost: x\r\n\r\n`);
      await new Promise((r) => setTimeout(r, 30));
      socket.destroy();
      await until(() => infos.length === 1 && appStats(app).inflight === 0);
      expect(infos).toEqual([{ status: 0, finished: false }]);
      expect(errors).toEqual([]);
      if (path === '/stream') expect(released).toBe(true);
    },
  );
});

describe('ctx.signal: the client leaving, for a handler that waits', () => {
  it('aborts when the client leaves before the response, so a handler waiting on it ends', async () => {
    const infos: { status: number; finished: boolean }[] = [];
    const app = make();
    app.onResponse((_ctx, info) => {
      infos.push(info);
    });
    let reason: unknown = null;
    app.get('/wait', async (ctx) => {
      // Waits for nothing else: without the signal it would hold its slot for ever.
      await new Promise<void>((resolve) => {
        ctx.signal.addEventListener('abort', () => resolve(), { once: true });
      });
      reason = ctx.signal.reason;
    });
    const { port } = await start(app);
    const socket = connect(port, '127.0.0.1');
    socket.on('error', () => {});
    socket.write('GET /wait HTTP/1.1\r\nHost: x\r\n\r\n');
    await until(() => appStats(app).inflight === 1);
    socket.destroy();
    await until(() => appStats(app).inflight === 0 && infos.length === 1);
    expect(infos).toEqual([{ status: 0, finished: false }]);
    expect(reason).toBeInstanceOf(DOMException);
    expect((reason as DOMException).name).toBe('AbortError');
  });

  it('is aborted already when read after the client left', async () => {
    const app = make();
    let aborted: boolean | null = null;
    app.get('/late', async (ctx) => {
      await new Promise<void>((resolve) => ctx.res.once('close', () => resolve()));
      aborted = ctx.signal.aborted;
    });
    const { port } = await start(app);
    const socket = connect(port, '127.0.0.1');
    socket.on('error', () => {});
    socket.write('GET /late HTTP/1.1\r\nHost: x\r\n\r\n');
    await until(() => appStats(app).inflight === 1);
    socket.destroy();
    await until(() => aborted !== null);
    expect(aborted).toBe(true);
  });

  it('is not aborted by a response that finished, nor when its connection closes afterwards', async () => {
    const app = make();
    let signal: AbortSignal | null = null;
    app.get('/ok', (ctx) => {
      signal = ctx.signal;
      return ctx.json({ ok: true });
    });
    const { base } = await start(app);
    const response = await fetch(`${base}/ok`, { headers: { connection: 'close' } });
    expect(await response.json()).toEqual({ ok: true });
    await until(() => appStats(app).inflight === 0);
    await new Promise((r) => setTimeout(r, 20));
    expect(signal!.aborted).toBe(false);
  });
});
