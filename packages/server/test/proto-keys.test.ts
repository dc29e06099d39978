// Request input named like Object.prototype's keys (`__proto__`, `constructor`, `toString`): read
// as any other name, never dropped, never read from a prototype, never setting one.

import { describe, expect, it } from 'vitest';
import { raw, start, trackApps } from './helpers';

const app = trackApps();

describe('input keys named __proto__, constructor, toString', () => {
  it('query, cookies and headers of those names are read as sent; nothing is polluted', async () => {
    const a = app();
    a.get('/q', (ctx) =>
      ctx.json({
        proto: ctx.query('__proto__') ?? null,
        protoAll: ctx.queryAll('__proto__'),
        ctor: ctx.query('constructor') ?? null,
        toStr: ctx.query('toString') ?? null,
        cookieProto: ctx.cookie('__proto__') ?? null,
        cookieCtor: ctx.cookie('constructor') ?? null,
        headerProto: ctx.header('__proto__') ?? null,
        headerCtor: ctx.header('constructor') ?? null,
        headerToStr: ctx.header('toString') ?? null,
        validated: ctx.validate({ a: { type: 'integer' } }),
        polluted: ({} as Record<string, unknown>).a ?? null,
      }),
    );
    const { port } = await start(a);
    const got = await raw(port, {
      path: '/q?__proto__=x&constructor=y&__proto__=z&a=1',
      headers: { cookie: '__proto__=c1; constructor=c2', ['__proto__']: 'h1', constructor: 'h2' },
    });
    expect(got.status).toBe(200);
    expect(JSON.parse(got.body)).toEqual({
      proto: 'x',
      protoAll: ['x', 'z'],
      ctor: 'y',
      toStr: null,
      cookieProto: 'c1',
      cookieCtor: 'c2',
      // Node's `req.headers` drops a `__proto__` header (an assignment to a plain object).
      headerProto: 'h1',
      headerCtor: 'h2',
      headerToStr: null,
      validated: { a: 1 },
      polluted: null,
    });
    // Not sent: nothing read from Object.prototype.
    const bare = await raw(port, { path: '/q' });
    expect(JSON.parse(bare.body)).toMatchObject({
      proto: null,
      protoAll: [],
      ctor: null,
      cookieProto: null,
      cookieCtor: null,
      headerProto: null,
      headerCtor: null,
      validated: {},
    });
  });

  it('a repeated __proto__ header is joined as any other', async () => {
    const a = app();
    a.get('/h', (ctx) => ctx.send(ctx.header('__PROTO__') ?? 'none'));
    const { port } = await start(a);
    const got = await raw(port, { path: '/h', headers: { ['__proto__']: ['a', 'b'] } });
    expect(got.body).toBe('a, b');
  });
});

describe('an injected request', () => {
  it('reads a __proto__ header and query parameter as a served one does', async () => {
    const a = app();
    a.get('/h', (ctx) =>
      ctx.json({ h: ctx.header('__proto__') ?? null, q: ctx.query('__proto__') }),
    );
    const res = await a.inject({ url: '/h?__proto__=q', headers: { ['__proto__']: 'v' } });
    expect(res.status).toBe(200);
    // light-my-request's own request object: no crash, whatever it keeps of such a header.
    expect(['v', null]).toContain(res.json<{ h: string | null }>().h);
    expect(res.json<{ q: string }>().q).toBe('q');
  });
});
