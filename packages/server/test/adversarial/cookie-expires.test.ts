// `setCookie(name, value, { expires: new Date(userInput) })` with an unparseable date threw
// "`setCookie options` must be a value a cookie can carry, got an object": neither the option
// nor what was wrong with it. It names `setCookie expires` and shows `Invalid Date` now.
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
  app.get('/c', (ctx) =>
    ctx.setCookie('a', 'v', { expires: new Date(ctx.query('at') ?? '') }).send('ok'),
  );
  ({ port } = await start(app));
});

afterAll(() => app.close());

describe('setCookie expires', () => {
  it('an Invalid Date is a RangeError naming `setCookie expires` and showing the date', async () => {
    const res = await raw(port, { path: '/c?at=next-tuesday' });
    expect(res.status).toBe(500);
    expect(res.headers['set-cookie']).toBeUndefined();
    expect(errors).toHaveLength(1);
    expect(errors[0]).toBeInstanceOf(RangeError);
    expect((errors[0] as Error).message).toBe(
      'keel: `setCookie expires` must be a valid Date, got Invalid Date',
    );
  });

  it('a valid one is sent', async () => {
    const res = await raw(port, { path: '/c?at=2030-01-01T00:00:00Z' });
    expect(res.headers['set-cookie']).toEqual([
      'a=v; Path=/; Expires=Tue, 01 Jan 2030 00:00:00 GMT; SameSite=Lax',
    ]);
  });
});
