// A header set after the response went out (`ctx.json(x); ctx.setHeader('x-a', 'b')`, or a
// cookie set in code after `await next()` once the handler answered) reached onError as Node's
// "Cannot set headers after they are sent to the client", naming neither the header nor keel's
// call. It now says which call and which header, in the package's words.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type App, createApp } from '../../src/index';
import { raw, start } from '../helpers';
import { guardProcess } from './harness';

guardProcess();

let app: App;
let port: number;
const errors: Error[] = [];

beforeAll(async () => {
  app = createApp();
  app.onError((err) => {
    errors.push(err as Error);
  });
  app.get('/header', (ctx) => {
    ctx.json(1);
    ctx.setHeader('x-late', 'b');
  });
  app.get('/cookie', (ctx) => {
    ctx.json(1);
    ctx.setCookie('late', 'v');
  });
  app.get('/cache', (ctx) => {
    ctx.json(1);
    ctx.cacheControl({ maxAge: 5 });
  });
  ({ port } = await start(app));
});

afterAll(() => app.close());

describe('headers after the response', () => {
  it.each([
    ['/header', 'setHeader', 'x-late'],
    ['/cookie', 'setCookie', 'set-cookie'],
    ['/cache', 'cacheControl', 'cache-control'],
  ])('%s: the client has its answer; onError names %s and %s', async (path, call, header) => {
    errors.length = 0;
    const res = await raw(port, { path });
    expect(res.status).toBe(200);
    expect(res.body).toBe('1');
    expect(errors).toHaveLength(1);
    expect(errors[0]!.message).toBe(
      `keel: ctx.${call}() set "${header}" after the response was sent; set headers before the response operation`,
    );
  });
});
