import { afterEach, describe, expect, it } from 'vitest';
import { type App, createApp } from '../src/index';
import { raw, start } from './helpers';

const apps: App[] = [];
function make(options?: Parameters<typeof createApp>[0]): App {
  const app = createApp(options);
  app.post('/echo', (ctx) => ctx.json({ body: ctx.body ?? null }));
  apps.push(app);
  return app;
}
afterEach(async () => {
  await Promise.all(apps.splice(0).map((a) => a.close()));
});

const nested = (depth: number): string => '['.repeat(depth) + ']'.repeat(depth);

describe('JSON nesting depth', () => {
  it('a JSON body nested past maxJsonDepth is a 400 naming the limit, not a 500 per request', async () => {
    // A 2 MB body nested 1,000,000 deep parsed (JSON.parse is iterative), then echoing it
    // overflowed JSON.stringify's stack: a 500 and an onError entry per request, at the
    // client's will.
    const app = make({ bodyLimit: 4 * 1024 * 1024 });
    const errors: unknown[] = [];
    app.onError((err) => {
      errors.push(err);
    });
    const { port } = await start(app);
    const deep = await raw(port, {
      method: 'POST',
      path: '/echo',
      headers: { 'content-type': 'application/json' },
      body: nested(1_000_000),
    });
    expect(deep.status).toBe(400);
    expect(JSON.parse(deep.body)).toMatchObject({
      message: 'JSON body is nested deeper than 1000 levels',
    });
    // Brackets inside strings are text, not nesting.
    const inString = `{"a":${JSON.stringify('['.repeat(5000))}}`;
    const ok = await raw(port, {
      method: 'POST',
      path: '/echo',
      headers: { 'content-type': 'application/json' },
      body: `[${nested(999)},"\\"[[",${inString}]`,
    });
    expect(ok.status).toBe(200);
    expect(errors).toEqual([]);
  });

  it('is set per app and per route, exactly at the limit', async () => {
    const app = make({ maxJsonDepth: 3 });
    app.post('/deep', { maxJsonDepth: 5 }, (ctx) => ctx.json({ body: ctx.body }));
    const post = (url: string, body: string) =>
      app.inject({ method: 'POST', url, headers: { 'content-type': 'application/json' }, body });
    expect((await post('/echo', '[[{"a":1}]]')).status).toBe(200);
    const over = await post('/echo', '[[[{"a":1}]]]');
    expect(over.status).toBe(400);
    expect(over.json()).toMatchObject({ message: 'JSON body is nested deeper than 3 levels' });
    expect((await post('/echo', '{"s":"[[[[[[[[","t":"\\\\"}')).status).toBe(200);
    expect((await post('/echo', '{"a":{"a":[1,2]},"b":[]}')).status).toBe(200);
    expect((await post('/echo', '{"a":[1,{"b":{"c":1}}]}')).status).toBe(400);
    expect((await post('/deep', nested(5))).status).toBe(200);
    expect((await post('/deep', nested(6))).status).toBe(400);
    // Past ~4000 levels JSON.stringify overflows anyway.
    for (const bad of [0, 2049]) {
      expect(() => createApp({ maxJsonDepth: bad })).toThrow(
        new RangeError(`keel: \`maxJsonDepth\` must be an integer in 1-2048, got ${bad}`),
      );
    }
    expect(() => createApp().post('/', { maxJsonDepth: '9' as never }, () => {})).toThrow(
      TypeError,
    );
  });
});

describe('form and query keys', () => {
  it('a form with a __proto__ key is a 400, as a JSON body is', async () => {
    // The form's object has no prototype, but `Object.assign(target, body)` would set target's
    // prototype to a repeated key's array.
    const app = make();
    const target: Record<string, unknown> = {};
    app.post('/merge', (ctx) => {
      Object.assign(target, ctx.body);
      return ctx.json({ proto: Object.getPrototypeOf(target) === Object.prototype });
    });
    for (const body of ['__proto__=a&__proto__=b', 'x=1&__proto__=a', '%5F%5Fproto%5F%5F=a']) {
      const res = await app.inject({
        method: 'POST',
        url: '/merge',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body,
      });
      expect(res.status, body).toBe(400);
      expect(res.json()).toMatchObject({ message: 'Form body has a forbidden __proto__ key' });
    }
    expect(Object.getPrototypeOf(target)).toBe(Object.prototype);
    const fine = await app.inject({
      method: 'POST',
      url: '/echo',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'proto=1&constructor=2',
    });
    expect(fine.json()).toEqual({ body: { proto: '1', constructor: '2' } });
  });

  it('a query of more than 1000 parameters is a 414 when read, not cut to its first 1000', async () => {
    // querystring's maxKeys dropped every parameter after the 1000th in silence (as Express
    // does), while a form body of as many fields is refused.
    const app = make();
    app.get('/q', (ctx) => ctx.json({ last: ctx.query('last') ?? null, all: ctx.queryAll('k') }));
    app.get('/static', (ctx) => ctx.send('no query read'));
    const query = (n: number): string =>
      `${Array.from({ length: n - 1 }, (_, i) => `k=${i}`).join('&')}&last=yes`;
    const ok = await app.inject({ url: `/q?${query(1000)}` });
    expect(ok.status).toBe(200);
    expect(ok.json()).toMatchObject({ last: 'yes' });
    expect((ok.json() as { all: string[] }).all).toHaveLength(999);
    for (const url of [`/q?${query(1001)}`, `/q?${'&'.repeat(1000)}last=yes`]) {
      const res = await app.inject({ url });
      expect(res.status).toBe(414);
      expect(res.json()).toMatchObject({ message: 'Query string has more than 1000 parameters' });
    }
    // Only a handler that reads the query is refused.
    expect((await app.inject({ url: `/static?${query(1001)}` })).status).toBe(200);
  });
});
