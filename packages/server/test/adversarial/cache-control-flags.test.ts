// `cacheControl({ noStore: 'true', maxAge: 60 })` (a flag read from an env var or a config file)
// sent `Cache-Control: max-age=60`: the string was no `true`, so the response that was to be
// stored nowhere was cacheable for a minute, and `public: 'false'` left out `private`, which let
// shared caches keep a per-user response. A flag that is no boolean is a TypeError naming it, as
// setCookie's `httpOnly` / `secure` are, before any header is set.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type App, createApp } from '../../src/index';
import { raw, start } from '../helpers';
import { guardProcess } from './harness';

guardProcess();

let app: App;
let port: number;

beforeAll(async () => {
  app = createApp();
  // The error as the handler caught it: its class and message, and what was set by then.
  app.get('/cache', (ctx) => {
    try {
      ctx.cacheControl(JSON.parse(ctx.query('o') ?? '{}') as object);
    } catch (err) {
      const { name, message } = err as Error;
      const set = ctx.res.getHeader('cache-control') ?? null;
      return ctx.status(500).json({ name, message, set });
    }
    return ctx.send('ok');
  });
  ({ port } = await start(app));
});

afterAll(() => app.close());

const get = (options: object) =>
  raw(port, { path: `/cache?o=${encodeURIComponent(JSON.stringify(options))}` });

describe('cacheControl flags are booleans', () => {
  it.each([
    [{ noStore: 'true', maxAge: 60 }, 'noStore', '"true"'],
    [{ noStore: 1, maxAge: 60 }, 'noStore', '1'],
    [{ public: 'false', maxAge: 60 }, 'public', '"false"'],
    [{ public: 0, maxAge: 60 }, 'public', '0'],
    [{ immutable: 'yes', maxAge: 60 }, 'immutable', '"yes"'],
    [{ noStore: true, public: 'yes' }, 'public', '"yes"'],
  ])('%j: a TypeError naming the flag, no Cache-Control sent', async (options, flag, shown) => {
    const res = await get(options);
    expect(res.status).toBe(500);
    expect(JSON.parse(res.body)).toEqual({
      name: 'TypeError',
      message: `keel: \`cacheControl ${flag}\` must be true or false, got ${shown}`,
      set: null,
    });
  });

  it.each([
    [{ noStore: true, maxAge: 60 }, 'no-store'],
    [{ noStore: false, maxAge: 60 }, 'max-age=60'],
    [{ public: false, maxAge: 60 }, 'private, max-age=60'],
    [{ public: true, maxAge: 60, immutable: true }, 'public, max-age=60, immutable'],
    [{ immutable: false, maxAge: 60 }, 'max-age=60'],
  ])('%j -> %s', async (options, header) => {
    const res = await get(options);
    expect([res.status, res.headers['cache-control']]).toEqual([200, header]);
  });
});
