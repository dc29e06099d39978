// Item 12: a logging middleware (the README's own pattern) saw 200 for responses that ended as
// 404 / 418 / 500. app.onResponse sees what the client got.
import { request } from 'node:http';
import { describe, expect, it } from 'vitest';
import { appStats } from '../../src/app';
import { createApp, HttpException } from '../../src/index';
import { start, until } from '../helpers';
import { guardProcess } from './harness';

guardProcess();

describe('item 12: middleware can see the final status', () => {
  it('onResponse gets the status the client received, thrown errors included', async () => {
    const app = createApp();
    app.onError(() => {});
    const logged: string[] = [];
    const statusAfterNext: number[] = [];
    app.use(async (ctx, next) => {
      try {
        await next();
      } finally {
        statusAfterNext.push(ctx.res.statusCode);
      }
    });
    app.onResponse((ctx, response) => {
      logged.push(`${ctx.method} ${ctx.path} ${response.status}${response.finished ? '' : ' cut'}`);
    });
    app.get('/ok', (ctx) => ctx.json(1));
    app.get('/teapot', () => {
      throw new HttpException(418);
    });
    app.get('/boom', async () => {
      await null;
      throw new Error('x');
    });
    app.get('/created', (ctx) => ctx.status(201).send('made'));
    for (const url of ['/ok', '/missing', '/teapot', '/boom', '/created'])
      await app.inject({ url });
    expect(logged).toEqual([
      'GET /ok 200',
      'GET /missing 404',
      'GET /teapot 418',
      'GET /boom 500',
      'GET /created 201',
    ]);
    // The trap onResponse avoids: after `await next()` the error response is not written yet.
    expect(statusAfterNext.slice(1, 4)).toEqual([200, 200, 200]);
  });

  it('a client that leaves mid-body is reported as not finished', async () => {
    const app = createApp();
    const seen: { status: number; finished: boolean }[] = [];
    app.onResponse((_ctx, response) => {
      seen.push(response);
    });
    app.post('/upload', (ctx) => ctx.json(1));
    const { port } = await start(app);
    const req = request({
      host: '127.0.0.1',
      port,
      method: 'POST',
      path: '/upload',
      headers: { 'content-type': 'application/json', 'content-length': '100' },
    });
    req.on('error', () => {});
    req.write('{"a":');
    await until(() => appStats(app).inflight === 1);
    req.destroy();
    await until(() => seen.length === 1);
    expect(seen[0]?.finished).toBe(false);
    await app.close();
  });

  it('a throwing hook is reported and changes nothing', async () => {
    const app = createApp();
    const errors: unknown[] = [];
    app.onError((err) => {
      errors.push(err);
    });
    app.onResponse(() => {
      throw new Error('hook failed');
    });
    app.get('/', (ctx) => ctx.json(1));
    expect((await app.inject({ url: '/' })).status).toBe(200);
    expect((await app.inject({ url: '/' })).status).toBe(200);
    expect(String(errors[0])).toMatch(/hook failed/);
    expect(() => app.onResponse('x' as never)).toThrow(TypeError);
  });
});
