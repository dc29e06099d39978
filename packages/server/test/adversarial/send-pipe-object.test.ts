// ctx.send took any object with a `pipe` method for a stream (a Zod schema, an RxJS Observable,
// a query builder have one): it wrote a 200 octet-stream head, then pipeline refused the object
// and the connection was destroyed (the client saw a hang-up, not an answer). A Node stream is
// what pipeline takes for one, `pipe` and `on`; anything else is sent as JSON, as documented.
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type App, createApp } from '../../src/index';
import { raw, start } from '../helpers';
import { guardProcess } from './harness';

guardProcess();

let app: App;
let port: number;
const errors: unknown[] = [];

beforeAll(async () => {
  app = createApp();
  app.onError((err) => {
    errors.push(err);
  });
  app.get('/pipe-object', (ctx) =>
    ctx.send({
      name: 'schema',
      pipe() {
        return this;
      },
    }),
  );
  app.get('/readable', (ctx) => ctx.send(Readable.from(['a', 'b'])));
  ({ port } = await start(app));
});

afterAll(() => app.close());

describe('ctx.send of an object with a pipe method that is no stream', () => {
  it('is sent as JSON', async () => {
    const res = await raw(port, { path: '/pipe-object' });
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('application/json');
    expect(res.body).toBe('{"name":"schema"}');
    expect(errors).toEqual([]);
  });

  it('a Node Readable is still streamed', async () => {
    const res = await raw(port, { path: '/readable' });
    expect(res.body).toBe('ab');
    expect(res.headers['content-type']).toBe('application/octet-stream');
  });
});
