// ctx.cookie reads what RFC 6265 §4.1.1 calls a cookie-value: `a="x y"` is the value `x y`
// (DQUOTE-wrapped; Go's net/http and Python's http.cookies take it so), not `"x y"` with its
// quotes; and a nameless `=v` pair is no cookie, so `ctx.cookie('')` is undefined.
import { describe, expect, it } from 'vitest';
import { raw, start, trackApps } from './helpers';

const createApp = trackApps();

/** What `ctx.cookie(name)` gives for each name when a real request sends `header`. */
async function read(header: string, names: string[]): Promise<Record<string, string | null>> {
  const app = createApp();
  app.get('/r', (ctx) =>
    ctx.json(Object.fromEntries(names.map((n) => [n, ctx.cookie(n) ?? null]))),
  );
  const { port } = await start(app);
  const res = await raw(port, { path: '/r', headers: { cookie: header } });
  expect(res.status).toBe(200);
  return JSON.parse(res.body) as Record<string, string | null>;
}

describe('ctx.cookie and quoted values', () => {
  it('strips the DQUOTEs that wrap a value, then URL-decodes it', async () => {
    expect(await read('a="x y"; b="q%20r"; c=""; d=plain', ['a', 'b', 'c', 'd'])).toEqual({
      a: 'x y',
      b: 'q r',
      c: '',
      d: 'plain',
    });
  });

  it('leaves a quote that wraps nothing (one `"`, or only on one side) and one that was sent encoded', async () => {
    expect(await read('a="; b="x; c=x"; d=%22x%22', ['a', 'b', 'c', 'd'])).toEqual({
      a: '"',
      b: '"x',
      c: 'x"',
      d: '"x"',
    });
  });

  it('a value set with quotes reads back with them (setCookie encodes them)', async () => {
    const app = createApp();
    app.get('/set', (ctx) => ctx.setCookie('q', '"x"').json({}));
    app.get('/get', (ctx) => ctx.json({ q: ctx.cookie('q') ?? null }));
    const { port } = await start(app);
    const set = await raw(port, { path: '/set' });
    const pair = (set.headers['set-cookie'] as string[])[0]!.split(';')[0]!;
    const res = await raw(port, { path: '/get', headers: { cookie: pair } });
    expect(JSON.parse(res.body)).toEqual({ q: '"x"' });
  });
});

describe('ctx.cookie and nameless pairs', () => {
  it("a nameless `=v` pair is no cookie: ctx.cookie('') is undefined", async () => {
    expect(await read('=v; a=1', ['', 'a'])).toEqual({ '': null, a: '1' });
    expect(await read(' =v', [''])).toEqual({ '': null });
    expect(await read('a=1', [''])).toEqual({ '': null });
  });
});
